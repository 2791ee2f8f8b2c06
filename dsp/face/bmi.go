package face

import (
	"cmp"
	"errors"
	"image"
	"math"
	"slices"

	xdraw "golang.org/x/image/draw"
)

// Body mass index from the shape of a face in a still image.
//
// Method. Fat widens the lower and middle face relative to the skeleton: the
// width-to-height and cheek-to-jaw-width ratios of the face track BMI
// (Coetzee, Perrett and Stephen, "Facial adiposity: a cue to health?",
// Perception 38, 2009; Coetzee, Chen, Perrett and Stephen, "Deciphering
// faces: quantifiable visual cues to weight", Perception 39, 2010), and faces
// of people with a higher BMI are wider relative to the size of the eyes
// (Mayer et al., PLoS ONE 12, 2017). We measure two soft-tissue widths in
// units of the interpupillary distance (IPD), which is set by the skull and
// barely changes with weight:
//
//   - Wc, the width of the face at the level of the nose tip (cheeks), and
//   - Wm, the width of the face at the level of the mouth corners (lower face),
//
// each between the outermost skin pixels of the row, found by walking out
// from beside the nose and the mouth until the skin ends. The landmarks come
// from pigo's pupil and mouth localisers. Then
//
//	A   = ((Wc/IPD)/cheekRef + (Wm/IPD)/mouthRef)/2 - 1   (relative widening)
//	BMI = bmiRef + A/widthPerBMI                           (kg/m²)
//
// The reference proportions are those this method measures on the photo the
// tests use (scripts/synth/clip/photo/face.jpg, a lean young adult, taken as BMI
// 22): one face, not a population mean. widthPerBMI, 0.8% of face width per
// kg/m², is the order of magnitude by which cheek soft tissue thickens with
// BMI (De Greef et al., "Large-scale in-vivo Caucasian facial soft tissue
// thickness database", Forensic Science International 159S, 2006).
//
// Limits: a coarse screening estimate, not a measurement; expect errors of
// several kg/m² for an individual. Even the photo the references come from,
// saved again at JPEG qualities 75-100 and sizes 80-100%, reads 19.6 to
// 26.1: a shadow inside its left cheek is taken for the outline in some
// copies and not in others. It needs a frontal face (roll under 12°,
// little yaw), neutral expression, the face at least minBMIFace pixels tall,
// even light on both cheeks and a background that is not skin coloured.
// Beards, hair over the cheeks and glasses frames bias the widths. It has not
// been validated against measured BMI on a population.
const (
	cheekRef    = 2.15
	mouthRef    = 1.83
	bmiRef      = 22.0
	widthPerBMI = 0.008
	// minBMIFace is the smallest detector box, in pixels, with enough
	// resolution for the landmarks and a width to the nearest percent.
	minBMIFace = 120
	// bmiWorkSide bounds the smaller side of the image the estimate works
	// on: larger photos are averaged down first, which costs no precision
	// that matters here.
	bmiWorkSide = 720
	// contourRadius is the chroma distance from the person's skin that
	// still counts as skin when following the face's outline: wider than
	// the tracker's because the side of a face is often in shade.
	contourRadius = 24
	// Plausible results; outside, the estimate is refused.
	minBMI, maxBMI = 12.0, 60.0
)

// Reasons EstimateBMI gives no value.
var (
	ErrNoFace       = errors.New("face: no face found")
	ErrFaceTooSmall = errors.New("face: face too small for its geometry")
	ErrNotFrontal   = errors.New("face: landmarks not found or face not frontal")
	ErrNoContour    = errors.New("face: outline of the face not found against the background")
	ErrOutOfRange   = errors.New("face: estimate outside the plausible range")
)

// Geometry is what EstimateBMI measured, in pixels of the input image.
type Geometry struct {
	IPD         float64 // distance between the pupils
	CheekWidth  float64 // face width at the nose tip, Wc
	MouthWidth  float64 // face width at the mouth corners, Wm
	RollDegrees float64 // tilt of the eye line
}

// bmiScales are the sizes, as shares of the working image, the estimate
// is measured at; it answers their median. One measurement hangs on where
// the walks out to the face's outline stop, and a pixel of JPEG noise can
// stop one at a shadow inside the cheek or let it run past the jaw: the
// reference photo re-encoded at JPEG qualities 75-100 read 19.3 to 26.0
// measured once (its cheek width 191 or 207 pixels), and a portrait of
// another face 34-35 in 13 of 15 such copies but about 50 in 2. Such a
// stop rarely happens at two sizes of the same photo.
var bmiScales = []float64{1, 0.9, 0.8}

// EstimateBMI estimates body mass index, in kg/m², from the largest face in a
// still image (method and limits above), the median of its measurements at
// bmiScales. The error says why there is no estimate (that of the full-size
// measurement when none gave one): ErrNoFace, ErrFaceTooSmall,
// ErrNotFrontal, ErrNoContour or ErrOutOfRange.
func EstimateBMI(c *Cascade, img image.Image) (float64, Geometry, error) {
	b := img.Bounds()
	k := max(1, (min(b.Dx(), b.Dy())+bmiWorkSide-1)/bmiWorkSide)
	var scratch *image.RGBA
	f := wrap(img, &scratch)
	if k > 1 {
		f = wrap(shrink(f, k), &scratch)
	}
	type estimate struct {
		bmi float64
		geo Geometry
	}
	var ests []estimate
	var firstErr error
	var firstGeo Geometry
	for i, s := range bmiScales {
		fs := f
		if s != 1 {
			dst := image.NewRGBA(image.Rect(0, 0, int(float64(f.w)*s+0.5), int(float64(f.h)*s+0.5)))
			xdraw.ApproxBiLinear.Scale(dst, dst.Rect, f.img, f.img.Bounds(), xdraw.Src, nil)
			var own *image.RGBA
			fs = wrap(dst, &own)
		}
		bmi, geo, err := measureBMI(c, fs)
		// Back to the input's pixels.
		u := float64(k) / s
		geo.IPD, geo.CheekWidth, geo.MouthWidth = geo.IPD*u, geo.CheekWidth*u, geo.MouthWidth*u
		if i == 0 {
			firstErr, firstGeo = err, geo
		}
		if err == nil {
			ests = append(ests, estimate{bmi, geo})
		}
	}
	if len(ests) == 0 {
		return 0, firstGeo, firstErr
	}
	slices.SortFunc(ests, func(a, b estimate) int { return cmp.Compare(a.bmi, b.bmi) })
	m := ests[(len(ests)-1)/2]
	if len(ests)%2 == 0 {
		// Of an even count, the mean of the middle two; the lower one's
		// geometry.
		m.bmi = (m.bmi + ests[len(ests)/2].bmi) / 2
	}
	return m.bmi, m.geo, nil
}

// measureBMI is one measurement of EstimateBMI on a working frame; its
// geometry is in the frame's pixels.
func measureBMI(c *Cascade, f frame) (float64, Geometry, error) {
	if f.w < minFrameSide || f.h < minFrameSide {
		return 0, Geometry{}, ErrNoFace
	}
	tr := NewTracker(c)
	if !tr.Observe(f.img).Face {
		return 0, Geometry{}, ErrNoFace
	}
	if tr.size < minBMIFace {
		return 0, Geometry{}, ErrFaceTooSmall
	}
	g := gray{pix: make([]uint8, f.w*f.h), w: f.w, h: f.h, stride: f.w}
	f.cells(g.pix, make([]uint32, f.w), 0, 0, f.w, f.h, 1)
	lm, ok := landmarks(c, g, tr.cx, tr.cy, tr.size)
	if !ok {
		return 0, Geometry{}, ErrNotFrontal
	}
	skin := func(x, y int) bool {
		if x < 0 || y < 0 || x >= f.w || y >= f.h {
			return false
		}
		in := false
		f.each(rect{x, y, x + 1, y + 1}, func(_, _, _, yy, cb, cr uint8) {
			dcb, dcr := float64(cb)-tr.skin.cb, float64(cr)-tr.skin.cr
			in = yy >= minSkinLuma && dcb*dcb+dcr*dcr <= contourRadius*contourRadius
		})
		return in
	}
	ipd := math.Hypot(lm.rightEye.col-lm.leftEye.col, lm.rightEye.row-lm.leftEye.row)
	mid := (lm.leftEye.col + lm.rightEye.col) / 2
	// Walk out from beside the nose (a quarter IPD either side of the
	// midline) and from just outside the mouth corners.
	wc, okc := faceWidth(skin, lm.nose.row, mid-0.25*ipd, mid+0.25*ipd, ipd)
	wm, okm := faceWidth(skin, (lm.mouthL.row+lm.mouthR.row)/2, lm.mouthL.col-0.1*ipd, lm.mouthR.col+0.1*ipd, ipd)
	geo := Geometry{IPD: ipd, CheekWidth: wc, MouthWidth: wm, RollDegrees: lm.roll * 180 / math.Pi}
	if !okc || !okm {
		return 0, geo, ErrNoContour
	}
	a := ((wc/ipd)/cheekRef+(wm/ipd)/mouthRef)/2 - 1
	bmi := bmiRef + a/widthPerBMI
	if bmi < minBMI || bmi > maxBMI {
		return 0, geo, ErrOutOfRange
	}
	return bmi, geo, nil
}

// faceWidth measures the face along row y: from x = left it walks left, and
// from x = right it walks right, each until a run of non-skin pixels 4% of an
// IPD long, and returns the distance between the two edges. It takes the
// median over five rows a twentieth of an IPD apart, so one row crossing a
// mole or a strand of hair does not decide. It fails when a start point is
// not skin or an edge lies more than 1.6 IPD from the start.
func faceWidth(skin func(x, y int) bool, y, left, right, ipd float64) (float64, bool) {
	run := max(2, int(0.04*ipd+0.5))
	reach := int(1.6 * ipd)
	walk := func(x0, yy, dir int) (int, bool) {
		gap := 0
		for i := 0; i <= reach; i++ {
			if skin(x0+dir*i, yy) {
				gap = 0
				continue
			}
			if gap++; gap >= run {
				return x0 + dir*(i-run+1), true
			}
		}
		return 0, false
	}
	var widths []float64
	for d := -2; d <= 2; d++ {
		yy := int(y + float64(d)*0.05*ipd + 0.5)
		l, r := int(left+0.5), int(right+0.5)
		if !skin(l, yy) || !skin(r, yy) {
			continue
		}
		le, okl := walk(l, yy, -1)
		re, okr := walk(r, yy, 1)
		if okl && okr {
			widths = append(widths, float64(re-le))
		}
	}
	if len(widths) < 3 {
		return 0, false
	}
	slices.Sort(widths)
	return widths[len(widths)/2], true
}

// faceLandmarks are the points EstimateBMI measures from, in gray pixels.
// Left and right are as seen in the image.
type faceLandmarks struct {
	leftEye, rightEye point
	mouthL, mouthR    point
	nose              point
	roll              float64 // radians
}

// landmarks locates pupils, mouth corners and nose tip inside the detector
// box (cx, cy, size) and checks that they form a frontal face.
func landmarks(c *Cascade, g gray, cx, cy, size float64) (faceLandmarks, bool) {
	const perturbs = 31
	var lm faceLandmarks
	// Pupils start a quarter box up-left and up-right of the centre, as pigo's
	// own pupil demo places them.
	lm.leftEye = c.pupil.locate(g, point{cy - 0.075*size, cx - 0.175*size, 0.25 * size}, perturbs, false)
	lm.rightEye = c.pupil.locate(g, point{cy - 0.075*size, cx + 0.185*size, 0.25 * size}, perturbs, false)
	dx, dy := lm.rightEye.col-lm.leftEye.col, lm.rightEye.row-lm.leftEye.row
	ipd := math.Hypot(dx, dy)
	lm.roll = math.Atan2(dy, dx)
	if ipd < 0.25*size || ipd > 0.55*size || math.Abs(lm.roll) > 12*math.Pi/180 {
		return lm, false
	}
	// The mouth and nose localisers start below the eyes at a distance
	// proportional to the IPD; the model is mirrored for the other corner.
	start := point{(lm.leftEye.row+lm.rightEye.row)/2 + 0.25*ipd, (lm.leftEye.col+lm.rightEye.col)/2 + 0.15*ipd, 3 * ipd}
	a := c.mouth.locate(g, start, perturbs, false)
	b := c.mouth.locate(g, start, perturbs, true)
	lm.mouthL, lm.mouthR = a, b
	if a.col > b.col {
		lm.mouthL, lm.mouthR = b, a
	}
	lm.nose = c.nose.locate(g, start, perturbs, false)
	eyeRow := (lm.leftEye.row + lm.rightEye.row) / 2
	mouthRow := (lm.mouthL.row + lm.mouthR.row) / 2
	mouthWidth := lm.mouthR.col - lm.mouthL.col
	// Proportions of any adult frontal face: nose tip between eyes and
	// mouth, mouth about as wide as the eyes are apart.
	ok := lm.nose.row > eyeRow+0.3*ipd && mouthRow > lm.nose.row+0.1*ipd && mouthRow < eyeRow+1.6*ipd &&
		mouthWidth > 0.5*ipd && mouthWidth < 1.4*ipd
	return lm, ok
}

// shrink averages the frame down by k in both directions.
func shrink(f frame, k int) *image.RGBA {
	w, h := f.w/k, f.h/k
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	n := uint32(k * k)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			var r, g, b uint32
			f.each(rect{x * k, y * k, x*k + k, y*k + k}, func(pr, pg, pb, _, _, _ uint8) {
				r, g, b = r+uint32(pr), g+uint32(pg), b+uint32(pb)
			})
			i := dst.PixOffset(x, y)
			dst.Pix[i], dst.Pix[i+1], dst.Pix[i+2], dst.Pix[i+3] = uint8(r/n), uint8(g/n), uint8(b/n), 255
		}
	}
	return dst
}

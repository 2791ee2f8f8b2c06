package clip

import (
	"math"
	"math/rand/v2"
)

// What covers the skin of a real face: the photo's places are fractions of
// its width and height (pigo's portrait: the pupils at (0.36, 0.46) and
// (0.64, 0.46), the eyebrows at 0.39, the hairline from 0.21 in the middle
// to 0.28 at the temples).
var (
	pupils  = [2][2]float64{{0.359, 0.4575}, {0.6375, 0.4575}}
	browRow = 0.39
)

// headMask marks the head: the pixels that differ from the wall behind
// (the sum of the channel differences above 60 levels), blurred over a
// few pixels so the head's light fades out at its edge.
func (s *scene) headMask() []float32 {
	hard := make([]float32, s.pw*s.ph)
	for i := range hard {
		d := math.Abs(float64(s.r[i]-s.bg[0])) + math.Abs(float64(s.g[i]-s.bg[1])) + math.Abs(float64(s.b[i]-s.bg[2]))
		if d > 60 {
			hard[i] = 1
		}
	}
	return boxBlur(hard, s.pw, s.ph, max(1, s.pw/60))
}

// boxBlur returns the mean of each pixel's (2r+1)² neighbourhood within
// the plane (w x h): a blur along the rows, then along the columns.
func boxBlur(p []float32, w, h, r int) []float32 {
	rows := make([]float32, len(p))
	for y := range h {
		blurLine(rows[y*w:], p[y*w:], w, 1, r)
	}
	out := make([]float32, len(p))
	for x := range w {
		blurLine(out[x:], rows[x:], h, w, r)
	}
	return out
}

// blurLine sets dst[i·stride] to the mean of src[j·stride] for j within r
// of i, over n elements.
func blurLine(dst, src []float32, n, stride, r int) {
	for i := range n {
		var sum float32
		for j := max(0, i-r); j <= min(n-1, i+r); j++ {
			sum += src[j*stride]
		}
		dst[i*stride] = sum / float32(min(n-1, i+r)-max(0, i-r)+1)
	}
}

// Glasses: a common full-rim frame, its lenses 50 mm wide and 34 mm high
// for a pupil distance of 63 mm (about 0.82 and 0.55 of the pupil
// distance), rounded rectangles (superellipses of exponent 4) centred a
// little below the pupils, with dark acetate rims 5 mm wide (0.08 of the
// pupil distance) and temples running back to the ears. The lower rim
// crosses the top of the cheeks. Lenses pass lensTransmission of the
// light and reflect the rest of what faces them: the room as a faint
// veil (lensVeil of the wall's level, what an uncoated lens's two
// surfaces reflect, about 4% each) and the screen as a bright patch
// (glarePeak levels at its centre) in the upper outer part of each lens,
// which follows the screen's brightness. The reflections do not pulse:
// they dilute the pulse of the skin behind the lenses.
const (
	lensWidth, lensHeight = 0.82, 0.55 // of the pupil distance
	lensDrop              = 0.05       // lens centre below the pupil, of the pupil distance
	rimWidth              = 0.08
	lensTransmission      = 0.9
	lensVeil              = 0.06
	glarePeak             = 110.0
)

var rimColour = [3]float32{30, 27, 28}

func (s *scene) addGlasses() {
	pw, ph := float64(s.pw), float64(s.ph)
	ipd := (pupils[1][0] - pupils[0][0]) * pw
	a, b := lensWidth*ipd/2, lensHeight*ipd/2
	rim := rimWidth * ipd
	s.glare = make([]float32, s.pw*s.ph)
	veil := float32(lensVeil) * (s.bg[0] + s.bg[1] + s.bg[2]) / 3
	// superellipse is 1 on the lens outline, below inside.
	superellipse := func(x, y, cx, cy, a, b float64) float64 {
		return math.Sqrt(math.Sqrt(math.Pow((x-cx)/a, 4) + math.Pow((y-cy)/b, 4)))
	}
	cover := func(i int, k float32, c [3]float32) { // paint frame over the pixel
		s.r[i] += k * (c[0] - s.r[i])
		s.g[i] += k * (c[1] - s.g[i])
		s.b[i] += k * (c[2] - s.b[i])
		s.skin[i] *= 1 - k
	}
	for y := range s.ph {
		for x := range s.pw {
			i := y*s.pw + x
			fx, fy := float64(x)+0.5, float64(y)+0.5
			var frame float64 // 0-1 coverage by the frame
			for side, p := range pupils {
				cx, cy := p[0]*pw, p[1]*ph+lensDrop*ipd
				e := superellipse(fx, fy, cx, cy, a, b)
				// Distance from the lens outline, pixels: the rim lies
				// within rim/2 of it.
				d := math.Abs(e-1) * min(a, b)
				frame = max(frame, min(1, max(0, rim/2+0.5-d)))
				if e < 1 {
					s.r[i] *= lensTransmission
					s.g[i] *= lensTransmission
					s.b[i] *= lensTransmission
					// The screen's reflection: a soft rectangle in the
					// upper outer part of the lens.
					gx := cx + 0.3*a*float64(2*side-1)
					gy := cy - 0.25*b
					g := math.Exp(-math.Pow((fx-gx)/(0.35*a), 4) - math.Pow((fy-gy)/(0.3*b), 4))
					s.glare[i] = veil + float32(glarePeak*g)
				}
				// Temples: from the lens's outer edge back to the ear.
				outer := cx + a*float64(2*side-1)
				ty := cy - 0.3*b
				if math.Abs(fy-ty) < rim*0.35 && (fx-outer)*float64(2*side-1) > -rim/2 && (fx-outer)*float64(2*side-1) < 0.35*ipd {
					frame = 1
				}
			}
			// The bridge, between the lenses' inner edges, above the
			// lens centres.
			inner0, inner1 := pupils[0][0]*pw+a, pupils[1][0]*pw-a
			by := pupils[0][1]*ph + lensDrop*ipd - 0.35*b
			if fx > inner0-rim/2 && fx < inner1+rim/2 && math.Abs(fy-by) < rim*0.4 {
				frame = 1
			}
			if frame > 0 {
				cover(i, float32(frame), rimColour)
				s.glare[i] *= float32(1 - frame)
			}
		}
	}
}

// Fringe: hair combed down over the forehead from the hairline to the
// given share of the forehead's height, its lower edge wavy (a smooth
// random curve, ±8% of the forehead) and ragged (each strand, 1.5% of
// the photo's width, ±4% longer or shorter), its strands thinning over
// their last third to show skin between them. The hair's colour is the
// photo's own, from its crown, each strand ±10% lighter or darker.
func (s *scene) addFringe(share float64, rng *rand.Rand) {
	pw, ph := float64(s.pw), float64(s.ph)
	var hair [3]float32
	n := 0
	for y := int(0.06 * ph); y < int(0.12*ph); y++ {
		for x := int(0.4 * pw); x < int(0.6*pw); x++ {
			i := y*s.pw + x
			hair[0] += s.r[i]
			hair[1] += s.g[i]
			hair[2] += s.b[i]
			n++
		}
	}
	for ch := range hair {
		hair[ch] /= float32(n)
	}
	// The wave: a sum of three sines of random phase across the face.
	var phase [3]float64
	for k := range phase {
		phase[k] = 2 * math.Pi * rng.Float64()
	}
	wave := func(x float64) float64 {
		return 0.08 * (0.6*math.Sin(2*math.Pi*1*x+phase[0]) + 0.3*math.Sin(2*math.Pi*2.3*x+phase[1]) + 0.1*math.Sin(2*math.Pi*4.1*x+phase[2]))
	}
	brow := int(browRow * ph)
	strand := max(2, int(0.015*pw))
	var length, shade float64
	for x := int(0.18 * pw); x < int(0.82*pw); x++ {
		at := (x - int(0.18*pw)) % strand
		if at == 0 {
			length = share + wave(float64(x)/pw) + 0.04*rng.NormFloat64()
			shade = 1 + 0.1*rng.NormFloat64()
		}
		// The hairline: the first row of skin from the top.
		top := -1
		for y := int(0.12 * ph); y < brow; y++ {
			if s.skin[y*s.pw+x] > 0.5 {
				top = y
				break
			}
		}
		if top < 0 {
			continue
		}
		end := float64(top) + min(1, max(0, length))*float64(brow-top)
		taper := max(1, (end-float64(top))/3)
		// A strand covers less at its sides than at its middle.
		across := 1 - 0.3*math.Abs(2*float64(at)/float64(strand)-1)
		c := [3]float32{hair[0] * float32(shade), hair[1] * float32(shade), hair[2] * float32(shade)}
		for y := max(0, top-strand); float64(y) < end && y < s.ph; y++ {
			k := float32(across * min(1, (end-float64(y))/taper))
			i := y*s.pw + x
			s.r[i] += k * (c[0] - s.r[i])
			s.g[i] += k * (c[1] - s.g[i])
			s.b[i] += k * (c[2] - s.b[i])
			s.skin[i] *= 1 - k
		}
	}
}

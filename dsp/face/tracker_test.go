package face

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

// photoPath is pigo's MIT-licensed frontal face photo, 320x400, shipped with
// the synthetic data generator.
const photoPath = "../../scripts/synth/clip/photo/face.jpg"

// The photo's face: eyes at y=183, chin at y=345; the detector's box is
// centred on the nose bridge just below the eyes, at about (155, 201).
var photoFaceCentre = image.Pt(155, 201)

var photoOnce = sync.OnceValues(func() (image.Image, error) {
	f, err := os.Open(photoPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return jpeg.Decode(f)
})

func photo(t testing.TB) image.Image {
	t.Helper()
	img, err := photoOnce()
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func cascade(t testing.TB) *Cascade {
	t.Helper()
	c, err := LoadCascade()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var backdrop = color.RGBA{70, 90, 110, 255}

// scene draws the photo, scaled by the integer factor scale (1 or 1/2 via
// shrink), with its top-left corner at at, on a w x h backdrop.
func scene(t testing.TB, w, h int, at image.Point, shrink int) *image.RGBA {
	t.Helper()
	src := photo(t)
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(dst, dst.Rect, image.NewUniform(backdrop), image.Point{}, draw.Src)
	if shrink <= 1 {
		draw.Draw(dst, src.Bounds().Add(at), src, image.Point{}, draw.Src)
		return dst
	}
	sb := src.Bounds()
	for y := 0; y < sb.Dy()/shrink; y++ {
		for x := 0; x < sb.Dx()/shrink; x++ {
			var r, g, b uint32
			for dy := 0; dy < shrink; dy++ {
				for dx := 0; dx < shrink; dx++ {
					cr, cg, cb, _ := src.At(x*shrink+dx, y*shrink+dy).RGBA()
					r, g, b = r+cr>>8, g+cg>>8, b+cb>>8
				}
			}
			n := uint32(shrink * shrink)
			if p := image.Pt(x, y).Add(at); p.In(dst.Rect) {
				dst.SetRGBA(p.X, p.Y, color.RGBA{uint8(r / n), uint8(g / n), uint8(b / n), 255})
			}
		}
	}
	return dst
}

// turned turns a frame by deg degrees clockwise about its centre, filling
// the corners with the backdrop: a head tilted to one side.
func turned(src *image.RGBA, deg float64) *image.RGBA {
	dst := image.NewRGBA(src.Rect)
	w, h := src.Rect.Dx(), src.Rect.Dy()
	sin, cos := math.Sincos(deg * math.Pi / 180)
	for y := range h {
		for x := range w {
			dx, dy := float64(x)-float64(w)/2, float64(y)-float64(h)/2
			sx, sy := int(math.Round(float64(w)/2+dx*cos+dy*sin)), int(math.Round(float64(h)/2-dx*sin+dy*cos))
			if sx < 0 || sy < 0 || sx >= w || sy >= h {
				dst.SetRGBA(x, y, backdrop)
				continue
			}
			dst.SetRGBA(x, y, src.RGBAAt(sx, sy))
		}
	}
	return dst
}

// toYCbCr converts an RGBA frame to 4:2:0 YCbCr the way a JPEG encoder
// and decoder would hand it over: chroma averaged over 2x2 blocks.
func toYCbCr(src *image.RGBA) *image.YCbCr {
	dst := image.NewYCbCr(src.Rect, image.YCbCrSubsampleRatio420)
	for y := 0; y < src.Rect.Dy(); y++ {
		for x := 0; x < src.Rect.Dx(); x++ {
			c := src.RGBAAt(x, y)
			yy, _, _ := color.RGBToYCbCr(c.R, c.G, c.B)
			dst.Y[dst.YOffset(x, y)] = yy
		}
	}
	for y := 0; y+1 < src.Rect.Dy(); y += 2 {
		for x := 0; x+1 < src.Rect.Dx(); x += 2 {
			var cbs, crs int
			for d := range 4 {
				c := src.RGBAAt(x+d%2, y+d/2)
				_, cb, cr := color.RGBToYCbCr(c.R, c.G, c.B)
				cbs, crs = cbs+int(cb), crs+int(cr)
			}
			dst.Cb[dst.COffset(x, y)] = uint8((cbs + 2) / 4)
			dst.Cr[dst.COffset(x, y)] = uint8((crs + 2) / 4)
		}
	}
	return dst
}

func TestLoadCascadeOnce(t *testing.T) {
	a, b := cascade(t), cascade(t)
	if a != b {
		t.Fatal("LoadCascade parsed the model twice")
	}
}

func TestTrackerFindsFace(t *testing.T) {
	rgba := scene(t, 640, 480, image.Pt(160, 40), 1)
	sub := image.NewRGBA(image.Rect(0, 0, 700, 500))
	draw.Draw(sub, sub.Rect, image.NewUniform(backdrop), image.Point{}, draw.Src)
	draw.Draw(sub, image.Rect(30, 10, 670, 490), rgba, image.Point{}, draw.Src)
	nrgba := image.NewNRGBA(rgba.Rect)
	draw.Draw(nrgba, nrgba.Rect, rgba, image.Point{}, draw.Src)
	cases := []struct {
		name   string
		img    image.Image
		centre image.Point // expected face centre in the image's coordinates
		height int         // expected face height (eyebrows to chin), pixels
	}{
		{"rgba 640x480", rgba, photoFaceCentre.Add(image.Pt(160, 40)), 260},
		{"ycbcr 640x480", toYCbCr(rgba), photoFaceCentre.Add(image.Pt(160, 40)), 260},
		{"nrgba converted", nrgba, photoFaceCentre.Add(image.Pt(160, 40)), 260},
		{"sub-image offset", sub.SubImage(image.Rect(30, 10, 670, 490)), photoFaceCentre.Add(image.Pt(190, 50)), 260},
		{"small face 320x240", scene(t, 320, 240, image.Pt(100, 20), 2), photoFaceCentre.Div(2).Add(image.Pt(100, 20)), 130},
		{"1280x720", scene(t, 1280, 720, image.Pt(500, 200), 1), photoFaceCentre.Add(image.Pt(500, 200)), 260},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := NewTracker(cascade(t))
			o := tr.Observe(tc.img)
			if !o.Face || !o.Detected {
				t.Fatalf("no face found: %+v", o)
			}
			c := o.Box.Min.Add(o.Box.Max).Div(2)
			if d := math.Hypot(float64(c.X-tc.centre.X), float64(c.Y-tc.centre.Y)); d > 0.08*float64(tc.height) {
				t.Errorf("box centre %v, want near %v (off by %.0f px)", c, tc.centre, d)
			}
			if h := o.Box.Dy(); math.Abs(float64(h)/float64(tc.height)-1) > 0.2 {
				t.Errorf("box height %d, want about %d", h, tc.height)
			}
			if want := float64(o.Box.Dy()) / float64(tc.img.Bounds().Dy()); math.Abs(o.FaceFraction-want) > 1.0/float64(tc.img.Bounds().Dy()) {
				t.Errorf("FaceFraction %v, want %v", o.FaceFraction, want)
			}
			if o.SkinFraction < 0.8 {
				t.Errorf("only %.0f%% of the regions of interest read as skin", 100*o.SkinFraction)
			}
			// The photo's skin is a light rosy tone: red over green over blue.
			if !(o.R > o.G && o.G > o.B && o.Luma > 120) {
				t.Errorf("skin colour R=%.1f G=%.1f B=%.1f luma %.1f is not the photo's", o.R, o.G, o.B, o.Luma)
			}
			for r, rc := range o.Regions {
				if rc.Pixels < 100 {
					t.Errorf("%v: %d skin pixels", Region(r), rc.Pixels)
				}
			}
			// The outlines lie in the box, the forehead above the cheeks,
			// and each holds the skin pixels its mean was read from.
			var centres [NumRegions][2]float64
			for r, quad := range o.Outlines {
				var area float64
				for k, c := range quad {
					if !image.Pt(int(c[0]), int(c[1])).In(o.Box.Inset(-1)) {
						t.Errorf("%v: corner %.1f, %.1f outside the box %v", Region(r), c[0], c[1], o.Box)
					}
					next := quad[(k+1)%4]
					area += (c[0]*next[1] - next[0]*c[1]) / 2
					centres[r][0] += c[0] / 4
					centres[r][1] += c[1] / 4
				}
				if n := float64(o.Regions[r].Pixels); area <= 0 || n > area*1.05 || n < area/2 {
					t.Errorf("%v: %.0f skin pixels in an outline of %.0f", Region(r), n, area)
				}
			}
			f, l, r := centres[Forehead], centres[LeftCheek], centres[RightCheek]
			if !(f[1] < l[1] && f[1] < r[1] && l[0] < f[0] && f[0] < r[0]) {
				t.Errorf("outline centres: forehead %v, left cheek %v, right cheek %v", f, l, r)
			}
			// An upright, frontal face: the forehead and the cheeks' midpoint
			// sit on the box's vertical centre line.
			if d := max(math.Abs(f[0]-o.CentreX), math.Abs((l[0]+r[0])/2-o.CentreX)); d > 0.05*o.Side {
				t.Errorf("outlines %.1f px off the box's centre line %.1f", d, o.CentreX)
			}
		})
	}
}

// TestTrackerUpsideDown: a face upside down, or turned further than a
// quarter circle, is read the way up it is: the eye line turned by the
// frame's turn, the forehead's region on the forehead (below the cheeks'
// in the frame when upside down), as much of the regions on skin as
// upright. And as the head sways, the cascade, which knows upright faces
// only, does not pull the box off it: the regions stay on skin and their
// brightness steady (pulled by the cascade, their luma fell by 5% at
// times).
func TestTrackerUpsideDown(t *testing.T) {
	for _, deg := range []float64{180, 135, -150} {
		t.Run(fmt.Sprintf("turned %.0f", deg), func(t *testing.T) {
			var sway []*image.RGBA
			for i := range 40 {
				at := image.Pt(160+int(math.Round(10*math.Sin(float64(i)/6))), 40+int(math.Round(6*math.Cos(float64(i)/5))))
				sway = append(sway, turned(scene(t, 640, 480, at, 1), deg))
			}
			tr := NewTracker(cascade(t))
			first := tr.Observe(sway[0])
			if !first.Face || !first.Landmarks {
				t.Fatalf("face %v, landmarks %v", first.Face, first.Landmarks)
			}
			want := deg * math.Pi / 180
			if d := math.Abs(math.Remainder(first.Roll-want, 2*math.Pi)); d > 12*math.Pi/180 {
				t.Errorf("roll %.0f deg, want near %.0f", first.Roll*180/math.Pi, deg)
			}
			if deg == 180 {
				f, l := first.Outlines[Forehead], first.Outlines[LeftCheek]
				if fy, ly := (f[0][1]+f[2][1])/2, (l[0][1]+l[2][1])/2; fy <= ly {
					t.Errorf("forehead's region at y %.0f, cheek's at %.0f: want it below, the face upside down", fy, ly)
				}
			}
			lo, hi, skin := first.Luma, first.Luma, first.SkinFraction
			for k := range 150 { // back and forth through the sway
				o := tr.Observe(sway[min(k%80, 79-k%80)])
				if !o.Face {
					t.Fatalf("frame %d: face lost", k)
				}
				lo, hi, skin = min(lo, o.Luma), max(hi, o.Luma), min(skin, o.SkinFraction)
			}
			if skin < 0.9 || hi > 1.02*lo {
				t.Errorf("as the head sways: at least %.0f%% of the regions on skin, their luma %.1f-%.1f", 100*skin, lo, hi)
			}
		})
	}
}

func TestTrackerNoFace(t *testing.T) {
	noise := image.NewRGBA(image.Rect(0, 0, 320, 240))
	seed := uint32(1)
	for i := range noise.Pix {
		seed = seed*1664525 + 1013904223
		noise.Pix[i] = uint8(seed >> 24)
	}
	flat := image.NewRGBA(image.Rect(0, 0, 320, 240))
	draw.Draw(flat, flat.Rect, image.NewUniform(color.RGBA{100, 100, 100, 255}), image.Point{}, draw.Src)
	tiny := image.NewRGBA(image.Rect(0, 0, 20, 20))
	draw.Draw(tiny, tiny.Rect, image.NewUniform(color.RGBA{100, 100, 100, 255}), image.Point{}, draw.Src)
	cases := []struct {
		name      string
		img       image.Image
		sceneLuma float64
	}{
		{"noise", noise, -1},
		{"flat grey", flat, 100},
		{"too small to hold a face", tiny, 100},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := NewTracker(cascade(t))
			for range 4 {
				o := tr.Observe(tc.img)
				if o.Face {
					t.Fatalf("found a face: %+v", o)
				}
				if tc.sceneLuma >= 0 && math.Abs(o.SceneLuma-tc.sceneLuma) > 0.5 {
					t.Errorf("SceneLuma %.2f, want %.0f", o.SceneLuma, tc.sceneLuma)
				}
			}
		})
	}
}

// TestTrackerFollowsMotion moves the face by known steps and checks that the
// box follows and Motion reports the displacement in face heights.
func TestTrackerFollowsMotion(t *testing.T) {
	cases := []struct {
		name string
		step image.Point // per frame
	}{
		{"still", image.Pt(0, 0)},
		{"slow right", image.Pt(2, 0)},
		{"diagonal", image.Pt(3, -2)},
		{"fast down", image.Pt(0, 8)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := NewTracker(cascade(t))
			start := image.Pt(160, 40)
			var o Observation
			for i := 0; i < 12; i++ {
				at := start.Add(tc.step.Mul(i))
				o = tr.Observe(scene(t, 640, 480, at, 1))
				if !o.Face {
					t.Fatalf("frame %d: face lost", i)
				}
				if i == 0 {
					continue
				}
				want := math.Hypot(float64(tc.step.X), float64(tc.step.Y)) / float64(o.Box.Dy())
				if math.Abs(o.Motion-want) > 0.004 {
					t.Errorf("frame %d: Motion %.4f face heights, want %.4f", i, o.Motion, want)
				}
			}
			c := o.Box.Min.Add(o.Box.Max).Div(2)
			want := photoFaceCentre.Add(start).Add(tc.step.Mul(11))
			if d := math.Hypot(float64(c.X-want.X), float64(c.Y-want.Y)); d > 25 {
				t.Errorf("box centre %v after the move, want near %v", c, want)
			}
		})
	}
}

// TestTrackerColour checks that the skin means follow a colour change of the
// skin, the pulse's signature, and ignore the backdrop.
func TestTrackerColour(t *testing.T) {
	base := scene(t, 640, 480, image.Pt(160, 40), 1)
	tr := NewTracker(cascade(t))
	o0 := tr.Observe(base)
	// Raise green by 2 levels everywhere the photo is, as a strong pulse
	// would; the backdrop changes too but is not skin.
	lifted := image.NewRGBA(base.Rect)
	copy(lifted.Pix, base.Pix)
	for i := 0; i < len(lifted.Pix); i += 4 {
		lifted.Pix[i+1] = uint8(min(254, int(lifted.Pix[i+1])+2))
	}
	o1 := tr.Observe(lifted)
	if d := o1.G - o0.G; math.Abs(d-2) > 0.3 {
		t.Errorf("green rose by %.2f, want 2", d)
	}
	// The chroma shift moves a few pixels across the skin mask's edge,
	// which may nudge red a little.
	if d := o1.R - o0.R; math.Abs(d) > 0.5 {
		t.Errorf("red moved by %.2f, want 0", d)
	}
	// A still frame repeated reads the same colour: the box does not wander.
	o2 := tr.Observe(lifted)
	if math.Abs(o2.G-o1.G) > 0.05 || o2.Motion != 0 {
		t.Errorf("repeat frame: G %.3f -> %.3f, motion %v", o1.G, o2.G, o2.Motion)
	}
}

// TestTrackerLosesFace checks that a face that leaves is dropped within a
// few re-checks and found again when it returns.
func TestTrackerLosesFace(t *testing.T) {
	tr := NewTracker(cascade(t))
	face := scene(t, 640, 480, image.Pt(160, 40), 1)
	empty := image.NewRGBA(face.Rect)
	draw.Draw(empty, empty.Rect, image.NewUniform(backdrop), image.Point{}, draw.Src)
	if !tr.Observe(face).Face {
		t.Fatal("no face at start")
	}
	lostAfter := -1
	for i := 0; i < 30; i++ {
		if !tr.Observe(empty).Face {
			lostAfter = i
			break
		}
	}
	// It is re-checked at once at the next detectEvery boundary, then every
	// frame while it misses.
	if lostAfter < 0 || lostAfter > detectEvery+maxMisses {
		t.Fatalf("face dropped after %d empty frames, want at most %d", lostAfter, detectEvery+maxMisses)
	}
	foundAfter := -1
	for i := 0; i < 10; i++ {
		if tr.Observe(face).Face {
			foundAfter = i
			break
		}
	}
	if foundAfter < 0 || foundAfter >= searchEvery {
		t.Fatalf("face found again after %d frames, want within %d", foundAfter, searchEvery)
	}
}

// TestTrackerIdleSearch checks the pace of whole-frame searches while no
// face is in view: every searchEvery frames for the first idleSearches
// searches, half as often after that, and a face that then comes back is
// found within twice searchEvery frames.
func TestTrackerIdleSearch(t *testing.T) {
	tr := NewTracker(cascade(t))
	face := scene(t, 640, 480, image.Pt(160, 40), 1)
	empty := image.NewRGBA(face.Rect)
	draw.Draw(empty, empty.Rect, image.NewUniform(backdrop), image.Point{}, draw.Src)
	frames := idleSearches * searchEvery
	for range frames {
		tr.Observe(empty)
	}
	if tr.searches != idleSearches {
		t.Fatalf("%d searches in the first %d frames, want %d", tr.searches, frames, idleSearches)
	}
	for range 10 * 2 * searchEvery {
		tr.Observe(empty)
	}
	if want := idleSearches + 10; tr.searches != want {
		t.Fatalf("%d searches after %d more frames, want %d", tr.searches, 20*searchEvery, want)
	}
	for i := range 2 * searchEvery {
		if tr.Observe(face).Face {
			return
		}
		if i == 2*searchEvery-1 {
			t.Fatalf("face not found within %d frames of its return", 2*searchEvery)
		}
	}
}

// TestDetectorMatchesPigo checks our evaluation of the facefinder cascade
// against pigo's own on the same grayscale image.
func TestDetectorMatchesPigo(t *testing.T) {
	checkAgainstPigo(t, scene(t, 320, 240, image.Pt(100, 20), 2))
}

func BenchmarkObserve(b *testing.B) {
	rgba := scene(b, 640, 480, image.Pt(160, 40), 1)
	ycc := toYCbCr(rgba)
	moved := scene(b, 640, 480, image.Pt(163, 41), 1)
	movedYCC := toYCbCr(moved)
	for _, bc := range []struct {
		name   string
		frames [2]image.Image
	}{
		{"rgba 640x480", [2]image.Image{rgba, moved}},
		{"ycbcr 640x480", [2]image.Image{ycc, movedYCC}},
		// 720p as dsp/media delivered it before YCbCr frames.
		{"rgba 480x270", [2]image.Image{scene(b, 480, 270, image.Pt(160, 20), 2), scene(b, 480, 270, image.Pt(161, 21), 2)}},
		// A head tilted so far the cascade misses it: BlazeFace re-checks.
		{"turned 35 deg 640x480", [2]image.Image{turned(rgba, 35), turned(moved, 35)}},
		// The video frames dsp/media delivers: 4:4:4.
		{"limited 480x270", [2]image.Image{toLimited(scene(b, 480, 270, image.Pt(160, 20), 2), image.YCbCrSubsampleRatio444, false), toLimited(scene(b, 480, 270, image.Pt(161, 21), 2), image.YCbCrSubsampleRatio444, false)}},
		{"limited bt709 480x270", [2]image.Image{toLimited(scene(b, 480, 270, image.Pt(160, 20), 2), image.YCbCrSubsampleRatio444, true), toLimited(scene(b, 480, 270, image.Pt(161, 21), 2), image.YCbCrSubsampleRatio444, true)}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			tr := NewTracker(cascade(b))
			tr.Observe(bc.frames[0])
			b.ReportAllocs()
			b.ResetTimer()
			start := cpuTime(b)
			for i := 0; i < b.N; i++ {
				if !tr.Observe(bc.frames[i%2]).Face {
					b.Fatal("face lost")
				}
			}
			reportCPU(b, start)
		})
	}
	// No face in view, once the searches have slowed (idleSearches): a
	// black frame, and a faceless photo (testdata) enlarged to fill the
	// frame, whose texture leads the cascade deeper into its trees.
	f, err := os.Open(filepath.Join("testdata", "blazeface-noface.png"))
	if err != nil {
		b.Fatal(err)
	}
	photo, err := png.Decode(f)
	f.Close()
	if err != nil {
		b.Fatal(err)
	}
	textured := image.NewRGBA(rgba.Rect)
	pb := photo.Bounds()
	for y := range 480 {
		for x := range 640 {
			textured.Set(x, y, photo.At(pb.Min.X+x*pb.Dx()/640, pb.Min.Y+y*pb.Dy()/480))
		}
	}
	for _, bc := range []struct {
		name  string
		frame image.Image
	}{{"no face 640x480", image.NewRGBA(rgba.Rect)}, {"no face textured 640x480", toYCbCr(textured)}} {
		b.Run(bc.name, func(b *testing.B) {
			tr := NewTracker(cascade(b))
			for range (idleSearches + 1) * searchEvery {
				tr.Observe(bc.frame)
			}
			b.ReportAllocs()
			b.ResetTimer()
			start := cpuTime(b)
			for i := 0; i < b.N; i++ {
				tr.Observe(bc.frame)
			}
			reportCPU(b, start)
		})
	}
}

// TestTrackerReferences checks the references the pulse is rectified
// against: the background's luma follows a change of the room and not of
// the skin, and the face's position follows motion and not a change of
// brightness (the pulse darkens the skin without moving it).
func TestTrackerReferences(t *testing.T) {
	at := image.Pt(160, 40)
	base := scene(t, 640, 480, at, 1)
	isBackdrop := func(p []uint8) bool {
		r, g, b, _ := backdrop.RGBA()
		return p[0] == uint8(r>>8) && p[1] == uint8(g>>8) && p[2] == uint8(b>>8)
	}
	// lift scales the backdrop's or the photo's pixels by gain: a
	// change of light, or the pulse, is multiplicative.
	lift := func(backdropToo, skin bool, gain float64) *image.RGBA {
		f := image.NewRGBA(base.Rect)
		copy(f.Pix, base.Pix)
		for i := 0; i < len(f.Pix); i += 4 {
			if bd := isBackdrop(f.Pix[i : i+3]); (bd && backdropToo) || (!bd && skin) {
				for c := range 3 {
					f.Pix[i+c] = uint8(min(255, math.Round(float64(f.Pix[i+c])*gain)))
				}
			}
		}
		return f
	}
	cases := []struct {
		name          string
		next          *image.RGBA
		dBackground   float64 // expected change of BackgroundLuma
		dx, dG        float64 // expected change of CentreX (pixels) and G
		tolBackground float64
	}{
		{"room light rises", lift(true, false, 1.1), 8.7, 0, 0, 1},
		{"skin brightens", lift(false, true, 1.03), 0, 0, 4.2, 1},
		{"face moves right", scene(t, 640, 480, at.Add(image.Pt(2, 0)), 1), 0, 2, 0, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := NewTracker(cascade(t))
			o0 := tr.Observe(base)
			o1 := tr.Observe(tc.next)
			if !o0.Face || !o1.Face {
				t.Fatal("face lost")
			}
			if o0.BackgroundLuma <= 0 {
				t.Fatalf("BackgroundLuma %v, want the backdrop's", o0.BackgroundLuma)
			}
			if d := o1.BackgroundLuma - o0.BackgroundLuma; math.Abs(d-tc.dBackground) > tc.tolBackground {
				t.Errorf("BackgroundLuma moved by %.2f, want %.1f", d, tc.dBackground)
			}
			if d := o1.CentreX - o0.CentreX; math.Abs(d-tc.dx) > 0.25 {
				t.Errorf("CentreX moved by %.3f px, want %.0f", d, tc.dx)
			}
			if d := o1.CentreY - o0.CentreY; math.Abs(d) > 0.5 {
				t.Errorf("CentreY moved by %.3f px, want 0", d)
			}
			if d := o1.G - o0.G; math.Abs(d-tc.dG) > 0.4 {
				t.Errorf("skin green moved by %.2f, want %.1f", d, tc.dG)
			}
		})
	}
}

// TestTrackerPacesBlazeFace follows a still face for 8 s and counts
// BlazeFace's runs: a face that stays put is re-read less and less often,
// up to every 2 s while the cascade sees it and every second while it does
// not (the head tilted 35 degrees), and the regions keep their landmarks.
func TestTrackerPacesBlazeFace(t *testing.T) {
	upright := scene(t, 640, 480, image.Pt(160, 40), 1)
	cases := []struct {
		name    string
		img     *image.RGBA
		cascade bool // whether the cascade sees the face
		roll    float64
		most    int // BlazeFace runs in 240 frames
	}{
		// The search and its closer look, then after 15, 30 and 60 frames
		// and every 60 more.
		{"upright", upright, true, 0, 7},
		// ... and every 30 frames more.
		{"turned 35 deg", turned(upright, 35), false, 35, 10},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := NewTracker(cascade(t))
			runs := 0
			for i := range 240 {
				o := tr.Observe(tc.img)
				if !o.Face || !o.Landmarks {
					t.Fatalf("frame %d: face %v, landmarks %v", i, o.Face, o.Landmarks)
				}
				if tr.sinceBlaze == 0 {
					runs++
				}
				if i == 239 {
					if tr.cascadeOK != tc.cascade {
						t.Errorf("cascade sees the face: %v, want %v", tr.cascadeOK, tc.cascade)
					}
					if deg := o.Roll * 180 / math.Pi; math.Abs(deg-tc.roll) > 5 {
						t.Errorf("roll %.1f deg, want %.0f", deg, tc.roll)
					}
					// The regions turned with the head stay on the skin.
					if o.SkinFraction < 0.9 {
						t.Errorf("only %.0f%% of the regions of interest read as skin", 100*o.SkinFraction)
					}
				}
			}
			if runs < 3 || runs > tc.most {
				t.Errorf("BlazeFace ran on %d of 240 frames, want 3 to %d", runs, tc.most)
			}
			t.Logf("BlazeFace ran on %d of 240 frames", runs)
		})
	}
}

// TestTrackerFindsSmallFace: a face under a tenth of the frame's height,
// off centre and tilted by 30 degrees, is missed by the cascade and is a
// dozen pixels in BlazeFace's view of the whole frame; a sweep of the
// tiles finds it.
func TestTrackerFindsSmallFace(t *testing.T) {
	frame := turned(scene(t, 640, 480, image.Pt(400, 260), 5), 30)
	tr := NewTracker(cascade(t))
	sweep := searchEvery * blazeSearchEvery * (len(must(tiles(640, 480))) + 1) / (blazeSearchEvery - 1)
	for i := range sweep {
		o := tr.Observe(frame)
		if !o.Face {
			continue
		}
		// The photo shrunk five times spans (400, 260) to (464, 340); turned
		// about the frame's centre, its middle lies near (387, 348).
		cx, cy := float64(o.Box.Min.X+o.Box.Max.X)/2, float64(o.Box.Min.Y+o.Box.Max.Y)/2
		if math.Hypot(cx-387, cy-348) > 30 || o.FaceFraction > 0.1 {
			t.Fatalf("frame %d: face at (%.0f, %.0f), %.0f%% of the height", i, cx, cy, 100*o.FaceFraction)
		}
		return
	}
	t.Fatalf("no face found in %d frames", sweep)
}

// TestTiles: the tiles lie in the frame, centre first, and every square of
// half a tile's side lies whole in one of them.
func TestTiles(t *testing.T) {
	for _, tc := range []struct{ w, h, side, n int }{{640, 480, 240, 15}, {480, 360, 180, 15}, {1280, 720, 360, 21}, {720, 1280, 360, 21}, {160, 120, 0, 0}} {
		side, corners := tiles(tc.w, tc.h)
		if side != tc.side || len(corners) != tc.n {
			t.Errorf("%dx%d: %d tiles of %d, want %d of %d", tc.w, tc.h, len(corners), side, tc.n, tc.side)
			continue
		}
		if tc.n == 0 {
			continue
		}
		frame := image.Rect(0, 0, tc.w, tc.h)
		if c := corners[0].Add(image.Pt(side/2, side/2)); math.Hypot(float64(2*c.X-tc.w), float64(2*c.Y-tc.h)) > float64(side)/2 {
			t.Errorf("%dx%d: first tile centred at %v", tc.w, tc.h, c)
		}
		for _, p := range corners {
			if !image.Rect(p.X, p.Y, p.X+side, p.Y+side).In(frame) {
				t.Errorf("%dx%d: tile at %v leaves the frame", tc.w, tc.h, p)
			}
		}
		for y := 0; y+side/2 <= tc.h; y += 7 {
			for x := 0; x+side/2 <= tc.w; x += 7 {
				sq := image.Rect(x, y, x+side/2, y+side/2)
				if !slices.ContainsFunc(corners, func(p image.Point) bool { return sq.In(image.Rect(p.X, p.Y, p.X+side, p.Y+side)) }) {
					t.Fatalf("%dx%d: %v lies whole in no tile", tc.w, tc.h, sq)
				}
			}
		}
	}
}

// must returns the second of two results.
func must[A, B any](_ A, b B) B { return b }

package face

import (
	"image"
	"image/color"
	"math"
	"testing"
)

// limitedFrame is a limited-range frame as a video decoder hands it over.
type limitedFrame struct {
	p     *image.YCbCr
	bt709 bool
}

func (m limitedFrame) LimitedRangeYCbCr() (*image.YCbCr, bool) { return m.p, m.bt709 }
func (m limitedFrame) Bounds() image.Rectangle                 { return m.p.Rect }
func (m limitedFrame) ColorModel() color.Model                 { return color.RGBAModel }
func (m limitedFrame) At(x, y int) color.Color {
	i, c := m.p.YOffset(x, y), m.p.COffset(x, y)
	r, g, b := LimitedRangeRGB(m.p.Y[i], m.p.Cb[c], m.p.Cr[c], m.bt709)
	return color.RGBA{r, g, b, 255}
}

// toLimited converts an RGBA frame to limited-range YCbCr, BT.709 or
// BT.601, with the given chroma subsampling, the way ffmpeg's scale filter
// does (out_range=tv): Y = 16 + 219/255 Y', C = 128 + 224/255 (C' - 128)
// from the exact full-range values, chroma averaged over the pixels each
// sample covers.
func toLimited(src *image.RGBA, ratio image.YCbCrSubsampleRatio, bt709 bool) limitedFrame {
	dst := image.NewYCbCr(src.Rect, ratio)
	kr, kb := 0.299, 0.114
	if bt709 {
		kr, kb = 0.2126, 0.0722
	}
	cbs, crs, n := make([]float64, len(dst.Cb)), make([]float64, len(dst.Cb)), make([]float64, len(dst.Cb))
	for y := 0; y < src.Rect.Dy(); y++ {
		for x := 0; x < src.Rect.Dx(); x++ {
			c := src.RGBAAt(x, y)
			r, g, b := float64(c.R), float64(c.G), float64(c.B)
			yy := kr*r + (1-kr-kb)*g + kb*b
			dst.Y[dst.YOffset(x, y)] = uint8(16 + 219.0/255*yy + 0.5)
			i := dst.COffset(x, y)
			cbs[i] += 128 + 224.0/255*(b-yy)/(2-2*kb)
			crs[i] += 128 + 224.0/255*(r-yy)/(2-2*kr)
			n[i]++
		}
	}
	for i := range n {
		dst.Cb[i], dst.Cr[i] = uint8(cbs[i]/n[i]+0.5), uint8(crs[i]/n[i]+0.5)
	}
	return limitedFrame{dst, bt709}
}

// TestLimitedRangeRGB checks the table conversion against the standard's
// formulas in floating point, and against the JPEG path: a limited-range
// pixel reads as the full-range pixel it stands for.
func TestLimitedRangeRGB(t *testing.T) {
	cases := []struct {
		name     string
		y, cb, c uint8
		r, g, b  uint8
	}{
		{"black", 16, 128, 128, 0, 0, 0},
		{"white", 235, 128, 128, 255, 255, 255},
		{"mid grey", 126, 128, 128, 128, 128, 128},
		{"red", 81, 90, 240, 255, 0, 0},
		{"green", 145, 54, 34, 0, 255, 0},
		{"blue", 41, 240, 110, 0, 0, 255},
		{"below black clips", 0, 128, 128, 0, 0, 0},
		{"above white clips", 255, 128, 128, 255, 255, 255},
	}
	clip := func(v float64) float64 { return min(max(v, 0), 255) }
	off := func(got uint8, want float64) bool { return math.Abs(float64(got)-want) > 0.5+1e-4 }
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, g, b := LimitedRangeRGB(tc.y, tc.cb, tc.c, false)
			if absDiff(r, tc.r) > 1 || absDiff(g, tc.g) > 1 || absDiff(b, tc.b) > 1 {
				t.Errorf("LimitedRangeRGB(%d, %d, %d) = %d, %d, %d, want %d, %d, %d", tc.y, tc.cb, tc.c, r, g, b, tc.r, tc.g, tc.b)
			}
		})
	}
	// BT.709 from its own formulas (BT.709-6, 3.2-3.3).
	for y := 0; y < 256; y += 3 {
		for cb := 0; cb < 256; cb += 5 {
			for cr := 0; cr < 256; cr += 5 {
				fy, fcb, fcr := 255.0/219*float64(y-16), 255.0/224*float64(cb-128), 255.0/224*float64(cr-128)
				wr, wg, wb := 1.5748*fcr+fy, fy-0.1873*fcb-0.4681*fcr, fy+1.8556*fcb
				r, g, b := LimitedRangeRGB(uint8(y), uint8(cb), uint8(cr), true)
				if off(r, clip(wr)) || off(g, clip(wg)) || off(b, clip(wb)) {
					t.Fatalf("BT.709 LimitedRangeRGB(%d, %d, %d) = %d, %d, %d, want %.3f, %.3f, %.3f", y, cb, cr, r, g, b, wr, wg, wb)
				}
			}
		}
	}
	// Exact values, clipped: the tables may round a value within 1e-4 of
	// a half either way.
	for y := 0; y < 256; y++ {
		for cb := 0; cb < 256; cb += 3 {
			for cr := 0; cr < 256; cr += 3 {
				fy, fcb, fcr := 255.0/219*float64(y-16), 255.0/224*float64(cb-128), 255.0/224*float64(cr-128)
				wr, wg, wb := clip(fy+1.402*fcr), clip(fy-0.344136*fcb-0.714136*fcr), clip(fy+1.772*fcb)
				r, g, b := LimitedRangeRGB(uint8(y), uint8(cb), uint8(cr), false)
				if off(r, wr) || off(g, wg) || off(b, wb) {
					t.Fatalf("LimitedRangeRGB(%d, %d, %d) = %d, %d, %d, want %.3f, %.3f, %.3f", y, cb, cr, r, g, b, wr, wg, wb)
				}
				// The JPEG path on the expanded levels rounds twice and
				// may land a level or two away; outside the nominal
				// ranges the expanded levels clip.
				if y < 16 || y > 235 || cb < 16 || cb > 240 || cr < 16 || cr > 240 {
					continue
				}
				jr, jg, jb := color.YCbCrToRGB(fullY[y], fullC[cb], fullC[cr])
				if absDiff(r, jr) > 2 || absDiff(g, jg) > 2 || absDiff(b, jb) > 2 {
					t.Fatalf("(%d, %d, %d): %d, %d, %d, JPEG path %d, %d, %d", y, cb, cr, r, g, b, jr, jg, jb)
				}
			}
		}
	}
}

func absDiff(a, b uint8) int {
	return int(max(a, b) - min(a, b))
}

// TestTrackerReadsEveryForm gives the tracker one picture as RGBA, as a
// JPEG frame and as a video frame in limited range, BT.601 and BT.709: it
// must find the same face and read the same skin colour and lumas from all.
// The BT.709 frame's BT.601 lumas round twice (its own Y, then the chroma
// terms), which moves the detector's edges by a pixel: its box may differ
// by one pixel per edge.
func TestTrackerReadsEveryForm(t *testing.T) {
	rgba := scene(t, 640, 480, image.Pt(160, 40), 1)
	read := func(img image.Image) Observation {
		tr := NewTracker(cascade(t))
		o := tr.Observe(img)
		if !o.Face {
			t.Fatal("no face found")
		}
		return o
	}
	want := read(rgba)
	for _, tc := range []struct {
		name   string
		img    image.Image
		boxTol float64
	}{
		{"jpeg range", toYCbCr(rgba), 1},
		{"limited range", toLimited(rgba, image.YCbCrSubsampleRatio420, false), 1},
		// What dsp/media delivers.
		{"limited range 4:4:4", toLimited(rgba, image.YCbCrSubsampleRatio444, false), 1},
		{"limited range bt709", toLimited(rgba, image.YCbCrSubsampleRatio444, true), 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := read(tc.img)
			for _, d := range []struct {
				name      string
				got, want float64
				tol       float64
			}{
				{"box left", float64(o.Box.Min.X), float64(want.Box.Min.X), 1},
				{"box top", float64(o.Box.Min.Y), float64(want.Box.Min.Y), 1},
				{"box side", float64(o.Box.Dx()), float64(want.Box.Dx()), tc.boxTol},
				{"R", o.R, want.R, 0.5},
				{"G", o.G, want.G, 0.5},
				{"B", o.B, want.B, 0.5},
				{"SceneLuma", o.SceneLuma, want.SceneLuma, 0.5},
				{"BackgroundLuma", o.BackgroundLuma, want.BackgroundLuma, 0.5},
			} {
				if math.Abs(d.got-d.want) > d.tol {
					t.Errorf("%s %.2f, RGBA frame gives %.2f", d.name, d.got, d.want)
				}
			}
			if math.Abs(float64(o.SkinPixels-want.SkinPixels)) > 0.05*float64(want.SkinPixels) {
				t.Errorf("%d skin pixels, RGBA frame gives %d", o.SkinPixels, want.SkinPixels)
			}
		})
	}
}

// TestObserveLimitedAllocs keeps the video path free of allocations per
// frame once the face is tracked.
func TestObserveLimitedAllocs(t *testing.T) {
	frames := [2]image.Image{
		toLimited(scene(t, 480, 270, image.Pt(160, 20), 2), image.YCbCrSubsampleRatio420, false),
		toLimited(scene(t, 480, 270, image.Pt(161, 21), 2), image.YCbCrSubsampleRatio444, true),
	}
	tr := NewTracker(cascade(t))
	for i := range 2 * detectEvery {
		tr.Observe(frames[i%2])
	}
	i := 0
	if n := testing.AllocsPerRun(20, func() {
		tr.Observe(frames[i%2])
		i++
	}); n != 0 {
		t.Errorf("%.1f allocations per frame, want 0", n)
	}
}

package face

import (
	"errors"
	"image"
	"slices"
	"testing"

	pigo "github.com/esimov/pigo/core"
)

// checkAgainstPigo scans img's grayscale with our detector and with pigo's
// RunCascade under the same parameters and requires the same windows.
func checkAgainstPigo(t *testing.T, img *image.RGBA) {
	t.Helper()
	f := wrap(img, new(*image.RGBA))
	w, h := f.w, f.h
	g := make([]uint8, w*h)
	f.cells(g, make([]uint32, w), 0, 0, w, h, 1)

	raw, err := cascadeFiles.ReadFile("cascade/facefinder")
	if err != nil {
		t.Fatal(err)
	}
	ref, err := pigo.NewPigo().Unpack(raw)
	if err != nil {
		t.Fatal(err)
	}
	const minSize, maxSize = 30, 200
	want := ref.RunCascade(pigo.CascadeParams{
		MinSize: minSize, MaxSize: maxSize, ShiftFactor: 0.1, ScaleFactor: 1.1,
		ImageParams: pigo.ImageParams{Pixels: g, Rows: h, Cols: w, Dim: w},
	}, 0)
	got := cascade(t).faces.scan(nil, g, w, scanParams{minSize, maxSize, 0.1, 1.1, rect{0, 0, w, h}})
	if len(want) == 0 {
		t.Fatal("pigo found nothing: the test image has no face")
	}
	key := func(r, c, s int) [3]int { return [3]int{r, c, s} }
	var a, b [][3]int
	for _, d := range want {
		a = append(a, key(d.Row, d.Col, d.Scale))
	}
	for _, d := range got {
		b = append(b, key(d.row, d.col, d.size))
	}
	cmp := func(x, y [3]int) int { return slices.Compare(x[:], y[:]) }
	slices.SortFunc(a, cmp)
	slices.SortFunc(b, cmp)
	if !slices.Equal(a, b) {
		t.Fatalf("detections differ from pigo's:\n ours %v\npigo's %v", b, a)
	}
}

func TestParseCascadeRejectsMalformed(t *testing.T) {
	good, err := cascadeFiles.ReadFile("cascade/facefinder")
	if err != nil {
		t.Fatal(err)
	}
	goodLoc, err := cascadeFiles.ReadFile("cascade/puploc")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		parse func([]byte) error
		data  []byte
	}{
		{"detector empty", parseDet, nil},
		{"detector header only", parseDet, good[:16]},
		{"detector truncated", parseDet, good[:len(good)-1]},
		{"detector trailing byte", parseDet, append(slices.Clip(good), 0)},
		{"detector huge depth", parseDet, withWord(good, 8, 40)},
		{"localizer empty", parseLoc, nil},
		{"localizer truncated", parseLoc, goodLoc[:len(goodLoc)-4]},
		{"localizer zero stages", parseLoc, withWord(goodLoc, 0, 0)},
		{"localizer huge trees", parseLoc, withWord(goodLoc, 8, 1<<30)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.parse(tc.data); !errors.Is(err, errCascadeFormat) {
				t.Fatalf("got %v, want errCascadeFormat", err)
			}
		})
	}
}

func parseDet(b []byte) error { _, err := parseDetector(b); return err }
func parseLoc(b []byte) error { _, err := parseLocalizer(b); return err }

// withWord returns a copy of b with the little-endian uint32 at off set to v.
func withWord(b []byte, off int, v uint32) []byte {
	c := slices.Clone(b)
	c[off], c[off+1], c[off+2], c[off+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
	return c
}

// FuzzParseCascade feeds arbitrary bytes to both cascade parsers: they must
// refuse or accept without panicking, and an accepted detector must be
// usable on a small image without reading out of bounds.
func FuzzParseCascade(f *testing.F) {
	f.Add([]byte{})
	f.Add(make([]byte, 16))
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 1, 2, 3, 0, 0, 128, 63, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		if d, err := parseDetector(b); err == nil {
			g := make([]uint8, 64*64)
			d.scan(nil, g, 64, scanParams{20, 60, 0.2, 1.2, rect{0, 0, 64, 64}})
		}
		if l, err := parseLocalizer(b); err == nil {
			l.run(gray{pix: make([]uint8, 32*32), w: 32, h: 32, stride: 32}, 16, 16, 10, false)
		}
	})
}

// TestNodeOffsets checks the looked-up pixel of every node code against
// PICO's own placement, ((256 r + q s) >> 8, (256 c + q s) >> 8), for window
// sizes up to the largest a 640x480 frame holds and centres on both sides
// of the image's middle.
func TestNodeOffsets(t *testing.T) {
	const stride = 641
	var o nodeOffsets
	for s := 1; s <= 480; s++ {
		o.set(s, stride)
		for _, rc := range [][2]int{{s/2 + 1, s/2 + 1}, {240, 320}, {479 - s/2, 639 - s/2}} {
			r, c := rc[0], rc[1]
			for i := range 256 {
				for j := range 256 {
					qr, qc := int(int8(uint8(i))), int(int8(uint8(j)))
					want := ((256*r+qr*s)>>8)*stride + (256*c+qc*s)>>8
					if got := r*stride + c + o.row[i] + o.col[j]; got != want {
						t.Fatalf("size %d, centre (%d, %d), codes (%d, %d): pixel %d, want %d", s, r, c, qr, qc, got, want)
					}
				}
			}
		}
	}
}

// TestClassifyPair checks that two windows scored together get exactly the
// scores and decisions each gets alone, over every pair of neighbouring
// windows of a face photo at three sizes: both rejected, one accepted (at
// any tree, the other going on alone) and both accepted.
func TestClassifyPair(t *testing.T) {
	f := wrap(scene(t, 320, 240, image.Pt(0, 0), 2), nil)
	g := make([]uint8, f.w*f.h)
	f.cells(g, make([]uint32, f.w), 0, 0, f.w, f.h, 1)
	d := cascade(t).faces
	var o nodeOffsets
	var pairs [4]int // neither, first only, second only, both accepted
	for _, s := range []int{60, 100, 140} {
		o.set(s, f.w)
		half := s/2 + 1
		for r := half; r <= f.h-half; r += 2 {
			for c := half; c+3 <= f.w-half; c++ {
				a, b := r*f.w+c, r*f.w+c+3
				sa, oka, sb, okb := d.classifyPair(g, a, b, &o)
				wa, wantA := d.classify(g, a, &o)
				wb, wantB := d.classify(g, b, &o)
				if sa != wa || oka != wantA || sb != wb || okb != wantB {
					t.Fatalf("size %d at (%d, %d): pair (%v %v, %v %v), alone (%v %v, %v %v)",
						s, r, c, sa, oka, sb, okb, wa, wantA, wb, wantB)
				}
				kind := 0
				if oka {
					kind++
				}
				if okb {
					kind += 2
				}
				pairs[kind]++
			}
		}
	}
	for i, n := range pairs {
		if n == 0 {
			t.Errorf("no pair of kind %d (neither, first, second, both accepted): %v", i, pairs)
		}
	}
}

package face

import (
	"image"
	"math"
	"math/rand/v2"
	"testing"
)

// TestEachCovered checks the regions' pixel weights: they add up to the
// area of the rectangle, upright or turned; pixels well inside count
// whole, none well outside is touched; and the weights change smoothly as
// the rectangle moves by a fraction of a pixel.
func TestEachCovered(t *testing.T) {
	// Each pixel's red and green are its column and row.
	img := image.NewRGBA(image.Rect(0, 0, 200, 150))
	for y := range 150 {
		for x := range 200 {
			img.Pix[img.PixOffset(x, y)], img.Pix[img.PixOffset(x, y)+1] = uint8(x), uint8(y)
		}
	}
	f := wrap(img, nil)
	sum := func(a area) (total float64) {
		f.eachCovered(a, func(cover int32, _, _, _, _, _, _ uint8) {
			total += float64(cover) / coverUnit / coverUnit
		})
		return total
	}
	for _, deg := range []float64{0, 10, 30, 45, 90, -35} {
		sin, cos := math.Sincos(deg * math.Pi / 180)
		a := area{cx: 100.3, cy: 70.6, hw: 30.25, hh: 12.4, sin: sin, cos: cos}
		want := 4 * a.hw * a.hh
		total := sum(a)
		if math.Abs(total-want) > 0.01*want {
			t.Errorf("%v deg: weights add up to %.2f pixels, want %.2f", deg, total, want)
		}
		// Distances of a pixel's centre inside the two pairs of edges.
		inside := func(x, y int) (du, dv float64) {
			dx, dy := float64(x)+0.5-a.cx, float64(y)+0.5-a.cy
			return a.hw - math.Abs(dx*cos+dy*sin), a.hh - math.Abs(dy*cos-dx*sin)
		}
		touched := map[[2]int]int32{}
		f.eachCovered(a, func(cover int32, r, g, _, _, _, _ uint8) {
			touched[[2]int{int(r), int(g)}] = cover
			if du, dv := inside(int(r), int(g)); du < -0.75 || dv < -0.75 {
				t.Errorf("%v deg: pixel (%d, %d) touched %.2f and %.2f pixels outside", deg, r, g, -du, -dv)
			}
		})
		for y := range 150 {
			for x := range 200 {
				if du, dv := inside(x, y); du > 0.75 && dv > 0.75 && touched[[2]int{x, y}] != coverUnit*coverUnit {
					t.Fatalf("%v deg: pixel (%d, %d) well inside weighs %d", deg, x, y, touched[[2]int{x, y}])
				}
			}
		}
		// Moving by a tenth of a pixel changes the total by little.
		a.cx += 0.1
		if moved := sum(a); math.Abs(moved-total) > 0.005*want {
			t.Errorf("%v deg: moving a tenth of a pixel changed the weights from %.2f to %.2f", deg, total, moved)
		}
	}
	// Partly outside the frame: only the part inside counts.
	if total := sum(area{cx: 0, cy: 50, hw: 20, hh: 10, cos: 1}); math.Abs(total-400) > 1 {
		t.Errorf("half outside: %.2f pixels, want 400", total)
	}
}

// TestEachCoveredWeights checks every pixel's weight against the cover of
// its two pairs of edges, pixel by pixel over the whole frame, for areas
// upright and turned, large and small, inside and across the frame's
// edges: pixels covered whole take a shortcut that must give the same.
func TestEachCoveredWeights(t *testing.T) {
	const w, h = 120, 90
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Pix[img.PixOffset(x, y)], img.Pix[img.PixOffset(x, y)+1] = uint8(x), uint8(y)
		}
	}
	f := wrap(img, nil)
	rng := rand.New(rand.NewPCG(3, 4))
	for n := range 400 {
		deg := 0.0
		switch n % 4 {
		case 1:
			deg = 90
		case 2, 3:
			deg = rng.Float64()*120 - 60
		}
		sin, cos := math.Sincos(deg * math.Pi / 180)
		a := area{cx: rng.Float64()*140 - 10, cy: rng.Float64()*110 - 10,
			hw: 0.3 + rng.Float64()*30, hh: 0.3 + rng.Float64()*20, sin: sin, cos: cos}
		if n%10 == 0 { // centres and edges on the pixel grid
			a.cx, a.cy, a.hw, a.hh = math.Round(a.cx), math.Round(a.cy), math.Round(a.hw)+0.5, math.Round(a.hh)
		}
		span := math.Abs(cos) + math.Abs(sin)
		got := map[[2]int]int32{}
		f.eachCovered(a, func(cover int32, r, g, _, _, _, _ uint8) {
			if _, twice := got[[2]int{int(r), int(g)}]; twice {
				t.Fatalf("area %+v: pixel (%d, %d) visited twice", a, r, g)
			}
			got[[2]int{int(r), int(g)}] = cover
		})
		for y := range h {
			for x := range w {
				dx, dy := float64(x)+0.5-a.cx, float64(y)+0.5-a.cy
				want := edgeCover(a.hw-math.Abs(dx*cos+dy*sin), span) * edgeCover(a.hh-math.Abs(dy*cos-dx*sin), span)
				if c := got[[2]int{x, y}]; c != want {
					t.Fatalf("area %+v: pixel (%d, %d) weighs %d, want %d", a, x, y, c, want)
				}
			}
		}
	}
}

package clip

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestRowsUpright(t *testing.T) {
	s := &scene{ph: 300}
	rows := make([]rowSource, 480)
	s.rows(37.25, 0, rows)
	for y, r := range rows {
		if r.py != y-38 || r.fy != 0.25 || r.shade != 1 {
			t.Fatalf("row %d: %+v, want photo row %d at 0.25, unshaded", y, r, y-38)
		}
	}
}

// TestRowsBowed checks the bowed head against its geometry: the eyes move
// down by about headDepth·sin(pitch), the forehead keeps its height while
// the face below the eyes shrinks, the shading darkens the lower face
// most, and the rows stay in order (nothing is drawn upside down).
func TestRowsBowed(t *testing.T) {
	const ph, oy = 400.0, 0.0
	s := &scene{ph: int(ph)}
	rows := make([]rowSource, 480)
	s.rows(oy, 20, rows)
	// where returns the canvas row showing photo row fraction f.
	where := func(f float64) float64 {
		for y := 1; y < len(rows); y++ {
			if float64(rows[y].py)+1-float64(rows[y].fy) >= f*ph {
				return float64(y)
			}
		}
		t.Fatalf("photo row %.2f not shown", f)
		return 0
	}
	eye, brow, hairline, chin := where(pupils[0][1]), where(browRow), where(0.22), where(chinRow)
	if got, want := eye-pupils[0][1]*ph, headDepth*math.Sin(20*degrees)*ph; math.Abs(got-want) > 0.25*want {
		t.Errorf("eyes moved down %.1f rows, want about %.1f", got, want)
	}
	if up, was := eye-hairline, (pupils[0][1]-0.22)*ph; math.Abs(up-was) > 0.1*was {
		t.Errorf("hairline to eyes %.1f rows, upright %.1f: want about the same", up, was)
	}
	if down, was := chin-eye, (chinRow-pupils[0][1])*ph; down > 0.92*was || down < 0.7*was {
		t.Errorf("eyes to chin %.1f rows, upright %.1f: want 70-92%%", down, was)
	}
	if !(rows[int(chin)].shade < rows[int(eye)].shade && rows[int(eye)].shade < rows[int(brow)].shade+0.01 && rows[int(brow)].shade <= 1) {
		t.Errorf("shades chin %.2f, eyes %.2f, brows %.2f: want darker downwards, at most 1", rows[int(chin)].shade, rows[int(eye)].shade, rows[int(brow)].shade)
	}
	for y := 1; y < len(rows); y++ {
		a := float64(rows[y-1].py) + 1 - float64(rows[y-1].fy)
		b := float64(rows[y].py) + 1 - float64(rows[y].fy)
		if b < a {
			t.Fatalf("row %d shows photo row %.2f above row %d's %.2f", y, b, y-1, a)
		}
	}
}

func TestDrift(t *testing.T) {
	p := newPose(Config{Seconds: 600, Drift: 0.02, Pitch: 15}, rand.New(rand.NewPCG(1, 2)))
	for name, tc := range map[string]struct {
		x  []float64
		sd float64
	}{"x": {p.dx, 0.02}, "y": {p.dy, driftVertical * 0.02}, "nod": {p.pitch, nodDegrees}} {
		var s, s2 float64
		for _, v := range tc.x {
			s += v
			s2 += v * v
		}
		n := float64(len(tc.x))
		if sd := math.Sqrt(s2/n - (s/n)*(s/n)); math.Abs(sd-tc.sd) > 0.35*tc.sd {
			t.Errorf("%s: standard deviation %.4f, want about %.4f", name, sd, tc.sd)
		}
	}
	// Interpolated, and continuous.
	if a, b := sampleAt(p.dx, 12.3), sampleAt(p.dx, 12.3001); math.Abs(a-b) > 1e-4 {
		t.Errorf("drift jumps: %v then %v", a, b)
	}
	if still := newPose(Config{Seconds: 10}, rand.New(rand.NewPCG(1, 2))); sampleAt(still.dx, 3) != 0 || sampleAt(still.pitch, 3) != 0 {
		t.Error("a clip without drift drifts")
	}
}

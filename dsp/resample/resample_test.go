package resample

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestUniformFromJitteredTimes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		fps    float64
		jitter float64 // fraction of the frame interval
		drop   float64 // probability a frame is lost
	}{
		{"15 fps steady", 15, 0, 0},
		{"30 fps jitter", 30, 0.3, 0},
		{"30 fps dropped frames", 30, 0.2, 0.15},
		{"60 fps jitter", 60, 0.4, 0.05},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 4))
			var ts, xs []float64
			f := func(s float64) float64 { return math.Sin(2 * math.Pi * 1.2 * s) }
			for i := 0; i < int(10*tc.fps); i++ {
				if i > 0 && rng.Float64() < tc.drop {
					continue
				}
				s := (float64(i) + tc.jitter*(rng.Float64()-0.5)) / tc.fps
				ts = append(ts, s)
				xs = append(xs, f(s))
			}
			const rate = 30
			y := Uniform(nil, ts, xs, rate)
			if len(y) != Len(ts, rate) || len(y) < 280 {
				t.Fatalf("len %d", len(y))
			}
			// Linear interpolation error is bounded by h²/8 · max|f''| for a
			// gap h; 15 fps with drops leaves h up to ~0.2 s here.
			var worst float64
			for i, v := range y {
				worst = max(worst, math.Abs(v-f(ts[0]+float64(i)/rate)))
			}
			if worst > 0.25 {
				t.Errorf("interpolation error %g", worst)
			}
		})
	}
}

func TestUniformEdges(t *testing.T) {
	if got := Uniform(nil, nil, nil, 30); len(got) != 0 {
		t.Errorf("empty input gave %v", got)
	}
	got := Uniform(nil, []float64{5}, []float64{2}, 30)
	if len(got) != 1 || got[0] != 2 {
		t.Errorf("one sample gave %v", got)
	}
	got = Uniform(nil, []float64{0, 0.1}, []float64{0, 1}, 10)
	if len(got) != 2 || got[1] != 1 {
		t.Errorf("two samples gave %v", got)
	}
}

package resp

import (
	"math"
	"slices"
)

// countRate counts breaths in x (a respiratory modulation, uniform at hz,
// band-limited to the breathing band) with the "advanced counting" method of
// Schäfer & Kratky, "Estimation of breathing rate from respiratory sinus
// arrhythmia", Ann. Biomed. Eng. 36(3), 2008: take the alternating local
// maxima and minima, then repeatedly remove the neighbouring pair with the
// smallest difference while that difference is below a tenth of the upper
// quartile of all differences, so ripples of noise or of a slower wave
// riding on the breaths are not counted. The rate is 60 over the mean
// maximum-to-maximum interval. Counting follows irregular breathing that
// spreads over several spectral bins.
//
// holes are spans of the capture (s from x[0]'s time) where no sample was
// taken: the straight line interpolation leaves there carries no breath, so
// their time is not counted in the span the cycles are spread over (a hole
// of a tenth of the capture would otherwise read the rate a tenth low).
func countRate(x []float64, hz float64, holes ...Hole) (perMin float64, ok bool) {
	type ext struct {
		i   int
		v   float64
		max bool
	}
	var es []ext
	for i := 1; i+1 < len(x); i++ {
		switch {
		case x[i] > x[i-1] && x[i] >= x[i+1]:
			es = append(es, ext{i, x[i], true})
		case x[i] < x[i-1] && x[i] <= x[i+1]:
			es = append(es, ext{i, x[i], false})
		}
	}
	if len(es) < 4 {
		return 0, false
	}
	diffs := make([]float64, len(es)-1)
	for i := range diffs {
		diffs[i] = math.Abs(es[i+1].v - es[i].v)
	}
	slices.Sort(diffs)
	thr := 0.1 * diffs[len(diffs)*3/4]
	for len(es) >= 2 {
		k, small := -1, thr
		for i := 0; i+1 < len(es); i++ {
			if d := math.Abs(es[i+1].v - es[i].v); d < small {
				k, small = i, d
			}
		}
		if k < 0 {
			break
		}
		es = slices.Delete(es, k, k+2)
	}
	var first, last, cycles int = -1, -1, -1
	for _, e := range es {
		if !e.max {
			continue
		}
		if first < 0 {
			first = e.i
		}
		last = e.i
		cycles++
	}
	if cycles < 2 {
		return 0, false
	}
	span := float64(last-first) / hz
	a, b := float64(first)/hz, float64(last)/hz
	for _, h := range holes {
		span -= max(0, min(b, h.To)-max(a, h.From))
	}
	if !(span > 0) {
		return 0, false
	}
	return 60 * float64(cycles) / span, true
}

// Hole is a span without samples, s from the start of the series.
type Hole struct{ From, To float64 }

// shift returns holes with origin moved to t0 s.
func shift(holes []Hole, t0 float64) []Hole {
	out := make([]Hole, len(holes))
	for i, h := range holes {
		out[i] = Hole{h.From - t0, h.To - t0}
	}
	return out
}

// Package resample puts unevenly timed samples onto a uniform grid.
//
// Cameras deliver frames with jitter and drop some; filters and spectra need
// a constant sampling rate. Linear interpolation between the two neighbouring
// samples is exact for the slow pulse and breathing waves (their period spans
// many frames) and bridges short gaps from dropped frames without inventing
// detail.
package resample

import "fmt"

// Len returns how many grid samples at rateHz fit between the first and last
// time of t (seconds): floor((t[last] - t[0]) · rateHz) + 1, or 0 when t is
// empty.
func Len(t []float64, rateHz float64) int {
	if len(t) == 0 {
		return 0
	}
	return int((t[len(t)-1]-t[0])*rateHz+1e-9) + 1
}

// Uniform interpolates x, sampled at strictly increasing times t (seconds),
// linearly onto the grid t[0] + i/rateHz, i < Len(t, rateHz), writing dst.
// A nil dst is allocated; a dst of another length panics, as does t out of
// order or of another length than x (callers clean outside data first).
func Uniform(dst, t, x []float64, rateHz float64) []float64 {
	if len(t) != len(x) {
		panic(fmt.Sprintf("resample: %d times for %d values", len(t), len(x)))
	}
	n := Len(t, rateHz)
	if dst == nil {
		dst = make([]float64, n)
	} else if len(dst) != n {
		panic(fmt.Sprintf("resample: destination length %d, want %d", len(dst), n))
	}
	j := 0
	for i := range dst {
		ti := t[0] + float64(i)/rateHz
		for j+1 < len(t)-1 && t[j+1] <= ti {
			j++
		}
		if j+1 >= len(t) {
			dst[i] = x[j]
			continue
		}
		dt := t[j+1] - t[j]
		if !(dt > 0) {
			panic("resample: times not strictly increasing")
		}
		w := (ti - t[j]) / dt
		dst[i] = x[j] + w*(x[j+1]-x[j])
	}
	return dst
}

package pulse

import (
	"math"
	"testing"
)

// TestRectify checks that Rectify takes out what the references explain and
// leaves the rest: a pulse coupled with a sway comes back without the sway,
// a pulse the references do not explain comes back whole, and a flat
// reference changes nothing.
func TestRectify(t *testing.T) {
	const rate, seconds = 30.0, 30.0
	n := int(rate * seconds)
	sine := func(hz, amp, phase float64) []float64 {
		x := make([]float64, n)
		for i := range x {
			x[i] = amp * math.Sin(2*math.Pi*hz*float64(i)/rate+phase)
		}
		return x
	}
	add := func(xs ...[]float64) []float64 {
		out := make([]float64, n)
		for _, x := range xs {
			for i, v := range x {
				out[i] += v
			}
		}
		return out
	}
	scaled := func(x []float64, k float64) []float64 {
		out := make([]float64, n)
		for i, v := range x {
			// A coupling that drifts over the recording, as a turning head's.
			out[i] = v * k * (1 + 0.1*math.Sin(2*math.Pi*float64(i)/float64(n)))
		}
		return out
	}
	pulse := sine(1.3, 1, 0)
	sway := add(sine(0.7, 1, 0.4), sine(1.9, 0.6, 1.1))
	other := add(sine(0.83, 1, 2), sine(2.7, 0.8, 0.3))
	flat := make([]float64, n)
	cases := []struct {
		name   string
		x      []float64
		refs   [][]float64
		maxErr float64 // rms of (result - pulse) over rms of the pulse
	}{
		{"no references", pulse, nil, 1e-12},
		{"flat reference", pulse, [][]float64{flat}, 1e-9},
		{"sway removed", add(pulse, scaled(sway, 3)), [][]float64{sway}, 0.1},
		{"sway removed among others", add(pulse, scaled(sway, 3)), [][]float64{other, sway, flat}, 0.15},
		{"pulse not in the references kept", pulse, [][]float64{sway, other}, 0.1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Rectify(nil, tc.x, tc.refs, rate)
			var e, p float64
			for i := range got {
				e += (got[i] - pulse[i]) * (got[i] - pulse[i])
				p += pulse[i] * pulse[i]
			}
			if r := math.Sqrt(e / p); !(r <= tc.maxErr) {
				t.Errorf("relative error %.4f, want at most %v", r, tc.maxErr)
			}
		})
	}
	// Without the sway as a reference the pulse keeps it: the test above
	// measures the removal, not a filter.
	got := Rectify(nil, add(pulse, scaled(sway, 3)), [][]float64{other}, rate)
	var e, p float64
	for i := range got {
		e += (got[i] - pulse[i]) * (got[i] - pulse[i])
		p += pulse[i] * pulse[i]
	}
	if math.Sqrt(e/p) < 1 {
		t.Errorf("an unrelated reference removed the sway (relative error %.3f)", math.Sqrt(e/p))
	}
}

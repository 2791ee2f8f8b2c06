package stats

import "testing"

func TestStats(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    func([]float64) float64
		x    []float64
		want float64
	}{
		{"Median", Median, nil, 0},
		{"Median", Median, []float64{3}, 3},
		{"Median", Median, []float64{3, 1, 2}, 2},
		{"Median", Median, []float64{4, 1, 3, 2}, 2}, // the lower middle value
		{"Mean", Mean, nil, 0},
		{"Mean", Mean, []float64{3}, 3},
		{"Mean", Mean, []float64{1, 2, 6}, 3},
	} {
		if got := tc.f(tc.x); got != tc.want {
			t.Errorf("%s(%v) = %v, want %v", tc.name, tc.x, got, tc.want)
		}
	}
}

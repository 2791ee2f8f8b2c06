package stats

import "testing"

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		x    []float64
		want float64
	}{
		{nil, 0},
		{[]float64{3}, 3},
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2}, // the lower middle value
	} {
		if got := Median(tc.x); got != tc.want {
			t.Errorf("Median(%v) = %v, want %v", tc.x, got, tc.want)
		}
	}
}

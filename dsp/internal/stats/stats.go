// Package stats holds the summary statistics that several dsp packages
// share. Unlike gonum's, they answer 0 rather than NaN for no values: an
// empty window or track is a missing reading, and a NaN would spread into
// every score computed from it.
package stats

import (
	"slices"

	"gonum.org/v1/gonum/stat"
)

// Median returns the median of x (the lower middle value for an even
// count), reordering x; 0 for no values.
func Median(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	slices.Sort(x)
	return stat.Quantile(0.5, stat.Empirical, x, nil)
}

// Mean returns the arithmetic mean of x; 0 for no values.
func Mean(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(max(len(x), 1))
}

package main

import (
	"math"
	"testing"
)

// TestDropPatterns: each pattern keeps the share of a minute at 30 fps its
// name says, and always the first and last samples.
func TestDropPatterns(t *testing.T) {
	ts := make([]float64, 1800)
	for i := range ts {
		ts[i] = float64(i) * 1000 / 30
	}
	want := map[string]float64{
		"none": 1, "every 4th": 0.75, "every 3rd": 2.0 / 3, "every 2nd": 0.5, "every 2nd, 2 s in 4": 0.75,
		"20% at random": 0.8, "30% at random": 0.7, "50% at random": 0.5,
		"0.3 s every 2 s": 0.85, "0.5 s every 3 s": 5.0 / 6, "1 s every 8 s": 0.875, "1 s every 4 s": 0.75,
	}
	for _, p := range dropPatterns {
		share, ok := want[p.name]
		if !ok {
			t.Errorf("%s: no expected share", p.name)
			continue
		}
		idx := p.kept(ts, 1)
		if idx[0] != 0 || idx[len(idx)-1] != len(ts)-1 {
			t.Errorf("%s: first and last kept %d, %d", p.name, idx[0], idx[len(idx)-1])
		}
		if got := float64(len(idx)) / float64(len(ts)); math.Abs(got-share) > 0.03 {
			t.Errorf("%s: kept %.3f of the samples, want %.3f", p.name, got, share)
		}
	}
}

package waveform

import (
	"math"
	"testing"
)

func TestSecondDerivativeOfSine(t *testing.T) {
	const n, period = 128, 0.8
	x := make([]float64, n)
	for i := range x {
		x[i] = math.Sin(2 * math.Pi * float64(i) / n)
	}
	sd := SecondDerivative(x, period, 8)
	w := 2 * math.Pi / period
	for i := range sd {
		if want := -w * w * x[i]; math.Abs(sd[i]-want) > 1e-6*w*w {
			t.Fatalf("sample %d: %g, want %g", i, sd[i], want)
		}
	}
}

// gaussianBeat is a beat from its foot: a systolic Gaussian at 0.18 of the
// period and a diastolic one at 0.45, the shape testsignal generates.
func gaussianBeat(n int, notch float64) []float64 {
	x := make([]float64, n)
	for i := range x {
		ph := float64(i) / float64(n)
		x[i] = math.Exp(-math.Pow((ph-0.18)/0.075, 2)/2) + notch*math.Exp(-math.Pow((ph-0.45)/0.11, 2)/2)
	}
	return x
}

func TestFindWaves(t *testing.T) {
	sd := SecondDerivative(gaussianBeat(128, 0.4), 0.85, 8)
	const peak = 23 // 0.18 of 128
	w, ok := FindWaves(sd, peak)
	if !ok {
		t.Fatal("no a-e waves in a two-Gaussian beat")
	}
	if !(w.A > 0 && w.B < 0 && w.C > w.B && w.D < w.C && w.E > w.D) {
		t.Errorf("waves out of order: %+v", w)
	}
	if got, want := w.AgeingIndex(), (w.B-w.C-w.D-w.E)/w.A; got != want {
		t.Errorf("ageing index %g, want %g", got, want)
	}
	// A pure sinusoid has one maximum and one minimum: no c, d, e.
	sine := make([]float64, 128)
	for i := range sine {
		sine[i] = -math.Cos(2 * math.Pi * float64(i) / 128)
	}
	if _, ok := FindWaves(SecondDerivative(sine, 0.85, 8), 64); ok {
		t.Error("found a-e waves in a sinusoid")
	}
}

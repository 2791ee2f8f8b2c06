package pulse

import (
	"math"
	"slices"
	"testing"

	"github.com/pulsewire/pulsewire/dsp/internal/testsignal"
	"github.com/pulsewire/pulsewire/dsp/resample"
	"github.com/pulsewire/pulsewire/dsp/spectrum"
)

func grid(s testsignal.Signal, fps float64) (r, g, b, i []float64) {
	ts := make([]float64, len(s.T))
	for k, v := range s.T {
		ts[k] = v / 1000
	}
	return resample.Uniform(nil, ts, s.R, fps), resample.Uniform(nil, ts, s.G, fps),
		resample.Uniform(nil, ts, s.B, fps), resample.Uniform(nil, ts, s.I, fps)
}

// peakBpm is the strongest 40-200 bpm frequency of x.
func peakBpm(x []float64, fps float64) float64 {
	var a spectrum.Analyzer
	var sp spectrum.Spectrum
	a.Periodogram(&sp, x, fps, spectrum.FFTLen(len(x), fps, 0.005))
	p, _ := sp.Peak(40.0/60, 200.0/60)
	return 60 * p.Hz
}

// TestProjectionsCancelIntensity: a light flicker at 90 bpm, 40 times the
// pulse and equal in all channels, hides the 70 bpm pulse from the green
// channel alone but not from POS or CHROM.
func TestProjectionsCancelIntensity(t *testing.T) {
	s := testsignal.Make(testsignal.Config{Seed: 1, HR: 70, PulseAmp: 0.003, Noise: 0.02, FlickerHz: 1.5, FlickerDepth: 0.12})
	r, g, b, _ := grid(s, 30)
	w := FromRGB(r, g, b, 30)
	if got := peakBpm(w.Pulse, 30); math.Abs(got-70) > 1 {
		t.Errorf("%s pulse peaks at %.1f bpm, want 70", w.Method, got)
	}
	if got := peakBpm(FromIntensity(g, 30).Pulse, 30); math.Abs(got-90) > 1 {
		t.Errorf("green alone peaks at %.1f bpm: the flicker should dominate it", got)
	}
	if w.Method != MethodPOS && w.Method != MethodCHROM {
		t.Errorf("method %q", w.Method)
	}
}

func TestOrient(t *testing.T) {
	// A wave with a quick rise and a slow fall is kept; flipped, it is flipped back.
	x := make([]float64, 300)
	for i := range x {
		ph := math.Mod(float64(i)/30, 1)
		if ph < 0.2 {
			x[i] = ph / 0.2
		} else {
			x[i] = 1 - (ph-0.2)/0.8
		}
	}
	y := append([]float64(nil), x...)
	if Orient(y) {
		t.Error("flipped a rising wave")
	}
	for i := range y {
		y[i] = -x[i]
	}
	if !Orient(y) || y[10] != x[10] {
		t.Error("did not flip an inverted wave back")
	}
}

// TestContactPolarity: camera brightness (falls with blood volume) and a
// plethysmograph (rises with it) give the same oriented pulse.
func TestContactPolarity(t *testing.T) {
	s := testsignal.Make(testsignal.Config{Seed: 2, HR: 60, Noise: 0.02})
	_, _, _, in := grid(s, 30)
	neg := make([]float64, len(in))
	for k, v := range in {
		neg[k] = 2000 - v
	}
	a, b := FromIntensity(in, 30), FromIntensity(neg, 30)
	var dot, na, nb float64
	for k := range a.Pulse {
		dot += a.Pulse[k] * b.Pulse[k]
		na += a.Pulse[k] * a.Pulse[k]
		nb += b.Pulse[k] * b.Pulse[k]
	}
	if c := dot / math.Sqrt(na*nb); c < 0.95 {
		t.Errorf("correlation of the two orientations %.2f", c)
	}
}

// TestWideAs checks that extracting a trace the way a wave was extracted
// gives that very wave back for the same trace, with references or without,
// and that the rectification and the turn it repeats are the wave's own.
func TestWideAs(t *testing.T) {
	const rate, n = 30.0, 900
	c := Camera{R: make([]float64, n), G: make([]float64, n), B: make([]float64, n), Refs: [][]float64{make([]float64, n)}}
	for i := range n {
		ts := float64(i) / rate
		// Skin darkens with each beat, quickly, and recovers slowly: the
		// raw trace must be turned over.
		ph := math.Mod(1.2*ts, 1)
		p := 0.004 * math.Min(1, ph/0.15) * math.Exp(-3*max(0, ph-0.15))
		// A sway inside the pulse band that moves the green channel
		// more than the others, so the projections do not cancel it and
		// rectification has work.
		sway := 0.01 * math.Sin(2*math.Pi*1.9*ts)
		c.R[i], c.G[i], c.B[i] = 150*(1-0.4*p), 110*(1-p+sway), 90*(1-0.7*p)
		c.Refs[0][i] = sway
	}
	for _, refs := range []bool{true, false} {
		cam := c
		if !refs {
			cam.Refs = nil
		}
		w := FromCamera(cam, rate)
		if refs && !(w.Rectified && w.Flipped) {
			t.Fatalf("the wave is rectified %v, flipped %v: the test needs both", w.Rectified, w.Flipped)
		}
		if !slices.Equal(WideAs(cam, rate, w), w.Wide) {
			t.Errorf("refs %v: the same trace gave another wave (%s, rectified %v, flipped %v)", refs, w.Method, w.Rectified, w.Flipped)
		}
	}
	like := Wave{Method: MethodGreen}
	plain := WideAs(c, rate, like)
	like.Rectified = true
	rect := WideAs(c, rate, like)
	like.Flipped = true
	turned := WideAs(c, rate, like)
	if slices.Equal(plain, rect) {
		t.Error("rectification changed nothing")
	}
	for i := range rect {
		if turned[i] != -rect[i] {
			t.Fatalf("sample %d: turned %g, want %g", i, turned[i], -rect[i])
		}
	}
}

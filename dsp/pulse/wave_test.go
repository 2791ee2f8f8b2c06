package pulse

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pulsewire/pulsewire/dsp/internal/testsignal"
)

// TestFromCameraReferences: references take out what moves with them, but a
// reference that carries the pulse itself (a tracker's position biased by
// the skin darkening with each beat, far below a pixel) does not take the
// pulse with it, and one that carries a sway still removes the sway.
func TestFromCameraReferences(t *testing.T) {
	const fps = 15.0
	s := testsignal.Make(testsignal.Config{Seed: 4, Seconds: 14, FPS: fps, HR: 72, Noise: 0.15})
	r, g, b, _ := grid(s, fps)
	n := len(g)
	rng := rand.New(rand.NewPCG(7, 8))
	rel := relative(g)
	// leak is a position reference: measurement noise plus a copy of the
	// pulse (correlation about 0.5 with the green trace).
	leak := make([]float64, n)
	for i := range leak {
		leak[i] = 100 + 0.002*rng.NormFloat64() + 0.4*rel[i]
	}
	// A sway at 50 bpm, three times the pulse, with its reference.
	sway := make([]float64, n)
	swayed := make([]float64, n)
	for i := range sway {
		v := math.Sin(2*math.Pi*50.0/60*float64(i)/fps) + 0.5*math.Sin(2*math.Pi*0.37*float64(i)/fps)
		sway[i] = 100 + 2*v
		swayed[i] = g[i] * (1 + 0.015*v)
	}
	// A flat reference changes nothing: the SNR to keep.
	bare := FromCamera(Camera{R: r, G: g, B: b, Refs: [][]float64{make([]float64, n)}}, fps)
	cases := []struct {
		name   string
		c      Camera
		minSNR float64
	}{
		{"reference carrying the pulse", Camera{R: r, G: g, B: b, Refs: [][]float64{leak}}, bare.SNR - 0.5},
		{"sway with its reference", Camera{R: r, G: swayed, B: b, Refs: [][]float64{sway}}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := FromCamera(tc.c, fps)
			if math.Abs(60*w.PeakHz-s.HR) > 3 || !(w.SNR >= tc.minSNR) {
				t.Errorf("%s: peak %.1f bpm (truth %.1f), SNR %.2f dB, want at least %.2f", w.Method, 60*w.PeakHz, s.HR, w.SNR, tc.minSNR)
			}
		})
	}
	// Without its reference the sway is what the green trace shows: the
	// case above measures the rectification.
	if w := FromCamera(Camera{R: r, G: swayed, B: b}, fps); math.Abs(60*w.PeakHz-s.HR) <= 3 && w.Method == MethodGreen {
		t.Errorf("the sway does not dominate green without its reference (%s at %.1f bpm)", w.Method, 60*w.PeakHz)
	}
}

// TestCandidatesMethods: a bare colour trace is read by POS, CHROM and
// green, none rectified; a trace with references (from frames) by POS and
// green only.
func TestCandidatesMethods(t *testing.T) {
	const fps = 30.0
	s := testsignal.Make(testsignal.Config{Seed: 2, Seconds: 12, FPS: fps, HR: 80, Noise: 0.1})
	r, g, b, _ := grid(s, fps)
	ref := make([]float64, len(g))
	for i := range ref {
		ref[i] = 100 + math.Sin(2*math.Pi*0.3*float64(i)/fps)
	}
	cases := []struct {
		name string
		refs [][]float64
		want []Method
	}{
		{"bare colour trace", nil, []Method{MethodPOS, MethodCHROM, MethodGreen}},
		{"with references", [][]float64{ref}, []Method{MethodPOS, MethodGreen}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ws := Candidates(Camera{R: r, G: g, B: b, Refs: tc.refs}, fps)
			var got []Method
			for _, w := range ws {
				got = append(got, w.Method)
				if tc.refs == nil && w.Rectified {
					t.Errorf("%s rectified without references", w.Method)
				}
				if len(w.Pulse) != len(g) || len(w.Baseline) != len(g) {
					t.Errorf("%s: pulse %d and baseline %d samples, want %d", w.Method, len(w.Pulse), len(w.Baseline), len(g))
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("methods %v, want %v", got, tc.want)
			}
		})
	}
}

package main

import (
	"math"
	"testing"

	"github.com/pulsewire/pulsewire/dsp"
)

// rampTrace is a trace of the given length at fps whose channels count
// the frames, so a piece's first value says where it starts.
func rampTrace(fps, seconds float64) dsp.Trace {
	var tr dsp.Trace
	for i := range int(seconds * fps) {
		tr.TimestampsMs = append(tr.TimestampsMs, float64(i)*1000/fps)
		tr.R = append(tr.R, float64(i))
		tr.G = append(tr.G, float64(i))
		tr.B = append(tr.B, float64(i))
	}
	return tr
}

// TestPieces: end to end, the pieces follow one another and leave the
// remainder out; every 5 s they overlap, one starting every 5 s, each as
// long; a trace shorter than a piece gives none.
func TestPieces(t *testing.T) {
	const fps = 15.0
	tr := rampTrace(fps, 100)
	for _, c := range []struct {
		every     float64
		n         int
		stepFrame float64
	}{{0, 3, 450}, {30, 3, 450}, {5, 14, 75}} {
		ps := pieces(tr, 30, c.every)
		if len(ps) != c.n {
			t.Fatalf("every %g s: %d pieces of 30 s in 100 s, want %d", c.every, len(ps), c.n)
		}
		for i, p := range ps {
			if len(p.G) != 450 || len(p.R) != 450 || len(p.B) != 450 || len(p.TimestampsMs) != 450 {
				t.Errorf("every %g s: piece %d has %d samples, want 450 (30 s at 15 fps)", c.every, i, len(p.G))
			}
			if want := float64(i) * c.stepFrame; p.G[0] != want {
				t.Errorf("every %g s: piece %d starts at frame %g, want %g", c.every, i, p.G[0], want)
			}
		}
	}
	if ps := pieces(rampTrace(fps, 29), 30, 5); len(ps) != 0 {
		t.Errorf("%d pieces of 30 s in 29 s, want none", len(ps))
	}
}

// TestWithPulse: the added pulse changes each channel in proportion to
// the signature, green by the strength given.
func TestWithPulse(t *testing.T) {
	const fps = 30.0
	var tr dsp.Trace
	for i := range 300 {
		tr.TimestampsMs = append(tr.TimestampsMs, float64(i)*1000/fps)
		tr.R, tr.G, tr.B = append(tr.R, 120), append(tr.G, 110), append(tr.B, 90)
	}
	wave := make([]float64, 600)
	for i := range wave {
		wave[i] = math.Sin(2 * math.Pi * 1.2 * float64(i) / fps)
	}
	sig := [3]float64{0.7, 1, 0.8}
	out := withPulse(tr, wave, fps, 0, 0.01, sig)
	for i := range out.G {
		g := out.G[i]/110 - 1
		if math.Abs(g-0.01*wave[i]) > 1e-12 {
			t.Fatalf("sample %d: green changed by %g, want %g", i, g, 0.01*wave[i])
		}
		r, b := out.R[i]/120-1, out.B[i]/90-1
		if math.Abs(r-sig[0]*g) > 1e-12 || math.Abs(b-sig[2]*g) > 1e-12 {
			t.Fatalf("sample %d: red and blue changed by %g and %g, want %g and %g", i, r, b, sig[0]*g, sig[2]*g)
		}
	}
	if tr.G[10] != 110 {
		t.Error("withPulse changed the trace it was given")
	}
}

// TestParseSignature: the default is the skin's signature; two positive
// numbers set red and blue; anything else is refused.
func TestParseSignature(t *testing.T) {
	if sig, err := parseSignature(""); err != nil || sig != defaultSignature {
		t.Errorf(`parseSignature("") = %v, %v; want %v`, sig, err, defaultSignature)
	}
	if sig, err := parseSignature("0.7, 0.8"); err != nil || sig != [3]float64{0.7, 1, 0.8} {
		t.Errorf(`parseSignature("0.7, 0.8") = %v, %v; want [0.7 1 0.8]`, sig, err)
	}
	for _, bad := range []string{"0.7", "0.7,0.8,0.9", "0,0.8", "-1,0.8", "x,0.8", "0.7,NaN", "0.7,Inf"} {
		if _, err := parseSignature(bad); err == nil {
			t.Errorf("parseSignature(%q) accepted", bad)
		}
	}
}

package main

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pulsewire/pulsewire/dsp"
)

// TestSemiSynthetic: a clear 72 bpm pulse added to a quiet trace is
// tracked, and read by the plain pipeline, in every piece, and both
// columns count against the reference: listed 20 bpm off, the same pieces
// are within 5 bpm in none.
func TestSemiSynthetic(t *testing.T) {
	const fps, seconds = 15.0, 130.0
	rng := rand.New(rand.NewPCG(1, 2))
	var tr dsp.Trace
	for i := range int(seconds * fps) {
		tr.TimestampsMs = append(tr.TimestampsMs, float64(i)*1000/fps)
		tr.R = append(tr.R, 120+0.1*rng.NormFloat64())
		tr.G = append(tr.G, 110+0.1*rng.NormFloat64())
		tr.B = append(tr.B, 90+0.1*rng.NormFloat64())
	}
	clips := []skinClip{{name: "quiet", trace: tr}}
	finger := func(refBpm float64) []fingertip {
		f := fingertip{rateHz: 30}
		for i := range 200 * 30 {
			f.wave = append(f.wave, math.Sqrt2*math.Sin(2*math.Pi*1.2*float64(i)/30))
		}
		for range 200 {
			f.ref = append(f.ref, refBpm)
		}
		return []fingertip{f}
	}
	for _, c := range []struct {
		ref            float64
		tracked, plain string
	}{{72, "100%", "100%"}, {92, "0%", "0%"}} {
		var b strings.Builder
		semiSynthetic(&b, finger(c.ref), clips)
		rows := 0
		for line := range strings.Lines(b.String()) {
			if !strings.Contains(line, "| 0.8% |") {
				continue
			}
			rows++
			cells := strings.Split(strings.TrimSpace(line), "|")
			if got := strings.TrimSpace(cells[len(cells)-3]); got != c.tracked {
				t.Errorf("reference %.0f bpm: %q tracked %s, want %s", c.ref, strings.TrimSpace(line), got, c.tracked)
			}
			if got := strings.TrimSpace(cells[len(cells)-2]); got != c.plain {
				t.Errorf("reference %.0f bpm: %q plain POS %s, want %s", c.ref, strings.TrimSpace(line), got, c.plain)
			}
		}
		if rows != 2 {
			t.Fatalf("%d rows with a 0.8%% pulse, want 2 (30 s and 60 s):\n%s", rows, b.String())
		}
	}
}

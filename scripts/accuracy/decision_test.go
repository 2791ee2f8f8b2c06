package main

import (
	"bytes"
	"encoding/xml"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
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
		outs := semiSynthetic(&b, finger(c.ref), clips, defaultSignature)
		for _, o := range outs[[2]float64{30, 0.008}] {
			if o.ref != c.ref || (math.Abs(o.tracked-72) > 2) {
				t.Errorf("a 30 s piece with a 72 bpm pulse: outcome %+v, want the reference %.0f and the pulse tracked", o, c.ref)
			}
		}
		if n := len(outs[[2]float64{30, 0.008}]); n != 4 {
			t.Errorf("%d outcomes of 30 s pieces with a 0.8%% pulse, want 4", n)
		}
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

// TestDecisionFigure draws the decision picture from known outcomes and
// reads each line's share at the service's level back from its legend.
func TestDecisionFigure(t *testing.T) {
	piece := func(conf, tracked float64) outcome {
		return outcome{ref: 72, tracked: tracked, confidence: conf, seconds: 30, code: dsp.ConformityMissingSignal}
	}
	noise := []outcome{piece(0.55, 60), piece(0.65, 90), piece(0.75, 75), piece(0.85, 140)}
	pulses := map[float64][]outcome{
		0.008: {piece(0.9, 72), piece(0.95, 73), piece(0.86, 71), piece(0.6, 72)},
		0.004: {piece(0.9, 92), piece(0.5, 72)},
	}
	path := filepath.Join(t.TempDir(), "decision.svg")
	if err := decisionFigure(path, noise, pulses); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(bytes.NewReader(data))
	for {
		if _, err := d.Token(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("not well-formed SVG: %v", err)
		}
	}
	for _, want := range []string{
		"(4)", "the service: 0.84",
		"no readable pulse: answered (all false): 25% at 0.84",
		"0.8% pulse: answered within 5 bpm: 75% at 0.84",
		"0.8% pulse: answered more than 10 bpm off: 0% at 0.84",
		"0.4% pulse: answered within 5 bpm: 0% at 0.84",
		"0.4% pulse: answered more than 10 bpm off: 50% at 0.84",
	} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("no %q in the picture", want)
		}
	}
}

package dsp

import (
	"math"
	"testing"

	"github.com/pulsewire/pulsewire/dsp/internal/testsignal"
)

// TestNoiseIsNoPulse: camera and contact traces of pure noise, at every frame
// rate and length, answer CONFORMITY_MISSING_SIGNAL rather than a made-up
// heart rate; a weak real pulse (0.3%) in the same noise is measured once
// the capture lasts 30 s (in 12 s it may not stand out: the price of never
// inventing a rate from noise).
func TestNoiseIsNoPulse(t *testing.T) {
	for _, fps := range []float64{15, 30, 60} {
		for _, secs := range []float64{12, 30, 60} {
			falsePass, missed := 0, 0
			for seed := uint64(1); seed <= 3; seed++ {
				noise := testsignal.Make(testsignal.Config{Seed: seed, FPS: fps, Seconds: secs, PulseAmp: 1e-12, Noise: 0.1})
				for _, r := range []Result{AnalyzeTrace(trace(noise), Inputs{Variables: []string{HR}}), AnalyzePPG(ppg(noise), Inputs{Variables: []string{HR}})} {
					if code(r, HR) != ConformityMissingSignal {
						falsePass++
					}
				}
				weak := testsignal.Make(testsignal.Config{Seed: seed, FPS: fps, Seconds: secs, HR: 50 + 20*float64(seed), PulseAmp: 0.003, Noise: 0.1})
				r := AnalyzeTrace(trace(weak), Inputs{Variables: []string{HR}})
				if secs < 30 {
					continue
				}
				if code(r, HR) != "" || math.Abs(r.Variables[HR].Value.(Mean).Mean-weak.HR) > 2 {
					missed++
				}
			}
			if falsePass > 0 || missed > 0 {
				t.Errorf("%g fps %g s: %d noise traces passed, %d weak pulses missed", fps, secs, falsePass, missed)
			}
		}
	}
}

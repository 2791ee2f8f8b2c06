package dsp

import (
	"fmt"
	"math"
	"testing"

	"github.com/pulsewire/pulsewire/dsp/beats"
	"github.com/pulsewire/pulsewire/dsp/internal/testsignal"
)

func trace(s testsignal.Signal) Trace { return Trace{TimestampsMs: s.T, R: s.R, G: s.G, B: s.B} }
func ppg(s testsignal.Signal) PPG     { return PPG{TimestampsMs: s.T, Values: s.I} }

func mean(t *testing.T, r Result, name string) float64 {
	t.Helper()
	v, present := r.Variables[name]
	if !present {
		t.Fatalf("%s missing from %v", name, r.Variables)
	}
	if v.Error != "" {
		t.Fatalf("%s failed with %s (summary %+v)", name, v.Error, r.Summary)
	}
	return v.Value.(Mean).Mean
}

// TestPulseReads72AtAnyBrightnessAndFrameRate: a 1.2 Hz pulse reads 72 bpm
// at any brightness, at 15-60 fps, with timestamp jitter and dropped frames.
func TestPulseReads72AtAnyBrightnessAndFrameRate(t *testing.T) {
	for _, fps := range []float64{15, 24, 30, 60} {
		for _, level := range []float64{45, 120, 220} {
			t.Run(fmt.Sprintf("%gfps level %g", fps, level), func(t *testing.T) {
				s := testsignal.Make(testsignal.Config{
					Seed: uint64(fps*1000 + level), Seconds: 20, FPS: fps, Jitter: 0.4, Drop: 0.05,
					HR: 72, Level: level, Noise: 0.05 * level / 120,
				})
				for name, r := range map[string]Result{
					"camera":  AnalyzeTrace(trace(s), Inputs{Variables: []string{HR}}),
					"contact": AnalyzePPG(ppg(s), Inputs{Variables: []string{HR}}),
				} {
					if hr := mean(t, r, HR); math.Abs(hr-72) > 0.5 {
						t.Errorf("%s: hr %.2f, want 72 ± 0.5", name, hr)
					}
				}
			})
		}
	}
}

// TestKnownAnswers checks every pulse variable against the generator's
// ground truth across the heart-rate range, including slow pulses with a
// strong dicrotic wave that must not read as double.
func TestKnownAnswers(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    testsignal.Config
	}{
		{"43 bpm strong dicrotic wave", testsignal.Config{HR: 43, Notch: 0.8, RMSSDms: 30, BR: 8}},
		{"61 bpm", testsignal.Config{HR: 61, Notch: 0.6, RMSSDms: 40, BR: 12}},
		{"95 bpm", testsignal.Config{HR: 95, RMSSDms: 20, BR: 18, FPS: 25, Jitter: 0.3}},
		{"160 bpm", testsignal.Config{HR: 160, RMSSDms: 8, BR: 28, FPS: 60}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.c
			c.Seed = uint64(c.HR)
			c.Seconds = 40
			c.BaselineDepth, c.AmplitudeDepth, c.RSADepth = 0.003, 0.2, 0.03
			c.Noise = 0.02
			s := testsignal.Make(c)
			r := AnalyzePPG(ppg(s), Inputs{})
			if hr := mean(t, r, HR); math.Abs(hr-s.HR) > 1 {
				t.Errorf("hr %.1f, truth %.1f", hr, s.HR)
			}
			if br := mean(t, r, BR); math.Abs(br-c.BR) > 1.5 {
				t.Errorf("br %.1f, truth %.1f", br, c.BR)
			}
			if hrv := mean(t, r, HRV); math.Abs(hrv-s.RMSSDms) > 10 {
				t.Errorf("rmssd %.1f ms, truth %.1f", hrv, s.RMSSDms)
			}
			if q := r.Signal.QualityScore; q.Error != "" || q.Value.(float64) < 0.5 || q.Value.(float64) > 1 {
				t.Errorf("qualityScore %+v for a clean pulse", q)
			}
			rc := AnalyzeTrace(trace(s), Inputs{Variables: []string{HR}})
			if hr := mean(t, rc, HR); math.Abs(hr-s.HR) > 1 {
				t.Errorf("camera hr %.1f, truth %.1f", hr, s.HR)
			}
		})
	}
}

// TestOnlyRequestedVariables: what is not asked for is absent, what is asked
// for is present with a value or a code.
func TestOnlyRequestedVariables(t *testing.T) {
	s := testsignal.Make(testsignal.Config{Seed: 1, Noise: 0.02})
	r := AnalyzePPG(ppg(s), Inputs{Variables: []string{HR, BMI}})
	if len(r.Variables) != 2 {
		t.Fatalf("variables %v, want hr and bmi only", r.Variables)
	}
	if r.Variables[BMI].Error != MissingUserData {
		t.Errorf("bmi %+v, want MISSING_USER_DATA", r.Variables[BMI])
	}
	all := AnalyzePPG(ppg(s), Inputs{})
	for _, name := range AllVariables {
		v, present := all.Variables[name]
		if !present || (v.Error == "") == (v.Value == nil) {
			t.Errorf("%s: %+v present=%v", name, v, present)
		}
	}
}

// TestTraceLight: a colour trace whose skin is too dark or too bright is
// told so as frames would be (CONFORMITY_POOR_LIGHT): darkness explains a
// missing pulse but does not refuse a clear one; clipping refuses both.
func TestTraceLight(t *testing.T) {
	noise := testsignal.Make(testsignal.Config{Seed: 31, Seconds: 30, PulseAmp: 1e-9, Noise: 0.5})
	pulse := testsignal.Make(testsignal.Config{Seed: 32, Seconds: 30, HR: 72, Noise: 0.05})
	// at scales s's colours so that their median luma is luma.
	at := func(s testsignal.Signal, luma float64) Trace {
		k := luma / traceQuality(s.R, s.G, s.B).luma
		scale := func(x []float64) []float64 {
			out := make([]float64, len(x))
			for i, v := range x {
				out[i] = k * v
			}
			return out
		}
		return Trace{TimestampsMs: s.T, R: scale(s.R), G: scale(s.G), B: scale(s.B)}
	}
	for _, tc := range []struct {
		name string
		tr   Trace
		want Code // "" for an answer of 72 bpm
	}{
		{"no pulse, luma 34.99", at(noise, 34.99), ConformityPoorLight},
		{"no pulse, luma 35.01", at(noise, 35.01), ConformityMissingSignal},
		{"no pulse, luma 120", at(noise, 120), ConformityMissingSignal},
		{"no pulse, luma 239.99", at(noise, 239.99), ConformityMissingSignal},
		{"no pulse, luma 240.01", at(noise, 240.01), ConformityPoorLight},
		{"clear pulse, luma 20", at(pulse, 20), ""},
		{"clear pulse, luma 240.01", at(pulse, 240.01), ConformityPoorLight},
	} {
		r := AnalyzeTrace(tc.tr, Inputs{Variables: []string{HR}})
		if tc.want == "" {
			if hr := mean(t, r, HR); math.Abs(hr-72) > 1 {
				t.Errorf("%s: hr %.1f, want 72", tc.name, hr)
			}
			continue
		}
		if got := r.Variables[HR].Error; got != tc.want {
			t.Errorf("%s: hr %q, want %q (summary %+v)", tc.name, got, tc.want, r.Summary)
		}
		if r.Summary.Conformity != tc.want {
			t.Errorf("%s: summary conformity %q, want %q", tc.name, r.Summary.Conformity, tc.want)
		}
	}
}

// TestMarkUnsampled: a beat within half a second of a hole between samples
// longer than 0.2 s is not timed; frames dropped one at a time at 30 fps,
// or a hole of 0.17 s, leave it timed.
func TestMarkUnsampled(t *testing.T) {
	var times []float64
	for i := range 600 { // 20 s at 30 fps
		at := float64(i) / 30
		dropped := i%7 == 3 || (at > 4.98 && at < 5.12) // one frame in seven (67 ms), and 0.17 s at 5 s
		if (at < 10 || at >= 10.3) && !dropped {
			times = append(times, at)
		}
	}
	pa := pulseAnalysis{times: times}
	for k := range 25 {
		pa.beats = append(pa.beats, beats.Beat{T: 0.35 + 0.8*float64(k)})
	}
	pa.markUnsampled()
	for _, b := range pa.beats {
		// The hole runs from the last frame before 10 s (9.97 s) to the
		// first at or after 10.3 s: the beats at 9.95 and 10.75 s. The one
		// at 5.15 s stays.
		want := b.T+0.5 > 9.96 && b.T-0.5 < 10.3
		if b.Unsampled != want {
			t.Errorf("beat at %.1f s: unsampled %v, want %v", b.T, b.Unsampled, want)
		}
	}
}

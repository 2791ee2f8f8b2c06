package dsp

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pulsewire/pulsewire/dsp/beats"
	"github.com/pulsewire/pulsewire/dsp/internal/testsignal"
)

func fingerPPG(f testsignal.Finger) PPG { return PPG{TimestampsMs: f.T, Values: f.I} }

// TestContactKeepsSensorRate: a clinical sensor's trace is analysed at its
// own rate (up to maxContactGridHz), not resampled to a camera's.
func TestContactKeepsSensorRate(t *testing.T) {
	for _, tc := range []struct{ rate, want float64 }{{30, 30}, {125, 125}, {250, 250}, {1000, maxContactGridHz}} {
		f := testsignal.MakeFinger(testsignal.FingerConfig{Seed: 1, Seconds: 20, Rate: tc.rate})
		tt, ch := clean(f.T, f.I)
		if pa := analyzeContact(tt, ch[0]); pa.rateHz != tc.want || pa.err != "" {
			t.Errorf("%g Hz: analysed at %g Hz (%q), want %g Hz", tc.rate, pa.rateHz, pa.err, tc.want)
		}
	}
}

// TestContactHRVFollowsRR: finger PPG at clinical rates with known RR
// series, steady or stepping now and then, reads the heart rate within 0.5
// bpm and the RMSSD of its beats within 1 ms on average. The artefact rules
// may take a genuine step for a long or short interval now and then (the
// worst capture here loses a third of its RMSSD that way), so single
// captures are held to 6 ms.
func TestContactHRVFollowsRR(t *testing.T) {
	for _, rate := range []float64{100, 250} {
		var sum float64
		n := 0
		for seed := uint64(1); seed <= 10; seed++ {
			c := testsignal.FingerConfig{Seed: seed, Rate: rate, HR: 55 + 5*float64(seed),
				RMSSDms: []float64{4, 8, 15, 25, 45}[seed%5], BR: 10 + float64(seed), RIIV: 0.3, RIAV: 0.2, RIFV: 0.01,
				Noise: 0.01, Amplitude: 1}
			if seed%2 == 0 {
				c.Steps, c.StepMs = 0.08, 40
			}
			f := testsignal.MakeFinger(c)
			r := AnalyzePPG(fingerPPG(f), Inputs{Variables: []string{HR, HRV}})
			if code(r, HR) != "" || code(r, HRV) != "" {
				t.Errorf("%g Hz seed %d: hr %q hrv %q", rate, seed, code(r, HR), code(r, HRV))
				continue
			}
			hr, hrv := r.Variables[HR].Value.(Mean).Mean, r.Variables[HRV].Value.(Mean).Mean
			if math.Abs(hr-f.HR) > 0.5 || math.Abs(hrv-f.RMSSDms) > 6 {
				t.Errorf("%g Hz seed %d: hr %.1f (true %.1f), hrv %.1f ms (true %.1f)", rate, seed, hr, f.HR, hrv, f.RMSSDms)
			}
			sum += math.Abs(hrv - f.RMSSDms)
			n++
		}
		if mae := sum / float64(max(n, 1)); mae > 1 {
			t.Errorf("%g Hz: hrv off by %.2f ms on average", rate, mae)
		}
	}
}

// TestContactPulseOrNoise: phone fingertip pulses whose rhythm varies at
// rest (sinus arrhythmia of 5%, RMSSD 60 ms) smear their spectra until the
// spectral test alone refuses some of them; their beats still show the
// pulse, and every one is answered within 1.5 bpm. Noise of every kind
// is refused.
func TestContactPulseOrNoise(t *testing.T) {
	for seed := uint64(1); seed <= 12; seed++ {
		f := testsignal.MakeFinger(testsignal.FingerConfig{Seed: seed, Rate: 30, HR: 50 + 6*float64(seed),
			RMSSDms: 60, RIFV: 0.05, BR: 12, Noise: 0.2, Drift: 0.3})
		r := AnalyzePPG(fingerPPG(f), Inputs{Variables: []string{HR}})
		if code(r, HR) != "" {
			t.Errorf("seed %d (%.0f bpm): %s (SNR %.1f dB, prominence %.1f dB)", seed, f.HR, code(r, HR), r.Summary.SNRdB, r.Summary.ProminenceDB)
		} else if hr := r.Variables[HR].Value.(Mean).Mean; math.Abs(hr-f.HR) > 1.5 {
			t.Errorf("seed %d: hr %.1f, want %.1f", seed, hr, f.HR)
		}
	}
	for _, kind := range []string{"white", "random walk", "AR(1)", "motion", "pressure"} {
		for _, rate := range []float64{30, 125} {
			for _, secs := range []float64{30, 60} {
				for seed := uint64(1); seed <= 3; seed++ {
					tm, x := contactNoise(kind, seed, secs, rate)
					if r := AnalyzePPG(PPG{TimestampsMs: tm, Values: x}, Inputs{Variables: []string{HR}}); code(r, HR) != ConformityMissingSignal {
						t.Errorf("%s noise, %g Hz, %g s, seed %d: hr %+v", kind, rate, secs, seed, r.Variables[HR])
					}
				}
			}
		}
	}
}

// contactNoise is a contact trace with no pulse: sensor noise, a drifting
// baseline, or a finger that moves or presses without a heartbeat.
func contactNoise(kind string, seed uint64, secs, rate float64) (tMs, x []float64) {
	rng := rand.New(rand.NewPCG(seed, 31))
	n := int(secs * rate)
	tMs, x = make([]float64, n), make([]float64, n)
	var w float64
	for i := range x {
		tMs[i] = float64(i) * 1000 / rate
		switch kind {
		case "white":
			x[i] = 100 + rng.NormFloat64()
		case "random walk":
			w += rng.NormFloat64()
			x[i] = 100 + w
		case "AR(1)":
			w = 0.9*w + rng.NormFloat64()
			x[i] = 100 + w
		}
	}
	if kind == "motion" || kind == "pressure" {
		// A pulse too small to matter under the movements.
		c := testsignal.FingerConfig{Seed: seed, Rate: rate, Seconds: secs, Amplitude: 1e-9, Noise: 0.05e9}
		if kind == "motion" {
			c.Motion = 0.1
		} else {
			c.Pressure = 3e9
		}
		f := testsignal.MakeFinger(c)
		return f.T, f.I
	}
	return tMs, x
}

// TestContactOctave: a track an octave off is set right by the beats. A
// finger pressed and relaxed (seed 7) led the track to twice the rate;
// a pulse whose beats alternate in size has a sub-harmonic; a dicrotic
// wave nearly as high as the systolic one at a slow rate makes the second
// harmonic strong.
func TestContactOctave(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    testsignal.FingerConfig
	}{
		{"pressing at 92 bpm", testsignal.FingerConfig{Seed: 7, HR: 92, Noise: 0.1, Drift: 0.3, Pressure: 3}},
		{"alternating beats at 100 bpm", testsignal.FingerConfig{Seed: 2, HR: 100, Noise: 0.1, Drift: 0.3, Alternans: 0.6}},
		{"alternating beats at 122 bpm", testsignal.FingerConfig{Seed: 3, HR: 122, Noise: 0.1, Drift: 0.3, Alternans: 0.6}},
		{"high dicrotic wave at 48 bpm", testsignal.FingerConfig{Seed: 4, HR: 48, Noise: 0.1, Drift: 0.3, Notch: 0.9}},
		{"high dicrotic wave at 58 bpm", testsignal.FingerConfig{Seed: 5, HR: 58, Noise: 0.1, Drift: 0.3, Notch: 0.9}},
	} {
		tc.c.Rate = 30
		f := testsignal.MakeFinger(tc.c)
		r := AnalyzePPG(fingerPPG(f), Inputs{Variables: []string{HR}})
		if code(r, HR) != "" {
			t.Errorf("%s: %s", tc.name, code(r, HR))
		} else if hr := r.Variables[HR].Value.(Mean).Mean; math.Abs(hr-f.HR) > 1.5 {
			t.Errorf("%s: hr %.1f, want %.1f", tc.name, hr, f.HR)
		}
	}
}

// TestContactBreathing: finger PPG whose breathing shows in one, two or
// all three modulations, at a phone's 30 Hz and a monitor's 250 Hz, reads
// the breathing rate within 2 /min. The clinical case without sinus
// arrhythmia (a low-variability heart, its interval series noise) and with
// a breath that is not a sine is the one that read twice its rate when the
// noise's ripples were counted as breaths.
func TestContactBreathing(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    testsignal.FingerConfig
	}{
		{"all three", testsignal.FingerConfig{RMSSDms: 30, RIIV: 0.2, RIAV: 0.1, RIFV: 0.02, Noise: 0.02, Drift: 0.1}},
		{"clinical, no sinus arrhythmia", testsignal.FingerConfig{RMSSDms: 5, RIIV: 0.4, RIAV: 0.15, Shape: 0.5, Noise: 0.02, Drift: 0.1}},
		{"amplitude only", testsignal.FingerConfig{RMSSDms: 5, RIAV: 0.2, Noise: 0.02, Drift: 0.1}},
		{"with a Mayer wave", testsignal.FingerConfig{RMSSDms: 30, RIIV: 0.1, RIAV: 0.1, RIFV: 0.02, Mayer: 0.03, Noise: 0.05, Drift: 0.1}},
	} {
		for _, rate := range []float64{30, 250} {
			answered := 0
			for seed := uint64(1); seed <= 5; seed++ {
				c := tc.c
				c.Seed, c.Rate, c.HR, c.BR = seed, rate, 55+9*float64(seed), 6+4*float64(seed)
				f := testsignal.MakeFinger(c)
				r := AnalyzePPG(fingerPPG(f), Inputs{Variables: []string{BR}})
				if code(r, BR) != "" {
					continue
				}
				answered++
				if br := r.Variables[BR].Value.(Mean).Mean; math.Abs(br-f.BR) > 2 {
					t.Errorf("%s, %g Hz, seed %d: br %.1f, want %.1f", tc.name, rate, seed, br, f.BR)
				}
			}
			if answered < 4 {
				t.Errorf("%s, %g Hz: br answered on %d of 5", tc.name, rate, answered)
			}
		}
	}
}

// TestClockworkPulse: a pulse as even as a clock (a simulator) has no
// variability a person's has: hrv and strs are out of range, not 0 ms and
// the highest stress level; its rate is answered.
func TestClockworkPulse(t *testing.T) {
	var p PPG
	for i := range 6000 { // 60 s at 100 Hz, 72 a minute
		p.TimestampsMs = append(p.TimestampsMs, float64(i)*10)
		p.Values = append(p.Values, 100+math.Sin(2*math.Pi*1.2*float64(i)/100))
	}
	r := AnalyzePPG(p, Inputs{})
	if code(r, HR) != "" || code(r, HRV) != OutOfRange || code(r, Stress) != OutOfRange {
		t.Errorf("hr %v %q, hrv %v %q, strs %v %q", r.Variables[HR].Value, code(r, HR), r.Variables[HRV].Value, code(r, HRV), r.Variables[Stress].Value, code(r, Stress))
	}
}

// TestContactBreathingAcrossAGap: a trace with a hole (samples missing,
// under the share that refuses it) reads the breathing rate of its
// breaths, not of breaths spread over the hole too: counted over a span
// that held a 10 s hole, 15 /min read 12.5.
func TestContactBreathingAcrossAGap(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		f := testsignal.MakeFinger(testsignal.FingerConfig{Seed: seed, Rate: 100, Seconds: 60, HR: 70, BR: 15,
			RMSSDms: 30, RIIV: 0.2, RIAV: 0.1, RIFV: 0.02, Noise: 0.02, Drift: 0.1})
		whole := AnalyzePPG(fingerPPG(f), Inputs{Variables: []string{BR}})
		var cut testsignal.Finger
		for i, ms := range f.T {
			if ms < 25000 || ms >= 35000 { // 10 s, a sixth of the capture
				cut.T, cut.I = append(cut.T, ms), append(cut.I, f.I[i])
			}
		}
		holed := AnalyzePPG(fingerPPG(cut), Inputs{Variables: []string{BR}})
		if code(whole, BR) != "" || code(holed, BR) != "" {
			t.Errorf("seed %d: br %q whole, %q with the hole", seed, code(whole, BR), code(holed, BR))
			continue
		}
		w, h := whole.Variables[BR].Value.(Mean).Mean, holed.Variables[BR].Value.(Mean).Mean
		if math.Abs(h-f.BR) > 1.5 || math.Abs(h-w) > 1.5 {
			t.Errorf("seed %d: br %.1f with a 10 s hole, %.1f whole, breathing %.1f", seed, h, w, f.BR)
		}
	}
}

// TestContactBreathingWeak: when breathing barely modulates the pulse and
// the heart has no sinus arrhythmia, the modulations' series are mostly
// noise, and counting noise finds ripples at 15-20 /min whatever the
// breathing. Such counts hold little of their series' power at their own
// rate and are not fused unless they agree with each other, so the answer
// is refused more often than it is wrong (fusing every modulation's count
// answered all 20 captures here, 10 of them more than 3 /min off; now 10
// are answered, 3 of them that far off).
func TestContactBreathingWeak(t *testing.T) {
	answered, wrong := 0, 0
	for _, rate := range []float64{30, 250} {
		for seed := uint64(11); seed <= 20; seed++ {
			f := testsignal.MakeFinger(testsignal.FingerConfig{Seed: seed, Rate: rate, HR: 10 + 5*float64(seed), BR: 2*float64(seed) - 14,
				RMSSDms: 5, RIIV: 0.1, RIAV: 0.05, RIFV: 0.001, Noise: 0.02, Drift: 0.2})
			r := AnalyzePPG(fingerPPG(f), Inputs{Variables: []string{BR}})
			if code(r, BR) != "" {
				continue
			}
			answered++
			if math.Abs(r.Variables[BR].Value.(Mean).Mean-f.BR) > 3 {
				wrong++
			}
		}
	}
	t.Logf("answered %d of 20, %d of them more than 3 /min off", answered, wrong)
	if wrong > 3 {
		t.Errorf("%d answers more than 3 /min off", wrong)
	}
}

// clipAt cuts x off at the value that leaves share of its samples at the
// cut, at its top or at its bottom.
func clipAt(x []float64, share float64, top bool) []float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	out := slices.Clone(x)
	for i := range out {
		if top {
			out[i] = math.Min(out[i], s[int((1-share)*float64(len(s)))])
		} else {
			out[i] = math.Max(out[i], s[int(share*float64(len(s)))])
		}
	}
	return out
}

// TestContactClipped: a fingertip pulse cut off at a limit of the sensor
// for up to 45% of its samples, at its top or at its bottom, is still
// read within 3 bpm (cut at the bottom, some beats lose their feet and the
// rate moves by up to 2 bpm); cut off for 55%, or a flat line at full scale that a
// few samples escape by a hair (as phones drive the red channel), it is
// refused with CONFORMITY_POOR_LIGHT. Without the rule, pulses cut off for
// 60% at their bottom were read more than 5 bpm off in 3 of 12 captures,
// and flat lines of real phones at 42-43 bpm with confidences of 0.86-0.95
// (these generated ones were refused as a missing pulse; now the code
// says why). A camera trace with such a line for one colour is refused
// the same way.
func TestContactClipped(t *testing.T) {
	for seed := uint64(1); seed <= 12; seed++ {
		f := testsignal.MakeFinger(testsignal.FingerConfig{Seed: seed, Rate: 30, HR: 50 + 6*float64(seed),
			RMSSDms: 40, RIFV: 0.05, BR: 12, Noise: 0.05, Drift: 0.1})
		for _, top := range []bool{true, false} {
			r := AnalyzePPG(PPG{TimestampsMs: f.T, Values: clipAt(f.I, 0.45, top)}, Inputs{Variables: []string{HR}})
			if code(r, HR) != "" {
				t.Errorf("seed %d, 45%% clipped (top %v): %s", seed, top, code(r, HR))
			} else if hr := r.Variables[HR].Value.(Mean).Mean; math.Abs(hr-f.HR) > 3 {
				t.Errorf("seed %d, 45%% clipped (top %v): hr %.1f, want %.1f", seed, top, hr, f.HR)
			}
			r = AnalyzePPG(PPG{TimestampsMs: f.T, Values: clipAt(f.I, 0.55, top)}, Inputs{Variables: []string{HR}})
			if code(r, HR) != ConformityPoorLight || math.Abs(r.Summary.ClippedShare-0.55) > 0.01 {
				t.Errorf("seed %d, 55%% clipped (top %v): %q, clipped share %.3f", seed, top, code(r, HR), r.Summary.ClippedShare)
			}
		}
	}
	rng := rand.New(rand.NewPCG(3, 5))
	for _, level := range []float64{255, 0} {
		tm, x := make([]float64, 2100), make([]float64, 2100)
		for i := range x {
			tm[i] = float64(i) * 1000 / 30
			x[i] = level
			if rng.Float64() < 0.03 {
				x[i] += 0.001 * (1 - 2*level/255) // a hair inside the limit
			}
		}
		r := AnalyzePPG(PPG{TimestampsMs: tm, Values: x}, Inputs{Variables: []string{HR, BR}})
		if code(r, HR) != ConformityPoorLight || code(r, BR) != ConformityPoorLight {
			t.Errorf("flat at %g with spikes: hr %+v, br %+v", level, r.Variables[HR], r.Variables[BR])
		}
		// The same line as one colour of a camera trace whose other two
		// carry a pulse.
		s := testsignal.Make(testsignal.Config{Seed: 2, Seconds: 69, Noise: 0.02})
		tr := trace(s)
		tr.G = x[:len(tr.G)]
		if r := AnalyzeTrace(tr, Inputs{Variables: []string{HR}}); code(r, HR) != ConformityPoorLight || r.Summary.ClippedShare < 0.95 {
			t.Errorf("camera trace with its green flat at %g: hr %+v, clipped share %.2f", level, r.Variables[HR], r.Summary.ClippedShare)
		}
	}
}

// TestBeatRateOverTrack: clean beats give the heart rate even where the
// track's mean differs from theirs by more than a tenth (a track that
// smoothed over a change); that they differ keeps them from showing a
// pulse on their own.
func TestBeatRateOverTrack(t *testing.T) {
	var pa pulseAnalysis
	for s := 0.5; s < 30; s += 0.8 { // 75 bpm
		pa.beats = append(pa.beats, beats.Beat{T: s, Fit: 0.95})
	}
	pa.iv = beats.Intervals(pa.beats)
	pa.nn = beats.Stats(pa.iv)
	for _, tc := range []struct {
		trackBpm float64
		agree    bool
	}{{74, true}, {68.5, true}, {67.5, false}, {90, false}} {
		pa.track = rateTrack{hz: []float64{tc.trackBpm / 60}}
		if bpm := beatRate(pa); math.Abs(bpm-75) > 0.01 {
			t.Errorf("track at %g bpm: beat rate %.2f, want 75", tc.trackBpm, bpm)
		}
		if got := beatsAgree(pa); got != tc.agree {
			t.Errorf("track at %g bpm: agree %v, want %v", tc.trackBpm, got, tc.agree)
		}
	}
}

package dsp

import (
	"math"
	"testing"

	"github.com/pulsewire/pulsewire/dsp/internal/testsignal"
)

func TestAnswerLevels(t *testing.T) {
	for _, tc := range []struct {
		seconds, conf, corr float64
	}{
		{10, 0.90, 0.5}, {15, 0.90, 0.5}, {17.5, 0.90, 0.425}, {20, 0.90, 0.35},
		{25, 0.87, 0.175}, {30, 0.84, 0}, {30.5, 0.84, 0}, {300, 0.84, 0},
	} {
		c, r := AnswerLevel(tc.seconds)
		if math.Abs(c-tc.conf) > 1e-9 || math.Abs(r-tc.corr) > 1e-9 {
			t.Errorf("AnswerLevel(%g) = %.4f, %.4f; want %.4f, %.4f", tc.seconds, c, r, tc.conf, tc.corr)
		}
	}
}

// TestAnswerAtTheLevels checks the decision at each level and just past it:
// analyzePulse's summary carries the two measures the decision reads.
func TestAnswerAtTheLevels(t *testing.T) {
	s := testsignal.Make(testsignal.Config{Seed: 3, Seconds: 30, Noise: 0.3})
	tm, ch := clean(s.T, s.R, s.G, s.B)
	pa := analyzePulse(tm, ch, nil, nil)
	if pa.err != "" {
		t.Fatalf("a clear pulse was refused: %+v", pa.summary)
	}
	conf, corr := pa.summary.QualityScore, pa.summary.PeriodCorrelation
	defer func(saved []struct{ Seconds, Confidence, PeriodCorrelation float64 }) { AnswerLevels = saved }(AnswerLevels)
	for _, tc := range []struct {
		name       string
		conf, corr float64
		answered   bool
	}{
		{"both at their levels", conf, corr, true},
		{"confidence just past", math.Nextafter(conf, 2), corr, false},
		{"correlation just past", conf, math.Nextafter(corr, 2), false},
	} {
		AnswerLevels = []struct{ Seconds, Confidence, PeriodCorrelation float64 }{{30, tc.conf, tc.corr}}
		got := analyzePulse(tm, ch, nil, nil)
		if (got.err == "") != tc.answered {
			t.Errorf("%s: err %q, answered %v wanted", tc.name, got.err, tc.answered)
		}
	}
}

// TestRisingRateIsFollowed: the rate climbs 20 bpm within a minute, as in
// a stress task; the answer is the mean rate, not where it started.
func TestRisingRateIsFollowed(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		s := testsignal.Make(testsignal.Config{Seed: seed, Seconds: 60, HR: 70, HREnd: 90, Noise: 0.3, PulseAmp: 0.004})
		r := AnalyzeTrace(trace(s), Inputs{Variables: []string{HR}})
		v := r.Variables[HR]
		if v.Error != "" {
			t.Fatalf("seed %d: %s (summary %+v)", seed, v.Error, r.Summary)
		}
		if got := v.Value.(Mean).Mean; math.Abs(got-s.HR) > 1.5 {
			t.Errorf("seed %d: hr %.1f, true mean %.1f", seed, got, s.HR)
		}
	}
}

// TestStrongHarmonicIsNotTheRate: a slow contact pulse whose dicrotic wave
// is as tall as its systolic peak puts more power at twice the rate than at
// the rate itself; the rate is still the fundamental.
func TestStrongHarmonicIsNotTheRate(t *testing.T) {
	for _, secs := range []float64{12, 30} {
		s := testsignal.Make(testsignal.Config{Seed: 5, Seconds: secs, HR: 48, Notch: 1, Noise: 0.05})
		r := AnalyzePPG(ppg(s), Inputs{Variables: []string{HR}})
		v := r.Variables[HR]
		if v.Error != "" || math.Abs(v.Value.(Mean).Mean-s.HR) > 2 {
			t.Errorf("%g s: hr %+v, true %.1f (summary %+v)", secs, v, s.HR, r.Summary)
		}
	}
}

// TestShortNoiseIsRefused: in a capture of one or two spectral windows a
// noise peak can look as sharp as a pulse; the period correlation tells
// them apart.
func TestShortNoiseIsRefused(t *testing.T) {
	passed := 0
	for _, secs := range []float64{10.5, 12, 15, 20} {
		for seed := uint64(1); seed <= 20; seed++ {
			noise := testsignal.Make(testsignal.Config{Seed: seed, Seconds: secs, PulseAmp: 1e-12, Noise: 0.3})
			for _, r := range []Result{AnalyzeTrace(trace(noise), Inputs{Variables: []string{HR}}), AnalyzePPG(ppg(noise), Inputs{Variables: []string{HR}})} {
				if code(r, HR) != ConformityMissingSignal {
					passed++
				}
			}
		}
	}
	if passed > 0 {
		t.Errorf("%d of 160 short noise traces were answered", passed)
	}
}

// TestNoiseTracksAreNotPulledLow: on noise the tracked rate falls anywhere
// in the band. When a sub-harmonic below the band counted as nothing,
// every rate under 72 bpm was spared the toll the others paid, and noise
// was tracked there: 40-72 bpm is 23% of the band.
func TestNoiseTracksAreNotPulledLow(t *testing.T) {
	low, n := 0, 0
	for seed := uint64(1); seed <= 40; seed++ {
		noise := testsignal.Make(testsignal.Config{Seed: seed, Seconds: 30, PulseAmp: 1e-12, Noise: 0.3})
		r := AnalyzeTrace(trace(noise), Inputs{Variables: []string{HR}})
		n++
		if r.Summary.TrackedBpm < 72 {
			low++
		}
	}
	if low > n/2 {
		t.Errorf("%d of %d noise traces tracked under 72 bpm", low, n)
	}
}

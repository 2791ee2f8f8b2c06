package resp

import (
	"math"
	"testing"

	"github.com/pulsewire/pulsewire/dsp/beats"
	"github.com/pulsewire/pulsewire/dsp/internal/testsignal"
	"github.com/pulsewire/pulsewire/dsp/pulse"
	"github.com/pulsewire/pulsewire/dsp/resample"
)

// TestCountIgnoresSlowWave: breaths at 15 /min with a Mayer wave of the same
// amplitude at 6 /min still count as 15.
func TestCountIgnoresSlowWave(t *testing.T) {
	const hz = 4.0
	x := make([]float64, 30*hz)
	for i := range x {
		s := float64(i) / hz
		x[i] = math.Sin(2*math.Pi*0.25*s) + math.Sin(2*math.Pi*0.1*s+1)
	}
	got, ok := countRate(x, hz)
	if !ok || math.Abs(got-15) > 1 {
		t.Errorf("count %.1f /min, want 15", got)
	}
	if _, ok := countRate(x[:3], hz); ok {
		t.Error("counted breaths in 3 samples")
	}
}

func TestRate(t *testing.T) {
	for _, tc := range []struct {
		name string
		br   float64
		c    testsignal.Config
	}{
		{"6 /min, amplitude and baseline", 6, testsignal.Config{HR: 70, AmplitudeDepth: 0.3, BaselineDepth: 0.003}},
		{"15 /min, sinus arrhythmia only", 15, testsignal.Config{HR: 80, RSADepth: 0.06}},
		{"28 /min at 110 bpm", 28, testsignal.Config{HR: 110, AmplitudeDepth: 0.3, BaselineDepth: 0.003, RSADepth: 0.03}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.c
			c.Seed, c.BR, c.Seconds, c.Noise = 5, tc.br, 40, 0.02
			s := testsignal.Make(c)
			ts := make([]float64, len(s.T))
			for i, v := range s.T {
				ts[i] = v / 1000
			}
			w := pulse.FromIntensity(resample.Uniform(nil, ts, s.I, 30), 30)
			period := make([]float64, len(w.Pulse))
			for i := range period {
				period[i] = 60 / c.HR
			}
			bs := beats.Detect(nil, w.Pulse, period, 30)
			est, ok := Rate(w.Baseline, 30, bs, beats.Intervals(bs), OneWitness)
			if !ok || math.Abs(est.PerMin-tc.br) > 1.5 {
				t.Errorf("br %.1f (each %v weight %v), want %g", est.PerMin, est.Each, est.Weight, tc.br)
			}
		})
	}
}

// TestFuse: counts take part by their quality index and the heaviest
// group of agreeing counts answers.
func TestFuse(t *testing.T) {
	q := func(r, quality float64) reading { return reading{count: r, quality: quality} }
	for _, tc := range []struct {
		name  string
		rd    [3]reading
		trust Trust
		want  float64 // 0: no answer
		each0 float64
	}{
		{"a clear count answers alone", [3]reading{q(15, 0.3), {}, {}}, OneWitness, 15, 15},
		{"a weaker one does not", [3]reading{q(15, 0.29), {}, {}}, OneWitness, 0, 0},
		{"two weak counts that agree do", [3]reading{q(12, 0.15), q(13, 0.2), {}}, OneWitness, (0.0225*12 + 0.04*13) / 0.0625, 12},
		{"the two beat series agreeing alone are one count", [3]reading{{}, q(12, 0.15), q(13, 0.2)}, OneWitness, 0, 0},
		{"unless the beats are clean", [3]reading{{}, q(12, 0.15), q(13, 0.2)}, TwoWitnesses, (0.0225*12 + 0.04*13) / 0.0625, 0},
		{"clean beats do not make one weak count answer", [3]reading{{}, q(12, 0.2), {}}, TwoWitnesses, 0, 0},
		{"with a clear one they answer", [3]reading{{}, q(12, 0.15), q(13, 0.3)}, OneWitness, (0.0225*12 + 0.09*13) / 0.1125, 0},
		{"two weak counts that disagree do not", [3]reading{q(12, 0.15), q(18, 0.2), {}}, OneWitness, 0, 0},
		{"below the least quality a count takes no part", [3]reading{q(12, 0.09), q(13, 0.2), {}}, OneWitness, 0, 0},
		{"two agreeing outweigh a clearer lone one", [3]reading{q(20, 0.5), q(12, 0.4), q(12.5, 0.4)}, OneWitness, 12.25, 0},
		{"a clearer lone count outweighs a weak group", [3]reading{q(20, 0.6), q(12, 0.3), q(13, 0.2)}, OneWitness, 20, 20},
		{"a count at the breath's harmonic supports half its rate",
			[3]reading{{count: 24, quality: 0.6, sub: 0.4}, q(12, 0.3), {}}, OneWitness, (0.36*12 + 0.09*12) / 0.45, 12},
		{"without the fundamental in its spectrum it does not",
			[3]reading{{count: 24, quality: 0.6, sub: 0.1}, q(12, 0.3), {}}, OneWitness, 24, 24},
		// A camera's beats support a clear intensity count and answer
		// nothing alone, however clear or clean.
		{"a camera's beat series support a clear intensity count",
			[3]reading{q(12, 0.3), q(12.5, 0.2), q(13, 0.2)}, SupportOnly, (0.09*12 + 0.04*12.5 + 0.04*13) / 0.17, 12},
		{"but not a weaker one", [3]reading{q(12, 0.29), q(12.5, 0.2), q(13, 0.2)}, SupportOnly, 0, 0},
		{"a camera's clear beat series does not answer alone", [3]reading{{}, q(12, 0.5), {}}, SupportOnly, 0, 0},
		{"nor the two of them agreeing", [3]reading{{}, q(12, 0.5), q(12.5, 0.5)}, SupportOnly, 0, 0},
		{"beside an intensity count that disagrees, the intensity answers", [3]reading{q(20, 0.4), q(12, 0.5), q(12.5, 0.5)}, SupportOnly, 20, 20},
		{"a clear intensity count answers alone", [3]reading{q(15, 0.3), {}, {}}, SupportOnly, 15, 15},
	} {
		t.Run(tc.name, func(t *testing.T) {
			est, ok := fuse(tc.rd, tc.trust)
			if ok != (tc.want != 0) || math.Abs(est.PerMin-tc.want) > 1e-9 || est.Each[0] != tc.each0 {
				t.Errorf("fuse = %+v, %v; want %.3f (Each[0] %v)", est, ok, tc.want, tc.each0)
			}
		})
	}
}

// TestRateIsTheMeanOverTheCapture: breathing at 12 /min for 20 s, then
// 18 /min for 10 s, is 14 breaths per minute over the capture; a spectral
// peak of the whole capture leans to the slower, longer, central part.
func TestRateIsTheMeanOverTheCapture(t *testing.T) {
	const hz, seconds = 30.0, 30.0
	x := make([]float64, int(seconds*hz))
	phase := 0.0
	for i := range x {
		s := float64(i) / hz
		perMin := 12.0
		if s >= 20 {
			perMin = 18
		}
		x[i] = 0.002 * math.Sin(phase)
		phase += 2 * math.Pi * perMin / 60 / hz
	}
	want := phase / (2 * math.Pi) / seconds * 60
	est, ok := Rate(x, hz, nil, nil, OneWitness)
	if !ok || math.Abs(est.PerMin-want) > 0.5 {
		t.Errorf("br %.2f /min (each %v), want %.2f", est.PerMin, est.Each, want)
	}
}

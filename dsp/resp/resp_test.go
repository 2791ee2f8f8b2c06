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
			est, ok := Rate(w.Baseline, 30, bs, beats.Intervals(bs))
			if !ok || math.Abs(est.PerMin-tc.br) > 1.5 {
				t.Errorf("br %.1f (each %v weight %v), want %g", est.PerMin, est.Each, est.Weight, tc.br)
			}
		})
	}
}

// TestChoose: a modulation whose count and peak disagree keeps its count
// unless regular modulations that confirm its peak outweigh it.
func TestChoose(t *testing.T) {
	for _, tc := range []struct {
		name   string
		all    [3]candidates
		weight [3]float64
		m      Modulation
		want   float64
	}{
		{"regular votes with its count", [3]candidates{{15.2, 15.8}, {}, {}}, [3]float64{1, 0, 0}, Intensity, 15.2},
		{"no witness keeps the count", [3]candidates{{16, 8}, {15, 7}, {}}, [3]float64{0.5, 0.5, 0}, Intensity, 16},
		{"clearer regular witness of the peak", [3]candidates{{13, 12.8}, {20, 12.5}, {}}, [3]float64{0.5, 0.2, 0}, Amplitude, 12.5},
		{"weaker witness of the peak", [3]candidates{{12, 11.5}, {14.3, 12.2}, {}}, [3]float64{0.2, 0.3, 0}, Amplitude, 14.3},
		{"count confirmed as much as the peak", [3]candidates{{12, 12}, {20, 12}, {19.5, 19.8}}, [3]float64{0.4, 0.1, 0.4}, Amplitude, 20},
		{"not counted", [3]candidates{{}, {15, 15}, {}}, [3]float64{0, 1, 0}, Intensity, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.all[tc.m].choose(tc.m, tc.all, tc.weight); got != tc.want {
				t.Errorf("choose = %v, want %v", got, tc.want)
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
	est, ok := Rate(x, hz, nil, nil)
	if !ok || math.Abs(est.PerMin-want) > 0.5 {
		t.Errorf("br %.2f /min (each %v), want %.2f", est.PerMin, est.Each, want)
	}
}

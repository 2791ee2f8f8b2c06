package dsp

import (
	"math"
	"testing"
	"time"

	"github.com/pulsewire/pulsewire/dsp/internal/testsignal"
)

// TestLiveWave: the interim wave appears after 4 s of face, covers at
// most WaveSpan at no more than 30 samples a second, stays within -1..1,
// and beats at the heart rate, at 30 and at jittered 60 fps.
func TestLiveWave(t *testing.T) {
	for _, tc := range []struct {
		name     string
		fps      float64
		jitter   float64
		wantRate float64
	}{
		{"30 fps", 30, 0, 30},
		{"60 fps with jitter, capped", 60, 0.3, 30},
		{"15 fps", 15, 0.2, 15},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const hr = 80.0
			s := testsignal.Make(testsignal.Config{Seed: 21, Seconds: 12, FPS: tc.fps, Jitter: tc.jitter, HR: hr, Noise: 0.02})
			st := streamOf(s, observations(s, nil), Inputs{})
			// minWaveS (4 s) of face: no wave at 3.5 s, one at 4.5 s.
			for _, edge := range []struct {
				ms   float64
				want bool
			}{{3500, false}, {4500, true}} {
				early := NewStream(nil, Inputs{})
				for i, o := range observations(s, nil) {
					if s.T[i] <= edge.ms {
						early.Observe(o, time.Duration(s.T[i]*float64(time.Millisecond)))
					}
				}
				if v := early.Vitals(); v.Wave == nil || (len(v.Wave) > 0) != edge.want {
					t.Errorf("after %v ms: wave of %d samples (nil %v), want one %v", edge.ms, len(v.Wave), v.Wave == nil, edge.want)
				}
			}
			v := st.Vitals()
			if v.WaveRateHz != tc.wantRate {
				t.Fatalf("waveRateHz %v, want %v", v.WaveRateHz, tc.wantRate)
			}
			if want := int(WaveSpan.Seconds()*tc.wantRate) + 1; len(v.Wave) < want-2 || len(v.Wave) > want {
				t.Errorf("%d samples, want about %d", len(v.Wave), want)
			}
			peak := 0.0
			for _, x := range v.Wave {
				peak = math.Max(peak, math.Abs(x))
			}
			if peak != 1 {
				t.Errorf("largest |sample| %v, want 1", peak)
			}
			if got, want := autocorrPeriodS(v.Wave, v.WaveRateHz), 60/hr; math.Abs(got-want) > 0.07 {
				t.Errorf("wave period %.3f s, want %.3f s (%v bpm)", got, want, hr)
			}
		})
	}
}

// autocorrPeriodS is the lag (s) of the highest autocorrelation of x between
// 0.3 and 1.5 s: the beat period of a clean pulse wave.
func autocorrPeriodS(x []float64, rateHz float64) float64 {
	best, bestLag := math.Inf(-1), 0
	for lag := int(0.3 * rateHz); lag <= int(1.5*rateHz) && lag < len(x); lag++ {
		var c float64
		for i := lag; i < len(x); i++ {
			c += x[i] * x[i-lag]
		}
		c /= float64(len(x) - lag)
		if c > best {
			best, bestLag = c, lag
		}
	}
	return float64(bestLag) / rateHz
}

// TestVitalsHRV: hrv is INITIALISATION before 20 s of capture, then the
// RMSSD of the beats, as the final hrv variable computes it.
func TestVitalsHRV(t *testing.T) {
	s := testsignal.Make(testsignal.Config{Seed: 23, Seconds: 26, HR: 70, RMSSDms: 40, Noise: 0.02})
	obs := observations(s, nil)
	st := NewStream(nil, Inputs{})
	checked := false
	for i, o := range obs {
		st.Observe(o, time.Duration(s.T[i]*float64(time.Millisecond)))
		if s.T[i] >= 15000 && !checked {
			checked = true
			if v := st.Vitals(); v.HRV.Error != ConformityInitialisation {
				t.Errorf("at 15 s: hrv %+v, want %s", v.HRV, ConformityInitialisation)
			}
		}
	}
	if !checked {
		t.Fatal("the capture never reached 15 s")
	}
	v := st.Vitals()
	if v.HRV.Error != "" {
		t.Fatalf("at 26 s: hrv %+v", v.HRV)
	}
	if got := v.HRV.Value.(Mean).Mean; math.Abs(got-s.RMSSDms) > 15 {
		t.Errorf("hrv %.1f ms, generated RMSSD %.1f ms", got, s.RMSSDms)
	}
	if final := st.Result().Variables[HRV]; final.Error != "" || final.Value.(Mean) != v.HRV.Value.(Mean) {
		t.Errorf("interim hrv %+v, final %+v: the same 26 s should agree", v.HRV, final)
	}
}

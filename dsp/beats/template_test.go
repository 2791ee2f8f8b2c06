package beats

import (
	"math"
	"testing"

	"github.com/pulsewire/pulsewire/dsp/internal/testsignal"
	"github.com/pulsewire/pulsewire/dsp/pulse"
	"github.com/pulsewire/pulsewire/dsp/resample"
)

// timingJitter is the rms of the successive differences of the beats'
// errors against the nearest true beats, divided by √2: the beat-to-beat
// timing noise, free of the fiducials' constant offset.
func timingJitter(got []Beat, truth []float64) float64 {
	var errs []float64
	for _, g := range got {
		best := math.Inf(1)
		for _, b := range truth {
			if math.Abs(g.T-b) < math.Abs(best) {
				best = g.T - b
			}
		}
		errs = append(errs, best)
	}
	var s float64
	for i := 1; i < len(errs); i++ {
		s += (errs[i] - errs[i-1]) * (errs[i] - errs[i-1])
	}
	return math.Sqrt(s / float64(max(1, len(errs)-1)) / 2)
}

// TestAlignTimesBeats checks that template matching times noisy beats more
// precisely than the steepest upstroke alone (averaged over six noise draws:
// one draw can go either way), and that a beat buried in an artefact fits
// the template badly and ends no NN interval.
func TestAlignTimesBeats(t *testing.T) {
	const fps = 30
	wave := func(seed uint64, hr, noise float64) (pulse.Wave, testsignal.Signal) {
		s := testsignal.Make(testsignal.Config{Seed: seed, HR: hr, Notch: 0.4, FPS: fps, RMSSDms: 30, Noise: noise})
		ts := make([]float64, len(s.T))
		for i, v := range s.T {
			ts[i] = v / 1000
		}
		return pulse.FromIntensity(resample.Uniform(nil, ts, s.I, fps), fps), s
	}
	for _, tc := range []struct {
		name      string
		hr, noise float64
	}{
		{"75 bpm", 75, 3},
		{"110 bpm, noisier", 110, 8},
		{"150 bpm, noisier", 150, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var before, after float64
			for seed := uint64(1); seed <= 6; seed++ {
				w, s := wave(seed, tc.hr, tc.noise)
				bs := Detect(nil, w.Pulse, constant(len(w.Pulse), 60/tc.hr), fps)
				before += timingJitter(bs, s.Beats) / 6
				Align(bs, w.Wide, fps)
				after += timingJitter(bs, s.Beats) / 6
				for i, b := range bs[1 : len(bs)-1] {
					if b.Fit != 0 && b.Fit < MinFit {
						t.Errorf("seed %d: beat %d at %.2f s fits %.2f, below MinFit", seed, i+1, b.T, b.Fit)
					}
				}
			}
			t.Logf("timing noise %.1f ms by the upstroke, %.1f ms by the template", 1000*before, 1000*after)
			if !(after < before) {
				t.Errorf("timing noise %.1f ms after Align, %.1f ms before: want less", 1000*after, 1000*before)
			}
		})
	}
	t.Run("a beat in an artefact", func(t *testing.T) {
		w, _ := wave(5, 72, 1)
		bs := Detect(nil, w.Pulse, constant(len(w.Pulse), 60/72.0), fps)
		// Replace the beat in the middle by a jerk of the camera: a few
		// large, random samples where the detector had a beat.
		k := len(bs) / 2
		var peak float64
		for _, v := range w.Wide {
			peak = math.Max(peak, math.Abs(v))
		}
		lo, hi := int((bs[k].T-0.3)*fps), int((bs[k].T+0.3)*fps)
		for i := lo; i < hi; i++ {
			w.Wide[i] = 3 * peak * math.Sin(float64(i*i))
		}
		Align(bs, w.Wide, fps)
		if bs[k].Fit >= MinFit {
			t.Fatalf("the artefact fits %.2f, want below %v", bs[k].Fit, MinFit)
		}
		iv := Intervals(bs)
		if iv[k-1].NN || iv[k].NN {
			t.Errorf("intervals around the artefact are NN: %+v %+v", iv[k-1], iv[k])
		}
		if !iv[k-3].NN || !iv[k+2].NN {
			t.Errorf("intervals away from it are not NN: %+v %+v", iv[k-3], iv[k+2])
		}
	})
}

// TestAlignMarksEdges checks that beats too near the ends of the wave for a
// whole template are marked Edge and end no NN interval, while every other
// beat is compared and keeps its intervals.
func TestAlignMarksEdges(t *testing.T) {
	const fps = 30
	s := testsignal.Make(testsignal.Config{Seed: 3, HR: 72, FPS: fps, RMSSDms: 20})
	ts := make([]float64, len(s.T))
	for i, v := range s.T {
		ts[i] = v / 1000
	}
	w := pulse.FromIntensity(resample.Uniform(nil, ts, s.I, fps), fps)
	bs := Detect(nil, w.Pulse, constant(len(w.Pulse), 60/72.0), fps)
	Align(bs, w.Wide, fps)
	// The template spans ±0.3 periods and the search ±0.12: a beat needs
	// 0.42 periods (0.35 s) of wave on each side.
	const need = 0.42 * 60 / 72
	last := float64(len(w.Wide)-1) / fps
	iv := Intervals(bs)
	for i, b := range bs {
		wantEdge := b.T < need-0.05 || b.T > last-need+0.05
		if b.T > need+0.05 && b.T < last-need-0.05 && b.Edge {
			t.Errorf("beat %d at %.2f s of %.2f s marked Edge", i, b.T, last)
		}
		if wantEdge && !b.Edge {
			t.Errorf("beat %d at %.2f s of %.2f s not marked Edge", i, b.T, last)
		}
		if b.Edge && ((i > 0 && iv[i-1].NN) || (i < len(iv) && iv[i].NN)) {
			t.Errorf("an interval of edge beat %d is NN", i)
		}
	}
	if !bs[0].Edge && bs[0].T < need {
		t.Errorf("first beat at %.2f s not at the edge", bs[0].T)
	}
}

package dsp

import (
	"math"
	"sort"
	"time"

	"github.com/pulsewire/pulsewire/dsp/pulse"
	"github.com/pulsewire/pulsewire/dsp/resample"
)

// The live pulse wave a widget draws (Vitals.Wave).
const (
	// WaveSpan is how much of the recent pulse Vitals.Wave shows: four to
	// eight beats at rest.
	WaveSpan = 5 * time.Second
	// waveContextS of trace is filtered to show WaveSpan: the band-pass
	// filter needs a few seconds to settle at the edges of its input.
	waveContextS = 10.0
	// minWaveS of face trace is needed before a wave is shown: less is
	// shorter than the projections' own window (1.6 s) plus a beat or two.
	minWaveS = 4.0
	// maxWaveRateHz caps the wave's sampling rate: a chart gains nothing
	// from more points than that, and the message stays small.
	maxWaveRateHz = 30.0
)

// liveWave returns the pulse wave of the last WaveSpan of the skin colour
// trace, scaled to -1..1 with the systolic upstroke rising, sampled at
// rateHz, and rounded to three decimals: a picture of the pulse for the
// widget, not a measurement. It is extracted by the analysis's projections
// but from the bare colour trace (pulse.FromRGB: no background or motion
// references to rectify against, unlike the analysed pulse), from the last
// waveContextS of trace, so it shows from minWaveS on, before the heart rate
// can be trusted. Nil when there is too little trace or no variation to
// scale.
func (s *Stream) liveWave() (wave []float64, rateHz float64) {
	n := len(s.t)
	if n < 2 {
		return nil, 0
	}
	i := sort.SearchFloat64s(s.t, s.t[n-1]-waveContextS*1000)
	t, ch := clean(s.t[i:], s.r[i:], s.g[i:], s.b[i:])
	if len(t) < 2 || t[len(t)-1]-t[0] < minWaveS {
		return nil, 0
	}
	rateHz = math.Min(math.Round(1/medianStep(t)), maxWaveRateHz)
	if rateHz < 2*pulse.BandHiHz {
		return nil, 0 // too few frames to carry a pulse at all
	}
	var grid [3][]float64
	for k := range grid {
		grid[k] = resample.Uniform(nil, t, ch[k], rateHz)
	}
	p := pulse.FromRGB(grid[0], grid[1], grid[2], rateHz).Pulse
	if keep := int(WaveSpan.Seconds() * rateHz); len(p) > keep {
		p = p[len(p)-keep:]
	}
	peak := 0.0
	for _, v := range p {
		peak = math.Max(peak, math.Abs(v))
	}
	if !(peak > 0) || math.IsInf(peak, 0) {
		return nil, 0
	}
	wave = make([]float64, len(p))
	for k, v := range p {
		wave[k] = round(v/peak, 3)
	}
	return wave, rateHz
}

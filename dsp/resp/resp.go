// Package resp estimates the breathing rate from the respiratory modulation
// of a pulse wave.
//
// Breathing modulates the pulse three ways (Charlton et al., "An assessment
// of algorithms to estimate respiratory rate from the ECG and PPG", Physiol.
// Meas. 37(4), 2016; Karlen et al., "Multiparameter respiratory rate
// estimation from the photoplethysmogram", IEEE TBME 60(7), 2013):
//
//   - intensity (RIIV): the baseline of the wave rises and falls with venous
//     return and chest movement;
//   - amplitude (RIAV): the beat amplitude follows the stroke volume;
//   - frequency (RIFV): the beat interval shortens on inspiration
//     (respiratory sinus arrhythmia).
//
// Any one of them can be weak in a given person or recording, and a slower
// wave (Mayer waves near 6 /min, from blood-pressure regulation) often rides
// on the amplitude and interval series. Each modulation's breaths are
// counted in the time domain (countRate), which follows irregular breathing
// and is not pulled by a slow wave of similar size the way a spectral peak
// is. When the count and the spectral peak agree within agreePerMin the
// rhythm is regular and the count is used: it is the mean rate over the
// capture (cycles over their duration), while the peak of a Hann-windowed
// spectrum reads mostly the middle of the capture, and the breathing rate
// drifts within a minute by several percent. When they disagree, a faster
// ripple may have added extrema to the count as well as a slow wave pulled
// the peak; the modulation then takes its peak only when clearer
// modulations with a regular rhythm confirm it (candidates.choose), and its
// count otherwise. The rates are fused by their weighted median, each
// weighted by the square of its spectral purity (the share of the
// modulation's breathing-band power within ±0.03 Hz of its strongest
// peak): a modulation that carries a clear rhythm outweighs one that
// carries noise, and with three of them one misled estimate cannot move
// the result on its own (Karlen et al. average the rates instead and give
// up when they spread by more than 4 /min).
package resp

import (
	"cmp"
	"math"
	"slices"

	"github.com/pulsewire/pulsewire/dsp/beats"
	"github.com/pulsewire/pulsewire/dsp/filter"
	"github.com/pulsewire/pulsewire/dsp/resample"
	"github.com/pulsewire/pulsewire/dsp/spectrum"
)

// The breathing band searched, breaths per minute. Wider than the 6-30 /min
// of adults at rest so that a rate near either end still shows as a peak.
const (
	MinPerMin = 4.0
	MaxPerMin = 42.0
)

// agreePerMin: a count and a spectral peak within 2 /min of each other
// describe the same regular rhythm.
const agreePerMin = 2.0

// seriesRateHz is the grid the beat-by-beat series are put on: 4 Hz, the
// usual rate for interval series (Task Force 1996), well above breathing.
const seriesRateHz = 4.0

// Modulation names one respiratory modulation.
type Modulation int

// The modulations.
const (
	Intensity Modulation = iota
	Amplitude
	Frequency
)

// Estimate is a breathing rate and the evidence behind it.
type Estimate struct {
	PerMin float64 // breaths per minute, the weighted median of Each
	// Each is the rate, breaths per minute, each modulation shows alone,
	// indexed by Modulation; 0 when it could not be counted.
	Each [3]float64
	// Weight is each modulation's weight in the fusion (purity squared).
	Weight [3]float64
}

// Rate estimates the breathing rate from baseline (the relative intensity
// below 0.7 Hz, uniform at rateHz, see pulse.Wave) and the beats and
// intervals found in the pulse. ok is false when no modulation could be
// counted.
func Rate(baseline []float64, rateHz float64, bs []beats.Beat, iv []beats.Interval) (Estimate, bool) {
	var est Estimate
	var a spectrum.Analyzer
	var sp spectrum.Spectrum
	// Each modulation offers two readings of its rhythm, the count and the
	// spectral peak; which one it votes with is settled below, once all
	// three are known.
	var cand [3]candidates
	count := func(m Modulation, x []float64, hz, maxHz float64) {
		hi := min(MaxPerMin/60, maxHz, 0.45*hz)
		if len(x) < 8 || hi <= MinPerMin/60*1.5 {
			return
		}
		filter.Detrend(x, x, filter.DetrendLambda(MinPerMin/60/2, hz))
		filter.Bandpass(2, MinPerMin/60, hi, hz).FiltFilt(x, x)
		r, ok := countRate(x, hz)
		if !ok || r < MinPerMin || r > MaxPerMin {
			return
		}
		a.Periodogram(&sp, x, hz, spectrum.FFTLen(len(x), hz, 0.002))
		p, found := sp.Peak(MinPerMin/60, hi)
		total := sp.Band(MinPerMin/60, hi)
		if !found || total <= 0 {
			return
		}
		purity := sp.Band(p.Hz-0.03, p.Hz+0.03) / total
		cand[m] = candidates{count: r, peak: 60 * p.Hz}
		est.Weight[m] = purity * purity
	}
	count(Intensity, slices.Clone(baseline), rateHz, math.Inf(1))
	if len(bs) >= 8 {
		// The beats sample the amplitude and interval series: they carry
		// breathing only below half the beat rate.
		nyquistHz := 0.5 * float64(len(bs)-1) / (bs[len(bs)-1].T - bs[0].T)
		t := make([]float64, len(bs))
		amp := make([]float64, len(bs))
		for i, b := range bs {
			t[i], amp[i] = b.T, b.Amplitude()
		}
		count(Amplitude, resample.Uniform(nil, t, amp, seriesRateHz), seriesRateHz, 0.9*nyquistHz)
		if it, s := intervalSeries(iv); len(it) >= 8 {
			count(Frequency, resample.Uniform(nil, it, s, seriesRateHz), seriesRateHz, 0.9*nyquistHz)
		}
	}
	for m, c := range cand {
		est.Each[m] = c.choose(Modulation(m), cand, est.Weight)
	}
	var total float64
	order := []int{0, 1, 2}
	for _, w := range est.Weight {
		total += w
	}
	if total == 0 {
		return Estimate{}, false
	}
	// Weighted median: the rate where the cumulative weight, in rate
	// order, passes half.
	slices.SortFunc(order, func(i, j int) int { return cmp.Compare(est.Each[i], est.Each[j]) })
	var acc float64
	for _, m := range order {
		est.Weight[m] /= total
		if acc < 0.5 && acc+est.Weight[m] >= 0.5 {
			est.PerMin = est.Each[m]
		}
		acc += est.Weight[m]
	}
	return est, true
}

// intervalSeries returns the intervals as a series at their end times, with
// rejected intervals replaced by the mean of the normal ones so an artefact
// does not read as a deep breath.
func intervalSeries(iv []beats.Interval) (t, s []float64) {
	st := beats.Stats(iv)
	if st.Count == 0 {
		return nil, nil
	}
	for _, v := range iv {
		x := v.S
		if !v.NN {
			x = st.MeanS
		}
		t = append(t, v.At)
		s = append(s, x)
	}
	return t, s
}

// candidates are the two readings of one modulation's rate, breaths per
// minute: its count and its spectral peak (both 0 when it gave none).
type candidates struct{ count, peak float64 }

// regular reports whether the count confirms the spectral peak: the
// modulation carries one regular rhythm.
func (c candidates) regular() bool {
	return c.count != 0 && math.Abs(c.peak-c.count) <= agreePerMin
}

// choose returns the rate modulation m votes with, given every
// modulation's readings and weight. A regular rhythm votes with its
// count, the mean rate over the capture. When count and peak disagree, either a slower
// wave pulls the peak (a Mayer wave, what counting guards against) or a
// faster ripple adds extrema to the count (a head sway, or the bumps of an
// uneven breath); the modulation alone cannot tell which, and keeps its
// count. It takes its peak instead when the regular modulations that
// confirm the peak (within agreePerMin) together outweigh both itself and
// those that confirm its count: a clearer modulation with a regular rhythm
// is the better witness. Karlen et al. use the modulations' agreement as a
// quality test; here it settles each modulation's own ambiguity.
func (c candidates) choose(m Modulation, all [3]candidates, weight [3]float64) float64 {
	if c.count == 0 || c.regular() {
		return c.count
	}
	support := func(r float64) float64 {
		var s float64
		for k, o := range all {
			if Modulation(k) != m && o.regular() && math.Abs(o.peak-r) <= agreePerMin {
				s += weight[k]
			}
		}
		return s
	}
	if w := support(c.peak); w > weight[m] && w > support(c.count) {
		return c.peak
	}
	return c.count
}

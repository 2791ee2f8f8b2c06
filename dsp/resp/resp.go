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
// and is not pulled by a slow wave of large power the way a spectral peak
// is, and the rates are fused by their median: with three modulations one
// misled estimate cannot move the result (Karlen et al. average the rates
// instead and give up when they spread by more than 4 /min).
package resp

import (
	"math"
	"slices"

	"github.com/pulsewire/pulsewire/dsp/beats"
	"github.com/pulsewire/pulsewire/dsp/filter"
	"github.com/pulsewire/pulsewire/dsp/resample"
)

// The breathing band searched, breaths per minute. Wider than the 6-30 /min
// of adults at rest so that a rate near either end still shows as a peak.
const (
	MinPerMin = 4.0
	MaxPerMin = 42.0
)

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
	PerMin float64 // breaths per minute, the median of Each over the modulations used
	// Each is the rate, breaths per minute, each modulation shows alone,
	// indexed by Modulation; 0 when it could not be counted.
	Each [3]float64
}

// Rate estimates the breathing rate from baseline (the relative intensity
// below 0.7 Hz, uniform at rateHz, see pulse.Wave) and the beats and
// intervals found in the pulse. ok is false when no modulation could be
// counted.
func Rate(baseline []float64, rateHz float64, bs []beats.Beat, iv []beats.Interval) (Estimate, bool) {
	var est Estimate
	var rates []float64
	count := func(m Modulation, x []float64, hz, maxHz float64) {
		hi := min(MaxPerMin/60, maxHz, 0.45*hz)
		if len(x) < 8 || hi <= MinPerMin/60*1.5 {
			return
		}
		filter.Detrend(x, x, filter.DetrendLambda(MinPerMin/60/2, hz))
		filter.Bandpass(2, MinPerMin/60, hi, hz).FiltFilt(x, x)
		if r, ok := countRate(x, hz); ok && r >= MinPerMin && r <= MaxPerMin {
			est.Each[m] = r
			rates = append(rates, r)
		}
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
	if len(rates) == 0 {
		return Estimate{}, false
	}
	slices.Sort(rates)
	if n := len(rates); n%2 == 1 {
		est.PerMin = rates[n/2]
	} else {
		est.PerMin = (rates[n/2-1] + rates[n/2]) / 2
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

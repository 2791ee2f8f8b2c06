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
// Any one of them can be weak in a given person or recording, and its
// series then carries noise, or a slower wave (Mayer waves near 6 /min,
// from blood-pressure regulation) that often rides on the amplitude and
// interval series. Each modulation's breaths are counted in the time domain
// (countRate, Schäfer & Kratky), which follows irregular breathing and is
// not pulled by a slow wave the way a spectral peak is: the count is the
// mean rate over the capture. Counting a series of noise finds ripples all
// the same, at the rate typical of the band (band-limited white noise
// crosses its mean about 20-25 times a minute in 4-42 /min, whatever the
// breathing: the answer a weakly modulated clinical trace once gave, twice
// its breathing rate). Each count therefore carries a quality index, the
// share of the modulation's breathing-band power within ±0.03 Hz of the
// count's own rate: a count that follows a rhythm finds that rhythm's power
// there, a count of ripples finds the noise's. On simulated finger PPG
// (weak, absent and strong modulations, slow waves, breaths that are not
// sines, 30 and 250 Hz) counts within 2 /min of the truth had a median
// index of 0.52, wrong counts 0.10 (0.27 at the 90th percentile).
//
// The counts are fused only where they agree (Karlen et al., IEEE TBME
// 60(7), 2013, fuse their three rates only when they spread by less than 4
// /min): the answer is the mean of the heaviest group of counts within
// agreePerMin of each other, each weighted by the square of its index. A
// count with an index below minQuality does not take part; a group of one
// answers only with an index of soloQuality or more, a group of two or
// three vouches for itself when it holds the intensity and a beat series.
// The amplitude and the interval series are read from the same beats, so a
// beat misplaced by noise moves both: on webcam-like video whose beats
// were found through noise, the two agreed at 18-23 /min, where noise
// counts gather, for breathing at 11-13. Agreeing with each other alone,
// they answer only as one count would, unless the beats are clean (the
// caller says so: timed well enough for HRV), when a beat is not
// misplaced by noise and the stroke volume and the sinus rhythm are two
// witnesses (on a finger PPG at 100 Hz beside a belt, two one-minute
// windows whose intensity carried no rhythm were refused that way while
// their amplitude and interval counts agreed within 1 /min of the
// belt). A camera's beats witness nothing alone (Trust): it times them
// through noise as large as the swing breathing gives them (on one real
// face, beat-to-beat differences of 46 ms where the fingertip oximeter's
// were 20). On encoded synthetic video the beat series answered 11
// breathing rates without the intensity, 5 of them 3.6-9 /min off, and 7
// beside an intensity count too weak to answer alone, 4 of them 4-6 /min
// off; so there they only support an intensity count that holds a rhythm
// of its own.
//
// A breath that is not a sine (a quick inspiration, the two humps of a
// ventilator's cycle) has a strong second harmonic, and a modulation can
// be counted at it; its spectrum still holds the fundamental
// (subHarmonicShare), and such a count then supports the group at half its
// rate instead of answering twice the breathing rate. No group: no answer.
package resp

import (
	"math"

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

// agreePerMin: two counts within 2 /min of each other describe the same
// rhythm.
const agreePerMin = 2.0

// minQuality and soloQuality bound the quality index of a count (the share
// of its modulation's breathing-band power within ±0.03 Hz of its rate):
// below 0.1 it does not take part, and alone it answers from 0.3 (a
// rhythm holding that share stood out of noise on the simulated traces;
// noise counts reached 0.27 at the 90th percentile).
const (
	minQuality  = 0.1
	soloQuality = 0.3
)

// subHarmonicShare: a count within 1 /min of twice another's rate (half
// the agreement allowed between counts, as the halving halves the error
// too) supports it when the power within ±0.03 Hz of half its rate is at
// least a quarter of the power at its rate: its fundamental is there too.
const subHarmonicShare = 0.25

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
	PerMin float64 // breaths per minute, the weighted mean of the agreeing counts
	// Each is the rate, breaths per minute, each modulation of the
	// answering group counted (halved when counted at the harmonic),
	// indexed by Modulation; 0 outside the group.
	Each [3]float64
	// Weight is each count's share of the group's weight.
	Weight [3]float64
}

// reading is what one modulation shows: its count in breaths per minute (0
// when not counted), the count's quality index, and the power at half the
// count's rate over the power at its rate.
type reading struct{ count, quality, sub float64 }

// vote returns the rate the modulation takes part with (its count), 0 when
// it does not.
func (r reading) vote() float64 {
	if r.quality < minQuality {
		return 0
	}
	return r.count
}

// Trust says what the amplitude and interval counts, read from the beats,
// can answer.
type Trust int

// The trust in the beat series.
const (
	// OneWitness: beats found through a contact sensor's noise. A clear
	// count of one series answers alone; the two agreeing count as one,
	// as a misplaced beat moves both.
	OneWitness Trust = iota
	// TwoWitnesses: beats timed well enough for beat-to-beat measures
	// (HRV). The two series agreeing vouch for each other.
	TwoWitnesses
	// SupportOnly: a camera's beats. The series only support an intensity
	// count that holds a rhythm alone (a quality of soloQuality or more).
	SupportOnly
)

// Rate estimates the breathing rate from baseline (the relative intensity
// below 0.7 Hz, uniform at rateHz, see pulse.Wave) and the beats and
// intervals found in the pulse, whose series count as trust says. ok is
// false when no modulation carries a regular rhythm.
func Rate(baseline []float64, rateHz float64, bs []beats.Beat, iv []beats.Interval, trust Trust, holes ...Hole) (Estimate, bool) {
	var rd [3]reading
	var a spectrum.Analyzer
	var sp spectrum.Spectrum
	read := func(m Modulation, x []float64, hz, maxHz float64, holes []Hole) {
		hi := min(MaxPerMin/60, maxHz, 0.45*hz)
		if len(x) < 8 || hi <= MinPerMin/60*1.5 {
			return
		}
		filter.Detrend(x, x, filter.DetrendLambda(MinPerMin/60/2, hz))
		filter.Bandpass(2, MinPerMin/60, hi, hz).FiltFilt(x, x)
		r, ok := countRate(x, hz, holes...)
		if !ok || r < MinPerMin || r > MaxPerMin {
			return
		}
		a.Periodogram(&sp, x, hz, spectrum.FFTLen(len(x), hz, 0.002))
		power := func(perMin float64) float64 { return sp.Band(perMin/60-0.03, perMin/60+0.03) }
		total := sp.Band(MinPerMin/60, hi)
		if at := power(r); total > 0 && at > 0 {
			rd[m] = reading{count: r, quality: at / total, sub: power(r/2) / at}
		}
	}
	// The baseline is below 0.7 Hz: about 8 Hz keeps it whole, and the
	// reading of a clinical sensor's 250 Hz costs a thirtieth.
	step := max(1, int(rateHz/(2*seriesRateHz)))
	read(Intensity, decimate(baseline, step), rateHz/float64(step), math.Inf(1), holes)
	if len(bs) >= 8 {
		// The beats sample the amplitude and interval series: they carry
		// breathing only below half the beat rate.
		nyquistHz := 0.5 * float64(len(bs)-1) / (bs[len(bs)-1].T - bs[0].T)
		t := make([]float64, len(bs))
		amp := make([]float64, len(bs))
		for i, b := range bs {
			t[i], amp[i] = b.T, b.Amplitude()
		}
		read(Amplitude, resample.Uniform(nil, t, amp, seriesRateHz), seriesRateHz, 0.9*nyquistHz, shift(holes, t[0]))
		if it, s := intervalSeries(iv); len(it) >= 8 {
			read(Frequency, resample.Uniform(nil, it, s, seriesRateHz), seriesRateHz, 0.9*nyquistHz, shift(holes, it[0]))
		}
	}
	return fuse(rd, trust)
}

// fuse returns the weighted mean of the heaviest group of agreeing counts
// that trust lets answer.
func fuse(rd [3]reading, trust Trust) (Estimate, bool) {
	var best Estimate
	var bestSupport float64
	for _, lead := range rd {
		r0 := lead.vote()
		if r0 == 0 {
			continue
		}
		var est Estimate
		var support, sum, top float64
		var fromBaseline bool
		beatSeries := 0
		for m, r := range rd {
			v := r.vote()
			switch {
			case v == 0:
				continue
			case math.Abs(v-r0) <= agreePerMin:
			case math.Abs(v/2-r0) <= agreePerMin/2 && r.sub >= subHarmonicShare:
				v /= 2 // counted at the breath's second harmonic
			default:
				continue
			}
			w := r.quality * r.quality
			est.Each[m], est.Weight[m] = v, w
			support += w
			sum += w * v
			top = max(top, r.quality)
			if Modulation(m) == Intensity {
				fromBaseline = true
			} else {
				beatSeries++
			}
		}
		switch {
		case trust == SupportOnly:
			if !fromBaseline || rd[Intensity].quality < soloQuality {
				continue
			}
		case fromBaseline && beatSeries > 0, trust == TwoWitnesses && beatSeries == 2:
			// vouched for
		case top < soloQuality:
			continue
		}
		est.PerMin = sum / support
		// The heaviest group wins; of equal ones, the slower (a group
		// at twice the rate of another is the harmonic's).
		if support > bestSupport || support == bestSupport && est.PerMin < best.PerMin {
			best, bestSupport = est, support
		}
	}
	if bestSupport == 0 {
		return Estimate{}, false
	}
	for m := range best.Weight {
		best.Weight[m] /= bestSupport
	}
	return best, true
}

// decimate returns every step-th sample of x (a copy; x for step 1 is
// copied too, as the reading filters in place).
func decimate(x []float64, step int) []float64 {
	out := make([]float64, 0, (len(x)+step-1)/step)
	for i := 0; i < len(x); i += step {
		out = append(out, x[i])
	}
	return out
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

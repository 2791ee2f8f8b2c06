package dsp

import (
	"math"

	"github.com/pulsewire/pulsewire/dsp/spectrum"
)

// Heart rate is searched in 40-200 bpm, the range the service measures.
const (
	MinHeartRateBpm = 40.0
	MaxHeartRateBpm = 200.0
)

// Heart-rate tracking: spectra of hrWindowS windows every hrHopS seconds,
// followed by a Viterbi track. Ten seconds hold at least 6.7 beats at
// 40 bpm, enough for a clear peak, and are short enough to follow a rate
// that changes. The track may drift by about hrSigmaHzPerS (3 bpm) per
// second without cost; larger jumps must be earned by much stronger peaks.
const (
	hrWindowS     = 10.0
	hrHopS        = 1.0
	hrSigmaHzPerS = 0.05
	hrCandidates  = 5
	// harmonicBonus: a candidate whose second harmonic is present gets up
	// to this fraction of its own power added, so a fundamental beats its
	// harmonic unless the harmonic is more than (1 + harmonicBonus) times
	// stronger (the dicrotic wave of a slow pulse can make the harmonic
	// strong), while a spurious sub-harmonic cannot ride on the real
	// fundamental.
	harmonicBonus = 1.0
	// whitenHalfHz: the noise floor under a frequency is the median power
	// within ±0.8 Hz (±48 bpm), wide enough that a pulse peak, spread over
	// ±0.2 Hz by a 10 s window and as much again by heart-rate variability,
	// stays a minority of it (with ±0.4 Hz a fast, variable pulse raised
	// its own floor and lost to noise).
	whitenHalfHz = 0.8
)

// rateTrack is the heart rate followed through a pulse wave.
type rateTrack struct {
	hz      []float64 // chosen frequency per window
	centreS []float64 // window centres, s from the first sample
	snrDB   []float64 // pulse SNR at the chosen frequency per window
	share   []float64 // signal / (signal + noise) per window
	// prominenceDB is the height of the chosen peak above the local noise
	// floor of its window's spectrum (spectrum.Whiten), dB.
	prominenceDB []float64
}

// meanBpm is the mean of the tracked rate.
func (t rateTrack) meanBpm() float64 { return 60 * meanOf(t.hz) }

// periodAt returns the tracked beat period in seconds for every sample of a
// wave of n samples at rateHz, interpolated between window centres.
func (t rateTrack) periodAt(n int, rateHz float64) []float64 {
	out := make([]float64, n)
	j := 0
	for i := range out {
		s := float64(i) / rateHz
		for j+1 < len(t.hz) && t.centreS[j+1] <= s {
			j++
		}
		f := t.hz[j]
		if j+1 < len(t.hz) && s > t.centreS[j] {
			w := (s - t.centreS[j]) / (t.centreS[j+1] - t.centreS[j])
			f = (1-w)*t.hz[j] + w*t.hz[j+1]
		}
		out[i] = 1 / f
	}
	return out
}

// trackRate follows the heart rate through pulse (uniform at rateHz).
func trackRate(pulse []float64, rateHz float64) rateTrack {
	win := min(len(pulse), int(math.Round(hrWindowS*rateHz)))
	hop := max(1, int(math.Round(hrHopS*rateHz)))
	nfft := spectrum.FFTLen(win, rateHz, 0.005)
	lo, hi := MinHeartRateBpm/60, MaxHeartRateBpm/60
	var a spectrum.Analyzer
	var s, white spectrum.Spectrum
	var windows [][]spectrum.Candidate
	var specs, whites []spectrum.Spectrum
	var tr rateTrack
	for start := 0; start+win <= len(pulse); start += hop {
		a.Periodogram(&s, pulse[start:start+win], rateHz, nfft)
		// Candidates are scored on the whitened spectrum, by their height
		// above the local noise floor, so the low-frequency pile-up of
		// compression steps and drift cannot outbid a pulse.
		spectrum.Whiten(&white, &s, spectrum.PulseBandLoHz, min(2*hi, 0.45*rateHz), whitenHalfHz)
		var cs []spectrum.Candidate
		for _, p := range white.Peaks(nil, lo, hi, hrCandidates) {
			h := white.At(2 * p.Hz)
			if 2*p.Hz > spectrum.PulseBandHiHz {
				h = 0 // beyond the pulse band: no evidence either way
			}
			score := p.Power * (1 + harmonicBonus*min(1, h/p.Power))
			// Dividing by a sloping floor shifts a maximum a little; the
			// frequency is read from the raw spectrum's peak under it.
			hz := p.Hz
			if raw, found := s.Peak(p.Hz-0.05, p.Hz+0.05); found {
				hz = raw.Hz
			}
			cs = append(cs, spectrum.Candidate{Hz: hz, Score: math.Log(score)})
		}
		windows = append(windows, cs)
		specs = append(specs, spectrum.Spectrum{Power: append([]float64(nil), s.Power...), BinHz: s.BinHz, Seconds: s.Seconds})
		whites = append(whites, spectrum.Spectrum{Power: append([]float64(nil), white.Power...), BinHz: white.BinHz})
		tr.centreS = append(tr.centreS, (float64(start)+float64(win)/2)/rateHz)
		if start+win == len(pulse) {
			break
		}
	}
	path := spectrum.Track(nil, windows, hrHopS, hrSigmaHzPerS)
	for w, k := range path {
		if k < 0 {
			// No peak in this window: carry the previous rate (or the
			// band centre when the wave starts flat).
			f := 1.5
			if len(tr.hz) > 0 {
				f = tr.hz[len(tr.hz)-1]
			}
			tr.hz = append(tr.hz, f)
			tr.snrDB = append(tr.snrDB, math.Inf(-1))
			tr.share = append(tr.share, 0)
			tr.prominenceDB = append(tr.prominenceDB, 0)
			continue
		}
		f := windows[w][k].Hz
		sig, noise := specs[w].PulsePower(f)
		tr.prominenceDB = append(tr.prominenceDB, 10*math.Log10(max(whites[w].At(f), 1e-300)))
		tr.hz = append(tr.hz, f)
		tr.snrDB = append(tr.snrDB, 10*math.Log10(max(sig, 1e-300)/max(noise, 1e-300)))
		tr.share = append(tr.share, sig/max(sig+noise, 1e-300))
	}
	return tr
}

func meanOf(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(max(len(x), 1))
}

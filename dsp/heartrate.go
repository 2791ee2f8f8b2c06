package dsp

import (
	"math"

	"github.com/pulsewire/pulsewire/dsp/internal/stats"
	"github.com/pulsewire/pulsewire/dsp/spectrum"
)

// Heart rate is searched in 40-200 bpm, the range the service measures.
const (
	MinHeartRateBpm = 40.0
	MaxHeartRateBpm = 200.0
)

// Heart-rate tracking: spectra of hrWindowS windows every hrHopS seconds,
// turned into evidence for every rate of a 1 bpm grid, and a hidden
// Markov chain of the rate through the windows. Ten seconds hold at least
// 6.7 beats at 40 bpm, enough for a clear peak, and are short enough to
// follow a rate that changes. The rate drifts by about hrSigmaHzPerS
// (3 bpm) per second; with probability hrEscape per window it jumps
// anywhere, so a track that locked onto an artefact can leave it.
const (
	hrWindowS     = 10.0
	hrHopS        = 1.0
	hrSigmaHzPerS = 0.05
	hrEscape      = 1e-3
	hrGridHz      = 1.0 / 60
	// whitenHalfHz: the noise floor under a frequency is the median power
	// within ±0.8 Hz (±48 bpm), wide enough that a pulse peak, spread over
	// ±0.2 Hz by a 10 s window and as much again by heart-rate variability,
	// stays a minority of it (with ±0.4 Hz a fast, variable pulse raised
	// its own floor and lost to noise).
	whitenHalfHz = 0.8
	// evidenceKnee: a window's evidence for a rate is its whitened height
	// (in units of the local median) up to 10, and grows only
	// logarithmically beyond. Noise rarely reaches 10; above it the pulse
	// is plainly there, and how far above must not let one window's strong
	// harmonic (the dicrotic wave of a contact pulse) outweigh the track's
	// continuity.
	evidenceKnee = 10.0
	// confidenceHalfHz: a window's confidence is the posterior probability
	// that the rate lies within ±5 bpm of the tracked one.
	confidenceHalfHz = 5.0 / 60
)

// rateTrack is the heart rate followed through a pulse wave.
type rateTrack struct {
	hz      []float64 // tracked frequency per window
	centreS []float64 // window centres, s from the first sample
	snrDB   []float64 // pulse SNR at the tracked frequency per window
	// prominenceDB is the height of the tracked peak above the local noise
	// floor of its window's spectrum (spectrum.Whiten), dB.
	prominenceDB []float64
	// confidence is, per window, the posterior probability that the rate
	// lies within ±5 bpm of hz.
	confidence []float64
}

// meanBpm is the mean of the tracked rate.
func (t rateTrack) meanBpm() float64 { return 60 * stats.Mean(t.hz) }

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
//
// Each window's spectrum is whitened (spectrum.Whiten: divided by its local
// noise floor, so the pile-up of compression steps and drift at low
// frequencies cannot outbid a pulse) and read at every rate of the grid.
// A rate's evidence is its whitened height, plus that of its second
// harmonic, minus that of its sub-harmonic (half the rate), each counting
// at most as much as the rate itself: a pulse has harmonics but nothing at
// half its rate. So a fundamental wins over its harmonic even when a slow
// pulse's dicrotic wave makes the harmonic the stronger peak (the harmonic
// pays for the fundamental below it), and a spurious sub-harmonic cannot
// borrow the fundamental's power. The windows overlap,
// so each one's evidence is weighted by the share of new samples it brings,
// and it is the log-likelihood of the rate in a hidden Markov chain
// (spectrum.Chain): the Viterbi path is the track, and the forward-backward
// posterior says how sure each window is of it. The tracked frequency of a
// window is the posterior mean within ±5 bpm of the path, finer than the
// grid.
func trackRate(pulse []float64, rateHz float64) rateTrack {
	win := min(len(pulse), int(math.Round(hrWindowS*rateHz)))
	hop := max(1, int(math.Round(hrHopS*rateHz)))
	nfft := spectrum.FFTLen(win, rateHz, 0.01)
	grid := spectrum.NewGrid(MinHeartRateBpm/60, MaxHeartRateBpm/60, hrGridHz)
	bandHi := min(spectrum.PulseBandHiHz, 0.45*rateHz)
	// Overlapping windows see the same samples again: each window's
	// evidence counts by the share of new samples it brings, and all of
	// them together at least as one window (a capture hardly longer than
	// a window is one piece of evidence, not a tenth of one).
	windows := 1 + (len(pulse)-win)/hop
	weight := max(float64(hop)/float64(win), 1/float64(windows))
	var a spectrum.Analyzer
	var s, white spectrum.Spectrum
	var tr rateTrack
	var loglik [][]float64
	var specs, whites []spectrum.Spectrum
	ev := make([]float64, grid.N)
	for start := 0; start+win <= len(pulse); start += hop {
		a.Periodogram(&s, pulse[start:start+win], rateHz, nfft)
		spectrum.Whiten(&white, &s, spectrum.PulseBandLoHz, bandHi, whitenHalfHz)
		for k := range ev {
			ev[k] = white.At(grid.Hz(k))
		}
		ll := make([]float64, grid.N)
		for k := range ll {
			f := grid.Hz(k)
			// A harmonic or sub-harmonic outside the band reads as the
			// noise floor (1 on a whitened spectrum), what such a bin
			// holds on noise. Read as nothing, it spared every rate under
			// 72 bpm the sub-harmonic's toll and denied every rate over
			// half the band's top its harmonic's bonus, and noise was
			// tracked just under 72 bpm.
			harmonic, sub := 1.0, 1.0
			if 2*f <= bandHi {
				harmonic = white.At(2 * f)
			}
			if f/2 >= spectrum.PulseBandLoHz {
				sub = white.At(f / 2)
			}
			ll[k] = weight * soften(max(0, ev[k]+min(harmonic, ev[k])-min(sub, ev[k])))
		}
		loglik = append(loglik, ll)
		specs = append(specs, spectrum.Spectrum{Power: append([]float64(nil), s.Power...), BinHz: s.BinHz, Seconds: s.Seconds})
		whites = append(whites, spectrum.Spectrum{Power: append([]float64(nil), white.Power...), BinHz: white.BinHz})
		tr.centreS = append(tr.centreS, (float64(start)+float64(win)/2)/rateHz)
		if start+win == len(pulse) {
			break
		}
	}
	chain := spectrum.Chain{Grid: grid, SigmaHz: hrSigmaHzPerS * hrHopS, Escape: hrEscape}
	post, path := chain.Posterior(loglik)
	half := int(math.Round(confidenceHalfHz / grid.StepHz))
	for w, k := range path {
		var mass, moment float64
		for j := max(0, k-half); j <= min(grid.N-1, k+half); j++ {
			mass += post[w][j]
			moment += post[w][j] * grid.Hz(j)
		}
		f := grid.Hz(k)
		if mass > 0 {
			f = moment / mass
		}
		sig, noise := specs[w].PulsePower(f)
		tr.hz = append(tr.hz, f)
		tr.confidence = append(tr.confidence, mass)
		tr.prominenceDB = append(tr.prominenceDB, 10*math.Log10(max(whites[w].At(f), 1e-300)))
		tr.snrDB = append(tr.snrDB, 10*math.Log10(max(sig, 1e-300)/max(noise, 1e-300)))
	}
	return tr
}

// soften is x up to evidenceKnee and grows logarithmically beyond it.
func soften(x float64) float64 {
	if x <= evidenceKnee {
		return x
	}
	return evidenceKnee * (1 + math.Log(x/evidenceKnee))
}

// periodCorrelation is the mean over the windows of the wave's normalised
// autocorrelation at the tracked period.
func periodCorrelation(pulse []float64, tr rateTrack, rateHz float64) float64 {
	win := min(len(pulse), int(math.Round(hrWindowS*rateHz)))
	var sum float64
	for w, c := range tr.centreS {
		start := max(0, min(len(pulse)-win, int(math.Round(c*rateHz))-win/2))
		x := pulse[start : start+win]
		lag := 1 / tr.hz[w] * rateHz
		l := int(lag)
		frac := lag - float64(l)
		var num, den float64
		for i := 0; i+l+1 < len(x); i++ {
			y := (1-frac)*x[i+l] + frac*x[i+l+1]
			num += x[i] * y
		}
		for _, v := range x {
			den += v * v
		}
		if den > 0 {
			sum += num / den
		}
	}
	return sum / float64(max(1, len(tr.centreS)))
}

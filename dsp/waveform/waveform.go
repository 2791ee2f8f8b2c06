// Package waveform describes the shape of the mean beat of a pulse wave:
// the ensemble-averaged beat and the waves of its second derivative.
package waveform

import (
	"math"

	"github.com/pulsewire/pulsewire/dsp/beats"
	"gonum.org/v1/gonum/dsp/fourier"
)

// templateLen is the number of points one averaged beat is resampled to.
const templateLen = 128

// MeanBeat returns the ensemble average of the beats of wave (uniform at
// rateHz), each taken from its foot to the next beat's foot and stretched to
// templateLen points, and the mean beat period. Averaging N beats divides the
// noise by √N, which is what makes the second derivative usable on a camera
// pulse. Only beats whose intervals on both sides are NN are used (iv[i] is
// the interval ending at bs[i+1]); ok is false with fewer than minBeats.
func MeanBeat(wave []float64, rateHz float64, bs []beats.Beat, iv []beats.Interval, minBeats int) (tmpl []float64, periodS float64, ok bool) {
	tmpl = make([]float64, templateLen)
	n := 0
	seg := make([]float64, templateLen)
	for i := 0; i+1 < len(bs) && i < len(iv); i++ {
		if !iv[i].NN {
			continue
		}
		a, b := bs[i].FootT*rateHz, bs[i+1].FootT*rateHz
		if b-a < 4 || int(math.Ceil(b)) >= len(wave) {
			continue
		}
		// Linear interpolation of the beat, minus the straight line between
		// its two feet so every beat starts and ends at zero.
		ya, yb := sample(wave, a), sample(wave, b)
		var peak float64
		for k := range seg {
			x := a + (b-a)*float64(k)/templateLen
			seg[k] = sample(wave, x) - (ya + (yb-ya)*float64(k)/templateLen)
			peak = max(peak, seg[k])
		}
		if peak <= 0 {
			continue
		}
		for k, v := range seg {
			tmpl[k] += v / peak // unit height: each beat counts equally
		}
		periodS += (b - a) / rateHz
		n++
	}
	if n < minBeats {
		return nil, 0, false
	}
	for k := range tmpl {
		tmpl[k] /= float64(n)
	}
	return tmpl, periodS / float64(n), true
}

func sample(x []float64, at float64) float64 {
	i := int(at)
	if i+1 >= len(x) {
		return x[len(x)-1]
	}
	w := at - float64(i)
	return (1-w)*x[i] + w*x[i+1]
}

// SecondDerivative returns the second derivative of the periodic beat tmpl
// (one period of periodS seconds), computed in the Fourier domain with the
// harmonics up to maxHz only: differentiation multiplies harmonic k by
// -(2πk/T)², so noise above the band the pulse shape lives in would swamp
// it. The result has the length of tmpl, in units of tmpl per s².
func SecondDerivative(tmpl []float64, periodS, maxHz float64) []float64 {
	n := len(tmpl)
	fft := fourier.NewFFT(n)
	c := fft.Coefficients(nil, tmpl)
	kmax := int(maxHz * periodS)
	for k := range c {
		if k == 0 || k > kmax {
			c[k] = 0
			continue
		}
		w := 2 * math.Pi * float64(k) / periodS
		c[k] *= complex(-w*w, 0)
	}
	out := fft.Sequence(nil, c)
	for i := range out {
		out[i] /= float64(n)
	}
	return out
}

// Waves are the a-e waves of the second-derivative photoplethysmogram
// (SDPTG, also called the acceleration plethysmogram), heights in the units
// of the derivative: a the early systolic positive wave, b the early
// systolic negative wave, c and d the late systolic re-increasing and
// re-decreasing waves, e the early diastolic positive wave (Takazawa et al.,
// "Assessment of vasoactive agents and vascular aging by the second
// derivative of photoplethysmogram waveform", Hypertension 32(2), 1998).
type Waves struct{ A, B, C, D, E float64 }

// AgeingIndex is the SDPTG ageing index (b - c - d - e) / a, which rises
// with age as arteries stiffen (Takazawa et al. 1998).
func (w Waves) AgeingIndex() float64 { return (w.B - w.C - w.D - w.E) / w.A }

// FindWaves locates a-e in sd, the second derivative of one beat starting
// at its foot, whose systolic peak is at index peak: a is the highest
// maximum of the upstroke (before the peak), then b, c, d and e are the
// alternating minimum, maximum, minimum and maximum that follow it within
// the first 75% of the beat (before the next upstroke). ok is false when
// any of them is missing, as when c and d merge in a very stiff or very
// noisy beat.
func FindWaves(sd []float64, peak int) (w Waves, ok bool) {
	n := len(sd)
	ia := -1
	for i := 1; i < min(peak, n-1); i++ {
		if sd[i] > sd[i-1] && sd[i] >= sd[i+1] && (ia < 0 || sd[i] > sd[ia]) {
			ia = i
		}
	}
	if ia < 0 || sd[ia] <= 0 {
		return Waves{}, false
	}
	var ext [4]float64
	found := 0
	for i := ia + 1; i < n*3/4 && found < 4; i++ {
		wantMax := found%2 == 1 // b is a minimum, c a maximum, ...
		if wantMax && sd[i] > sd[i-1] && sd[i] >= sd[i+1] ||
			!wantMax && sd[i] < sd[i-1] && sd[i] <= sd[i+1] {
			ext[found] = sd[i]
			found++
		}
	}
	if found < 4 {
		return Waves{}, false
	}
	return Waves{A: sd[ia], B: ext[0], C: ext[1], D: ext[2], E: ext[3]}, true
}

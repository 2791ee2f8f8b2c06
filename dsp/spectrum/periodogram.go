// Package spectrum estimates power spectra of the pulse and breathing waves
// and reads rates from them: sub-bin peak frequencies, signal-to-noise
// ratios and a frequency track that follows a rate over time.
package spectrum

import (
	"math"

	"gonum.org/v1/gonum/dsp/fourier"
)

// Spectrum is a one-sided power spectrum: Power[k] is the power at k·BinHz.
type Spectrum struct {
	Power   []float64
	BinHz   float64
	Seconds float64 // duration of the analysed window; sets the main-lobe width
}

// Analyzer computes periodograms with reusable buffers, so repeated spectra
// of the same size do not allocate. It is not safe for concurrent use.
type Analyzer struct {
	fft  *fourier.FFT
	seq  []float64
	coef []complex128
}

// FFTLen returns the transform length for n samples at rateHz: a power of
// two at least 4n (zero padding that smooths the spectrum for peak
// interpolation) and fine enough for bins of at most resolutionHz.
func FFTLen(n int, rateHz, resolutionHz float64) int {
	need := max(4*n, int(math.Ceil(rateHz/resolutionHz)))
	m := 1
	for m < need {
		m <<= 1
	}
	return m
}

// Periodogram writes into s the spectrum of x sampled at rateHz, padded
// with zeros to nfft samples: mean removed, Hann window (so a strong
// component leaks little into its neighbours), |X_k|² scaled by the window
// energy. Power is comparable between windows of the same length only.
// len(x) must not exceed nfft.
func (a *Analyzer) Periodogram(s *Spectrum, x []float64, rateHz float64, nfft int) {
	if a.fft == nil || a.fft.Len() != nfft {
		if a.fft == nil {
			a.fft = fourier.NewFFT(nfft)
		} else {
			a.fft.Reset(nfft)
		}
		a.seq = make([]float64, nfft)
		a.coef = make([]complex128, nfft/2+1)
	}
	var mean float64
	for _, v := range x {
		mean += v
	}
	mean /= float64(max(len(x), 1))
	seq := a.seq
	clear(seq)
	var energy float64
	for i, v := range x {
		w := hann(i, len(x))
		seq[i] = (v - mean) * w
		energy += w * w
	}
	a.fft.Coefficients(a.coef, seq)
	if cap(s.Power) < len(a.coef) {
		s.Power = make([]float64, len(a.coef))
	}
	s.Power = s.Power[:len(a.coef)]
	for k, c := range a.coef {
		s.Power[k] = (real(c)*real(c) + imag(c)*imag(c)) / max(energy, 1e-300)
	}
	s.BinHz = rateHz / float64(nfft)
	s.Seconds = float64(len(x)) / rateHz
}

// hann is the Hann window at sample i of n: 0.5 (1 - cos(2π i / (n-1))).
func hann(i, n int) float64 {
	if n < 2 {
		return 1
	}
	return 0.5 * (1 - math.Cos(2*math.Pi*float64(i)/float64(n-1)))
}

// bin returns the index of the bin nearest hz, clamped to the spectrum.
func (s *Spectrum) bin(hz float64) int {
	k := int(math.Round(hz / s.BinHz))
	return min(max(k, 0), len(s.Power)-1)
}

// Band returns the total power in [loHz, hiHz].
func (s *Spectrum) Band(loHz, hiHz float64) float64 {
	var sum float64
	for k := s.bin(loHz); k <= s.bin(hiHz); k++ {
		sum += s.Power[k]
	}
	return sum
}

// At returns the power at hz, linearly interpolated between bins.
func (s *Spectrum) At(hz float64) float64 {
	x := hz / s.BinHz
	k := int(x)
	if k < 0 || k+1 >= len(s.Power) {
		return 0
	}
	w := x - float64(k)
	return (1-w)*s.Power[k] + w*s.Power[k+1]
}

package filter

import (
	"fmt"
	"math"
)

// Biquad is one second-order section normalised so that a0 = 1:
//
//	y[n] = B0 x[n] + B1 x[n-1] + B2 x[n-2] - A1 y[n-1] - A2 y[n-2]
type Biquad struct{ B0, B1, B2, A1, A2 float64 }

// dcGain is H(z=1), the gain of the section for a constant input.
func (q Biquad) dcGain() float64 {
	return (q.B0 + q.B1 + q.B2) / (1 + q.A1 + q.A2)
}

// butterworthQ returns the quality factors of the second-order sections of an
// order-n Butterworth filter: Q_k = 1 / (2 cos((2k-1)π / 2n)), k = 1..n/2,
// the pole pairs of the analog prototype (Butterworth 1930; any filter text,
// e.g. Oppenheim & Schafer, Discrete-Time Signal Processing, 3rd ed., 7.1).
func butterworthQ(order int) []float64 {
	if order < 2 || order%2 != 0 {
		panic(fmt.Sprintf("filter: Butterworth order %d is not a positive even number", order))
	}
	qs := make([]float64, order/2)
	for k := range qs {
		qs[k] = 1 / (2 * math.Cos(float64(2*k+1)*math.Pi/float64(2*order)))
	}
	return qs
}

// section designs one low- or high-pass biquad with the bilinear transform,
// the cutoff pre-warped so that the -3 dB point of the whole Butterworth
// cascade falls exactly on cutoffHz (R. Bristow-Johnson, "Cookbook formulae
// for audio EQ biquad filter coefficients").
func section(high bool, cutoffHz, q, rateHz float64) Biquad {
	if !(cutoffHz > 0 && cutoffHz < rateHz/2) {
		panic(fmt.Sprintf("filter: cutoff %g Hz outside (0, %g) Hz", cutoffHz, rateHz/2))
	}
	w0 := 2 * math.Pi * cutoffHz / rateHz
	cos, alpha := math.Cos(w0), math.Sin(w0)/(2*q)
	a0 := 1 + alpha
	s := Biquad{A1: -2 * cos / a0, A2: (1 - alpha) / a0}
	if high {
		s.B0 = (1 + cos) / 2 / a0
		s.B1 = -(1 + cos) / a0
	} else {
		s.B0 = (1 - cos) / 2 / a0
		s.B1 = (1 - cos) / a0
	}
	s.B2 = s.B0
	return s
}

// Filter is a cascade of biquads with the padding its zero-phase use needs.
// A Filter holds a work buffer, so one value must not be used by two
// goroutines at once; designs are cheap, make one per user.
type Filter struct {
	sections []Biquad
	// pad is the number of samples mirrored at each end before zero-phase
	// filtering: three periods of the lowest corner frequency, long enough
	// for the start-up transient to die out before the real samples.
	pad  int
	work []float64
}

// Lowpass designs an order-n Butterworth low-pass filter (n even) with its
// -3 dB cutoff at cutoffHz for samples taken at rateHz.
func Lowpass(order int, cutoffHz, rateHz float64) *Filter {
	f := &Filter{pad: int(math.Ceil(3 * rateHz / cutoffHz))}
	for _, q := range butterworthQ(order) {
		f.sections = append(f.sections, section(false, cutoffHz, q, rateHz))
	}
	return f
}

// Highpass designs an order-n Butterworth high-pass filter (n even) with its
// -3 dB cutoff at cutoffHz for samples taken at rateHz.
func Highpass(order int, cutoffHz, rateHz float64) *Filter {
	f := &Filter{pad: int(math.Ceil(3 * rateHz / cutoffHz))}
	for _, q := range butterworthQ(order) {
		f.sections = append(f.sections, section(true, cutoffHz, q, rateHz))
	}
	return f
}

// Bandpass designs a band-pass filter as an order-n Butterworth high-pass at
// lowHz followed by an order-n Butterworth low-pass at highHz. When highHz
// is at or above 0.45 rateHz, close to Nyquist, the low-pass is left out.
func Bandpass(order int, lowHz, highHz, rateHz float64) *Filter {
	if !(lowHz < highHz) {
		panic(fmt.Sprintf("filter: band [%g, %g] Hz is empty", lowHz, highHz))
	}
	f := Highpass(order, lowHz, rateHz)
	if highHz < 0.45*rateHz {
		f.sections = append(f.sections, Lowpass(order, highHz, rateHz).sections...)
	}
	return f
}

// Response returns the magnitude of the filter's frequency response at hz
// for one pass (zero-phase filtering squares it).
func (f *Filter) Response(hz, rateHz float64) float64 {
	w := 2 * math.Pi * hz / rateHz
	z1 := complex(math.Cos(-w), math.Sin(-w))
	z2 := z1 * z1
	h := complex(1, 0)
	for _, s := range f.sections {
		num := complex(s.B0, 0) + complex(s.B1, 0)*z1 + complex(s.B2, 0)*z2
		den := 1 + complex(s.A1, 0)*z1 + complex(s.A2, 0)*z2
		h *= num / den
	}
	return math.Hypot(real(h), imag(h))
}

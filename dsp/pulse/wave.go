package pulse

import (
	"math"

	"github.com/pulsewire/pulsewire/dsp/filter"
	"github.com/pulsewire/pulsewire/dsp/spectrum"
)

// The pulse band in Hz: 36-240 bpm, a little wider than the 40-200 bpm the
// heart rate is searched in, so the filter's roll-off does not weaken rates
// at the edges of the search band.
const (
	BandLoHz = 0.6
	BandHiHz = 4.0
)

// WideHiHz is the upper edge of the band that keeps the pulse shape: the
// dicrotic notch and the second-derivative waves need harmonics up to about
// 8 Hz (Elgendi, "On the analysis of fingertip photoplethysmogram signals",
// Curr. Cardiol. Rev. 8(1), 2012). It is lowered to 0.45 of the frame rate
// when the frame rate cannot carry it.
const WideHiHz = 8.0

// Method names how a pulse wave was obtained.
type Method string

// The methods.
const (
	MethodPOS     Method = "pos"     // camera, plane orthogonal to skin
	MethodCHROM   Method = "chrom"   // camera, chrominance
	MethodGreen   Method = "green"   // camera, green channel (Verkruysse et al., Opt. Express 16(26), 2008)
	MethodContact Method = "contact" // contact sensor intensity
)

// Wave is a pulse wave on a uniform grid and what came with it.
type Wave struct {
	// Pulse is the wave band-passed to BandLoHz-BandHiHz and oriented so
	// that the systolic upstroke rises: the input of heart rate and beats.
	Pulse []float64
	// Wide is the same wave band-passed to BandLoHz-WideHiHz: the input of
	// pulse-shape features.
	Wide []float64
	// Baseline is the relative intensity (0 = mean) below 0.7 Hz with its
	// slow drift removed: the respiratory baseline wander of the trace.
	Baseline []float64
	// Method is the projection that produced Pulse.
	Method Method
	// SNR is the spectral pulse signal-to-noise ratio of Pulse in dB at its
	// strongest 40-200 bpm peak (spectrum.SNR), the evidence Method was
	// chosen by.
	SNR float64
	// PeakHz is the frequency of that peak.
	PeakHz float64
}

// FromRGB extracts the pulse from camera colour traces (mean skin R, G, B per
// sample, uniform at rateHz). It computes POS and CHROM and keeps the one
// with the higher pulse SNR: POS is the more robust to motion in Wang et
// al.'s benchmark, CHROM sometimes wins under coloured light, and the
// spectrum shows which one saw the clearer pulse in this recording.
func FromRGB(r, g, b []float64, rateHz float64) Wave {
	wide := filter.Bandpass(4, BandLoHz, wideHi(rateHz), rateHz)
	narrow := filter.Bandpass(4, BandLoHz, BandHiHz, rateHz)
	var a spectrum.Analyzer

	posWide := wide.FiltFilt(nil, POS(nil, r, g, b, rateHz))
	pos := finish(Wave{Wide: posWide, Method: MethodPOS}, narrow, rateHz, &a)
	chrom := finish(Wave{Wide: CHROM(nil, r, g, b, rateHz, wide), Method: MethodCHROM}, narrow, rateHz, &a)
	w := pos
	if chrom.SNR > pos.SNR {
		w = chrom
	}
	// Green alone has the least sensor noise of all (one channel, no
	// weighted sums) but no defence against light and motion. It is taken
	// only when it confirms the projection's rate with a clearer spectrum:
	// the projections decide where the pulse is, green may only sharpen it.
	green := finish(Wave{Wide: wide.FiltFilt(nil, relative(g)), Method: MethodGreen}, narrow, rateHz, &a)
	if green.SNR > w.SNR && math.Abs(green.PeakHz-w.PeakHz) <= confirmHz {
		w = green
	}
	w.Baseline = baseline(g, rateHz)
	return w
}

// confirmHz: two spectra whose strongest peaks are within 0.05 Hz (3 bpm)
// see the same pulse.
const confirmHz = 0.05

// FromIntensity extracts the pulse from a contact trace (one intensity per
// sample, uniform at rateHz): a fingertip on a lit camera or a
// photoplethysmograph. Either polarity works; Orient fixes it.
func FromIntensity(x []float64, rateHz float64) Wave {
	wide := filter.Bandpass(4, BandLoHz, wideHi(rateHz), rateHz)
	narrow := filter.Bandpass(4, BandLoHz, BandHiHz, rateHz)
	var a spectrum.Analyzer
	w := finish(Wave{Wide: wide.FiltFilt(nil, relative(x)), Method: MethodContact}, narrow, rateHz, &a)
	w.Baseline = baseline(x, rateHz)
	return w
}

// finish orients the wide wave, derives the narrow one and measures its SNR.
func finish(w Wave, narrow *filter.Filter, rateHz float64, a *spectrum.Analyzer) Wave {
	Orient(w.Wide)
	w.Pulse = narrow.FiltFilt(nil, w.Wide)
	var s spectrum.Spectrum
	a.Periodogram(&s, w.Pulse, rateHz, spectrum.FFTLen(len(w.Pulse), rateHz, 0.01))
	w.SNR = math.Inf(-1)
	if p, ok := s.Peak(40.0/60, 200.0/60); ok {
		w.SNR = s.SNR(p.Hz)
		w.PeakHz = p.Hz
	}
	return w
}

func wideHi(rateHz float64) float64 { return min(WideHiHz, 0.45*rateHz) }

// relative returns x / mean(x) - 1, the fractional change of an intensity
// (x itself minus its mean when the mean is not positive).
func relative(x []float64) []float64 {
	m := mean(x)
	out := make([]float64, len(x))
	for i, v := range x {
		if m > 0 {
			out[i] = v/m - 1
		} else {
			out[i] = v - m
		}
	}
	return out
}

// baseline returns the respiratory baseline wander of an intensity trace:
// its relative change, detrended below 0.05 Hz (3 /min, slower than any
// breathing) and low-passed at 0.7 Hz (42 /min, faster than any breathing
// the service reports).
func baseline(x []float64, rateHz float64) []float64 {
	y := relative(x)
	filter.Detrend(y, y, filter.DetrendLambda(0.05, rateHz))
	if 0.7 < 0.45*rateHz {
		filter.Lowpass(4, 0.7, rateHz).FiltFilt(y, y)
	}
	return y
}

package pulse

import (
	"math"

	"github.com/pulsewire/pulsewire/dsp/filter"
	"github.com/pulsewire/pulsewire/dsp/internal/stats"
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
	// Rectified is true when the wave was rectified against the camera's
	// references (Rectify), Flipped when Orient turned it over.
	Rectified, Flipped bool
	// SNR is the spectral pulse signal-to-noise ratio of Pulse in dB at its
	// strongest 40-200 bpm peak (spectrum.SNR), the evidence Method was
	// chosen by.
	SNR float64
	// PeakHz is the frequency of that peak.
	PeakHz float64
}

// Camera is a camera trace on a uniform grid: the mean skin colour per
// sample and, when the frames themselves were seen, references of what
// changes that colour without being the pulse.
type Camera struct {
	R, G, B []float64 // mean skin red, green, blue
	// Refs are reference signals of equal length: the background's
	// brightness and the face's position and size (see Rectify). Nil for
	// a bare colour trace.
	Refs [][]float64
}

// FromRGB is FromCamera for a bare colour trace.
func FromRGB(r, g, b []float64, rateHz float64) Wave {
	return FromCamera(Camera{R: r, G: g, B: b}, rateHz)
}

// FromCamera extracts the pulse from a camera trace (uniform at rateHz). It
// computes the waves of Candidates and keeps the projection with the higher
// pulse SNR (POS, and CHROM for a bare colour trace): POS is the more robust
// to motion in Wang et al.'s benchmark, CHROM sometimes wins under coloured
// light, and the spectrum shows which one saw the clearer pulse in this
// recording.
//
// The green channel alone (Verkruysse et al., Opt. Express 16(26), 2008) is
// the last candidate. Both projections lean on the small colour part of the
// pulse (the pulse is 95% aligned with a change of brightness in normalised
// RGB), and video compression quantises colour much harder than brightness:
// at H.264 CRF 22-26 the projections often see only noise where green still
// shows the pulse clearly. Green has no defence of its own against light and
// motion, though. With references, every candidate is rectified against
// them first (Rectify), which takes out the changes of room light and the
// effects of motion, and green competes on equal terms. Without them it is
// taken only when it confirms the projection's rate with a clearer spectrum:
// the projections decide where the pulse is, green may only sharpen it.
func FromCamera(c Camera, rateHz float64) Wave {
	ws := Candidates(c, rateHz)
	w := ws[0]
	for _, x := range ws[1:] {
		unconfirmed := x.Method == MethodGreen && len(c.Refs) == 0 && math.Abs(x.PeakHz-w.PeakHz) > confirmHz
		if x.SNR > w.SNR && !unconfirmed {
			w = x
		}
	}
	return w
}

// Candidates returns the waves of a camera trace by each method, in this
// order: POS, CHROM (for a bare colour trace only) and green, each
// rectified against the trace's references when it has any, and all with
// the green trace's respiratory baseline. A caller that can judge the waves
// better than by their spectra over the whole trace (FromCamera) chooses
// among them itself.
//
// A trace with references (one read from frames) gets no CHROM wave: on
// generated video it added confident tracks of noise and nothing else.
// Where its track was the surest on webcam-like clips it was mostly wrong,
// locked on the slow noise of dim, darker faces at low bit rates; without
// it such captures are tracked less surely and every answer stays (the
// clean clips it answered, POS or green answer as well; docs/accuracy.md).
// A bare colour trace keeps it, as a second projection that can confirm
// green's rate: there a real pulse in real skin noise is found more often
// with it than without.
func Candidates(c Camera, rateHz float64) []Wave {
	x := newExtractor(c, rateHz)
	methods := []Method{MethodPOS, MethodCHROM, MethodGreen}
	if len(c.Refs) > 0 {
		methods = []Method{MethodPOS, MethodGreen}
	}
	ws := make([]Wave, len(methods))
	b := baseline(c.G, rateHz)
	for i, m := range methods {
		ws[i] = x.extract(m)
		ws[i].Baseline = b
	}
	return ws
}

// Confirms reports whether two rates (Hz) are the same pulse's: within
// 3 bpm.
func Confirms(aHz, bHz float64) bool { return math.Abs(aHz-bHz) <= confirmHz }

// extractor holds what the methods of one camera trace share: the filters
// and the band-passed references.
type extractor struct {
	c            Camera
	rateHz       float64
	wide, narrow *filter.Filter
	refs         [][]float64
	a            spectrum.Analyzer
}

func newExtractor(c Camera, rateHz float64) *extractor {
	x := &extractor{
		c: c, rateHz: rateHz,
		wide:   filter.Bandpass(4, BandLoHz, wideHi(rateHz), rateHz),
		narrow: filter.Bandpass(4, BandLoHz, BandHiHz, rateHz),
	}
	for _, r := range c.Refs {
		x.refs = append(x.refs, x.wide.FiltFilt(nil, r))
	}
	return x
}

// extract computes the wave of method m, rectified against the references
// when there are any. The rectified wave is kept unless it lost SNR at the
// same peak: references that take power from the very frequency both waves
// call the pulse, without moving the peak, explained the pulse itself, not
// an artefact. A face tracker's position is such a reference: the skin
// darkens with each beat but the eyes, brows and hair do not, which biases
// the measured centre in step with the pulse (a few thousandths of a pixel
// on a still face, correlated about 0.5 with the green trace), and the fit
// then removes a quarter or more of the pulse's power. A rectification that
// removes an artefact either raises the SNR at the pulse or moves the peak
// away from the artefact, and is kept in both cases.
func (x *extractor) extract(m Method) Wave {
	wide := x.project(m)
	if len(x.refs) == 0 {
		return finish(Wave{Wide: wide, Method: m}, x.narrow, x.rateHz, &x.a)
	}
	// Rectify before finish turns wide over in place: Flipped must say
	// how each wave relates to the projection itself (WideAs).
	rect := finish(Wave{Wide: Rectify(nil, wide, x.refs, x.rateHz), Method: m, Rectified: true}, x.narrow, x.rateHz, &x.a)
	raw := finish(Wave{Wide: wide, Method: m}, x.narrow, x.rateHz, &x.a)
	if raw.SNR > rect.SNR && math.Abs(raw.PeakHz-rect.PeakHz) <= confirmHz {
		return raw
	}
	return rect
}

// project returns the wide-band wave of method m, before rectification.
func (x *extractor) project(m Method) []float64 {
	c := x.c
	switch m {
	case MethodPOS:
		return x.wide.FiltFilt(nil, POS(nil, c.R, c.G, c.B, x.rateHz))
	case MethodCHROM:
		return CHROM(nil, c.R, c.G, c.B, x.rateHz, x.wide)
	default:
		return x.wide.FiltFilt(nil, relative(c.G))
	}
}

// WideAs returns the wide-band wave of another trace of the same capture,
// extracted the way like was: the same method, rectified against c's
// references when like was, and turned the way like was turned (Orient,
// which on a noisier part could decide otherwise). A part of the face (the
// forehead, the cheeks) then gives a wave whose noise is its own while its
// processing is the whole face's, which is what comparing the parts' beat
// times needs.
func WideAs(c Camera, rateHz float64, like Wave) []float64 {
	x := newExtractor(c, rateHz)
	wide := x.project(like.Method)
	if like.Rectified && len(x.refs) > 0 {
		wide = Rectify(nil, wide, x.refs, x.rateHz)
	}
	if like.Flipped {
		for i := range wide {
			wide[i] = -wide[i]
		}
	}
	return wide
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
	w.Flipped = Orient(w.Wide)
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
	m := stats.Mean(x)
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

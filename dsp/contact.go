package dsp

import (
	"math"

	"github.com/pulsewire/pulsewire/dsp/beats"
	"github.com/pulsewire/pulsewire/dsp/pulse"
	"github.com/pulsewire/pulsewire/dsp/resample"
)

// The contact path: a fingertip on a lit phone camera, or a clinical
// photoplethysmograph. Its pulse is strong next to a camera's on the face,
// and its sampling rate is often far higher (clinical sensors 100-500 Hz),
// so it is read at that rate, and whether it shows a pulse at all is
// decided on its own terms (contactPulse).

// maxContactGridHz caps the grid of contact traces. A clinical sensor's
// own rate is kept: resampling a 250 Hz trace to another rate interpolates
// between samples and blurs the upstroke the beats are timed on. Above
// 512 Hz nothing is left to gain for a wave band-limited to 8 Hz.
const maxContactGridHz = 512.0

// trackGridHz bounds the rate the heart-rate track reads the pulse at. The
// narrow pulse wave has nothing above 4 Hz, and taking every k-th sample of
// it keeps its spectrum while the spectra of a 250 Hz trace cost a quarter.
const trackGridHz = 64.0

// analyzeContact runs the signal part of the contact route: times in
// seconds from 0 (clean output) and one intensity per sample.
func analyzeContact(t, x []float64) pulseAnalysis {
	pa := startPulse(t)
	if pa.err != "" {
		return pa
	}
	if pa.summary.ClippedShare = clippedShare(x); pa.summary.ClippedShare > MaxClippedShare {
		pa.err = ConformityPoorLight
		return pa
	}
	pa.rateHz = math.Min(math.Round(pa.summary.FrameRateHz), maxContactGridHz)
	pa.wave = pulse.FromIntensity(resample.Uniform(nil, t, x, pa.rateHz), pa.rateHz)
	step := max(1, int(math.Ceil(pa.rateHz/trackGridHz)))
	narrow, narrowHz := decimate(pa.wave.Pulse, step), pa.rateHz/float64(step)
	pa.readRate(trackRate(narrow, narrowHz))
	pa.correctOctave()
	pa.findBeats()
	if !pa.confidentPulse(narrow, narrowHz) && !beatsShowPulse(pa) {
		pa.err = ConformityMissingSignal
		return pa
	}
	pa.beatRateBpm = beatRate(pa)
	return pa
}

// Whether a contact trace shows a pulse.
//
// The test the camera uses (confidentPulse: how sure the rate track is,
// and how well the wave repeats at its period) was set on noise and on the
// near-sinusoidal pulse of a face. A fingertip's pulse is sharp, its power
// spread over several harmonics, and at rest its rhythm varies: a
// respiratory sinus arrhythmia of 5% smears each 10 s spectrum's peak and
// its harmonics, so a pulse whose every beat is plain to see can leave the
// track unsure. A contact trace may also show its pulse in its beats: beats that come in a steady rhythm
// (Malik's and Lipponen & Tarvainen's rules find few artefacts among them)
// and look alike (Orphanidou et al., IEEE JBHI 19(3), 2015, accept a
// contact PPG whose beats correlate 0.86 on average with their mean). Noise
// does not: picked along a tracked rate its "beats" come at uneven
// intervals. Of 480 simulated noise-only contact traces (white, random
// walk, AR(1), motion bursts, pressure steps; 15-125 Hz; 12-60 s) the NN
// share reached 0.69 at the 99th percentile and 0.75 at most, and none
// passed, while phone fingertip pulses with a variable rhythm kept 88-100%.
const (
	// minPulseNN: at least 20 NN intervals, so the share is not luck.
	minPulseNN = 20
	// minPulseFit: the beats' mean correlation with the mean beat.
	minPulseFit = 0.9
)

// beatsShowPulse reports whether pa's beats show a pulse on their own:
// many NN intervals, few artefacts and a rate that agrees with the track
// (beatsAgree), and beats that look alike.
func beatsShowPulse(pa pulseAnalysis) bool {
	if pa.nn.Count < minPulseNN || !beatsAgree(pa) {
		return false
	}
	var fit float64
	n := 0
	for _, b := range pa.beats {
		if !b.Edge {
			fit += b.Fit
			n++
		}
	}
	return n > 0 && fit/float64(n) >= minPulseFit
}

// Octave errors. A spectral track can lock onto half the heart rate (a
// pulse whose beats alternate in size has a sub-harmonic) or twice it (a
// dicrotic wave as high as the systolic one makes the second harmonic
// strong). The beats tell which is right. Beats picked along the true rate
// come at a steady rhythm and at that rate. Along half the true rate every
// other beat is skipped, and picking along twice that rate finds about
// twice as many beats, all in a steady rhythm. Along twice the true rate
// the picker finds the beats, at half the track's rate, or the beats and
// dicrotic waves or noise between them, at alternating short and long
// intervals that the artefact rules reject; along half that rate it finds
// the beats alone, in a steady rhythm at that rate. The third harmonic of
// a sharp fingertip pulse at a slow rate can outshine the fundamental in
// whitened spectra; along a third of it the beats come steady too.
const (
	// octaveRegular: the NN share of beats that come in a steady rhythm.
	octaveRegular = 0.85
	// octaveMoreBeats: how many more beats the faster candidate must find.
	octaveMoreBeats = 1.6
)

// correctOctave doubles, halves or divides by three the tracked rate when
// the beats picked along it show that it is a harmonic off.
func (pa *pulseAnalysis) correctOctave() {
	here := pa.pickAlong(1)
	if here.beats < 8 {
		return
	}
	if fast := pa.pickAlong(2); fast.regular() && float64(fast.beats) >= octaveMoreBeats*float64(here.beats) {
		pa.scaleTrack(2)
		return
	}
	if here.steady(1) {
		return
	}
	for _, k := range []float64{0.5, 1.0 / 3} {
		if pa.pickAlong(k).steady(k) {
			pa.scaleTrack(k)
			return
		}
	}
}

// picked describes the beats picked along k times the tracked rate.
type picked struct {
	beats   int
	nnShare float64
	// ratio is the beats' rate (60 over the mean NN interval) over the
	// tracked rate.
	ratio float64
}

// regular reports whether the beats come in a steady rhythm.
func (p picked) regular() bool { return p.nnShare >= octaveRegular }

// steady reports whether they also come at k times the tracked rate.
func (p picked) steady(k float64) bool {
	return p.regular() && math.Abs(p.ratio-k) <= maxRateMismatch*k
}

// pickAlong picks beats along k times the tracked rate.
func (pa *pulseAnalysis) pickAlong(k float64) picked {
	period := pa.track.periodAt(len(pa.wave.Pulse), pa.rateHz)
	for i := range period {
		period[i] /= k
	}
	bs := beats.Detect(nil, pa.wave.Pulse, period, pa.rateHz)
	st := beats.Stats(beats.Intervals(bs))
	p := picked{beats: len(bs)}
	if st.Total > 0 && st.MeanS > 0 {
		p.nnShare = float64(st.Count) / float64(st.Total)
		p.ratio = 60 / st.MeanS / pa.track.meanBpm()
	}
	return p
}

// scaleTrack multiplies the tracked rate by k.
func (pa *pulseAnalysis) scaleTrack(k float64) {
	for i := range pa.track.hz {
		pa.track.hz[i] *= k
	}
}

// A contact trace's heart rate comes from its beats when they are clean:
// at least minRateBeats NN intervals and minRateNNShare of all intervals NN
// (also the share beatsShowPulse needs). Where the track's rate differs
// from theirs by more than maxRateMismatch, the beats are still the heart
// rate: they are picked along the track, so a track an octave off gives
// beats an octave off or unsteady ones, and a steady rhythm at another
// rate means the track smoothed over a change it could not follow. On a
// phone's fingertip whose rate rose from 70 to 87 bpm and fell again
// within 10 s, while the finger moved, the track read 67.8 bpm where the
// strap counted 73.8 and the beats 75.1; it was the one capture of 335
// real ones (fingertip minutes, finger windows, phone recordings and their
// 30 s pieces) where the two differed that much. That they agree is still
// evidence of a pulse (beatsShowPulse). Its beats counted over their span
// (beats.Rate) are what an ECG's heart rate is (60 over the mean RR
// interval, every beat counted), while the track's mean is a mean of
// frequencies over overlapping windows, which weighs the middle of the
// capture more and reads a variable rhythm a little fast (on simulated
// finger PPG with an RMSSD of 45 ms up to 1.3 bpm off).
const (
	minRateBeats    = 10
	minRateNNShare  = 0.8
	maxRateMismatch = 0.1
)

// beatRate returns the heart rate of pa's beats in bpm, or 0 when their NN
// intervals are too few or too disturbed.
func beatRate(pa pulseAnalysis) float64 {
	nn := pa.nn
	if nn.Count < minRateBeats || float64(nn.Count) < minRateNNShare*float64(nn.Total) || !(nn.MeanS > 0) {
		return 0
	}
	return 60 * beats.Rate(pa.beats)
}

// beatsAgree reports whether pa's beats give a rate (beatRate) within
// maxRateMismatch of the track's.
func beatsAgree(pa pulseAnalysis) bool {
	bpm, track := beatRate(pa), pa.track.meanBpm()
	return bpm > 0 && math.Abs(bpm-track) <= maxRateMismatch*track
}

// rateBpm is the heart rate of the analysis: from the beats when they gave
// one, else the track's mean.
func (pa *pulseAnalysis) rateBpm() float64 {
	if pa.beatRateBpm > 0 {
		return pa.beatRateBpm
	}
	return pa.track.meanBpm()
}

// decimate returns every step-th sample of x (x itself for step 1).
func decimate(x []float64, step int) []float64 {
	if step <= 1 {
		return x
	}
	out := make([]float64, 0, (len(x)+step-1)/step)
	for i := 0; i < len(x); i += step {
		out = append(out, x[i])
	}
	return out
}

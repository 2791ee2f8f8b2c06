package dsp

import (
	"math"
	"slices"

	"github.com/pulsewire/pulsewire/dsp/beats"
	"github.com/pulsewire/pulsewire/dsp/pulse"
	"github.com/pulsewire/pulsewire/dsp/resample"
)

// Limits of a pulse analysis (the capture-quality codes, see dsp/README.md).
const (
	// MinFrameRateHz: below a median of 12 samples a second the pulse
	// wave's shape and beat timing are lost (CONFORMITY_LOW_FPS). 12 fps
	// still holds 3.6 samples per beat at 200 bpm.
	MinFrameRateHz = 12.0
	// MinCoverage: when fewer than 80% of the frames the median rate
	// promises arrive, gaps from dropped frames distort the wave
	// (CONFORMITY_LOW_FPS).
	MinCoverage = 0.8
	// MinSeconds: a heart rate needs 10 s of signal, one spectral window
	// (CONFORMITY_INITIALISATION).
	MinSeconds = 10.0
	// MinSecondsBeatToBeat: breathing, HRV, stress, pulse shape and blood
	// pressure need 20 s: two breaths at 6 /min, 13 beats at 40 bpm.
	MinSecondsBeatToBeat = 20.0
	// A pulse whose mean spectral SNR is below
	//
	//	MinSNRdB + SNRSpreadDB · sqrt(10 s / duration)
	//
	// is not told apart from noise (CONFORMITY_MISSING_SIGNAL): 4.5 dB for
	// 10 s, 2.6 dB for 30 s, 1.5 dB for 90 s. Noise alone scores -3 dB on
	// average, but the best of the candidate peaks a short capture offers
	// can reach +4 dB; the mean over more independent 10 s windows spreads
	// less, as 1/sqrt(windows). Of 720 noise-only traces (camera and
	// contact, 15-60 fps, 12-60 s) one passed, a 12 s one; a 0.3% pulse in
	// the same noise passes from 30 s on (TestNoiseIsNoPulse).
	MinSNRdB    = 0.0
	SNRSpreadDB = 4.5
	// The mean height of the tracked peak above its local noise floor
	// (prominence, spectrum.Whiten) must also reach
	//
	//	MinProminenceDB + ProminenceSpreadDB · sqrt(10 s / duration)
	//
	// 17 dB for 10 s, 12.8 dB for 30 s, 11.1 dB for 60 s. The SNR is fooled
	// by noise that piles up at one end of the band, as video compression
	// and drift do; the prominence is not. Noise-only traces (white and two
	// strengths of random walk, camera and contact, 15-60 fps; 540 per
	// length) reached at most 16.3 dB at 12 s, 12.2 dB at 30 s and 11.2 dB
	// at 60 s; a 0.2% camera pulse in the same noise scores 14-16 dB at 30 s.
	MinProminenceDB    = 7.0
	ProminenceSpreadDB = 10.0
	// maxGridRateHz caps the analysis grid: contact sensors sampling faster
	// gain nothing above 128 Hz for a wave band-limited to 8 Hz.
	maxGridRateHz = 128.0
)

// pulseAnalysis is everything measured on the pulse of one recording.
type pulseAnalysis struct {
	err     Code // capture-quality code that stops all pulse variables
	rateHz  float64
	seconds float64
	wave    pulse.Wave
	track   rateTrack
	// beatRateBpm is the heart rate from the NN intervals when a contact
	// trace's beats are clean enough to give it (0 otherwise: the
	// track's mean is the rate).
	beatRateBpm float64
	beats       []beats.Beat
	iv          []beats.Interval
	nn          beats.NNStats
	// timingNoise is beats.SplitNoise (s²) when the capture came in two
	// halves; noiseKnown says whether it did.
	timingNoise float64
	noiseKnown  bool
	summary     Summary
}

// analyzePulse runs the signal part of the camera routes: times in seconds
// from 0 (clean output), R, G, B, and for camera traces from frames the R,
// G, B of the skin's two halves (forehead, then cheeks: six channels) and
// the references of pulse.Camera. Contact traces take analyzeContact.
func analyzePulse(t []float64, chans, halves, refs [][]float64) pulseAnalysis {
	pa := startPulse(t)
	if pa.err != "" {
		return pa
	}
	pa.rateHz = math.Min(math.Round(pa.summary.FrameRateHz), maxGridRateHz)
	uniform := func(x []float64) []float64 { return resample.Uniform(nil, t, x, pa.rateHz) }
	var refsGrid [][]float64
	c := pulse.Camera{R: uniform(chans[0]), G: uniform(chans[1]), B: uniform(chans[2])}
	for _, r := range refs {
		refsGrid = append(refsGrid, uniform(r))
	}
	c.Refs = refsGrid
	pa.wave = pulse.FromCamera(c, pa.rateHz)
	pa.readRate(pa.wave.Pulse, pa.rateHz)
	if !pa.spectralPulse() {
		pa.err = ConformityMissingSignal
		pa.summary.Conformity = pa.err
		return pa
	}
	pa.findBeats()
	if len(halves) == 6 {
		var timed [2][]beats.Beat
		for h := range timed {
			c := pulse.Camera{R: uniform(halves[3*h]), G: uniform(halves[3*h+1]), B: uniform(halves[3*h+2]), Refs: refsGrid}
			timed[h] = slices.Clone(pa.beats)
			beats.Align(timed[h], pulse.WideAs(c, pa.rateHz, pa.wave), pa.rateHz)
		}
		pa.timingNoise, pa.noiseKnown = beats.SplitNoise(pa.iv, timed[0], timed[1])
	}
	return pa
}

// readRate tracks the heart rate through pulse (the narrow pulse wave,
// uniform at rateHz) and keeps the track's quality in the summary.
func (pa *pulseAnalysis) readRate(pulse []float64, rateHz float64) {
	pa.summary.Method = string(pa.wave.Method)
	pa.track = trackRate(pulse, rateHz)
	pa.summary.SNRdB = meanOf(pa.track.snrDB)
	pa.summary.ProminenceDB = meanOf(pa.track.prominenceDB)
	pa.summary.QualityScore = meanOf(pa.track.share)
}

// spectralPulse reports whether the tracked pulse stands out of the noise
// in its spectra: the mean SNR and prominence a capture of this length
// needs (MinSNRdB, MinProminenceDB).
func (pa *pulseAnalysis) spectralPulse() bool {
	return pa.summary.SNRdB >= minSNRdB(pa.seconds) && pa.summary.ProminenceDB >= minProminenceDB(pa.seconds)
}

// findBeats finds and times the beats of the wave along the tracked rate
// and sorts their intervals into NN and artefacts.
func (pa *pulseAnalysis) findBeats() {
	period := pa.track.periodAt(len(pa.wave.Pulse), pa.rateHz)
	pa.beats = beats.Detect(nil, pa.wave.Pulse, period, pa.rateHz)
	beats.Align(pa.beats, pa.wave.Wide, pa.rateHz)
	pa.iv = beats.Intervals(pa.beats)
	pa.nn = beats.Stats(pa.iv)
	pa.summary.Beats = len(pa.beats)
	pa.summary.NNIntervals = pa.nn.Count
}

// startPulse checks what every capture needs before its pulse is read
// (times in seconds from 0): its length and its frame rate.
func startPulse(t []float64) pulseAnalysis {
	var pa pulseAnalysis
	pa.summary.Samples = len(t)
	if len(t) < 2 {
		pa.err = ConformityInitialisation
		return pa
	}
	pa.seconds = t[len(t)-1] - t[0]
	pa.summary.Seconds = pa.seconds
	medianS := medianStep(t)
	pa.summary.FrameRateHz = 1 / medianS
	switch {
	case pa.seconds < MinSeconds:
		pa.err = ConformityInitialisation
	case pa.summary.FrameRateHz < MinFrameRateHz,
		float64(len(t)-1) < MinCoverage*pa.seconds/medianS:
		pa.err = ConformityLowFPS
	}
	if pa.err != "" {
		pa.summary.Conformity = pa.err
	}
	return pa
}

// medianStep is the median interval between the successive times of t (at
// least two; the upper of the middle two for an even count): the frame
// period a trace was captured at, robust to dropped frames and jitter.
func medianStep(t []float64) float64 {
	d := make([]float64, len(t)-1)
	for i := range d {
		d[i] = t[i+1] - t[i]
	}
	slices.Sort(d)
	return d[len(d)/2]
}

// blocked returns the code that stops a pulse variable needing minS seconds,
// or "" when it can be computed.
func (pa *pulseAnalysis) blocked(minS float64) Code {
	if pa.err != "" {
		return pa.err
	}
	if pa.seconds < minS {
		return ConformityInitialisation
	}
	return ""
}

// minSNRdB is the pulse SNR a capture of the given length needs.
func minSNRdB(seconds float64) float64 {
	return MinSNRdB + SNRSpreadDB*math.Sqrt(hrWindowS/max(seconds, hrWindowS))
}

// minProminenceDB is the pulse prominence a capture of the given length
// needs.
func minProminenceDB(seconds float64) float64 {
	return MinProminenceDB + ProminenceSpreadDB*math.Sqrt(hrWindowS/max(seconds, hrWindowS))
}

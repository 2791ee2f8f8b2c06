package dsp

import (
	"math"
	"slices"
	"sort"

	"github.com/pulsewire/pulsewire/dsp/beats"
	"github.com/pulsewire/pulsewire/dsp/internal/stats"
	"github.com/pulsewire/pulsewire/dsp/pulse"
	"github.com/pulsewire/pulsewire/dsp/resample"
)

// Limits of a pulse analysis (the capture-quality codes, see dsp/README.md).
const (
	// MinFrameRateHz: below a median of 12 samples a second the pulse
	// wave's shape and beat timing are lost (CONFORMITY_LOW_FPS). 12 fps
	// still holds 3.6 samples per beat at 200 bpm.
	MinFrameRateHz = 12.0
	// MaxGapShare: when more than a fifth of a capture lies in gaps of
	// GapS or longer without a frame, too little of its pulse was filmed
	// (CONFORMITY_LOW_FPS). Frames dropped here and there cost nothing
	// while 12 a second remain (see "Dropped frames" in dsp/README.md).
	MaxGapShare = 0.2
	// GapS: an interval between frames this long or longer is a gap.
	GapS = 0.25
	// MinSeconds: a heart rate needs 10 s of signal, one spectral window
	// (CONFORMITY_INITIALISATION).
	MinSeconds = 10.0
	// MinSecondsBeatToBeat: breathing, HRV, stress, pulse shape and blood
	// pressure need 20 s: two breaths at 6 /min, 13 beats at 40 bpm.
	MinSecondsBeatToBeat = 20.0
	// maxGridRateHz caps the analysis grid: contact sensors sampling faster
	// gain nothing above 128 Hz for a wave band-limited to 8 Hz.
	maxGridRateHz = 128.0
)

// pulseAnalysis is everything measured on the pulse of one recording.
type pulseAnalysis struct {
	err     Code // capture-quality code that stops all pulse variables
	rateHz  float64
	seconds float64
	times   []float64 // the samples' times, s from 0
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
	// summary is the Result's Summary but for Conformity, which assemble
	// fills from err.
	summary Summary
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
	var track rateTrack
	pa.wave, track = chooseWave(pulse.Candidates(c, pa.rateHz), len(refsGrid) > 0, pa.rateHz)
	pa.readRate(track)
	confident := pa.confidentPulse(pa.wave.Pulse, pa.rateHz)
	if held := pa.heldImage(t, chans[1]); !confident || held {
		pa.err = ConformityMissingSignal
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

// readRate keeps track, the heart rate tracked through the pulse wave,
// and its quality in the summary.
func (pa *pulseAnalysis) readRate(track rateTrack) {
	pa.track = track
	pa.summary.Method = string(pa.wave.Method)
	pa.summary.SNRdB = stats.Mean(track.snrDB)
	pa.summary.ProminenceDB = stats.Mean(track.prominenceDB)
	pa.summary.QualityScore = stats.Mean(track.confidence)
}

// confidentPulse reports whether the tracked rate is sure enough to be
// answered: the track's confidence and the period correlation of pulse
// (the wave the track followed, uniform at rateHz) reach the levels a
// capture of this length needs (AnswerLevel). It keeps both, and the
// tracked rate, in the summary.
func (pa *pulseAnalysis) confidentPulse(pulse []float64, rateHz float64) bool {
	pa.summary.PeriodCorrelation = periodCorrelation(pulse, pa.track, rateHz)
	pa.summary.TrackedBpm = pa.track.meanBpm()
	minConf, minCorr := AnswerLevel(pa.seconds)
	return pa.summary.QualityScore >= minConf && pa.summary.PeriodCorrelation >= minCorr
}

// heldImage reports whether the tracked rate may be the image of a faster
// pulse (keyFrameGroup): the trace (times t in seconds, green g) shows key
// frames that hold the picture, the rate lies under half their rate, and
// its mirror across it lies in the band searched, more than 5 bpm away
// (nearer, either reading is within 5 bpm of the pulse). It keeps the
// key-frame rate in the summary.
func (pa *pulseAnalysis) heldImage(t, g []float64) bool {
	fold := pa.summary.FrameRateHz / (2 * MinHeartRateBpm / 60)
	n := keyFrameGroup(t, g, int(fold))
	if n == 0 {
		return false
	}
	keyHz := pa.summary.FrameRateHz / float64(n)
	pa.summary.KeyFrameHz = keyHz
	f := pa.summary.TrackedBpm / 60
	return keyHz-2*f > confidenceHalfHz && keyHz-f <= MaxHeartRateBpm/60
}

// A beat is not timed where frames were dropped. Its time is interpolated
// over the missing frames when it falls into the hole, and the straight line
// the hole leaves in the trace rings through the filters into the beats
// beside it. So a beat within beatGapMarginS of an interval between samples
// longer than beatGapS (at 30 fps six frames or more in a row; at 15, three)
// is Unsampled: the intervals it bounds are unknown. On a real finger PPG
// with holes of 0.3-0.5 s every 2-3 s, HRV was 5.5-8.8 ms off (1.1 ms
// without); with those beats left out it is refused there, too few
// intervals being left. Shorter holes cost nothing measurable: a third of
// the frames dropped at random left HRV as it was, and marking beats near
// holes of 0.1 s took the beat rate of most fingertip minutes with a fifth
// of their frames dropped (dsp/README.md, "Dropped frames").
const (
	beatGapS       = 0.2
	beatGapMarginS = 0.5
)

// markUnsampled marks the beats near a gap of the capture's samples.
func (pa *pulseAnalysis) markUnsampled() {
	t := pa.times
	for i := range pa.beats {
		at := t[0] + pa.beats[i].T
		k := max(1, sort.SearchFloat64s(t, at-beatGapMarginS))
		for ; k < len(t) && t[k-1] <= at+beatGapMarginS; k++ {
			if t[k]-t[k-1] > beatGapS {
				pa.beats[i].Unsampled = true
				break
			}
		}
	}
}

// findBeats finds and times the beats of the wave along the tracked rate
// and sorts their intervals into NN and artefacts.
func (pa *pulseAnalysis) findBeats() {
	period := pa.track.periodAt(len(pa.wave.Pulse), pa.rateHz)
	pa.beats = beats.Detect(nil, pa.wave.Pulse, period, pa.rateHz)
	beats.Align(pa.beats, pa.wave.Wide, pa.rateHz)
	pa.markUnsampled()
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
	pa.summary.FrameRateHz = 1 / medianStep(t)
	pa.summary.GapSeconds = gapSeconds(t, GapS)
	pa.times = t
	switch {
	case pa.seconds < MinSeconds:
		pa.err = ConformityInitialisation
	case pa.summary.FrameRateHz < MinFrameRateHz,
		float64(len(t)-1) < MinFrameRateHz*pa.seconds,
		pa.summary.GapSeconds > MaxGapShare*pa.seconds:
		pa.err = ConformityLowFPS
	}
	return pa
}

// chooseWave tracks the heart rate through each camera wave (POS, CHROM
// for a bare colour trace, green: pulse.Candidates) and keeps the wave
// whose track is the most confident. Judging the methods by their tracks
// rather than by one spectrum of the whole capture keeps a rate that
// changes during the capture from blurring the comparison. Green has no
// defence of its own against changes of light and motion: without
// references to rectify it against (a bare colour trace), it is kept only
// when one of the projections tracked the same rate.
func chooseWave(ws []pulse.Wave, rectified bool, rateHz float64) (pulse.Wave, rateTrack) {
	tracks := make([]rateTrack, len(ws))
	best := -1
	for i, w := range ws {
		tracks[i] = trackRate(w.Pulse, rateHz)
		if best >= 0 && stats.Mean(tracks[i].confidence) <= stats.Mean(tracks[best].confidence) {
			continue
		}
		if w.Method == pulse.MethodGreen && !rectified && !confirmedBy(tracks[i], tracks[:i]) {
			continue
		}
		best = i
	}
	return ws[best], tracks[best]
}

// confirmedBy reports whether one of others tracked the same mean rate as tr.
func confirmedBy(tr rateTrack, others []rateTrack) bool {
	for _, o := range others {
		if pulse.Confirms(tr.meanBpm()/60, o.meanBpm()/60) {
			return true
		}
	}
	return false
}

// gapSeconds is the time t (s, increasing) spends in intervals of at least
// gap seconds between samples.
func gapSeconds(t []float64, gap float64) float64 {
	var sum float64
	for i := 1; i < len(t); i++ {
		if d := t[i] - t[i-1]; d >= gap {
			sum += d
		}
	}
	return sum
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
	if (pa.err == "" || pa.err == ConformityMissingSignal) && pa.seconds < minS {
		// Too short for this variable whatever the pulse: the capture
		// must go on before anything else matters.
		return ConformityInitialisation
	}
	return pa.err
}

// A heart rate is answered when two pieces of evidence reach the levels
// of AnswerLevels for the capture's length (AnswerLevel interpolates
// linearly between the lengths listed and holds them beyond);
// CONFORMITY_MISSING_SIGNAL otherwise:
//
//   - the confidence of the track: the mean over the windows of the
//     posterior probability that the rate lies within ±5 bpm of the
//     tracked one (trackRate), how consistently the spectra point at one
//     rate;
//   - the period correlation: the mean over the windows of the pulse
//     wave's autocorrelation at the tracked period (periodCorrelation), how
//     well the wave repeats itself at that period. A harmonic or a rhythm
//     the spectrum misreads (every third beat premature reads as 168 bpm
//     for 72) correlates negatively; a noise peak in a capture of one or
//     two windows can look as sharp as a pulse, but noise does not repeat.
//
// The levels sit above what captures without a pulse the service can read
// reached: real face-skin video of people of light to dark skin cut into
// 12-120 s pieces (their weak pulse buried in camera and compression
// noise; 32-401 pieces a length) and generated noise (camera and contact,
// 15-60 fps, 240 a length). Their confidence reached 0.999 at 12 s, 0.91 at
// 20 s and 0.87 from 30 s on (99% of them stayed under 0.85 at 20 s and
// 0.82 from 30 s); their period correlation 0.45 at 12 s and 0.37 at 20 s.
// These levels answered 2 of about 3,300 such pieces (one of 20 s, one of
// 30 s). `go run ./scripts/accuracy -only skin` prints those quantiles and
// what these levels answer on the real and semi-synthetic captures.
var AnswerLevels = []struct{ Seconds, Confidence, PeriodCorrelation float64 }{
	{15, 0.90, 0.5},
	{20, 0.90, 0.35},
	{30, 0.84, 0},
}

// AnswerLevel returns the confidence and period correlation a capture of
// the given length needs for its heart rate to be answered.
func AnswerLevel(seconds float64) (confidence, correlation float64) {
	lv := AnswerLevels
	if seconds <= lv[0].Seconds {
		return lv[0].Confidence, lv[0].PeriodCorrelation
	}
	for i := 1; i < len(lv); i++ {
		if seconds <= lv[i].Seconds {
			w := (seconds - lv[i-1].Seconds) / (lv[i].Seconds - lv[i-1].Seconds)
			return (1-w)*lv[i-1].Confidence + w*lv[i].Confidence, (1-w)*lv[i-1].PeriodCorrelation + w*lv[i].PeriodCorrelation
		}
	}
	last := lv[len(lv)-1]
	return last.Confidence, last.PeriodCorrelation
}

package dsp

import (
	"math"

	"github.com/pulsewire/pulsewire/dsp/beats"
	"github.com/pulsewire/pulsewire/dsp/pulse"
	"github.com/pulsewire/pulsewire/dsp/resp"
	"github.com/pulsewire/pulsewire/dsp/waveform"
)

// HRV and stress need enough clean intervals (BAD_RMSSD otherwise).
const (
	// MinNNPairs: at least 10 successive NN differences.
	MinNNPairs = 10
	// MinNNShare: at least 60% of all intervals must be NN; below that the
	// beats are too disturbed for the survivors to be trusted.
	MinNNShare = 0.6
	// MaxRMSSDms: an RMSSD above 250 ms is outside what sinus rhythm at rest
	// produces and points to detection errors or arrhythmia.
	MaxRMSSDms = 250.0
	// MinRMSSDms: an RMSSD under 1 ms is a heart beating as evenly as a
	// clock (a simulator, a fixed-rate pacemaker): no variability the
	// method can tell, and its stress index divides by the intervals'
	// spread, near nothing, into the highest level.
	MinRMSSDms = 1.0
	// MinBeatFit and MinBeatFitShare: beat-to-beat timing needs clean
	// beats, not only a clear rhythm. At least 90% of the beats must
	// correlate 0.9 or more with the mean beat (beats.Align): noise at
	// most about a quarter of the pulse's power (1/0.9² - 1) in nine
	// beats out of ten. The timing noise that SplitNoise cannot see,
	// because it is common to the whole face (a video codec's frame-wide
	// decisions, motion), also bends the beats out of shape, and this is
	// where it shows. The spectral SNR would be the wrong test: a variable
	// rhythm spreads the pulse's spectral peak, so it would refuse exactly
	// the people with a high HRV.
	MinBeatFit      = 0.9
	MinBeatFitShare = 0.9
	// MaxNoiseShare: the timing noise measured between the two halves of
	// the face may explain at most three quarters of the squared RMSSD.
	// The noise estimate of a 30 s capture (25-50 differences) spreads by
	// about a third of itself, so beyond that share the spread is as
	// large as what is left after taking the noise out.
	MaxNoiseShare = 0.75
)

// Stress levels from Baevsky's stress index (beats.StressIndex), bands
// after Baevsky & Chernikova 2017: below 50 relaxed (1), 50-150 the
// normal range (2), 150-500 tension (3), 500-900 strain (4), 900 and above
// overstrain (5).
var stressBands = [...]float64{50, 150, 500, 900}

// Physical age from the SDPTG ageing index: the linear regression of
// Choi & Park, "Variations in the second derivative of a photoplethysmogram
// with age in healthy Korean adults", IJERPH 20(1):236, 2023 (300 adults,
// 19-69 years): AGI = 0.0162 age - 1.1389, inverted.
const (
	ageingSlopePerYear = 0.0162
	ageingIntercept    = -1.1389
	// Ages the regression can be trusted for, a little wider than the
	// ages it was fitted on; outside them physicalAge is OUT_OF_RANGE.
	minPhysicalAge = 15.0
	maxPhysicalAge = 90.0
	// minShapeBeats: the mean beat needs 10 clean beats.
	minShapeBeats = 10
)

// assemble turns a pulse analysis into the requested variables.
func assemble(pa *pulseAnalysis, in *Inputs) Result {
	res := Result{Variables: map[string]Variable{}, Summary: pa.summary}
	// pa.err is the one record of what stopped the pulse; the summary
	// reports it rather than keeping a copy in step with it.
	res.Summary.Conformity = pa.err
	set := func(name string, v Variable) {
		if in.wants(name) {
			res.Variables[name] = v
		}
	}
	hrBpm := 0.0
	if pa.err == "" {
		hrBpm = pa.rateBpm()
		res.Features = &Features{HeartRateBpm: round(hrBpm, 2)}
	}

	if c := pa.blocked(MinSeconds); c != "" {
		set(HR, fail(c))
		res.Signal = &Signal{QualityScore: fail(c)}
		if c == ConformityMissingSignal {
			// The capture was fine and its pulse was scored, too low to
			// answer: the score reports on the signal, not on the
			// measure, and says how far from an answer it was.
			res.Signal = &Signal{QualityScore: ok(round(pa.summary.QualityScore, 3))}
		}
	} else {
		set(HR, ok(Mean{round(hrBpm, 1)}))
		res.Signal = &Signal{QualityScore: ok(round(pa.summary.QualityScore, 3))}
	}
	if in.wants(BR) {
		set(BR, breathingVariable(pa))
	}
	if in.wants(HRV) || in.wants(Stress) {
		hrv, strs := hrvVariables(pa)
		set(HRV, hrv)
		set(Stress, strs)
	}
	if in.wants(PhysicalAge) {
		set(PhysicalAge, physicalAgeVariable(pa))
	}
	bp, pressure := bpVariable(in, pa, hrBpm)
	set(BP, bp)
	set(BPClass, bpClassVariable(in, pressure, hrBpm))
	set(BMI, bmiVariable(in.Person))
	set(HealthScore, healthScoreVariable(in.Person, pressure))
	// faceBmi comes from still images only (AnalyzeImages).
	set(FaceBMI, fail(MissingImage))
	return res
}

func breathingVariable(pa *pulseAnalysis) Variable {
	if c := pa.blocked(MinSecondsBeatToBeat); c != "" {
		return fail(c)
	}
	trust := resp.OneWitness
	switch {
	case pa.wave.Method != pulse.MethodContact:
		trust = resp.SupportOnly
	case pa.cleanBeats():
		trust = resp.TwoWitnesses
	}
	est, found := resp.Rate(pa.wave.Baseline, pa.rateHz, pa.beats, pa.iv, trust, pa.holes()...)
	if !found {
		return fail(OutOfRange)
	}
	return ok(Mean{round(est.PerMin, 1)})
}

// holes are the capture's gaps of GapS or longer, s from its start.
func (pa *pulseAnalysis) holes() []resp.Hole {
	var hs []resp.Hole
	for i := 1; i < len(pa.times); i++ {
		if pa.times[i]-pa.times[i-1] >= GapS {
			hs = append(hs, resp.Hole{From: pa.times[i-1], To: pa.times[i]})
		}
	}
	return hs
}

// cleanBeats reports whether pa's beats are timed well enough for
// beat-to-beat measures: enough NN pairs, a large enough NN share, and
// beats that look like the mean beat.
func (pa *pulseAnalysis) cleanBeats() bool {
	nn := pa.nn
	return nn.Pairs >= MinNNPairs && float64(nn.Count) >= MinNNShare*float64(nn.Total) &&
		beats.FitShare(pa.beats, MinBeatFit) >= MinBeatFitShare
}

// hrvVariables returns hrv (mean RMSSD, ms) and strs from the NN intervals.
func hrvVariables(pa *pulseAnalysis) (hrv, strs Variable) {
	if c := pa.blocked(MinSecondsBeatToBeat); c != "" {
		return fail(c), fail(c)
	}
	if !pa.cleanBeats() {
		return fail(BadRMSSD), fail(BadRMSSD)
	}
	rmssd := 1000 * pa.nn.RMSSDs
	if pa.noiseKnown {
		// Timing noise inflates RMSSD; take out the part the two halves
		// of the face measured (beats.SplitNoise). When noise explains
		// most of it, the variability is below what this capture can
		// resolve.
		measured := rmssd * rmssd
		noise := 1e6 * pa.timingNoise
		if noise > MaxNoiseShare*measured {
			return fail(BadRMSSD), fail(BadRMSSD)
		}
		rmssd = math.Sqrt(measured - noise)
	}
	if rmssd > MaxRMSSDms {
		return fail(BadRMSSD), fail(BadRMSSD)
	}
	if rmssd < MinRMSSDms {
		return fail(OutOfRange), fail(OutOfRange)
	}
	hrv = ok(Mean{round(rmssd, 1)})
	si, found := beats.StressIndex(pa.iv)
	if !found {
		return hrv, fail(BadRMSSD)
	}
	level := 1
	for _, b := range stressBands {
		if si >= b {
			level++
		}
	}
	return hrv, ok(Level{Level: level, Scale: Scale{Min: 1, Max: 5}})
}

// physicalAgeVariable is physicalAge from the ageing index of the mean beat.
// It needs the clean beats HRV needs: a mean of beats unlike each other
// has no shape of the person's. On one real face read through nine
// regions at once, beats of which 66-82% fitted their mean gave ages from
// 19 to 82 years.
func physicalAgeVariable(pa *pulseAnalysis) Variable {
	if c := pa.blocked(MinSecondsBeatToBeat); c != "" {
		return fail(c)
	}
	if !pa.cleanBeats() {
		return fail(BadRMSSD)
	}
	tmpl, period, found := waveform.MeanBeat(pa.wave.Wide, pa.rateHz, pa.beats, pa.iv, minShapeBeats)
	if !found {
		return fail(ProcessorFail)
	}
	sd := waveform.SecondDerivative(tmpl, period, math.Min(pulse.WideHiHz, 0.45*pa.rateHz))
	w, found := waveform.FindWaves(sd, argmax(tmpl))
	if !found {
		return fail(ProcessorFail)
	}
	age := (w.AgeingIndex() - ageingIntercept) / ageingSlopePerYear
	if !(age >= minPhysicalAge && age <= maxPhysicalAge) {
		return fail(OutOfRange)
	}
	return ok(math.Round(age))
}

// AnalyzeTrace analyses a camera trace (the rppg signal route): the pulse
// variables from the colour, the person-data variables from in.Person.
// faceBmi answers MISSING_IMAGE. Samples that fail Trace.Validate are
// dropped, never a reason to panic.
func AnalyzeTrace(tr Trace, in Inputs) Result {
	t, ch := clean(tr.TimestampsMs, tr.R, tr.G, tr.B)
	return analyzeSignal(t, ch, &in)
}

// AnalyzePPG analyses a contact trace (the cppg signal route) like
// AnalyzeTrace.
func AnalyzePPG(p PPG, in Inputs) Result {
	t, ch := clean(p.TimestampsMs, p.Values)
	return analyzeSignal(t, ch, &in)
}

// analyzeSignal is the common part of the signal routes. An upload without
// two valid samples carries no signal at all: MISSING_SIGNAL.
func analyzeSignal(t []float64, ch [][]float64, in *Inputs) Result {
	var pa pulseAnalysis
	if len(t) < 2 {
		pa.err = MissingSignal
	} else if len(ch) == 1 {
		pa = analyzeContact(t, ch[0])
	} else {
		pa = analyzePulse(t, ch, nil, nil)
		q := traceQuality(ch[0], ch[1], ch[2])
		pa.err = q.explain(pa.err)
		pa.summary.ClippedShare = q.clipped
	}
	return assemble(&pa, in)
}

func argmax(x []float64) int {
	k := 0
	for i, v := range x {
		if v > x[k] {
			k = i
		}
	}
	return k
}

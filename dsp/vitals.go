package dsp

import "time"

// Vitals is the interim state of a live capture (Stream.Vitals): what the
// widget shows while the person is being measured.
type Vitals struct {
	// Elapsed is the capture time covered so far.
	Elapsed time.Duration `json:"-"`
	// ElapsedMs is Elapsed in milliseconds, for the wire.
	ElapsedMs int64 `json:"elapsedMs"`
	// HR is the heart rate over the last VitalsWindow, or the code that
	// prevents it (CONFORMITY_INITIALISATION while fewer than MinSeconds
	// have been captured).
	HR Variable `json:"hr"`
	// BR is the breathing rate over the last VitalsWindow, or its code.
	BR Variable `json:"br"`
	// HRV is the RMSSD (ms) of the clean beat intervals over the last
	// VitalsWindow, or its code (as the hrv variable, from 20 s on).
	HRV Variable `json:"hrv"`
	// QualityScore is signal.qualityScore over the same window, 0 when no
	// pulse was analysed.
	QualityScore float64 `json:"qualityScore"`
	// Wave is the recent pulse wave for a live chart: the last WaveSpan
	// or less, oldest first, scaled to -1..1 with the upstroke rising,
	// sampled at WaveRateHz, the last sample at Elapsed. Empty until
	// about 4 s of face have been captured; it has no unit.
	Wave       []float64 `json:"wave"`
	WaveRateHz float64   `json:"waveRateHz"`
	// Guidance lists what to fix now, most important first; empty when the
	// capture is fine.
	Guidance []Guidance `json:"guidance"`
}

// Guidance is one live instruction: a capture-quality code and the words a
// widget can show for it.
type Guidance struct {
	Code    Code   `json:"code"`
	Message string `json:"message"`
}

// VitalsWindow is how much recent capture the interim vitals and guidance
// look at: long enough for breathing, short enough to follow a change.
const VitalsWindow = 30 * time.Second

// guidanceWindow is how far back the live capture checks look: the last few
// seconds, so advice follows what the person does now.
const guidanceWindow = 5 * time.Second

// guidanceText is what the widget can say for each capture code.
var guidanceText = map[Code]string{
	ConformityFacePresence:   "Face the camera with your whole face in view",
	ConformityFaceSize:       "Move closer to the camera",
	ConformityPoorLight:      "Find more even light on your face",
	ConformityMuchVariations: "Hold still",
	ConformityOndulations:    "Avoid flickering light",
	ConformityLowFPS:         "The camera delivers too few frames",
	ConformityInitialisation: measuringText,
	ConformityMissingSignal:  "The pulse is too faint: face the light and hold still",
}

// Advice returns what the live guidance tells a person for a capture code
// or CONFORMITY_MISSING_SIGNAL, "" for other codes: also what to try when
// a recorded capture was refused with it.
func Advice(c Code) string {
	if c == ConformityInitialisation {
		return "" // "keep still" speaks to a capture still running
	}
	return guidanceText[c]
}

// measuringText is what the widget says while the pulse is not yet clear
// but the capture is still young: the evidence needs time, and nothing is
// wrong yet.
const measuringText = "Measuring: keep still"

// Vitals returns the interim vitals and live guidance. It analyses recent
// frames again on every call (about 16 ms of CPU for 30 s of frames,
// BenchmarkVitals), so call it about once a second, not per frame.
func (s *Stream) Vitals() Vitals {
	var v Vitals
	if len(s.recs) == 0 {
		v.HR, v.BR, v.HRV = fail(ConformityInitialisation), fail(ConformityInitialisation), fail(ConformityInitialisation)
		v.Wave = []float64{}
		v.Guidance = []Guidance{{ConformityFacePresence, guidanceText[ConformityFacePresence]}}
		return v
	}
	lastS := s.recs[len(s.recs)-1].t
	v.Elapsed = time.Duration(lastS * float64(time.Second))
	v.ElapsedMs = v.Elapsed.Milliseconds()

	pa := s.analyze(lastS-VitalsWindow.Seconds(), true)
	q := assess(s.recs[s.recordAt(lastS-guidanceWindow.Seconds()):])
	// A face only too dark whose pulse reads clearly needs no advice: the
	// measure will answer, and more light is then a chore, not a fix.
	if codes := q.codes(); pa.err != "" || !q.onlyDark(codes) {
		for _, c := range q.advice(codes) {
			v.Guidance = append(v.Guidance, Guidance{c, guidanceText[c]})
		}
	}

	if c := pa.blocked(MinSeconds); c != "" {
		v.HR = fail(c)
	} else {
		v.HR = ok(Mean{round(pa.track.meanBpm(), 1)})
		v.QualityScore = round(pa.summary.QualityScore, 3)
	}
	v.BR = breathingVariable(&pa)
	v.HRV, _ = hrvVariables(&pa)
	if v.Wave, v.WaveRateHz = s.liveWave(); v.Wave == nil {
		v.Wave = []float64{}
	}
	if len(v.Guidance) == 0 && pa.err != "" {
		code := pa.err
		if code == ConformityMissingSignal && lastS < VitalsWindow.Seconds() {
			// A faint pulse in a young capture is still settling, no
			// fault to fix yet: the evidence grows with the capture.
			code = ConformityInitialisation
		}
		switch code {
		case ConformityFacePresence, ConformityFaceSize, ConformityPoorLight, ConformityMuchVariations, ConformityOndulations:
			// A fault of the last 30 s that the last few seconds no longer
			// show (q above) is past: telling the person to fix it now
			// would be wrong. The pulse needs time to settle again.
			code = ConformityInitialisation
		}
		v.Guidance = append(v.Guidance, Guidance{code, guidanceText[code]})
	}
	if v.Guidance == nil {
		v.Guidance = []Guidance{}
	}
	return v
}

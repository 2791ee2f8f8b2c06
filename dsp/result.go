package dsp

import (
	"encoding/json"
	"fmt"
)

// Result is the outcome of an analysis. Its JSON is the measure's "variables"
// and "signal" members, exactly: {"variables": {...}, "signal": {...}|null}.
// The other fields are for the server to keep, not for the API.
type Result struct {
	// Variables holds one entry per requested variable.
	Variables map[string]Variable `json:"variables"`
	// Signal reports on the pulse signal; nil (JSON null) when no pulse
	// signal existed to assess, as for a measure from images.
	Signal *Signal `json:"signal"`

	// Features are the pulse features of this measurement, kept so that a
	// reference blood pressure entered afterwards can calibrate the person
	// (Calibration.Features). Nil without a usable pulse.
	Features *Features `json:"-"`
	// Summary describes the capture for logs and tests (no person data).
	Summary Summary `json:"-"`
}

// Signal is the measure's signal object.
type Signal struct {
	// QualityScore is the confidence 0-1 of the pulse's rate (see
	// Summary.QualityScore for its definition), or an error code.
	QualityScore Variable `json:"qualityScore"`
}

// Features are the pulse features a blood-pressure calibration is anchored
// to. Stored by the control plane as JSON.
type Features struct {
	// HeartRateBpm is the measure's mean heart rate: the anchor of the
	// calibrated bp model (bp.go).
	HeartRateBpm float64 `json:"hr"`
}

// Summary is what the analysis saw, for logs, tests and the live guidance.
type Summary struct {
	Seconds     float64 // span of the trace from first to last sample
	Samples     int     // samples that passed validation
	FrameRateHz float64 // median sampling rate
	GapSeconds  float64 // time in holes of GapS or more between samples
	Method      string  // pulse method chosen: pos, chrom, green or contact (pulse.Method)
	SNRdB       float64 // mean spectral pulse SNR over the analysis windows
	// ProminenceDB is the mean height of the tracked pulse peak above the
	// local noise floor of its spectrum, dB.
	ProminenceDB float64
	// QualityScore is signal.qualityScore when it has a value: the mean
	// over the analysis windows of the posterior probability that the
	// heart rate lies within ±5 bpm of the tracked one.
	QualityScore float64
	// PeriodCorrelation is the mean over the analysis windows of the
	// pulse wave's normalised autocorrelation at the tracked period
	// (1: the wave repeats itself exactly at that period).
	PeriodCorrelation float64
	// TrackedBpm is the mean rate the heart-rate track followed, whether
	// or not hr was answered: what hr would have been.
	TrackedBpm float64
	// KeyFrameHz is the rate of the key frames of a video that holds the
	// picture between them (keyFrameGroup), 0 when the trace shows none.
	KeyFrameHz float64
	// ClippedShare is, for a signal upload, the largest share of one of
	// its channels' samples at that channel's highest or lowest value
	// (MaxClippedShare).
	ClippedShare float64
	Beats        int // beats detected
	NNIntervals  int // intervals that passed artefact rejection
	// Conformity is the capture-quality code that blocked the pulse
	// variables, "" when none did.
	Conformity Code
}

// Variable is one variable result: a Value or an Error, never
// both. Value is one of Mean (hr, br, hrv), Level (strs, bpClass), Pressure
// (bp) or a float64 (physicalAge, bmi, faceBmi, healthScore,
// signal.qualityScore).
type Variable struct {
	Value any
	Error Code
}

// Mean is the value of hr (bpm), br (breaths/min) and hrv (RMSSD, ms).
type Mean struct {
	Mean float64 `json:"mean"`
}

// Level is the value of strs and bpClass.
type Level struct {
	Level int   `json:"level"`
	Scale Scale `json:"scale"`
}

// Scale is the range of a Level.
type Scale struct {
	Min int `json:"min"`
	Max int `json:"max"`
}

// Pressure is the value of bp, mmHg.
type Pressure struct {
	Systole  float64 `json:"systole"`
	Diastole float64 `json:"diastole"`
}

func ok(v any) Variable    { return Variable{Value: v} }
func fail(c Code) Variable { return Variable{Error: c} }

// MarshalJSON writes {"value": <shape>, "error": null} or
// {"value": null, "error": "<CODE>"}.
func (v Variable) MarshalJSON() ([]byte, error) {
	if v.Error != "" {
		return json.Marshal(struct {
			Value any  `json:"value"`
			Error Code `json:"error"`
		}{nil, v.Error})
	}
	if v.Value == nil {
		return nil, fmt.Errorf("dsp: variable with neither value nor error")
	}
	return json.Marshal(struct {
		Value any   `json:"value"`
		Error *Code `json:"error"`
	}{v.Value, nil})
}

// UnmarshalJSON reads what MarshalJSON writes. The value comes back as the
// generic JSON shape (map[string]any or float64), enough to store and
// re-serve a stored result.
func (v *Variable) UnmarshalJSON(b []byte) error {
	var raw struct {
		Value any   `json:"value"`
		Error *Code `json:"error"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	switch {
	case raw.Error != nil && raw.Value == nil:
		*v = Variable{Error: *raw.Error}
	case raw.Error == nil && raw.Value != nil:
		*v = Variable{Value: raw.Value}
	default:
		return fmt.Errorf("dsp: variable needs exactly one of value and error")
	}
	return nil
}

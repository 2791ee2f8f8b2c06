package dsp

import "math"

// Blood pressure from a per-person calibration. One cuff reading anchors the
// person's pressure; between measures it is moved by the change of heart
// rate since the calibration, with the within-person slopes below. Heart
// rate and pressure rise together with sympathetic activation (baroreflex
// resetting), which is the only coupling a single-site camera pulse can
// observe without a pulse transit time. The slopes are the project's
// conservative assumption, not a fitted regression, and the correction is
// capped so an unusual heart rate cannot move the reading far from the
// cuff: bp tracks the calibration, it does not measure pressure anew.
const (
	bpSystolePerBpm  = 0.5  // mmHg per bpm
	bpDiastolePerBpm = 0.3  // mmHg per bpm
	bpMaxShiftMmHg   = 15.0 // cap on the correction
)

// bpVariable is bp: needs an externalId, a calibration for it and a heart
// rate from this measure.
func bpVariable(in *Inputs, pa *pulseAnalysis, hrBpm float64) (Variable, *Pressure) {
	switch {
	case !in.Person.HasExternalID:
		return fail(MissingUserDataExternalID), nil
	case in.Calibration == nil:
		return fail(NotCalibrated), nil
	}
	if c := pa.blocked(MinSeconds); c != "" {
		return fail(c), nil
	}
	cal := in.Calibration
	d := hrBpm - cal.Features.HeartRateBpm
	if cal.Features.HeartRateBpm <= 0 {
		d = 0 // calibrated without a pulse: the cuff reading stands
	}
	shift := func(perBpm float64) float64 {
		return math.Max(-bpMaxShiftMmHg, math.Min(bpMaxShiftMmHg, perBpm*d))
	}
	p := Pressure{
		Systole:  math.Round(cal.SystoleMmHg + shift(bpSystolePerBpm)),
		Diastole: math.Round(cal.DiastoleMmHg + shift(bpDiastolePerBpm)),
	}
	if !(p.Systole > p.Diastole && p.Diastole > 0) {
		return fail(OutOfRange), nil
	}
	return ok(p), &p
}

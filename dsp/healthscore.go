package dsp

import "math"

// The Framingham "general cardiovascular risk profile", office-based model
// with BMI in place of cholesterol (D'Agostino et al., "General
// cardiovascular risk profile for use in primary care: the Framingham Heart
// Study", Circulation 117(6):743-753, 2008, table of the non-laboratory
// model). 10-year risk = 1 - S0^exp(Σ β x - mean).
type framingham struct {
	lnAge, lnBMI, lnSBP, smoker, s0, mean float64
}

var (
	framinghamMen   = framingham{lnAge: 3.11296, lnBMI: 0.79277, lnSBP: 1.85508, smoker: 0.70953, s0: 0.88431, mean: 23.9388}
	framinghamWomen = framingham{lnAge: 2.72107, lnBMI: 0.51125, lnSBP: 2.81291, smoker: 0.61868, s0: 0.94833, mean: 26.0145}
)

// Inputs the model needs that the service does not collect, fixed at
// documented reference values: an untreated systolic pressure of 120 mmHg
// (the upper end of normal, ACC/AHA 2017) unless bp is calibrated, and no
// diabetes. The model was fitted on ages 30-74; ages outside are clamped.
const (
	referenceSystoleMmHg = 120.0
	framinghamMinAge     = 30
	framinghamMaxAge     = 74
)

// cvdRisk10 returns the 10-year risk (0-1) of a first cardiovascular event.
func cvdRisk10(p Person, systoleMmHg float64) float64 {
	m := framinghamWomen
	if p.Sex == Male {
		m = framinghamMen
	}
	age := float64(min(max(p.AgeYears, framinghamMinAge), framinghamMaxAge))
	x := m.lnAge*math.Log(age) + m.lnBMI*math.Log(p.bmi()) + m.lnSBP*math.Log(systoleMmHg)
	if p.Smoking == Smoker {
		x += m.smoker
	}
	return 1 - math.Pow(m.s0, math.Exp(x-m.mean))
}

// healthScoreVariable is healthScore = 100 (1 - 10-year cardiovascular
// risk), rounded: the estimated chance, in percent, of living the next ten
// years without a first cardiovascular event (coronary disease, stroke,
// peripheral artery disease or heart failure) by the Framingham model above.
// 100 is best. Needs weight, height, age, sex and smoking status; a
// calibrated bp replaces the reference systolic pressure.
func healthScoreVariable(p Person, bp *Pressure) Variable {
	if c := p.missing(needAge, needSex, needWeight, needHeight, needSmoking); c != "" {
		return fail(c)
	}
	sbp := referenceSystoleMmHg
	if bp != nil {
		sbp = bp.Systole
	}
	return ok(math.Round(100 * (1 - cvdRisk10(p, sbp))))
}

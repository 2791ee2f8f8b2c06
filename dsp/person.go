package dsp

import "math"

// need is one person-data input a variable needs.
type need int

const (
	needAge need = iota
	needSex
	needWeight
	needHeight
	needSmoking
)

var needCodes = [...]Code{
	needAge:     MissingUserDataAge,
	needSex:     MissingUserDataSex,
	needWeight:  MissingUserDataWeight,
	needHeight:  MissingUserDataHeight,
	needSmoking: MissingUserDataSmokingStatus,
}

func (p Person) has(n need) bool {
	switch n {
	case needAge:
		return p.AgeYears > 0
	case needSex:
		return p.Sex == Male || p.Sex == Female
	case needWeight:
		return p.WeightKg > 0
	case needHeight:
		return p.HeightCm > 0
	case needSmoking:
		return p.Smoking == Smoker || p.Smoking == NonSmoker
	}
	return false
}

// missing returns the code for the person data a variable lacks: the
// MISSING_USER_DATA_<FIELD> code naming it when exactly one input is
// missing, MISSING_USER_DATA when several are, "" when none is.
func (p Person) missing(needs ...need) Code {
	var code Code
	count := 0
	for _, n := range needs {
		if !p.has(n) {
			code = needCodes[n]
			count++
		}
	}
	if count > 1 {
		return MissingUserData
	}
	return code
}

// bmi returns the body-mass index weight / height², kg/m² (WHO).
func (p Person) bmi() float64 {
	h := float64(p.HeightCm) / 100
	return float64(p.WeightKg) / (h * h)
}

// bmiVariable is bmi: needs weight and height.
func bmiVariable(p Person) Variable {
	if c := p.missing(needWeight, needHeight); c != "" {
		return fail(c)
	}
	return ok(round(p.bmi(), 1))
}

// round rounds x to the given number of decimals.
func round(x float64, decimals int) float64 {
	s := math.Pow(10, float64(decimals))
	return math.Round(x*s) / s
}

package dsp

// bpClass is a blood-pressure risk level.
//
// With a calibrated bp the level is its ACC/AHA 2017 category (Whelton et
// al., Hypertension 71(6), 2018): 1 normal (< 120 and < 80 mmHg), 2 elevated
// (120-129 and < 80), 3 hypertension (>= 130 or >= 80).
//
// Without one it is a screening score of the known risk factors of
// hypertension (Kshirsagar et al., J. Clin. Hypertens. 12(10), 2010; the
// Framingham hypertension risk score, Parikh et al., Ann. Intern. Med.
// 148(2), 2008), counted in points because the published models also need a
// measured pressure the service does not have:
//
//	age 40-49: 1, 50-59: 2, >= 60: 3
//	BMI 25-29.9: 1, >= 30: 2         (WHO overweight, obese)
//	male: 1
//	resting heart rate >= 80 bpm: 1  (when the pulse gave one)
//
// 0-2 points is level 1, 3-4 level 2, 5 or more level 3. With scale 2 the
// levels are 1 (normal: level 1 above) and 2 (elevated or high).
func bpClassVariable(in *Inputs, bp *Pressure, hrBpm float64) Variable {
	p := in.Person
	if c := p.missing(needAge, needSex, needWeight, needHeight); c != "" {
		return fail(c)
	}
	var level int
	if bp != nil {
		switch {
		case bp.Systole >= 130 || bp.Diastole >= 80:
			level = 3
		case bp.Systole >= 120:
			level = 2
		default:
			level = 1
		}
	} else {
		points := 0
		switch {
		case p.AgeYears >= 60:
			points += 3
		case p.AgeYears >= 50:
			points += 2
		case p.AgeYears >= 40:
			points++
		}
		switch b := p.bmi(); {
		case b >= 30:
			points += 2
		case b >= 25:
			points++
		}
		if p.Sex == Male {
			points++
		}
		if hrBpm >= 80 {
			points++
		}
		switch {
		case points >= 5:
			level = 3
		case points >= 3:
			level = 2
		default:
			level = 1
		}
	}
	if in.BPClassScale == 2 {
		return ok(Level{Level: min(level, 2), Scale: Scale{Min: 1, Max: 2}})
	}
	return ok(Level{Level: level, Scale: Scale{Min: 1, Max: 3}})
}

package dsp

// Inputs says what to compute and gives what the person-data variables need.
type Inputs struct {
	// Variables lists the variable names to compute (AllVariables order does
	// not matter); names not listed are left out of Result.Variables. Empty
	// means all of AllVariables.
	Variables []string
	// Person describes the person measured; zero fields are
	// unknown.
	Person Person
	// Calibration is the person's blood-pressure calibration, nil when they
	// have none (bp then answers NOT_CALIBRATED).
	Calibration *Calibration
	// BPClassScale is the number of bpClass levels: 3 (default, also for 0)
	// or 2 (normal or not; computeOptions {"bpClass":{"scale":2}}).
	BPClassScale int
}

// Sex values of Person.Sex.
const (
	Male   = "M"
	Female = "F"
)

// Smoking statuses of Person.Smoking.
const (
	Smoker    = "smoker"
	NonSmoker = "non-smoker"
)

// Person is the person data the variables use. Zero values mean
// "not given".
type Person struct {
	AgeYears int    // 18-110, after dateOfBirth has been turned into an age
	Sex      string // Male or Female
	WeightKg int    // 20-200
	HeightCm int    // 100-250
	Smoking  string // Smoker or NonSmoker
	// HasExternalID says the measure carries an externalId; bp needs one
	// (the calibration belongs to that person).
	HasExternalID bool
}

// Calibration is a reference blood pressure taken with a cuff at the end of an
// earlier measurement of the same person, with the pulse features of that
// measurement (Result.Features). The control plane stores both when the
// reference is entered and passes them back for the person's later measures.
type Calibration struct {
	SystoleMmHg  float64  `json:"systole"`
	DiastoleMmHg float64  `json:"diastole"`
	Features     Features `json:"features"`
}

// wants reports whether the variable name is to be computed.
func (in *Inputs) wants(name string) bool {
	if len(in.Variables) == 0 {
		return IsVariable(name)
	}
	for _, v := range in.Variables {
		if v == name {
			return true
		}
	}
	return false
}

package dsp

// Variable names as they appear in the API. The control plane
// validates desiredVariables and unwantedVariables against AllVariables, and an
// analysis computes only the names it is asked for.
const (
	HR          = "hr"
	BR          = "br"
	HRV         = "hrv"
	Stress      = "strs"
	BPClass     = "bpClass"
	BP          = "bp"
	PhysicalAge = "physicalAge"
	BMI         = "bmi"
	FaceBMI     = "faceBmi"
	HealthScore = "healthScore"
)

// AllVariables lists every variable the service can compute, in the order the
// API documents them.
var AllVariables = []string{HR, BR, HRV, Stress, BPClass, BP, PhysicalAge, BMI, FaceBMI, HealthScore}

// IsVariable reports whether name is a known variable name.
func IsVariable(name string) bool {
	for _, v := range AllVariables {
		if v == name {
			return true
		}
	}
	return false
}

// Code is a per-variable error code. A variable carries either a
// value or a Code, never both.
type Code string

// Capture quality.
const (
	ConformityFacePresence   Code = "CONFORMITY_FACE_PRESENCE"
	ConformityFaceSize       Code = "CONFORMITY_FACE_SIZE"
	ConformityInitialisation Code = "CONFORMITY_INITIALISATION"
	ConformityLowFPS         Code = "CONFORMITY_LOW_FPS"
	ConformityMissingSignal  Code = "CONFORMITY_MISSING_SIGNAL"
	ConformityMuchVariations Code = "CONFORMITY_MUCH_VARIATIONS"
	ConformityOndulations    Code = "CONFORMITY_ONDULATIONS"
	ConformityPoorLight      Code = "CONFORMITY_POOR_LIGHT"
)

// Missing person data.
const (
	MissingUserData              Code = "MISSING_USER_DATA"
	MissingUserDataAge           Code = "MISSING_USER_DATA_AGE"
	MissingUserDataExternalID    Code = "MISSING_USER_DATA_EXTERNAL_ID"
	MissingUserDataHeight        Code = "MISSING_USER_DATA_HEIGHT"
	MissingUserDataSex           Code = "MISSING_USER_DATA_SEX"
	MissingUserDataSmokingStatus Code = "MISSING_USER_DATA_SMOKING_STATUS"
	MissingUserDataWeight        Code = "MISSING_USER_DATA_WEIGHT"
)

// The source cannot yield the variable.
const (
	MissingCaptures   Code = "MISSING_CAPTURES"
	MissingImage      Code = "MISSING_IMAGE"
	MissingSignal     Code = "MISSING_SIGNAL"
	ExceedingMaxImage Code = "EXCEEDING_MAX_IMAGE"
	InvalidImageSize  Code = "INVALID_IMAGE_SIZE"
	InvalidImageType  Code = "INVALID_IMAGE_TYPE"
)

// A dependency is missing.
const (
	MissingBPClassification Code = "MISSING_BP_CLASSIFICATION"
	MissingProcessor        Code = "MISSING_PROCESSOR"
	NotCalibrated           Code = "NOT_CALIBRATED"
)

// The computation failed.
const (
	BadRMSSD      Code = "BAD_RMSSD"
	OutOfRange    Code = "OUT_OF_RANGE"
	ProcessorFail Code = "PROCESSOR_FAIL"
	Unknown       Code = "UNKNOWN"
)

// The account has no credit left this month; the measurement is not charged.
const CreditExceeded Code = "CREDIT_EXCEEDED"

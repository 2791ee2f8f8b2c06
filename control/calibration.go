package control

import (
	"context"
	"math"

	"github.com/pulsewire/pulsewire/storage"
)

// Bounds of a reference blood pressure, mmHg: what a cuff reads on a living
// adult, wide enough for hypertensive crises and hypotension alike.
const (
	minSystole, maxSystole   = 60, 260
	minDiastole, maxDiastole = 30, 160
)

// Reference is a blood pressure taken with a cuff at the end of a measure,
// mmHg.
type Reference struct {
	Systole, Diastole float64
}

// ParseReference checks the body of POST /measures/{id}/calibration,
// {"systole": mmHg, "diastole": mmHg}: numbers within the bounds above,
// systole above diastole. Every problem is reported at once.
func ParseReference(raw []byte) (Reference, error) {
	var ref Reference
	var p problems
	o, err := decodeBody(raw)
	if err != nil {
		return ref, err
	}
	o.unknown(&p, "", "systole", "diastole")
	read := func(name string, lo, hi float64) float64 {
		x, ok := asNumber(o[name])
		if !ok || x < lo || x > hi {
			p.addf("%s must be a number from %g to %g (mmHg)", name, lo, hi)
			return math.NaN()
		}
		return x
	}
	ref.Systole = read("systole", minSystole, maxSystole)
	ref.Diastole = read("diastole", minDiastole, maxDiastole)
	if ref.Systole <= ref.Diastole {
		p.addf("systole must be higher than diastole")
	}
	return ref, p.err()
}

// Calibrate stores ref as the calibration of the person measured by c's
// measure id: for that measure's externalId and kind, anchored
// to its pulse features, so that the person's later measures of that kind
// get bp (and the bpClass and healthScore that use it). The measure must
// have ended and carry an externalId (Invalid otherwise); a second
// reference for the same measure replaces the first.
func (s *Service) Calibrate(ctx context.Context, c storage.Client, id string, ref Reference) (storage.Calibration, error) {
	m, err := s.Measure(ctx, c, id)
	switch {
	case err != nil:
		return storage.Calibration{}, err
	case m.Status != storage.StatusEnded:
		return storage.Calibration{}, invalidf("the measure has not ended: a reference pressure calibrates an ended measure")
	case m.UserData == nil || m.UserData.ExternalID == nil:
		return storage.Calibration{}, invalidf("the measure has no userData.externalId: a calibration belongs to a person")
	}
	return s.db.Calibrate(ctx, c, m.ID, ref.Systole, ref.Diastole)
}

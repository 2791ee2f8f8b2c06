package control

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/pulsewire/pulsewire/storage"
)

// Bounds of userData.
const (
	maxExternalIDChars = 300
	minAge, maxAge     = 18, 110 // years
	minWeight          = 20      // kilograms
	maxWeight          = 200     // kilograms
	minHeight          = 100     // centimetres
	maxHeight          = 250     // centimetres
)

// parseUserData checks a userData object and returns what to
// store: nil for null. A dateOfBirth becomes the age it gives on today's date
// (today is in the configured time zone) and is not kept; it must give an age
// within the same bounds as age, and cannot be sent together with age.
func parseUserData(raw json.RawMessage, today time.Time, p *problems) *storage.UserData {
	o, ok := nested(raw, "userData", p, "externalId", "sex", "age", "dateOfBirth", "weight", "height", "smokingStatus")
	if !ok {
		return nil
	}
	u := &storage.UserData{}
	if o.given("externalId") {
		s, ok := asString(o["externalId"])
		switch {
		case !ok:
			p.addf("userData.externalId must be a string")
		case s == "":
			p.addf("userData.externalId must not be empty")
		case chars(s) > maxExternalIDChars:
			p.addf("userData.externalId must be shorter than or equal to %d characters", maxExternalIDChars)
		default:
			u.ExternalID = &s
		}
	}
	u.Sex = oneOf(o, p, "sex", "M", "F")
	u.SmokingStatus = oneOf(o, p, "smokingStatus", "smoker", "non-smoker")
	u.Weight = intWithin(o, p, "weight", minWeight, maxWeight)
	u.Height = intWithin(o, p, "height", minHeight, maxHeight)
	u.Age = intWithin(o, p, "age", minAge, maxAge)
	if o.given("dateOfBirth") {
		if o.given("age") {
			p.addf("userData: give age or dateOfBirth, not both")
		} else if age, ok := ageFrom(o["dateOfBirth"], today, p); ok {
			u.Age = &age
		}
	}
	return u
}

// oneOf reads an enum member of userData.
func oneOf(o object, p *problems, name string, values ...string) *string {
	if !o.given(name) {
		return nil
	}
	s, ok := asString(o[name])
	for _, v := range values {
		if ok && s == v {
			return &s
		}
	}
	p.addf("userData.%s must be one of the following values: %s", name, strings.Join(values, ", "))
	return nil
}

// intWithin reads an integer member of userData within [lo, hi].
func intWithin(o object, p *problems, name string, lo, hi int64) *int64 {
	if !o.given(name) {
		return nil
	}
	n, ok := asInt(o[name])
	if !ok || n < lo || n > hi {
		p.addf("userData.%s must be an integer from %d to %d", name, lo, hi)
		return nil
	}
	return &n
}

// ageFrom reads a date of birth (YYYY-MM-DD, or an ISO 8601 timestamp whose
// date part is taken as written) and returns the age in whole years on
// today's date.
func ageFrom(raw json.RawMessage, today time.Time, p *problems) (int64, bool) {
	s, _ := asString(raw)
	born, err := time.Parse(time.DateOnly, s)
	if _, stampErr := time.Parse(time.RFC3339Nano, s); err != nil && stampErr == nil {
		born, err = time.Parse(time.DateOnly, s[:len(time.DateOnly)])
	}
	if err != nil {
		p.addf("userData.dateOfBirth must be a date (YYYY-MM-DD)")
		return 0, false
	}
	age := int64(today.Year() - born.Year())
	if today.Month() < born.Month() || today.Month() == born.Month() && today.Day() < born.Day() {
		age--
	}
	if age < minAge || age > maxAge {
		p.addf("userData.dateOfBirth must give an age from %d to %d (it gives %d)", minAge, maxAge, age)
		return 0, false
	}
	return age, true
}

package control

import (
	"fmt"
	"strings"

	"github.com/pulsewire/pulsewire/storage"
)

// maxDurationChars bounds the text of a token duration.
const maxDurationChars = 64

// durationUnits maps every accepted spelling to its unit.
// Spellings are lower case only, so that "M" can never be read as months;
// "m" is minutes.
var durationUnits = map[string]string{
	"s": "seconds", "sec": "seconds", "secs": "seconds", "second": "seconds", "seconds": "seconds",
	"m": "minutes", "min": "minutes", "mins": "minutes", "minute": "minutes", "minutes": "minutes",
	"h": "hours", "hr": "hours", "hrs": "hours", "hour": "hours", "hours": "hours",
	"d": "days", "day": "days", "days": "days",
}

// monthUnits are understood only to say why they are refused.
var monthUnits = map[string]bool{"mon": true, "mons": true, "month": true, "months": true}

// ParseDuration reads a token duration: one or more groups of a
// whole number and a unit, groups separated by spaces ("1h 30m"; a space
// between a number and its unit is allowed too: "2 hours"). Each unit appears
// once, whatever its spelling. The total, with a day counted as 24 h, must be
// greater than zero and at most 48 h; storage checks it again on the
// calendar, where a day may last 23 or 25 h.
func ParseDuration(s string) (storage.TokenDuration, error) {
	var d storage.TokenDuration
	if n := chars(s); n > maxDurationChars {
		return d, fmt.Errorf("duration must be shorter than or equal to %d characters", maxDurationChars)
	}
	if strings.TrimSpace(s) == "" {
		return d, fmt.Errorf("duration must not be empty")
	}
	seen := map[string]bool{}
	rest := s
	for {
		rest = strings.TrimLeft(rest, " ")
		if rest == "" {
			break
		}
		digits := prefix(rest, func(r byte) bool { return r >= '0' && r <= '9' })
		if digits == "" {
			return d, fmt.Errorf("duration %q: expected a whole number at %q", s, rest)
		}
		rest = strings.TrimLeft(rest[len(digits):], " ")
		if strings.HasPrefix(rest, ".") || strings.HasPrefix(rest, ",") {
			return d, fmt.Errorf("duration %q: numbers must be whole", s)
		}
		spelling := prefix(rest, func(r byte) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' })
		rest = rest[len(spelling):]
		unit, known := durationUnits[spelling]
		switch {
		case spelling == "":
			return d, fmt.Errorf("duration %q: %s needs a unit (s, m, h or d)", s, digits)
		case monthUnits[spelling]:
			return d, fmt.Errorf("duration %q: months exceed the 48h ceiling; write hours", s)
		case !known:
			return d, fmt.Errorf("duration %q: unknown unit %q (use s, m, h or d)", s, spelling)
		case seen[unit]:
			return d, fmt.Errorf("duration %q: %s given twice", s, unit)
		case rest != "" && rest[0] != ' ':
			return d, fmt.Errorf("duration %q: groups must be separated by spaces", s)
		}
		seen[unit] = true
		n, ok := count(digits)
		if !ok {
			return d, fmt.Errorf("duration %q must be at most 48h", s)
		}
		switch unit {
		case "days":
			d.Days = n
		case "hours":
			d.Hours = n
		case "minutes":
			d.Minutes = n
		default:
			d.Seconds = n
		}
	}
	switch total := d.Nominal(); {
	case total <= 0:
		return d, fmt.Errorf("duration %q must be greater than 0", s)
	case total > storage.MaxTokenDuration:
		return d, fmt.Errorf("duration %q must be at most 48h", s)
	}
	return d, nil
}

// prefix is the longest prefix of s whose bytes all satisfy ok.
func prefix(s string, ok func(byte) bool) string {
	i := 0
	for i < len(s) && ok(s[i]) {
		i++
	}
	return s[:i]
}

// count reads a run of digits that holds at most the ceiling in seconds, the
// most any unit may count; leading zeros are fine.
func count(digits string) (int64, bool) {
	digits = strings.TrimLeft(digits, "0")
	if len(digits) > 7 { // 48 h is 172800 s: six digits
		return 0, false
	}
	var n int64
	for i := 0; i < len(digits); i++ {
		n = n*10 + int64(digits[i]-'0')
	}
	return n, n <= int64(storage.MaxTokenDuration.Seconds())
}

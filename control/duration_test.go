package control

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pulsewire/pulsewire/storage"
)

func TestParseDuration(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want time.Duration // nominal; 0: refused
		err  string        // part of the refusal
	}{
		{"seconds s", "30s", 30 * time.Second, ""},
		{"seconds sec", "30sec", 30 * time.Second, ""},
		{"seconds secs", "30secs", 30 * time.Second, ""},
		{"seconds second", "1second", time.Second, ""},
		{"seconds seconds", "30 seconds", 30 * time.Second, ""},
		{"minutes m", "90m", 90 * time.Minute, ""},
		{"minutes min", "5min", 5 * time.Minute, ""},
		{"minutes mins", "5mins", 5 * time.Minute, ""},
		{"minutes minute", "1minute", time.Minute, ""},
		{"minutes minutes", "5 minutes", 5 * time.Minute, ""},
		{"hours h", "2h", 2 * time.Hour, ""},
		{"hours hr", "2hr", 2 * time.Hour, ""},
		{"hours hrs", "2hrs", 2 * time.Hour, ""},
		{"hours hour", "1hour", time.Hour, ""},
		{"hours hours", "2 hours", 2 * time.Hour, ""},
		{"days d", "1d", 24 * time.Hour, ""},
		{"days day", "1day", 24 * time.Hour, ""},
		{"days days", "2 days", 48 * time.Hour, ""},
		{"two groups", "1h 30m", 90 * time.Minute, ""},
		{"four groups any order", "1s 1m 1h 1d", 25*time.Hour + time.Minute + time.Second, ""},
		{"several spaces", "  1h   30m ", 90 * time.Minute, ""},
		{"leading zeros", "0001h", time.Hour, ""},
		{"ceiling in hours", "48h", 48 * time.Hour, ""},
		{"ceiling in seconds", "172800s", 48 * time.Hour, ""},
		{"ceiling in minutes", "2880m", 48 * time.Hour, ""},
		{"ceiling mixed", "1d 23h 59m 60s", 48 * time.Hour, ""},
		{"smallest", "1s", time.Second, ""},
		{"one second past the ceiling", "48h 1s", 0, "at most 48h"},
		{"a second past in seconds", "172801s", 0, "at most 48h"},
		{"a minute past in minutes", "2881m", 0, "at most 48h"},
		{"three days", "3d", 0, "at most 48h"},
		{"huge number", "99999999999999999999999h", 0, "at most 48h"},
		{"zero", "0s", 0, "greater than 0"},
		{"all zero", "0h 0m", 0, "greater than 0"},
		{"months", "1mon", 0, "months"},
		{"month spelled out", "1 month", 0, "months"},
		{"unit twice", "1h 2h", 0, "hours given twice"},
		{"unit twice across spellings", "1d 1day", 0, "days given twice"},
		{"minutes twice across spellings", "1m 1min", 0, "minutes given twice"},
		{"no space between groups", "1h30m", 0, "separated by spaces"},
		{"unknown unit", "1w", 0, "unknown unit"},
		{"milliseconds", "500ms", 0, "unknown unit"},
		{"upper case", "2H", 0, "unknown unit"},
		{"fraction", "1.5h", 0, "whole"},
		{"negative", "-1h", 0, "whole number"},
		{"number without unit", "30", 0, "needs a unit"},
		{"unit without number", "h", 0, "whole number"},
		{"empty", "", 0, "empty"},
		{"blank", "   ", 0, "empty"},
		{"tab", "1h\t30m", 0, "separated by spaces"},
		{"64 characters", strings.Repeat("0", 62) + "1s", time.Second, ""},
		{"65 characters", strings.Repeat("0", 63) + "1s", 0, "64 characters"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := ParseDuration(tc.in)
			if tc.want == 0 {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("ParseDuration(%q) = %+v, %v; want an error with %q", tc.in, d, err, tc.err)
				}
				return
			}
			if err != nil || d.Nominal() != tc.want {
				t.Fatalf("ParseDuration(%q) = %s, %v; want %s", tc.in, d.Nominal(), err, tc.want)
			}
		})
	}
}

// FuzzParseDuration: no input panics; an accepted duration is within the
// bounds and reads back the same when written out again.
func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"1h 30m", "2 days", "48h", "1d 1day", "1mon", "0s", "1h30m", "172800s", "1.5h", " 5 min "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDuration(s)
		if err != nil {
			return
		}
		if n := d.Nominal(); n <= 0 || n > storage.MaxTokenDuration || chars(s) > maxDurationChars {
			t.Fatalf("accepted %q as %s", s, n)
		}
		again, err := ParseDuration(fmt.Sprintf("%dd %dh %dm %ds", d.Days, d.Hours, d.Minutes, d.Seconds))
		if err != nil || again != d {
			t.Fatalf("%q read back as %+v, %v; want %+v", s, again, err, d)
		}
	})
}

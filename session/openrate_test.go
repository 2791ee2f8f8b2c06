package session

import (
	"errors"
	"testing"
	"time"
)

// TestOpeningRateWindows: 2 openings in any second and 20 in any minute per
// account, at each edge and one past it.
func TestOpeningRateWindows(t *testing.T) {
	t0 := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	type step struct {
		account string
		at      time.Duration // after t0
		ok      bool
	}
	// twenty returns 20 openings of account, one a second from start.
	twenty := func(account string, start time.Duration) []step {
		var s []step
		for i := range 20 {
			s = append(s, step{account, start + time.Duration(i)*time.Second, true})
		}
		return s
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"two in a second", []step{{"a", 0, true}, {"a", 999 * time.Millisecond, true}}},
		{"a third 999 ms after the first", []step{{"a", 0, true}, {"a", 1, true}, {"a", 999 * time.Millisecond, false}}},
		{"a third 1000 ms after the first", []step{{"a", 0, true}, {"a", 1, true}, {"a", time.Second, true}}},
		{"a refusal is not counted", []step{{"a", 0, true}, {"a", 0, true}, {"a", 500 * time.Millisecond, false}, {"a", time.Second, true}, {"a", time.Second, true}}},
		{"accounts apart", []step{{"a", 0, true}, {"a", 0, true}, {"b", 0, true}, {"b", 0, true}, {"a", 0, false}, {"b", 0, false}}},
		{"twenty in a minute", twenty("a", 0)},
		{"a 21st within the minute", append(twenty("a", 0), step{"a", 59999 * time.Millisecond, false})},
		{"a 21st a minute after the first", append(twenty("a", 0), step{"a", time.Minute, true})},
		{"a 22nd needs the second one's minute", append(twenty("a", 0), step{"a", time.Minute, true},
			step{"a", time.Minute + 500*time.Millisecond, false}, step{"a", 61 * time.Second, true})},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			now := t0
			o := newOpeningRate(func() time.Time { return now })
			for i, s := range tc.steps {
				now = t0.Add(s.at)
				err := o.admit(s.account)
				if (err == nil) != s.ok || (err != nil && !errors.Is(err, errOpeningRate)) {
					t.Fatalf("step %d (%s at %v): %v, want ok=%v", i, s.account, s.at, err, s.ok)
				}
			}
		})
	}
}

// TestOpeningRateForgets: accounts quiet for a minute leave the map.
func TestOpeningRateForgets(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	o := newOpeningRate(func() time.Time { return now })
	for _, a := range []string{"a", "b", "c"} {
		if err := o.admit(a); err != nil {
			t.Fatal(err)
		}
	}
	now = now.Add(time.Minute)
	if err := o.admit("d"); err != nil {
		t.Fatal(err)
	}
	if len(o.times) != 1 {
		t.Fatalf("%d accounts kept, want 1", len(o.times))
	}
}

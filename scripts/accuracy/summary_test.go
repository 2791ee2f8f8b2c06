package main

import (
	"strings"
	"testing"
)

// TestSummary: the closing table has one row per data set with a heart
// rate, scores only the answered outcomes, names the data set with the
// largest share of answers more than 10 bpm off, and lists false answers
// on noise.
func TestSummary(t *testing.T) {
	o := func(tracked, ref float64, answered bool) outcome {
		return outcome{tracked: tracked, ref: ref, answered: answered}
	}
	s := &summary{}
	s.add("clips A", []outcome{o(71, 70, true), o(84, 80, true), o(102, 90, true), o(50, 90, false)})
	s.add("clips B", []outcome{o(60, 90, false), o(61, 90, false)})
	s.add("no heart rate", nil)
	s.addNoise("noise pieces", []outcome{o(70, 80, true), o(60, 80, false), o(65, 80, false)})
	var b strings.Builder
	s.print(&b)
	out := b.String()
	for _, want := range []string{
		"| clips A | 3/4 (75%) | 5.67 | 7.33 | 67% | 33% |",
		"| clips B | 0/2 (0%) | - | - | - | - |",
		"The largest share of answers more than 10 bpm off: 33%, clips A.",
		"noise pieces: 1 of 3 answered, each a false answer.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "no heart rate") {
		t.Errorf("a data set without outcomes got a row:\n%s", out)
	}

	right := &summary{}
	right.add("clips C", []outcome{o(70, 72, true)})
	b.Reset()
	right.print(&b)
	if !strings.Contains(b.String(), "No answer on any data set is more than 10 bpm off.") {
		t.Errorf("all answers right, summary:\n%s", b.String())
	}

	var none *summary // a part run without a summary
	none.add("x", []outcome{o(1, 1, true)})
	none.addNoise("y", []outcome{o(1, 1, true)})
	b.Reset()
	none.print(&b)
	(&summary{}).print(&b)
	if b.Len() != 0 {
		t.Errorf("an empty or nil summary printed %q", b.String())
	}
}

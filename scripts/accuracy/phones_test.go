package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pulsewire/pulsewire/dsp"
)

// writePhone writes one recording in the data set's layout: 75 s of a
// fingertip at 30 fps with jittered frame times, its red at level plus a
// pulse of the strap's beats (every 800 ms for 30 s, then every 850 ms:
// 75 bpm, then 70.6).
func writePhone(t *testing.T, dir, subject string, level, pulse float64) {
	t.Helper()
	d := filepath.Join(dir, subject)
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	var rr []string
	var beats []float64
	for b := 0.0; b < 76; {
		step := 0.8
		if b > 30 {
			step = 0.85
		}
		rr = append(rr, fmt.Sprint(math.Round(1000*step)))
		b += step
		beats = append(beats, b)
	}
	csv := []string{"time,R,G,B"}
	for i := range 75 * 30 {
		ms := math.Round(float64(i)*1000/30 + 7*math.Sin(float64(i)))
		s := ms / 1000
		// The blood of the last beat darkens the fingertip, then drains.
		last := 0.0
		for _, b := range beats {
			if b <= s {
				last = b
			}
		}
		red := math.Min(255, level-pulse*math.Exp(-(s-last)/0.25))
		csv = append(csv, fmt.Sprintf("%.0f,%.3f,0.0,0.0", ms, red))
	}
	if err := os.WriteFile(filepath.Join(d, "PPG.csv"), []byte(strings.Join(csv, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, "RR.txt"), []byte(strings.Join(rr, " ")), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestPhoneRecordings: the phone part reads the data set's layout, takes
// its references from the strap's beats over the same seconds, and scores
// the red channel as the service reads it; a red clipped at 255 is
// refused.
func TestPhoneRecordings(t *testing.T) {
	dir := t.TempDir()
	writePhone(t, dir, "subject_01", 230, 3)
	writePhone(t, dir, "subject_02", 256, 3) // at 255 but for a dip at each beat
	tables, err := phoneRecordings(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	whole, pieces := tables[0], tables[1]
	if whole.units != 2 || pieces.units != 2*3 {
		t.Fatalf("%d whole recordings and %d pieces, want 2 and 6", whole.units, pieces.units)
	}
	beats := 38 + (75-38*0.8)/0.85 // the strap's beats within the 75 s
	wantHR := 60 * beats / 75
	for _, o := range whole.outcomes {
		if math.Abs(o.ref-wantHR) > 1 {
			t.Errorf("%s: reference %.1f bpm, want about %.1f", o.name, o.ref, wantHR)
		}
		switch {
		case o.name == "subject_01" && (!o.answered || math.Abs(o.tracked-o.ref) > 1.5):
			t.Errorf("subject_01: answered %v, tracked %.1f for %.1f", o.answered, o.tracked, o.ref)
		case o.name == "subject_02" && o.code != dsp.ConformityPoorLight:
			t.Errorf("subject_02, red at 255 but for its dips: %q", o.code)
		}
	}
	// The first piece lies before the step, the third after it.
	if first, last := pieces.outcomes[0].ref, pieces.outcomes[2].ref; math.Abs(first-75) > 0.5 || math.Abs(last-60/0.85) > 0.5 {
		t.Errorf("piece references %.1f and %.1f bpm, want 75 and %.1f", first, last, 60/0.85)
	}
}

func TestPhoneLayoutErrors(t *testing.T) {
	if _, err := phoneRecordings(t.TempDir(), false); err == nil || !strings.Contains(err.Error(), "no subject_NN folders") {
		t.Errorf("an empty folder: %v", err)
	}
	dir := t.TempDir()
	writePhone(t, dir, "subject_01", 230, 3)
	if err := os.WriteFile(filepath.Join(dir, "subject_01", "RR.txt"), []byte("800 eight 800"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := phoneRecordings(dir, false); err == nil || !strings.Contains(err.Error(), `"eight" is not an interval in ms`) {
		t.Errorf("a word among the intervals: %v", err)
	}
}

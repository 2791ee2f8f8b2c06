package clip

import (
	"math"
	"testing"
)

// TestHeartRateChange checks a rate that changes within the clip: the
// course starts at HeartRate, ends at HeartRateEnd, and the truth's mean
// lies between, as the beats' own mean.
func TestHeartRateChange(t *testing.T) {
	for _, tc := range []struct {
		name       string
		start, end float64
	}{
		{"stress task", 70, 95},
		{"recovery", 100, 85},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := New(Config{Width: 64, Height: 64, Seconds: 60, HeartRate: tc.start, HeartRateEnd: tc.end, RMSSD: 20, Seed: 5})
			if err != nil {
				t.Fatal(err)
			}
			tr := c.Truth()
			if len(tr.HRCourse) != 60 {
				t.Fatalf("%d course points, want 60", len(tr.HRCourse))
			}
			mean := func(from, to int) float64 {
				var s float64
				for _, v := range tr.HRCourse[from:to] {
					s += v
				}
				return s / float64(to-from)
			}
			// Before 20% of the clip the rate is the start's, after 60%
			// the end's; beat-to-beat variability moves single beats.
			if got := mean(0, 11); math.Abs(got-tc.start) > 3 {
				t.Errorf("first 11 s at %.1f bpm, want %.0f", got, tc.start)
			}
			if got := mean(37, 60); math.Abs(got-tc.end) > 3 {
				t.Errorf("last 23 s at %.1f bpm, want %.0f", got, tc.end)
			}
			lo, hi := min(tc.start, tc.end), max(tc.start, tc.end)
			if tr.HeartRate < lo+0.3*(hi-lo) || tr.HeartRate > hi-0.3*(hi-lo) {
				t.Errorf("mean %.1f bpm, want well between %.0f and %.0f", tr.HeartRate, tc.start, tc.end)
			}
			// A slow change adds little to the successive differences.
			if tr.RMSSD < 15 || tr.RMSSD > 26 {
				t.Errorf("RMSSD %.1f ms, want about 20", tr.RMSSD)
			}
		})
	}
}

// TestPulseFollowsRateChange checks the skin's pulse, not only the beat
// list: the green peak of the clip's last 20 s is at the end rate.
func TestPulseFollowsRateChange(t *testing.T) {
	c, err := New(Config{Width: 64, Height: 64, Seconds: 50, HeartRate: 65, HeartRateEnd: 90, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	var ts, v []float64
	for i := range c.Len() {
		if at := c.times[i]; at >= 30 {
			ts = append(ts, at)
			v = append(v, c.phys.pulse(at))
		}
	}
	if got := peakBPM(ts, v, 40, 140); math.Abs(got-90) > 2 {
		t.Errorf("pulse at %.2f bpm over the last 20 s, want 90", got)
	}
}

package dsp

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pulsewire/pulsewire/dsp/internal/stats"
	"github.com/pulsewire/pulsewire/dsp/internal/testsignal"
)

// encoded returns the colour trace of s as a video with a key frame every n
// frames gives it back. held: the predicted frames keep the picture, so
// each frame shows its group's key frame plus a little noise of its own
// (the decoder's rounding). Otherwise every frame shows its own colour and
// each key frame only adds a step of the given size, in units of the
// colour's typical change from one frame to the next (a key frame drawn a
// little differently, nothing held).
func encoded(s testsignal.Signal, n int, held bool, step float64, seed uint64) Trace {
	rng := rand.New(rand.NewPCG(seed, 7))
	frame := s.T[1] - s.T[0]
	channel := func(x []float64) []float64 {
		var typical []float64
		for i := 1; i < len(x); i++ {
			typical = append(typical, math.Abs(x[i]-x[i-1]))
		}
		size := step * stats.Median(typical)
		out := make([]float64, len(x))
		var key, offset float64
		for i, v := range x {
			if int(math.Round((s.T[i]-s.T[0])/frame))%n == 0 {
				key = v
				offset += size * rng.NormFloat64()
			}
			out[i] = v + offset
			if held {
				out[i] = key + 0.02*rng.NormFloat64()
			}
		}
		return out
	}
	return Trace{TimestampsMs: s.T, R: channel(s.R), G: channel(s.G), B: channel(s.B)}
}

func seconds(ms []float64) []float64 {
	t := make([]float64, len(ms))
	for i, v := range ms {
		t[i] = (v - ms[0]) / 1000
	}
	return t
}

func TestKeyFrameGroup(t *testing.T) {
	pulse := testsignal.Config{Seed: 1, Seconds: 60, HR: 97, Noise: 0.3}
	dropped := pulse
	dropped.Drop = 0.05
	for _, tc := range []struct {
		name string
		tr   Trace
		want int
	}{
		{"held, a key frame every 12", encoded(testsignal.Make(pulse), 12, true, 0, 1), 12},
		{"held, every 22: the longest group that folds the band at 30 fps", encoded(testsignal.Make(pulse), 22, true, 0, 2), 22},
		{"held, every 23: too long to fold it", encoded(testsignal.Make(pulse), 23, true, 0, 2), 0},
		{"held, 5% of the frames lost", encoded(testsignal.Make(dropped), 12, true, 0, 3), 12},
		{"key frames that step, nothing held", encoded(testsignal.Make(pulse), 12, false, 1, 4), 0},
		{"no key frames to see", Trace{TimestampsMs: testsignal.Make(pulse).T, G: testsignal.Make(pulse).G}, 0},
	} {
		if got := keyFrameGroup(seconds(tc.tr.TimestampsMs), tc.tr.G, 22); got != tc.want {
			t.Errorf("%s: %d frames a group, want %d", tc.name, got, tc.want)
		}
	}

	// Times rounded to the millisecond (33, 33, 34 ms) still count frames.
	tr := encoded(testsignal.Make(pulse), 12, true, 0, 5)
	for i, v := range tr.TimestampsMs {
		tr.TimestampsMs[i] = math.Round(v)
	}
	if got := keyFrameGroup(seconds(tr.TimestampsMs), tr.G, 22); got != 12 {
		t.Errorf("millisecond times: %d frames a group, want 12", got)
	}
	// A redraw every 4 frames that happens in 72% of them, more often at
	// the ones every 8 (90%) than between (55%): the 8-frame phase passes,
	// the 4-frame one just misses, but the jumps gather every 4.
	s := testsignal.Make(pulse)
	rng := rand.New(rand.NewPCG(9, 9))
	g := make([]float64, len(s.G))
	for i, v := range s.G {
		group := i / 8
		switch {
		case i == 0, i%8 == 0 && group%10 != 9, i%8 == 4 && group%20 < 11:
			g[i] = v
		default:
			g[i] = g[i-1]
		}
	}
	for i := range g {
		g[i] += 0.005 * rng.NormFloat64()
	}
	if got := keyFrameGroup(seconds(s.T), g, 22); got != 4 {
		t.Errorf("redrawn every 4 frames, more often every 8: %d frames a group, want 4", got)
	}
	// Too short to tell: fewer than minKeyFrames groups of any length.
	short := testsignal.Make(testsignal.Config{Seed: 1, Seconds: 1.3, HR: 97, Noise: 0.3})
	if got := keyFrameGroup(seconds(short.T), encoded(short, 2, true, 0, 6).G, 22); got != 0 {
		t.Errorf("39 frames: %d frames a group, want 0", got)
	}
}

// TestHeldPulseImageIsRefused: a pulse of 90 bpm in a video that holds its
// picture between key frames 2.5 times a second reads as an image under
// 75 bpm, as sure as a pulse (its confidence reaches the answer level), and
// nothing in the trace tells it from a pulse at that rate: refused. The
// same pulse, not held, is answered.
func TestHeldPulseImageIsRefused(t *testing.T) {
	s := testsignal.Make(testsignal.Config{Seed: 2, Seconds: 60, HR: 90, Noise: 0.3})
	r := AnalyzeTrace(encoded(s, 12, true, 0, 1), Inputs{Variables: []string{HR}})
	if code(r, HR) != ConformityMissingSignal {
		t.Errorf("held: hr %v, want %s (summary %+v)", r.Variables[HR], ConformityMissingSignal, r.Summary)
	}
	if math.Abs(r.Summary.KeyFrameHz-2.5) > 1e-6 {
		t.Errorf("held: key frames at %.3f Hz, want 2.5", r.Summary.KeyFrameHz)
	}
	level, _ := AnswerLevel(r.Summary.Seconds)
	if r.Summary.TrackedBpm >= 75 || r.Summary.QualityScore < level {
		t.Errorf("held: tracked %.1f bpm at confidence %.2f; the test wants a sure image under 75 bpm (level %.2f)",
			r.Summary.TrackedBpm, r.Summary.QualityScore, level)
	}

	r = AnalyzeTrace(trace(s), Inputs{Variables: []string{HR}})
	if got := mean(t, r, HR); math.Abs(got-s.HR) > 2 || r.Summary.KeyFrameHz != 0 {
		t.Errorf("not held: hr %.1f, key frames at %.2f Hz; want %.1f and none", got, r.Summary.KeyFrameHz, s.HR)
	}
}

// TestHeldImageBounds checks which tracked rates a held video refuses: those
// whose mirror across half the key-frame rate is in the band and more than
// 5 bpm away.
func TestHeldImageBounds(t *testing.T) {
	s := testsignal.Make(testsignal.Config{Seed: 3, Seconds: 60, HR: 90, Noise: 0.3})
	for _, tc := range []struct {
		every   int
		held    bool
		tracked float64
		refused bool
	}{
		{12, true, 49, true},    // mirror 101 bpm
		{12, true, 72.4, true},  // mirror 77.6: 5.2 bpm away
		{12, true, 72.6, false}, // mirror 77.4: 4.8 bpm away
		{12, true, 76, false},   // above half the key-frame rate
		{12, false, 49, false},  // nothing held
		{6, true, 110, true},    // key frames at 300 bpm: mirror 190
		{6, true, 60, false},    // mirror 240, outside the band
		{23, true, 40, false},   // groups too long to fold the band
	} {
		tr := encoded(s, tc.every, tc.held, 3, 1)
		pa := pulseAnalysis{summary: Summary{FrameRateHz: 30, TrackedBpm: tc.tracked}}
		if got := pa.heldImage(seconds(tr.TimestampsMs), tr.G); got != tc.refused {
			t.Errorf("a key frame every %d (held %v), tracked %.1f bpm: refused %v, want %v (key frames at %.2f Hz)",
				tc.every, tc.held, tc.tracked, got, tc.refused, pa.summary.KeyFrameHz)
		}
	}
}

// BenchmarkKeyFrameGroup: a minute at 30 fps without key frames to find,
// the longest search (every group length and phase).
func BenchmarkKeyFrameGroup(b *testing.B) {
	s := testsignal.Make(testsignal.Config{Seed: 1, Seconds: 60, HR: 72, Noise: 0.3})
	t := seconds(s.T)
	b.ReportAllocs()
	for b.Loop() {
		keyFrameGroup(t, s.G, maxKeyFrameGroup)
	}
}

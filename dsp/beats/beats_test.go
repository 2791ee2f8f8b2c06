package beats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pulsewire/pulsewire/dsp/internal/testsignal"
	"github.com/pulsewire/pulsewire/dsp/pulse"
	"github.com/pulsewire/pulsewire/dsp/resample"
)

func constant(n int, v float64) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = v
	}
	return x
}

// TestDetectFindsEveryBeat: on a contact pulse with a strong dicrotic wave
// every generated beat is found once, within a few milliseconds.
func TestDetectFindsEveryBeat(t *testing.T) {
	for _, tc := range []struct {
		name  string
		hr    float64
		notch float64
		fps   float64
	}{
		{"45 bpm, dicrotic wave 0.8 of the peak", 45, 0.8, 30},
		{"72 bpm", 72, 0.4, 30},
		{"150 bpm at 60 fps", 150, 0.3, 60},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := testsignal.Make(testsignal.Config{Seed: 3, HR: tc.hr, Notch: tc.notch, FPS: tc.fps, RMSSDms: 30, Noise: 0.02})
			ts := make([]float64, len(s.T))
			for i, v := range s.T {
				ts[i] = v / 1000
			}
			w := pulse.FromIntensity(resample.Uniform(nil, ts, s.I, tc.fps), tc.fps)
			got := Detect(nil, w.Pulse, constant(len(w.Pulse), 60/tc.hr), tc.fps)
			// Every beat away from the ends is found, and every detection
			// is a beat (the first and last partial beats may be missed).
			var worst float64
			for _, b := range s.Beats {
				if b < 1 || b > 29 {
					continue
				}
				best := math.Inf(1)
				for _, g := range got {
					best = math.Min(best, math.Abs(g.PeakT-b))
				}
				if best > 0.1 {
					t.Errorf("beat at %.3f s missed", b)
				}
				worst = math.Max(worst, best)
			}
			for _, g := range got {
				best := math.Inf(1)
				for _, b := range s.Beats {
					best = math.Min(best, math.Abs(g.PeakT-b))
				}
				if best > 0.1 {
					t.Errorf("detection at %.3f s is no beat", g.T)
				}
			}
			// The band-pass delays nothing (zero phase) but rounds the peak:
			// a constant offset does not matter for intervals; the spread does.
			if worst > 0.06 {
				t.Errorf("worst timing error %.3f s", worst)
			}
		})
	}
}

func beatsAt(times ...float64) []Beat {
	bs := make([]Beat, len(times))
	for i, t := range times {
		bs[i] = Beat{T: t, Peak: 1}
	}
	return bs
}

func TestIntervalsRejectArtefacts(t *testing.T) {
	// Steady 0.8 s beats with one missed beat (1.6 s) and one extra (0.4+0.4).
	times := []float64{0, 0.8, 1.6, 2.4, 4.0, 4.8, 5.6, 6.0, 6.4, 7.2, 8.0, 8.8}
	iv := Intervals(beatsAt(times...))
	want := []bool{true, true, true, false, true, true, false, false, true, true, true}
	for i, v := range iv {
		if v.NN != want[i] {
			t.Errorf("interval %d (%.1f s): NN %v, want %v", i, v.S, v.NN, want[i])
		}
	}
	st := Stats(iv)
	if st.Count != 8 || st.Total != 11 {
		t.Errorf("stats %+v", st)
	}
	// Only adjacent NN pairs count: (0,1) (1,2) (4,5) (8,9) (9,10).
	if st.Pairs != 5 || st.RMSSDs > 1e-12 {
		t.Errorf("pairs %d rmssd %g", st.Pairs, st.RMSSDs)
	}
}

// TestIntervalsUnsampled: the two intervals around a beat that fell where
// frames were dropped are unknown: neither NN nor counted among all.
func TestIntervalsUnsampled(t *testing.T) {
	bs := beatsAt(0, 0.8, 1.6, 2.4, 3.2, 4.0, 4.8, 5.6, 6.4)
	bs[4].Unsampled = true
	iv := Intervals(bs)
	for i, v := range iv {
		if unknown := i == 3 || i == 4; v.Unsampled != unknown || v.NN == unknown {
			t.Errorf("interval %d: unsampled %v, NN %v", i, v.Unsampled, v.NN)
		}
	}
	if st := Stats(iv); st.Count != 6 || st.Total != 6 {
		t.Errorf("stats %+v, want 6 NN of 6 known", st)
	}
}

func TestRMSSD(t *testing.T) {
	// Intervals 0.80 0.85 0.80 0.85 ...: every successive difference 50
	// ms. (Built as NN directly: a strict alternation of intervals is the
	// pattern of premature beats, which Intervals rejects.)
	var iv []Interval
	for i := 0; i < 20; i++ {
		iv = append(iv, Interval{S: 0.8 + 0.05*float64(i%2), NN: true})
	}
	st := Stats(iv)
	if math.Abs(st.RMSSDs-0.05) > 1e-9 || st.Pairs != 19 {
		t.Errorf("rmssd %g over %d pairs, want 0.05 over 19", st.RMSSDs, st.Pairs)
	}
	// Ten of 0.80 and ten of 0.85 around their mean 0.825: a deviation of
	// 25 ms each, sqrt(20/19) × 25 ms with Bessel's correction.
	if want := 0.025 * math.Sqrt(20.0/19); math.Abs(st.SDNNs-want) > 1e-12 {
		t.Errorf("sdnn %g, want %g", st.SDNNs, want)
	}
}

func TestStressIndex(t *testing.T) {
	// 10 intervals: 6 in the 800-850 ms bin, 2 at 0.78, 2 at 0.88.
	s := []float64{0.81, 0.82, 0.83, 0.81, 0.82, 0.84, 0.78, 0.78, 0.88, 0.88}
	var iv []Interval
	for _, v := range s {
		iv = append(iv, Interval{S: v, NN: true})
	}
	si, ok := StressIndex(iv)
	// Mo = 0.825 s, AMo = 60%, MxDMn = 0.10 s: SI = 60 / (2 * 0.825 * 0.10).
	if want := 60 / (2 * 0.825 * 0.10); !ok || math.Abs(si-want) > 1e-9 {
		t.Errorf("SI %g, want %g", si, want)
	}
	if _, ok := StressIndex(iv[:1]); ok {
		t.Error("SI of one interval")
	}
	if _, ok := StressIndex([]Interval{{S: 0.8, NN: true}, {S: 0.8, NN: true}}); ok {
		t.Error("SI of a zero range")
	}
}

// TestIntervalsRejectMisplacedBeats checks the successive-difference test:
// a beat timed 100 ms late moves its two intervals by 12%, inside the 20%
// rule, but far beyond the recording's own spread of differences, so both
// are rejected (and the neighbours whose difference to them is large may
// go too); a series with sinus arrhythmia loses nothing.
func TestIntervalsRejectMisplacedBeats(t *testing.T) {
	rsa := func(i int) float64 { return 0.8 + 0.03*math.Sin(2*math.Pi*float64(i)/5) }
	cases := []struct {
		name          string
		late          int   // index of the beat timed 100 ms late, -1 for none
		must, mayAlso []int // intervals that must be rejected, and may be
	}{
		{"sinus arrhythmia only", -1, nil, nil},
		{"one beat 100 ms late", 12, []int{11, 12}, []int{10, 13}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			times := []float64{0}
			for i := 0; i < 30; i++ {
				times = append(times, times[len(times)-1]+rsa(i))
			}
			if tc.late >= 0 {
				times[tc.late] += 0.1
			}
			iv := Intervals(beatsAt(times...))
			var got []int
			for i, v := range iv {
				if !v.NN {
					got = append(got, i)
				}
			}
			for _, i := range tc.must {
				if !slices.Contains(got, i) {
					t.Errorf("interval %d kept (rejected %v)", i, got)
				}
			}
			for _, i := range got {
				if !slices.Contains(tc.must, i) && !slices.Contains(tc.mayAlso, i) {
					t.Errorf("interval %d rejected (rejected %v)", i, got)
				}
			}
		})
	}
}

// TestIntervalsRejectOddBeat: among beats that fit their mean closely
// (0.94 ± 0.01, a finger's), one that fits 0.86 is an outlier: its two
// intervals are not NN, although the beat is timed only 70 ms late, which
// neither the 20% rule nor the successive differences of a rhythm this
// variable catch. The same beat among a camera's widely spread fits, or
// among too few beats to judge a spread by, is kept.
func TestIntervalsRejectOddBeat(t *testing.T) {
	cases := []struct {
		name   string
		n      int
		fit    func(i int) float64
		wantNN bool
	}{
		{"finger", 40, func(i int) float64 { return 0.94 + 0.01*math.Sin(float64(i)*1.7) }, false},
		{"camera", 40, func(i int) float64 { return 0.7 + 0.2*math.Sin(float64(i)*1.7) }, true},
		{"too few beats", minFitBeats - 1, func(i int) float64 { return 0.94 + 0.01*math.Sin(float64(i)*1.7) }, true},
		// A fit of -1 (a beat upside down) or NaN (a flat one) must not
		// spoil the others' spread.
		{"finger, one beat upside down", 40, func(i int) float64 {
			if i == 5 {
				return -1
			}
			return 0.94 + 0.01*math.Sin(float64(i)*1.7)
		}, false},
		{"finger, one flat beat", 40, func(i int) float64 {
			if i == 5 {
				return math.NaN()
			}
			return 0.94 + 0.01*math.Sin(float64(i)*1.7)
		}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			times := []float64{0}
			for i := 1; i < tc.n; i++ {
				times = append(times, times[i-1]+0.7+0.04*math.Sin(2*math.Pi*float64(i)/4.3)+0.02*math.Sin(float64(i)*2.1))
			}
			bs := beatsAt(times...)
			for i := range bs {
				bs[i].Fit = tc.fit(i)
			}
			k := tc.n / 2
			bs[k].Fit = 0.86
			bs[k].T += 0.07
			iv := Intervals(bs)
			for i, v := range iv {
				want := bs[i].Fit > 0 && bs[i+1].Fit > 0
				if i == k-1 || i == k {
					want = tc.wantNN
				}
				if v.NN != want {
					t.Errorf("interval %d of %d (beat %d fits 0.86): NN %v, want %v", i, len(iv), k, v.NN, want)
				}
			}
		})
	}
}

// TestRate counts heartbeats as an oximeter or an ECG does: a premature
// beat every 10 (0.9 s among 1.33 s intervals, no compensatory pause) is a
// heartbeat, though its intervals are not NN, so the rate counts it where
// the mean NN interval reads more than 1 bpm slow. A missed detection (one interval
// of 2.66 s) still counts the beat it hid, an extra one (a 0.3 s interval)
// adds none, and beats at the Edge bound nothing.
func TestRate(t *testing.T) {
	var times []float64
	next := 0.0
	for i := range 46 {
		times = append(times, next)
		if i%10 == 7 {
			next += 0.9
		} else {
			next += 1.33
		}
	}
	truth := float64(len(times)-1) / (times[len(times)-1] - times[0])
	nn := Stats(Intervals(beatsAt(times...)))
	if got := Rate(beatsAt(times...)); math.Abs(got-truth)*60 > 0.01 {
		t.Errorf("premature beats: %.2f bpm, want %.2f (mean NN: %.2f)", 60*got, 60*truth, 60/nn.MeanS)
	}
	if 60*(truth-1/nn.MeanS) < 1 {
		t.Errorf("the mean NN interval reads %.2f bpm, want it more than 1 bpm slow (%.2f)", 60/nn.MeanS, 60*truth)
	}
	missed := slices.Delete(slices.Clone(times), 20, 21)
	extra := slices.Insert(slices.Clone(times), 30, times[29]+0.3)
	for name, ts := range map[string][]float64{"a missed detection": missed, "an extra detection": extra} {
		if got := Rate(beatsAt(ts...)); math.Abs(got-truth)*60 > 0.01 {
			t.Errorf("%s: %.2f bpm, want %.2f", name, 60*got, 60*truth)
		}
	}
	bs := beatsAt(append(slices.Clone(times), times[len(times)-1]+0.4)...)
	bs[len(bs)-1].Edge = true
	if got := Rate(bs); math.Abs(got-truth)*60 > 0.01 {
		t.Errorf("with a beat at the edge: %.2f bpm, want %.2f", 60*got, 60*truth)
	}
	if Rate(beatsAt(1)) != 0 {
		t.Error("one beat has a rate")
	}
}

// TestSplitNoise times the same heartbeats twice with independent noise, as
// the forehead and the cheeks do, and the whole as their mean: the measured
// RMSSD is inflated by the noise, and taking SplitNoise out of its square
// gives back the RMSSD of the beats themselves.
func TestSplitNoise(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	const n = 3000 // long enough that the estimate's own spread is small
	truth := []float64{0}
	for range n {
		truth = append(truth, truth[len(truth)-1]+0.8+0.03*rng.NormFloat64())
	}
	trueRMSSD := Stats(Intervals(beatsAt(truth...))).RMSSDs
	for _, tc := range []struct {
		name  string
		sigma float64 // timing noise of each half, s
	}{
		{"no noise", 0},
		{"5 ms per half", 0.005},
		{"15 ms per half", 0.015},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b, whole := make([]float64, len(truth)), make([]float64, len(truth)), make([]float64, len(truth))
			for i, v := range truth {
				// A constant lag between the halves, as between forehead
				// and cheeks, changes nothing.
				a[i] = v + 0.02 + tc.sigma*rng.NormFloat64()
				b[i] = v + tc.sigma*rng.NormFloat64()
				whole[i] = (a[i] + b[i]) / 2
			}
			iv := Intervals(beatsAt(whole...))
			measured := Stats(iv).RMSSDs
			noise, found := SplitNoise(iv, beatsAt(a...), beatsAt(b...))
			if !found {
				t.Fatal("no estimate")
			}
			corrected := math.Sqrt(measured*measured - noise)
			t.Logf("true %.1f ms, measured %.1f ms, corrected %.1f ms", 1000*trueRMSSD, 1000*measured, 1000*corrected)
			if math.Abs(corrected-trueRMSSD) > 0.05*trueRMSSD {
				t.Errorf("corrected RMSSD %.1f ms, true %.1f ms (measured %.1f ms)", 1000*corrected, 1000*trueRMSSD, 1000*measured)
			}
			if tc.sigma >= 0.015 && measured < 1.1*trueRMSSD {
				t.Errorf("measured %.1f ms: the noise should inflate the true %.1f ms", 1000*measured, 1000*trueRMSSD)
			}
		})
	}
	if _, found := SplitNoise(Intervals(beatsAt(0, 1, 2)), beatsAt(0, 1), beatsAt(0, 1, 2)); found {
		t.Error("halves of different lengths gave an estimate")
	}
}

// TestFitShare counts the compared beats that fit at least minFit, the
// edge value included, and leaves out edge beats and beats never compared.
func TestFitShare(t *testing.T) {
	bs := []Beat{
		{Edge: true}, {Fit: 0.95}, {Fit: 0.9}, {Fit: 0.89}, {Fit: -0.3}, {Fit: 0},
	}
	if got := FitShare(bs, 0.9); got != 0.5 {
		t.Errorf("share %v, want 0.5 (0.95 and 0.9 of four compared)", got)
	}
	if got := FitShare([]Beat{{Edge: true}, {}}, 0.9); got != 0 {
		t.Errorf("share %v with nothing compared, want 0", got)
	}
}

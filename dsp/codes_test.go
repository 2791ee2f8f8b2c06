package dsp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pulsewire/pulsewire/dsp/beats"
	"github.com/pulsewire/pulsewire/dsp/internal/testsignal"
)

func code(r Result, name string) Code { return r.Variables[name].Error }

// thin keeps the samples of s (index i, time ms) that keep says to, and its
// last: frames dropped on the way.
func thin(s testsignal.Signal, keep func(i int, ms float64) bool) testsignal.Signal {
	out := testsignal.Signal{Beats: s.Beats, HR: s.HR, RMSSDms: s.RMSSDms}
	for i := range s.T {
		if i == len(s.T)-1 || keep(i, s.T[i]) {
			out.T = append(out.T, s.T[i])
			out.I = append(out.I, s.I[i])
			out.R = append(out.R, s.R[i])
			out.G = append(out.G, s.G[i])
			out.B = append(out.B, s.B[i])
		}
	}
	return out
}

// clipped cuts every channel of s off at its top, leaving share of its
// samples at the cut (clipAt): a sensor at its limit.
func clipped(s testsignal.Signal, share float64) testsignal.Signal {
	out := s
	out.I, out.R, out.G, out.B = clipAt(s.I, share, true), clipAt(s.R, share, true), clipAt(s.G, share, true), clipAt(s.B, share, true)
	return out
}

// TestSignalCodes covers the codes a signal upload can produce, each at its
// threshold and past it.
// noise is n samples at 30 Hz of white noise in every channel: no pulse.
func noise(n int) testsignal.Signal {
	rng := rand.New(rand.NewPCG(1, 1))
	var s testsignal.Signal
	for i := range n {
		s.T = append(s.T, float64(i)*1000/30)
		s.I = append(s.I, 100+rng.NormFloat64())
		s.R = append(s.R, 150+rng.NormFloat64())
		s.G = append(s.G, 110+rng.NormFloat64())
		s.B = append(s.B, 90+rng.NormFloat64())
	}
	return s
}

func TestSignalCodes(t *testing.T) {
	clean := testsignal.Config{Seed: 7, Noise: 0.02}
	with := func(f func(*testsignal.Config)) testsignal.Signal {
		c := clean
		f(&c)
		return testsignal.Make(c)
	}
	for _, tc := range []struct {
		name        string
		s           testsignal.Signal
		in          Inputs
		v           string
		want        Code
		contactOnly bool // the camera route's narrower wave still shows the weak beats
	}{
		{"empty upload", testsignal.Signal{}, Inputs{}, HR, MissingSignal, false},
		{"one sample", testsignal.Signal{T: []float64{0}, I: []float64{1}, R: []float64{1}, G: []float64{1}, B: []float64{1}}, Inputs{}, HR, MissingSignal, false},
		{"10.5 s is enough for hr", with(func(c *testsignal.Config) { c.Seconds = 10.5 }), Inputs{}, HR, "", false},
		{"9.5 s is too short for hr", with(func(c *testsignal.Config) { c.Seconds = 9.5 }), Inputs{}, HR, ConformityInitialisation, false},
		{"19 s is too short for br", with(func(c *testsignal.Config) { c.Seconds = 19 }), Inputs{}, BR, ConformityInitialisation, false},
		{"13 fps is enough", with(func(c *testsignal.Config) { c.FPS = 13 }), Inputs{}, HR, "", false},
		{"11 fps is too few", with(func(c *testsignal.Config) { c.FPS = 11 }), Inputs{}, HR, ConformityLowFPS, false},
		{"30% of the frames dropped here and there is fine", with(func(c *testsignal.Config) { c.Drop = 0.3 }), Inputs{}, HR, "", false},
		{"every 6th frame of 15 fps dropped: 12.5 fps", thin(with(func(c *testsignal.Config) { c.FPS = 15 }), func(i int, _ float64) bool { return i%6 != 5 }), Inputs{}, HR, "", false},
		{"every 4th frame of 15 fps dropped: 11.25 fps", thin(with(func(c *testsignal.Config) { c.FPS = 15 }), func(i int, _ float64) bool { return i%4 != 3 }), Inputs{}, HR, ConformityLowFPS, false},
		{"gaps of 1 s in 18% of the capture", thin(with(func(*testsignal.Config) {}), func(_ int, ms float64) bool { return math.Mod(ms, 5500) >= 1000 }), Inputs{}, HR, "", false},
		{"gaps of 1 s in 22% of the capture", thin(with(func(*testsignal.Config) {}), func(_ int, ms float64) bool { return math.Mod(ms, 4500) >= 1000 }), Inputs{}, HR, ConformityLowFPS, false},
		{"45% of the samples clipped is fine", clipped(with(func(*testsignal.Config) {}), 0.45), Inputs{}, HR, "", false},
		{"55% of the samples clipped", clipped(with(func(*testsignal.Config) {}), 0.55), Inputs{}, HR, ConformityPoorLight, false},
		{"noise has no pulse", noise(900), Inputs{}, HR, ConformityMissingSignal, false},
		{"every tenth beat premature is rejected, not fatal", with(func(c *testsignal.Config) { c.EctopicEvery = 10 }), Inputs{}, HRV, "", false},
		{"a rhythm too irregular to track", with(func(c *testsignal.Config) { c.RMSSDms = 350 }), Inputs{}, HR, ConformityMissingSignal, false},
		{"every third beat premature: no steady rhythm", with(func(c *testsignal.Config) { c.EctopicEvery = 3 }), Inputs{}, HR, ConformityMissingSignal, false},
		{"faceBmi needs an image", with(func(*testsignal.Config) {}), Inputs{}, FaceBMI, MissingImage, false},
		{"bp needs an externalId", with(func(*testsignal.Config) {}), Inputs{}, BP, MissingUserDataExternalID, false},
		{"bp needs a calibration", with(func(*testsignal.Config) {}), Inputs{Person: Person{HasExternalID: true}}, BP, NotCalibrated, false},
		{"bp with an impossible calibration", with(func(*testsignal.Config) {}), Inputs{Person: Person{HasExternalID: true}, Calibration: &Calibration{SystoleMmHg: 70, DiastoleMmHg: 90}}, BP, OutOfRange, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			results := map[string]Result{"contact": AnalyzePPG(ppg(tc.s), tc.in)}
			if !tc.contactOnly {
				results["camera"] = AnalyzeTrace(trace(tc.s), tc.in)
			}
			for route, r := range results {
				got := Code("")
				if tc.v == "signal" {
					got = r.Signal.QualityScore.Error
				} else {
					got = code(r, tc.v)
				}
				if got != tc.want {
					t.Errorf("%s: %s = %q, want %q (summary %+v)", route, tc.v, got, tc.want, r.Summary)
				}
			}
		})
	}
}

// TestPersonCodes covers the person-data codes and values.
func TestPersonCodes(t *testing.T) {
	full := Person{AgeYears: 45, Sex: Male, WeightKg: 80, HeightCm: 180, Smoking: NonSmoker}
	drop := func(f func(*Person)) Person { p := full; f(&p); return p }
	for _, tc := range []struct {
		name string
		p    Person
		v    string
		want Code
	}{
		{"bmi complete", full, BMI, ""},
		{"bmi without weight", drop(func(p *Person) { p.WeightKg = 0 }), BMI, MissingUserDataWeight},
		{"bmi without height", drop(func(p *Person) { p.HeightCm = 0 }), BMI, MissingUserDataHeight},
		{"bmi without both", drop(func(p *Person) { p.HeightCm, p.WeightKg = 0, 0 }), BMI, MissingUserData},
		{"bpClass without age", drop(func(p *Person) { p.AgeYears = 0 }), BPClass, MissingUserDataAge},
		{"bpClass without sex", drop(func(p *Person) { p.Sex = "" }), BPClass, MissingUserDataSex},
		{"bpClass ignores smoking", drop(func(p *Person) { p.Smoking = "" }), BPClass, ""},
		{"healthScore without smoking status", drop(func(p *Person) { p.Smoking = "" }), HealthScore, MissingUserDataSmokingStatus},
		{"healthScore with an unknown sex value", drop(func(p *Person) { p.Sex = "X" }), HealthScore, MissingUserDataSex},
		{"healthScore complete", full, HealthScore, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := AnalyzePPG(PPG{}, Inputs{Person: tc.p})
			if got := code(r, tc.v); got != tc.want {
				t.Errorf("%s = %q, want %q", tc.v, got, tc.want)
			}
			if code(r, HR) != MissingSignal {
				t.Errorf("hr of an empty upload: %+v", r.Variables[HR])
			}
		})
	}
}

func TestPersonValues(t *testing.T) {
	p := Person{AgeYears: 45, Sex: Male, WeightKg: 81, HeightCm: 180, Smoking: NonSmoker}
	r := AnalyzePPG(PPG{}, Inputs{Person: p})
	if b := r.Variables[BMI].Value.(float64); b != 25 {
		t.Errorf("bmi %v, want 25 (81 / 1.8²)", b)
	}
	// 45-year-old man, BMI 25, SBP 120, non-smoker: the Framingham BMI model
	// gives a 10-year risk of about 7%.
	hs := r.Variables[HealthScore].Value.(float64)
	smoker := AnalyzePPG(PPG{}, Inputs{Person: Person{AgeYears: 45, Sex: Male, WeightKg: 81, HeightCm: 180, Smoking: Smoker}})
	if hs < 88 || hs > 96 {
		t.Errorf("healthScore %v, want about 93", hs)
	}
	if hs2 := smoker.Variables[HealthScore].Value.(float64); hs2 >= hs {
		t.Errorf("smoking did not lower healthScore: %v >= %v", hs2, hs)
	}
	// bpClass points: age 40-49 (1) + overweight 25 (1) + male (1) = 3 -> 2.
	if l := r.Variables[BPClass].Value.(Level); l.Level != 2 || l.Scale != (Scale{1, 3}) {
		t.Errorf("bpClass %+v, want level 2 of 1-3", l)
	}
	r2 := AnalyzePPG(PPG{}, Inputs{Person: p, BPClassScale: 2})
	if l := r2.Variables[BPClass].Value.(Level); l.Level != 2 || l.Scale != (Scale{1, 2}) {
		t.Errorf("bpClass scale 2 %+v, want level 2 of 1-2", l)
	}
	young := AnalyzePPG(PPG{}, Inputs{Person: Person{AgeYears: 25, Sex: Female, WeightKg: 55, HeightCm: 165}, BPClassScale: 2})
	if l := young.Variables[BPClass].Value.(Level); l.Level != 1 {
		t.Errorf("bpClass of a young lean woman %+v, want 1", l)
	}
	// age 60 or over (3) + obese, BMI 34.6 (2) + male (1) = 6 -> 3, the
	// top of 1-3; two levels end at 2.
	old := Person{AgeYears: 65, Sex: Male, WeightKg: 100, HeightCm: 170}
	if l := AnalyzePPG(PPG{}, Inputs{Person: old}).Variables[BPClass].Value.(Level); l.Level != 3 || l.Scale != (Scale{1, 3}) {
		t.Errorf("bpClass %+v, want level 3 of 1-3", l)
	}
	if l := AnalyzePPG(PPG{}, Inputs{Person: old, BPClassScale: 2}).Variables[BPClass].Value.(Level); l.Level != 2 || l.Scale != (Scale{1, 2}) {
		t.Errorf("bpClass scale 2 %+v, want level 2 of 1-2", l)
	}
}

func TestCalibratedBP(t *testing.T) {
	s := testsignal.Make(testsignal.Config{Seed: 9, HR: 80, Noise: 0.02})
	cal := &Calibration{SystoleMmHg: 125, DiastoleMmHg: 82, Features: Features{HeartRateBpm: 70}}
	in := Inputs{Person: Person{HasExternalID: true, AgeYears: 50, Sex: Female, WeightKg: 70, HeightCm: 165}, Calibration: cal}
	r := AnalyzePPG(ppg(s), in)
	bp, isP := r.Variables[BP].Value.(Pressure)
	if !isP {
		t.Fatalf("bp %+v", r.Variables[BP])
	}
	// 10 bpm faster than at calibration: +5 systolic, +3 diastolic.
	if bp.Systole != 130 || bp.Diastole != 85 {
		t.Errorf("bp %+v, want 130/85", bp)
	}
	if l := r.Variables[BPClass].Value.(Level); l.Level != 3 {
		t.Errorf("bpClass from a calibrated 130/85: %+v, want 3", l)
	}
	if r.Features == nil || r.Features.HeartRateBpm < 79 || r.Features.HeartRateBpm > 81 {
		t.Errorf("features %+v", r.Features)
	}
}

// TestBPClassEdges: bpClass at the edge of each of its rules. With a
// pressure, 120 systolic is the lowest level 2, and 130 systolic or 80
// diastolic the lowest level 3. Without one, the points (age 40, 50, 60;
// BMI 25, 30; male; a heart rate of 80) add to 3 for level 2 and 5 for 3.
func TestBPClassEdges(t *testing.T) {
	level := func(p Person, bp *Pressure, hr float64) int {
		t.Helper()
		v := bpClassVariable(&Inputs{Person: p}, bp, hr)
		l, ok := v.Value.(Level)
		if !ok {
			t.Fatalf("bpClass %+v", v)
		}
		return l.Level
	}
	lean := Person{AgeYears: 30, Sex: Female, WeightKg: 60, HeightCm: 200} // BMI 15
	for _, tc := range []struct {
		name string
		bp   Pressure
		want int
	}{
		{"119/79", Pressure{119, 79}, 1},
		{"120/79", Pressure{120, 79}, 2},
		{"129/79", Pressure{129, 79}, 2},
		{"130/70", Pressure{130, 70}, 3},
		{"119/80", Pressure{119, 80}, 3},
	} {
		if got := level(lean, &tc.bp, 0); got != tc.want {
			t.Errorf("pressure %s: level %d, want %d", tc.name, got, tc.want)
		}
	}
	with := func(f func(*Person)) Person { p := lean; f(&p); return p }
	for _, tc := range []struct {
		name string
		p    Person
		hr   float64
		want int
	}{
		{"no point", lean, 0, 1},
		// Age alone: 60 is 3 points, 59 is 2.
		{"age 59", with(func(p *Person) { p.AgeYears = 59 }), 0, 1},
		{"age 60", with(func(p *Person) { p.AgeYears = 60 }), 0, 2},
		// 50 is 2 points and 40 one: with a man's point, 3 and 2.
		{"a man of 50", with(func(p *Person) { p.AgeYears, p.Sex = 50, Male }), 0, 2},
		{"a man of 49", with(func(p *Person) { p.AgeYears, p.Sex = 49, Male }), 0, 1},
		{"a man of 40 with BMI 25", with(func(p *Person) { p.AgeYears, p.Sex, p.WeightKg = 40, Male, 100 }), 0, 2},
		{"a man of 39 with BMI 25", with(func(p *Person) { p.AgeYears, p.Sex, p.WeightKg = 39, Male, 100 }), 0, 1},
		{"a man with BMI 24.75", with(func(p *Person) { p.AgeYears, p.Sex, p.WeightKg = 40, Male, 99 }), 0, 1},
		// BMI 30 is 2 points: with a man's, 3.
		{"a man with BMI 30", with(func(p *Person) { p.Sex, p.WeightKg = Male, 120 }), 0, 2},
		{"a man with BMI 29.75", with(func(p *Person) { p.Sex, p.WeightKg = Male, 119 }), 0, 1},
		// The heart rate's point: age 50 (2) and a rate of 80 make 3.
		{"age 50, 80 bpm", with(func(p *Person) { p.AgeYears = 50 }), 80, 2},
		{"age 50, 79 bpm", with(func(p *Person) { p.AgeYears = 50 }), 79, 1},
		// Level 3 from 5 points: 60 (3), male (1) and 80 bpm (1).
		{"a man of 60 at 80 bpm", with(func(p *Person) { p.AgeYears, p.Sex = 60, Male }), 80, 3},
		{"a man of 60 at 79 bpm", with(func(p *Person) { p.AgeYears, p.Sex = 60, Male }), 79, 2},
	} {
		if got := level(tc.p, nil, tc.hr); got != tc.want {
			t.Errorf("%s: level %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestHealthScoreInputs: the Framingham model holds for ages 30 to 74, so
// a younger or older person scores as 30 or 74; and a calibrated systolic
// pressure replaces the reference 120 mmHg.
func TestHealthScoreInputs(t *testing.T) {
	score := func(age int, bp *Pressure) float64 {
		t.Helper()
		p := Person{AgeYears: age, Sex: Male, WeightKg: 81, HeightCm: 180, Smoking: Smoker}
		v := healthScoreVariable(p, bp)
		x, ok := v.Value.(float64)
		if !ok {
			t.Fatalf("healthScore at %d: %+v", age, v)
		}
		return x
	}
	if young, at30 := score(18, nil), score(30, nil); young != at30 {
		t.Errorf("healthScore at 18: %v, want that at 30, %v", young, at30)
	}
	if old, at74 := score(90, nil), score(74, nil); old != at74 {
		t.Errorf("healthScore at 90: %v, want that at 74, %v", old, at74)
	}
	if at74, at60 := score(74, nil), score(60, nil); at74 >= at60 {
		t.Errorf("healthScore at 74 (%v) is not below that at 60 (%v)", at74, at60)
	}
	reference := score(50, nil)
	if same := score(50, &Pressure{120, 80}); same != reference {
		t.Errorf("healthScore with 120 mmHg: %v, want %v as without a pressure", same, reference)
	}
	if high := score(50, &Pressure{160, 95}); high >= reference {
		t.Errorf("healthScore with 160 mmHg: %v, not below %v", high, reference)
	}
}

// TestBPShift: the heart rate moves the calibrated pressure by 0.5 and 0.3
// mmHg per bpm, by at most 15 mmHg either way; a calibration without a
// pulse keeps the cuff's reading.
func TestBPShift(t *testing.T) {
	pa := pulseAnalysis{seconds: 30}
	for _, tc := range []struct {
		name   string
		calHR  float64
		hr     float64
		sy, di float64
	}{
		{"10 bpm faster", 70, 80, 130, 85},
		{"40 bpm faster: capped", 70, 110, 140, 94},
		{"100 bpm faster: capped both", 70, 170, 140, 97},
		{"40 bpm slower: capped", 70, 30, 110, 70},
		{"calibrated without a pulse", 0, 90, 125, 82},
	} {
		in := Inputs{Person: Person{HasExternalID: true},
			Calibration: &Calibration{SystoleMmHg: 125, DiastoleMmHg: 82, Features: Features{HeartRateBpm: tc.calHR}}}
		v, p := bpVariable(&in, &pa, tc.hr)
		if p == nil || p.Systole != tc.sy || p.Diastole != tc.di {
			t.Errorf("%s: bp %+v, want %v/%v", tc.name, v, tc.sy, tc.di)
		}
	}
}

// series returns n intervals alternating a-d and a+d seconds (RMSSD 2d) of
// which the listed ones are not NN.
func series(n int, a, d float64, bad ...int) []beats.Interval {
	iv := make([]beats.Interval, n)
	for i := range iv {
		iv[i] = beats.Interval{S: a + d*float64(2*(i%2)-1), NN: true}
	}
	for _, b := range bad {
		iv[b].NN = false
	}
	return iv
}

// timed is a 30 s pulse analysis of the intervals iv, with a beat for each
// after an edge beat: all fit the mean beat well, but the first misfits of
// them fit it just below MinBeatFit.
func timed(iv []beats.Interval, misfits int) pulseAnalysis {
	pa := pulseAnalysis{seconds: 30, iv: iv, nn: beats.Stats(iv)}
	pa.beats = make([]beats.Beat, len(iv)+1)
	for i := range pa.beats {
		pa.beats[i].Fit = 0.95
		if i > 0 && i <= misfits {
			pa.beats[i].Fit = MinBeatFit - 0.01
		}
	}
	pa.beats[0] = beats.Beat{Edge: true}
	return pa
}

// TestHRVGate checks each BAD_RMSSD rule at its edge and one step past it,
// on interval series built to measure. physicalAge needs the same clean
// beats (a mean of beats unlike each other has no shape of the person's),
// not the variability's limits; beats that pass go on to the mean beat,
// which these analyses without a wave cannot form (PROCESSOR_FAIL).
func TestHRVGate(t *testing.T) {
	for _, tc := range []struct {
		name string
		iv   []beats.Interval
		// misfits is how many beats fit the mean beat below MinBeatFit.
		misfits int
		// noiseS2 is beats.SplitNoise (s²); negative means not known.
		noiseS2 float64
		want    Code // hrv and strs
		age     Code // physicalAge
	}{
		{"10 NN pairs", series(11, 0.8, 0.02), 0, -1, "", ProcessorFail},
		{"9 NN pairs", series(10, 0.8, 0.02), 0, -1, BadRMSSD, BadRMSSD},
		{"60% NN", series(30, 0.8, 0.02, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29), 0, -1, "", ProcessorFail},
		{"57% NN", series(30, 0.8, 0.02, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29), 0, -1, BadRMSSD, BadRMSSD},
		{"RMSSD 248 ms", series(30, 0.9, 0.124), 0, -1, "", ProcessorFail},
		{"RMSSD 252 ms", series(30, 0.9, 0.126), 0, -1, BadRMSSD, ProcessorFail},
		// Under 1 ms the heart beats as evenly as a clock: out of range.
		{"RMSSD 1.2 ms", series(30, 0.8, 0.0006), 0, -1, "", ProcessorFail},
		{"RMSSD 0.8 ms", series(30, 0.8, 0.0004), 0, -1, OutOfRange, ProcessorFail},
		// 31 beats, the first at the edge: 3 misfits of 30 is 90%.
		{"90% of the beats fit", series(30, 0.8, 0.02), 3, -1, "", ProcessorFail},
		{"87% of the beats fit", series(30, 0.8, 0.02), 4, -1, BadRMSSD, BadRMSSD},
		// RMSSD 40 ms measured; noise of 0.0007 s² leaves 30 ms.
		{"noise below the variability", series(30, 0.8, 0.02), 0, 0.0007, "", ProcessorFail},
		// 1600 ms² measured: noise may explain 1200 of it (the edge
		// itself is a float comparison, so a hair either side).
		{"noise three quarters of the variability", series(30, 0.8, 0.02), 0, 0.0011999, "", ProcessorFail},
		{"noise over three quarters of the variability", series(30, 0.8, 0.02), 0, 0.0012001, BadRMSSD, ProcessorFail},
		// 260 ms measured is over the limit, but the 249.8 ms left after
		// the noise is not.
		{"RMSSD 249.8 ms after the noise", series(30, 0.9, 0.13), 0, 0.0052, "", ProcessorFail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pa := timed(tc.iv, tc.misfits)
			pa.timingNoise, pa.noiseKnown = tc.noiseS2, tc.noiseS2 >= 0
			if age := physicalAgeVariable(&pa); age.Error != tc.age {
				t.Errorf("physicalAge %+v, want %q", age, tc.age)
			}
			hrv, strs := hrvVariables(&pa)
			if hrv.Error != tc.want || (tc.want != "" && strs.Error != tc.want) {
				t.Errorf("hrv %+v strs %+v (stats %+v), want %q", hrv, strs, pa.nn, tc.want)
			}
			if tc.want == "" && tc.noiseS2 > 0 {
				want := math.Sqrt(pa.nn.RMSSDs*pa.nn.RMSSDs-tc.noiseS2) * 1000
				if got := hrv.Value.(Mean).Mean; math.Abs(got-want) > 0.05 {
					t.Errorf("hrv %v ms, want %.1f ms", got, want)
				}
			}
		})
	}
}

// TestStressLevels: strs is 1 to 5 by the stress index's bands, each band's
// lower edge in the higher level.
func TestStressLevels(t *testing.T) {
	// stressed returns 31 intervals of stress index si (35 to 1100): 29 at
	// the centre of one 50 ms bin (Mo 825 ms, AMo 29/31) and one either
	// side, as far apart as si needs.
	stressed := func(si float64) []beats.Interval {
		const n, mo = 31, 0.825
		r := 100 * float64(n-2) / n / (2 * mo * si)
		iv := series(n, mo, 0)
		iv[0].S, iv[n-1].S = mo-r/2, mo+r/2
		return iv
	}
	for _, tc := range []struct {
		si    float64 // 0: the intervals' own
		iv    []beats.Interval
		level int
	}{
		{40, stressed(40), 1},
		{49.99, stressed(49.99), 1},
		{50, stressed(50), 2},
		// 50 comes out exact; the other edges cannot in floating point: a
		// hair either side.
		{149.99, stressed(149.99), 2},
		{150.01, stressed(150.01), 3},
		{499.99, stressed(499.99), 3},
		{500.01, stressed(500.01), 4},
		{899.99, stressed(899.99), 4},
		{900.01, stressed(900.01), 5},
		{1100, stressed(1100), 5},
		// All in one bin, 2 ms apart: about 30,000.
		{0, series(31, 0.825, 0.001), 5},
	} {
		name := fmt.Sprint(tc.si)
		if tc.si == 0 {
			name = "one bin"
		}
		t.Run(name, func(t *testing.T) {
			si, _ := beats.StressIndex(tc.iv)
			if tc.si != 0 && math.Abs(si-tc.si) > 1e-9*tc.si {
				t.Fatalf("the intervals' stress index is %v, not %v", si, tc.si)
			}
			pa := timed(tc.iv, 0)
			hrv, strs := hrvVariables(&pa)
			if l, ok := strs.Value.(Level); hrv.Error != "" || !ok || l.Level != tc.level || l.Scale != (Scale{1, 5}) {
				t.Errorf("stress index %v: hrv %+v strs %+v, want level %d of 1-5", si, hrv, strs, tc.level)
			}
		})
	}
}

// TestAdvice: every capture code and a faint pulse come with advice; a
// capture still being measured and codes about the request have none.
func TestAdvice(t *testing.T) {
	for _, c := range []Code{ConformityFacePresence, ConformityFaceSize, ConformityPoorLight, ConformityMuchVariations,
		ConformityOndulations, ConformityLowFPS, ConformityMissingSignal} {
		if Advice(c) == "" {
			t.Errorf("%s: no advice", c)
		}
	}
	for _, c := range []Code{ConformityInitialisation, MissingUserData, OutOfRange, ""} {
		if a := Advice(c); a != "" {
			t.Errorf("%s: advice %q, want none", c, a)
		}
	}
}

// TestNoiseIsScoredLow: a capture without a readable pulse has its
// qualityScore, below what an answer needs, not an error: the score
// reports on the signal, and says how far from an answer it was.
func TestNoiseIsScoredLow(t *testing.T) {
	s := noise(900)
	for route, r := range map[string]Result{"contact": AnalyzePPG(ppg(s), Inputs{}), "camera": AnalyzeTrace(trace(s), Inputs{})} {
		q := r.Signal.QualityScore
		score, _ := q.Value.(float64)
		if code(r, HR) != ConformityMissingSignal || q.Error != "" || q.Value == nil || score >= 0.84 {
			t.Errorf("%s: hr %q, qualityScore %v %q", route, code(r, HR), q.Value, q.Error)
		}
	}
}

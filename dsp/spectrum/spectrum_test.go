package spectrum

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestPeakSubBin(t *testing.T) {
	for _, tc := range []struct {
		name       string
		hz, rate   float64
		seconds    float64
		noise      float64
		toleranceH float64
	}{
		{"72 bpm at 30 Hz, 10 s", 1.2, 30, 10, 0, 0.002},
		{"43 bpm at 30 Hz, 20 s", 43.0 / 60, 30, 20, 0, 0.002},
		{"155 bpm at 15 Hz, 10 s, noisy", 155.0 / 60, 15, 10, 0.5, 0.01},
		{"81.3 bpm at 100 Hz, 8 s", 81.3 / 60, 100, 8, 0.2, 0.005},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(5, 6))
			n := int(tc.seconds * tc.rate)
			x := make([]float64, n)
			for i := range x {
				x[i] = math.Sin(2*math.Pi*tc.hz*float64(i)/tc.rate+0.7) + tc.noise*rng.NormFloat64()
			}
			var a Analyzer
			var s Spectrum
			a.Periodogram(&s, x, tc.rate, FFTLen(n, tc.rate, 0.01))
			p, ok := s.Peak(0.6, 4)
			if !ok {
				t.Fatal("no peak")
			}
			if math.Abs(p.Hz-tc.hz) > tc.toleranceH {
				t.Errorf("peak at %.4f Hz, want %.4f", p.Hz, tc.hz)
			}
			if snr := s.SNR(p.Hz); tc.noise == 0 && snr < 20 {
				t.Errorf("clean sine SNR %.1f dB", snr)
			}
		})
	}
}

func TestPeaksOrderAndEdges(t *testing.T) {
	// Two tones and a slope rising out of the band: the slope is no peak.
	const rate, n = 30.0, 600
	x := make([]float64, n)
	for i := range x {
		s := float64(i) / rate
		x[i] = math.Sin(2*math.Pi*1.0*s) + 2*math.Sin(2*math.Pi*2.0*s) + 5*math.Sin(2*math.Pi*0.3*s)
	}
	var a Analyzer
	var s Spectrum
	a.Periodogram(&s, x, rate, FFTLen(n, rate, 0.01))
	ps := s.Peaks(nil, 0.6, 4, 5)
	if len(ps) < 2 || math.Abs(ps[0].Hz-2) > 0.01 || math.Abs(ps[1].Hz-1) > 0.01 {
		t.Fatalf("peaks %+v, want 2 Hz then 1 Hz", ps)
	}
	if got := s.Peaks(nil, 0.6, 4, 1); len(got) != 1 {
		t.Errorf("limit 1 gave %d peaks", len(got))
	}
	// Between the tones only side-lobe ripples remain, far below the tones.
	if p, ok := s.Peak(0.4, 0.8); ok && p.Power > 0.01*ps[0].Power {
		t.Errorf("strong peak %+v in a range with no tone", p)
	}
}

func TestSNRSeparatesPulseFromNoise(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const rate, n = 30.0, 600
	clean, noisy := make([]float64, n), make([]float64, n)
	for i := range clean {
		v := math.Sin(2 * math.Pi * 1.2 * float64(i) / rate)
		clean[i] = v + 0.1*rng.NormFloat64()
		noisy[i] = 0.2*v + rng.NormFloat64()
	}
	var a Analyzer
	var s Spectrum
	a.Periodogram(&s, clean, rate, 4096)
	hi := s.SNR(1.2)
	a.Periodogram(&s, noisy, rate, 4096)
	lo := s.SNR(1.2)
	if !(hi > 5 && lo < 0 && hi > lo+10) {
		t.Errorf("SNR clean %.1f dB, noisy %.1f dB", hi, lo)
	}
}

func BenchmarkPeriodogram10s(b *testing.B) {
	x := make([]float64, 300)
	for i := range x {
		x[i] = math.Sin(float64(i))
	}
	var a Analyzer
	var s Spectrum
	n := FFTLen(len(x), 30, 0.01)
	b.ReportAllocs()
	for b.Loop() {
		a.Periodogram(&s, x, 30, n)
	}
}

// TestWhitenLevelsASlope: a tone on a steep 1/f² background is the
// strongest raw bin only near the slope's foot; whitened, the tone stands
// out wherever it is.
func TestWhitenLevelsASlope(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	const rate, n = 30.0, 600
	x := make([]float64, n)
	walk := 0.0
	for i := range x {
		walk += 4 * rng.NormFloat64()
		x[i] = walk + 3*math.Sin(2*math.Pi*2.5*float64(i)/rate)
	}
	var a Analyzer
	var s, w Spectrum
	a.Periodogram(&s, x, rate, FFTLen(n, rate, 0.01))
	if raw, _ := s.Peak(0.6, 4); math.Abs(raw.Hz-2.5) < 0.05 {
		t.Fatalf("the random walk does not dominate the raw spectrum (peak %+v): the test proves nothing", raw)
	}
	Whiten(&w, &s, 0.6, 4, 0.4)
	p, ok := w.Peak(0.6, 4)
	if !ok || math.Abs(p.Hz-2.5) > 0.02 || p.Power < 5 {
		t.Errorf("whitened peak %+v, want the 2.5 Hz tone well above its floor", p)
	}
	if w.Power[0] != 0 || w.Power[len(w.Power)-1] != 0 {
		t.Error("bins outside the range not zero")
	}
}

// TestNth checks the selection against a sort on random slices, with ties,
// of every length up to 60, for every index.
func TestNth(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	for n := 1; n <= 60; n++ {
		for _, levels := range []int{3, 1000} {
			x := make([]float64, n)
			for i := range x {
				x[i] = float64(rng.IntN(levels))
			}
			sorted := slices.Clone(x)
			slices.Sort(sorted)
			for k := range n {
				if got := nth(slices.Clone(x), k); got != sorted[k] {
					t.Fatalf("n %d, %d levels, k %d: %g, want %g", n, levels, k, got, sorted[k])
				}
			}
		}
	}
}

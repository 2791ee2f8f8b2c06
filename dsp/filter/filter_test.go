package filter

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestButterworthCutoff(t *testing.T) {
	for _, tc := range []struct {
		name          string
		f             *Filter
		rate, cut     float64
		pass, stop    float64 // a frequency in the pass band and one deep in the stop band
		maxStopGainDB float64
	}{
		{"lowpass order 4", Lowpass(4, 3.3, 30), 30, 3.3, 1, 10, -35},
		{"highpass order 4", Highpass(4, 0.7, 30), 30, 0.7, 3, 0.15, -45},
		{"lowpass order 2 at 100 Hz", Lowpass(2, 8, 100), 100, 8, 1, 40, -20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if g := tc.f.Response(tc.cut, tc.rate); math.Abs(g-math.Sqrt2/2) > 1e-9 {
				t.Errorf("gain at cutoff %g, want 1/sqrt(2)", g)
			}
			if g := tc.f.Response(tc.pass, tc.rate); math.Abs(g-1) > 0.01 {
				t.Errorf("pass-band gain %g, want 1", g)
			}
			if g := 20 * math.Log10(tc.f.Response(tc.stop, tc.rate)); g > tc.maxStopGainDB {
				t.Errorf("stop-band gain %.1f dB, want <= %g dB", g, tc.maxStopGainDB)
			}
		})
	}
}

func sine(n int, hz, rate, phase float64) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = math.Sin(2*math.Pi*hz*float64(i)/rate + phase)
	}
	return x
}

func TestFiltFiltKeepsPhaseAndOffsetFree(t *testing.T) {
	const rate = 30
	f := Bandpass(4, 0.7, 3.3, rate)
	x := sine(900, 1.2, rate, 0.3)
	for i := range x {
		x[i] += 100 + 0.01*float64(i) // a large offset and a drift
	}
	y := f.FiltFilt(nil, x)
	want := sine(900, 1.2, rate, 0.3)
	var worst float64
	for i := 60; i < 840; i++ { // away from the ends
		worst = max(worst, math.Abs(y[i]-want[i]))
	}
	// 1.2 Hz sits where the 0.7 Hz high-pass, applied twice, still takes 1.3%.
	if worst > 0.02 {
		t.Errorf("pass-band sine changed by up to %g after zero-phase band-pass", worst)
	}
	// Even the ends stay close: the reflection and steady-state start remove the
	// step a 100-unit offset would otherwise cause.
	if math.Abs(y[0]-want[0]) > 0.35 || math.Abs(y[899]-want[899]) > 0.35 {
		t.Errorf("edge error %g, %g", y[0]-want[0], y[899]-want[899])
	}
}

func TestFiltFiltShortInputs(t *testing.T) {
	f := Bandpass(4, 0.7, 3.3, 30)
	for n := 0; n < 5; n++ {
		y := f.FiltFilt(nil, make([]float64, n))
		if len(y) != n {
			t.Fatalf("len %d, want %d", len(y), n)
		}
	}
}

func TestApplyMatchesDifferenceEquation(t *testing.T) {
	f := Lowpass(2, 2, 30)
	x := make([]float64, 50)
	x[0] = 0 // zero start: the steady-state start is the zero state
	x[1] = 1 // an impulse
	y := f.Apply(nil, x)
	s := f.sections[0]
	var x1, x2, y1, y2 float64
	for i, v := range x {
		want := s.B0*v + s.B1*x1 + s.B2*x2 - s.A1*y1 - s.A2*y2
		if math.Abs(y[i]-want) > 1e-12 {
			t.Fatalf("sample %d: %g, want %g", i, y[i], want)
		}
		x2, x1, y2, y1 = x1, v, y1, want
	}
}

// TestDetrendMatchesDenseSolve checks the banded solver against a dense solve
// of (I + λ² D₂ᵀD₂) z = x.
func TestDetrendMatchesDenseSolve(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{3, 4, 5, 17, 64} {
		x := make([]float64, n)
		for i := range x {
			x[i] = rng.NormFloat64() + 0.1*float64(i*i)
		}
		const lambda = 7.5
		d2 := mat.NewDense(n-2, n, nil)
		for r := 0; r < n-2; r++ {
			d2.Set(r, r, 1)
			d2.Set(r, r+1, -2)
			d2.Set(r, r+2, 1)
		}
		var a mat.Dense
		a.Mul(d2.T(), d2)
		a.Scale(lambda*lambda, &a)
		for i := 0; i < n; i++ {
			a.Set(i, i, a.At(i, i)+1)
		}
		var z mat.VecDense
		if err := z.SolveVec(&a, mat.NewVecDense(n, append([]float64(nil), x...))); err != nil {
			t.Fatal(err)
		}
		got := Detrend(nil, x, lambda)
		for i := range got {
			if want := x[i] - z.AtVec(i); math.Abs(got[i]-want) > 1e-6*(1+math.Abs(want)) {
				t.Fatalf("n=%d sample %d: %g, want %g", n, i, got[i], want)
			}
		}
	}
}

func TestDetrendRemovesTrendKeepsPulse(t *testing.T) {
	const rate = 30
	x := sine(600, 1.2, rate, 0)
	for i := range x {
		s := float64(i) / rate
		x[i] += 5 + 0.3*s - 0.01*s*s
	}
	y := Detrend(nil, x, DetrendLambda(0.3, rate))
	want := sine(600, 1.2, rate, 0)
	var worst float64
	for i := rate; i < len(y)-rate; i++ { // the trend bends towards the data in the last second at each end
		worst = max(worst, math.Abs(y[i]-want[i]))
	}
	if worst > 0.03 {
		t.Errorf("detrended signal differs from the pulse by up to %g", worst)
	}
}

func TestMovingAverage(t *testing.T) {
	x := []float64{1, 2, 3, 4, 5, 6, 7}
	got := MovingAverage(nil, x, 3)
	want := []float64{1.5, 2, 3, 4, 5, 6, 6.5}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

func TestDesignPanicsOnBadArguments(t *testing.T) {
	for _, tc := range []struct {
		name string
		fn   func()
	}{
		{"odd order", func() { Lowpass(3, 1, 30) }},
		{"cutoff above Nyquist", func() { Lowpass(2, 20, 30) }},
		{"empty band", func() { Bandpass(2, 3, 1, 30) }},
		{"wrong dst length", func() { Lowpass(2, 1, 30).FiltFilt(make([]float64, 2), make([]float64, 3)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			tc.fn()
		})
	}
}

func BenchmarkFiltFilt30s(b *testing.B) {
	f := Bandpass(4, 0.7, 3.3, 30)
	x := sine(900, 1.2, 30, 0)
	dst := make([]float64, len(x))
	b.ReportAllocs()
	for b.Loop() {
		f.FiltFilt(dst, x)
	}
}

package spectrum

import (
	"math"
	"math/rand/v2"
	"testing"
)

// evidence returns per-window log-likelihoods on g: noise everywhere
// (exponential, seeded) plus bump at hz[w] (none where hz[w] is 0).
func evidence(g Grid, hz []float64, bump float64, seed uint64) [][]float64 {
	rng := rand.New(rand.NewPCG(seed, 1))
	ll := make([][]float64, len(hz))
	for w, f := range hz {
		ll[w] = make([]float64, g.N)
		for k := range ll[w] {
			ll[w][k] = 0.3 * rng.ExpFloat64()
			if f > 0 && math.Abs(g.Hz(k)-f) < 0.02 {
				ll[w][k] += bump
			}
		}
	}
	return ll
}

func TestChainFollowsADriftingRate(t *testing.T) {
	g := NewGrid(40.0/60, 200.0/60, 0.5/60)
	var hz []float64
	for w := range 60 {
		hz = append(hz, 1.2+0.5*float64(w)/59) // 72 to 102 bpm in a minute
	}
	c := Chain{Grid: g, SigmaHz: 0.05, Escape: 1e-3}
	post, path := c.Posterior(evidence(g, hz, 3, 1))
	for w, k := range path {
		if d := math.Abs(g.Hz(k) - hz[w]); d > 0.03 {
			t.Fatalf("window %d: tracked %.3f Hz, truth %.3f", w, g.Hz(k), hz[w])
		}
		var mass float64
		for _, p := range post[w] {
			mass += p
		}
		if math.Abs(mass-1) > 1e-9 || post[w][path[w]] < 0.05 {
			t.Fatalf("window %d: posterior sums to %g, %.3f at the path", w, mass, post[w][path[w]])
		}
	}
}

func TestChainIgnoresOneWindowsOutlier(t *testing.T) {
	g := NewGrid(40.0/60, 200.0/60, 0.5/60)
	ll := evidence(g, []float64{1.2, 1.2, 1.2, 1.2, 1.2, 0, 1.2, 1.2, 1.2, 1.2}, 2, 2)
	// Window 5 holds only a stronger peak at the harmonic.
	for k := range ll[5] {
		if math.Abs(g.Hz(k)-2.4) < 0.02 {
			ll[5][k] += 4
		}
	}
	_, path := Chain{Grid: g, SigmaHz: 0.05, Escape: 1e-3}.Posterior(ll)
	for w, k := range path {
		if math.Abs(g.Hz(k)-1.2) > 0.03 {
			t.Errorf("window %d followed the outlier to %.2f Hz", w, g.Hz(k))
		}
	}
}

func TestChainEscapesAWrongStart(t *testing.T) {
	// The first ten windows favour 1.0 Hz, the next forty 2.0 Hz: a jump of
	// 60 bpm no random walk makes, which the escape allows.
	g := NewGrid(40.0/60, 200.0/60, 0.5/60)
	var hz []float64
	for w := range 50 {
		hz = append(hz, map[bool]float64{true: 1.0, false: 2.0}[w < 10])
	}
	_, path := Chain{Grid: g, SigmaHz: 0.05, Escape: 1e-3}.Posterior(evidence(g, hz, 3, 3))
	if f := g.Hz(path[45]); math.Abs(f-2.0) > 0.03 {
		t.Errorf("window 45 tracked %.2f Hz, want 2.0", f)
	}
}

func TestChainNoEvidenceSpreadsThePosterior(t *testing.T) {
	g := NewGrid(40.0/60, 200.0/60, 0.5/60)
	ll := make([][]float64, 20)
	for w := range ll {
		ll[w] = make([]float64, g.N)
	}
	post, _ := Chain{Grid: g, SigmaHz: 0.05, Escape: 1e-3}.Posterior(ll)
	for _, p := range post[10] {
		if math.Abs(p-1/float64(g.N)) > 1e-9 {
			t.Fatalf("flat evidence gave a posterior of %g somewhere, want %g", p, 1/float64(g.N))
		}
	}
	if post, path := (Chain{Grid: g}).Posterior(nil); post != nil || path != nil {
		t.Error("no windows gave a posterior")
	}
}

func TestGrid(t *testing.T) {
	g := NewGrid(0.5, 3.5, 0.01)
	if g.N != 301 || g.Hz(0) != 0.5 || math.Abs(g.Hz(g.N-1)-3.5) > 1e-12 {
		t.Errorf("grid %+v", g)
	}
}

func BenchmarkChainPosterior(b *testing.B) {
	g := NewGrid(40.0/60, 200.0/60, 0.5/60)
	hz := make([]float64, 21) // a 30 s capture's windows
	for w := range hz {
		hz[w] = 1.2
	}
	ll := evidence(g, hz, 2, 1)
	c := Chain{Grid: g, SigmaHz: 0.05, Escape: 1e-3}
	b.ReportAllocs()
	for b.Loop() {
		c.Posterior(ll)
	}
}

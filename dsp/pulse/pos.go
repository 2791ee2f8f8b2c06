package pulse

import (
	"math"

	"github.com/pulsewire/pulsewire/dsp/internal/stats"
)

// WindowSeconds is the length of the POS and CHROM analysis windows: 1.6 s,
// the value both papers use, long enough to span one beat at 40 bpm (1.5 s)
// and short enough that skin tone and light change little within it.
const WindowSeconds = 1.6

// POS writes the plane-orthogonal-to-skin pulse of the traces r, g, b
// (uniform, rateHz) into dst (Wang, den Brinker, Stuijk & de Haan,
// "Algorithmic principles of remote PPG", IEEE TBME 64(7), 2017, Algorithm 1):
// in every window of WindowSeconds, starting at each sample,
//
//	Cn = C / mean(C)            per channel, temporal normalisation
//	S1 = Gn - Bn,  S2 = Gn + Bn - 2 Rn
//	h  = S1 + (σ(S1) / σ(S2)) S2
//
// and h minus its mean is overlap-added into dst. The projection cancels
// intensity changes (equal in all channels) and the alpha tuning cancels the
// remaining specular distortion. A nil dst is allocated.
func POS(dst, r, g, b []float64, rateHz float64) []float64 {
	n := len(g)
	dst = prepare(dst, n)
	clear(dst)
	l := windowLen(rateHz, n)
	s1, s2 := make([]float64, l), make([]float64, l)
	for m := 0; m+l <= n; m++ {
		mr, mg, mb := stats.Mean(r[m:m+l]), stats.Mean(g[m:m+l]), stats.Mean(b[m:m+l])
		if mr <= 0 || mg <= 0 || mb <= 0 {
			continue // a black window carries no colour; leave it at zero
		}
		for i := 0; i < l; i++ {
			rn, gn, bn := r[m+i]/mr, g[m+i]/mg, b[m+i]/mb
			s1[i] = gn - bn
			s2[i] = gn + bn - 2*rn
		}
		alpha := ratio(std(s1), std(s2))
		var hm float64
		for i := range s1 {
			s1[i] += alpha * s2[i]
			hm += s1[i]
		}
		hm /= float64(l)
		for i, h := range s1 {
			dst[m+i] += h - hm
		}
	}
	return dst
}

// windowLen is the window in samples, at least 2 and at most n.
func windowLen(rateHz float64, n int) int {
	return max(2, min(n, int(math.Round(WindowSeconds*rateHz))))
}

func std(x []float64) float64 {
	m := stats.Mean(x)
	var s float64
	for _, v := range x {
		s += (v - m) * (v - m)
	}
	return math.Sqrt(s / float64(max(len(x), 1)))
}

// ratio is a / b, or 0 when b is 0 (a flat channel contributes nothing).
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func prepare(dst []float64, n int) []float64 {
	if dst == nil {
		return make([]float64, n)
	}
	if len(dst) != n {
		panic("pulse: destination length mismatch")
	}
	return dst
}

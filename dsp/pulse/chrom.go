package pulse

import (
	"math"

	"github.com/pulsewire/pulsewire/dsp/filter"
)

// CHROM writes the chrominance pulse of r, g, b (uniform, rateHz) into dst
// (de Haan & Jeanne, "Robust pulse rate from chrominance-based rPPG",
// IEEE TBME 60(10), 2013, section IV with the standardised skin tone):
//
//	Cn = C / mean(C)                  over a centred WindowSeconds window
//	Xs = 3 Rn - 2 Gn,  Ys = 1.5 Rn + Gn - 1.5 Bn
//	Xf, Yf = band-pass(Xs), band-pass(Ys)
//	S  = Xf - (σ(Xf) / σ(Yf)) Yf       per window
//
// and the windows, Hann-weighted with half overlap, are added into dst. The
// band-pass bp is applied zero-phase. A nil dst is allocated.
func CHROM(dst, r, g, b []float64, rateHz float64, bp *filter.Filter) []float64 {
	n := len(g)
	dst = prepare(dst, n)
	clear(dst)
	l := windowLen(rateHz, n)
	mr := filter.MovingAverage(nil, r, l)
	mg := filter.MovingAverage(nil, g, l)
	mb := filter.MovingAverage(nil, b, l)
	xs, ys := make([]float64, n), make([]float64, n)
	for i := range xs {
		if mr[i] <= 0 || mg[i] <= 0 || mb[i] <= 0 {
			continue
		}
		rn, gn, bn := r[i]/mr[i], g[i]/mg[i], b[i]/mb[i]
		xs[i] = 3*rn - 2*gn
		ys[i] = 1.5*rn + gn - 1.5*bn
	}
	bp.FiltFilt(xs, xs)
	bp.FiltFilt(ys, ys)
	hop := max(1, l/2)
	for m := 0; m < n; m += hop {
		end := min(n, m+l)
		alpha := ratio(std(xs[m:end]), std(ys[m:end]))
		for i := m; i < end; i++ {
			w := 0.5 * (1 - math.Cos(2*math.Pi*float64(i-m+1)/float64(l+1)))
			dst[i] += w * (xs[i] - alpha*ys[i])
		}
		if end == n {
			break
		}
	}
	return dst
}

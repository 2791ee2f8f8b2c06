package filter

import "math"

// DetrendLambda returns the smoothness-priors regularisation λ whose trend
// has half its amplitude at cutoffHz: the trend filter's response is
// H(ω) = 1 / (1 + λ² (2 - 2 cos ω)²), so H = 1/2 at λ = 1 / (2 - 2 cos ω_c),
// ω_c = 2π cutoffHz / rateHz. Frequencies well below the cutoff go to the
// trend, those above it stay in the detrended signal.
func DetrendLambda(cutoffHz, rateHz float64) float64 {
	return 1 / (2 - 2*math.Cos(2*math.Pi*cutoffHz/rateHz))
}

// Detrend removes the slow trend of x with the smoothness-priors method of
// Tarvainen, Ranta-aho & Karjalainen, "An advanced detrending method with
// application to HRV analysis", IEEE TBME 49(2), 2002: the trend z solves
// (I + λ² D₂ᵀD₂) z = x, D₂ the second-difference matrix, and dst = x - z.
// Unlike a high-pass filter it has no start-up transient at either end.
// The pentadiagonal system is solved by banded LDLᵀ in O(n); dst may be x.
func Detrend(dst, x []float64, lambda float64) []float64 {
	n := len(x)
	dst = prepare(dst, n)
	if n < 3 {
		var mean float64
		for _, v := range x {
			mean += v
		}
		mean /= float64(max(n, 1))
		for i, v := range x {
			dst[i] = v - mean
		}
		return dst
	}
	l2 := lambda * lambda
	// Bands of A = I + λ² D₂ᵀD₂: d the diagonal, e1 and e2 the first and
	// second super-diagonals, accumulated row by row of D₂ = [1 -2 1].
	d, e1, e2 := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range d {
		d[i] = 1
	}
	for r := 0; r+2 < n; r++ {
		d[r] += l2
		d[r+1] += 4 * l2
		d[r+2] += l2
		e1[r] -= 2 * l2
		e1[r+1] -= 2 * l2
		e2[r] += l2
	}
	// In-place LDLᵀ: d becomes D, e1 and e2 the sub-diagonals of L.
	for i := 0; i < n; i++ {
		if i >= 1 {
			d[i] -= e1[i-1] * e1[i-1] * d[i-1]
		}
		if i >= 2 {
			d[i] -= e2[i-2] * e2[i-2] * d[i-2]
		}
		if i+1 < n {
			b := e1[i]
			if i >= 1 {
				b -= e1[i-1] * d[i-1] * e2[i-1]
			}
			e1[i] = b / d[i]
		}
		if i+2 < n {
			e2[i] /= d[i]
		}
	}
	// Solve L D Lᵀ z = x; z is built in a scratch band that is no longer needed.
	z := make([]float64, n)
	for i := 0; i < n; i++ {
		v := x[i]
		if i >= 1 {
			v -= e1[i-1] * z[i-1]
		}
		if i >= 2 {
			v -= e2[i-2] * z[i-2]
		}
		z[i] = v
	}
	for i := range z {
		z[i] /= d[i]
	}
	for i := n - 1; i >= 0; i-- {
		if i+1 < n {
			z[i] -= e1[i] * z[i+1]
		}
		if i+2 < n {
			z[i] -= e2[i] * z[i+2]
		}
	}
	for i := range dst {
		dst[i] = x[i] - z[i]
	}
	return dst
}

// MovingAverage writes the centred moving average of x over width samples
// into dst (dst may not be x). Near the ends the window shrinks to the
// samples that exist, so the average never mixes in zeros.
func MovingAverage(dst, x []float64, width int) []float64 {
	n := len(x)
	dst = prepare(dst, n)
	half := max(width, 1) / 2
	var sum float64
	lo, hi := 0, 0 // the window is x[lo:hi]
	for i := 0; i < n; i++ {
		for hi < n && hi <= i+half {
			sum += x[hi]
			hi++
		}
		for lo < i-half {
			sum -= x[lo]
			lo++
		}
		dst[i] = sum / float64(hi-lo)
	}
	return dst
}

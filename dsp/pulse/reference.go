package pulse

import "math"

// RectifySeconds is the length of the windows Rectify fits in: long enough
// that four references fitted to 10 s of a 0.6-4 Hz wave (about 70 degrees
// of freedom) take only a few percent of the pulse with them by chance,
// short enough to follow a coupling that changes as the head turns or the
// light moves.
const RectifySeconds = 10.0

// Rectify removes from x what the references explain linearly: in Hann
// windows of RectifySeconds with half overlap, the least-squares fit of x on
// refs is subtracted and the residuals are added back together. x and every
// reference are uniform at rateHz, of equal length, and already filtered to
// the same band, so only co-varying changes within that band are removed.
//
// This is the background-illumination rectification of Li et al., "Remote
// heart rate measurement from face videos under realistic situations",
// CVPR 2014 (who adapt the fit sample by sample with normalised LMS), with
// the face's own position and size as further references: a change of room
// light shows in the background as well as on the skin, and a moving face
// changes its shading and what the regions of interest cover in step with
// its motion, while the pulse shows in neither reference. A reference that
// is flat in a window contributes nothing there. dst may be x; a nil dst is
// allocated.
func Rectify(dst, x []float64, refs [][]float64, rateHz float64) []float64 {
	n := len(x)
	dst = prepare(dst, n)
	k := len(refs)
	if k == 0 || n == 0 {
		copy(dst, x)
		return dst
	}
	for _, r := range refs {
		if len(r) != n {
			panic("pulse: reference length mismatch")
		}
	}
	l := min(n, max(2, int(math.Round(RectifySeconds*rateHz))))
	hop := max(1, l/2)
	out := make([]float64, n)
	wsum := make([]float64, n)
	a := make([]float64, k*k)
	b := make([]float64, k)
	c := make([]float64, k)
	for start := 0; ; start += hop {
		start = min(start, n-l)
		end := start + l
		for i := range k {
			for j := i; j < k; j++ {
				var s float64
				for t := start; t < end; t++ {
					s += refs[i][t] * refs[j][t]
				}
				a[i*k+j], a[j*k+i] = s, s
			}
			var s float64
			for t := start; t < end; t++ {
				s += refs[i][t] * x[t]
			}
			b[i] = s
		}
		solveRidge(c, a, b, k)
		for t := start; t < end; t++ {
			v := x[t]
			for i := range k {
				v -= c[i] * refs[i][t]
			}
			// Windows that reach the ends of x weigh fully there, so
			// the first and last samples are not lost to the taper.
			w := 1.0
			if !(start == 0 && t-start < l/2) && !(end == n && t-start >= l/2) {
				w = 0.5 * (1 - math.Cos(2*math.Pi*(float64(t-start)+0.5)/float64(l)))
			}
			out[t] += w * v
			wsum[t] += w
		}
		if end == n {
			break
		}
	}
	for t := range dst {
		dst[t] = 0
		if wsum[t] > 0 {
			dst[t] = out[t] / wsum[t]
		}
	}
	return dst
}

// solveRidge solves a c = b for the k x k symmetric matrix a (row major) in
// its equilibrated form, every reference scaled to unit energy, with a
// millionth added to the diagonal: a reference that is flat, or a copy of
// another, gets a bounded or zero weight instead of an infinite one, and
// references of any units weigh alike. a and b are overwritten.
func solveRidge(c, a, b []float64, k int) {
	for i := range k {
		d := math.Sqrt(a[i*k+i])
		if !(d > 0) {
			d = math.Inf(1) // a flat reference: weight 0
		}
		c[i] = d
	}
	for i := range k {
		for j := range k {
			a[i*k+j] /= c[i] * c[j]
		}
		a[i*k+i] += 1e-6
		b[i] /= c[i]
	}
	scale := append([]float64(nil), c...)
	for i := range k {
		p := a[i*k+i]
		for r := i + 1; r < k; r++ {
			f := a[r*k+i] / p
			for j := i; j < k; j++ {
				a[r*k+j] -= f * a[i*k+j]
			}
			b[r] -= f * b[i]
		}
	}
	for i := k - 1; i >= 0; i-- {
		s := b[i]
		for j := i + 1; j < k; j++ {
			s -= a[i*k+j] * c[j]
		}
		c[i] = s / a[i*k+i]
	}
	for i := range k {
		c[i] /= scale[i]
	}
}

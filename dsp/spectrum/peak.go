package spectrum

import (
	"math"
	"slices"
)

// Peak is a local maximum of a spectrum.
type Peak struct {
	Hz    float64 // sub-bin frequency
	Power float64 // power at the maximum bin
}

// Peaks appends to dst the local maxima of s within [loHz, hiHz], strongest
// first, at most limit of them. A maximum on the edge of the range counts
// only if the spectrum keeps falling outside it, so a slope rising from
// outside the band is not taken for a peak inside it.
func (s *Spectrum) Peaks(dst []Peak, loHz, hiHz float64, limit int) []Peak {
	start := len(dst)
	lo, hi := max(s.bin(loHz), 1), min(s.bin(hiHz), len(s.Power)-2)
	p := s.Power
	for k := lo; k <= hi; k++ {
		if p[k] > p[k-1] && p[k] >= p[k+1] {
			dst = append(dst, Peak{Hz: s.refine(k), Power: p[k]})
		}
	}
	found := dst[start:]
	slices.SortFunc(found, func(a, b Peak) int {
		switch {
		case a.Power > b.Power:
			return -1
		case a.Power < b.Power:
			return 1
		}
		return 0
	})
	if len(found) > limit {
		dst = dst[:start+limit]
	}
	return dst
}

// Peak returns the strongest local maximum in [loHz, hiHz]; ok is false
// when the range holds none.
func (s *Spectrum) Peak(loHz, hiHz float64) (p Peak, ok bool) {
	var buf [1]Peak
	found := s.Peaks(buf[:0], loHz, hiHz, 1)
	if len(found) == 0 {
		return Peak{}, false
	}
	return found[0], true
}

// refine returns the frequency of the maximum at bin k to a fraction of a
// bin by fitting a parabola to the logarithm of the three bins around it:
// exact for a Gaussian peak, close for the Hann window's main lobe
// (Gasior & Gonzalez, "Improving FFT frequency measurement resolution by
// parabolic and Gaussian interpolation", CERN AB-Note-2004-021).
func (s *Spectrum) refine(k int) float64 {
	a, b, c := s.Power[k-1], s.Power[k], s.Power[k+1]
	if a <= 0 || b <= 0 || c <= 0 {
		return float64(k) * s.BinHz
	}
	la, lb, lc := math.Log(a), math.Log(b), math.Log(c)
	den := la - 2*lb + lc
	if den >= 0 {
		return float64(k) * s.BinHz
	}
	d := 0.5 * (la - lc) / den
	return (float64(k) + max(-0.5, min(0.5, d))) * s.BinHz
}

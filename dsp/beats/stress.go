package beats

import "math"

// StressBinS is the histogram bin of Baevsky's stress index: 50 ms.
const StressBinS = 0.050

// StressIndex returns Baevsky's stress index of the NN intervals,
//
//	SI = AMo / (2 · Mo · MxDMn)
//
// with Mo the mode of the intervals (the centre of the fullest 50 ms bin, s),
// AMo the share of intervals in that bin (%) and MxDMn their range (s)
// (Baevsky & Chernikova, "Heart rate variability analysis: physiological
// foundations and main methods", Cardiometry 10, 2017). ok is false with
// fewer than two NN intervals or a range of zero.
func StressIndex(iv []Interval) (si float64, ok bool) {
	lo, hi := math.Inf(1), math.Inf(-1)
	counts := map[int]int{}
	n := 0
	for _, v := range iv {
		if !v.NN {
			continue
		}
		n++
		lo, hi = min(lo, v.S), max(hi, v.S)
		counts[int(math.Floor(v.S/StressBinS))]++
	}
	if n < 2 || hi <= lo {
		return 0, false
	}
	mode, top := 0, 0
	for b, c := range counts {
		if c > top || (c == top && b < mode) {
			mode, top = b, c
		}
	}
	mo := (float64(mode) + 0.5) * StressBinS
	amo := 100 * float64(top) / float64(n)
	return amo / (2 * mo * (hi - lo)), true
}

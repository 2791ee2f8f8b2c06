package beats

import (
	"math"
	"slices"

	"github.com/pulsewire/pulsewire/dsp/internal/stats"
	"gonum.org/v1/gonum/stat"
)

// Beat classification after Lipponen & Tarvainen, "A robust algorithm for
// heart rate variability time series artefact correction using novel beat
// classification", J. Med. Eng. Technol. 43(3), 2019 (the method behind
// Kubios HRV's automatic correction).
//
// A large change of interval alone is not an artefact: sinus rhythm can
// step up or down from one beat to the next, and an RMSSD is made of
// exactly such changes. What marks an artefact is its pattern. A premature
// (ectopic) beat, or a beat timed too early or late, shortens one interval
// and lengthens the next by about as much, so a large successive difference
// is followed (or preceded) by a large one of the other sign. A missed
// detection leaves one interval about twice the local median, an extra one
// splits an interval in two whose sum is the median. Every difference and
// deviation is measured in units of a threshold that adapts to the
// recording: 5.2 quartile deviations of its own successive differences
// (3.5 standard deviations of normally spread ones), so a variable rhythm or
// a noisy sensor raises it and a steady one lowers it.
const (
	// ltAlpha scales the quartile deviation into the thresholds.
	ltAlpha = 5.2
	// ltWindow is how many intervals, centred, the quartile deviations
	// are taken over.
	ltWindow = 91
	// ltMedianSpan is how many intervals, centred, form the local
	// median an interval is compared with.
	ltMedianSpan = 11
	// ltC1 and ltC2 bound the ectopic region of the plane of a
	// normalised difference and its neighbours.
	ltC1, ltC2 = 0.13, 0.17
	// ltLongShort: an interval more than three thresholds from the local
	// median is too long or too short.
	ltLongShort = 3.0
	// minThresholdS is the least threshold ever used, s: 20 ms is an
	// ordinary successive difference at rest (normal RMSSD 19-75 ms;
	// Nunan et al., PACE 33(11), 2010), and a very steady or quantised
	// series would otherwise have a threshold near 0 and call every
	// change an artefact.
	minThresholdS = 0.020
)

// classifyArtefacts returns, for each interval of s (seconds), whether it is
// an artefact: next to an ectopic or misplaced beat, a missed or an extra
// detection, or too long or too short for its neighbours.
func classifyArtefacts(s []float64) []bool {
	n := len(s)
	bad := make([]bool, n)
	if n < 4 {
		return bad
	}
	drr := make([]float64, n)
	for i := 1; i < n; i++ {
		drr[i] = s[i] - s[i-1]
	}
	th1 := thresholds(drr)
	med := make([]float64, n)
	mrr := make([]float64, n)
	var win []float64
	for i := range s {
		win = append(win[:0], s[max(0, i-ltMedianSpan/2):min(n, i+ltMedianSpan/2+1)]...)
		med[i] = stats.Median(win)
		mrr[i] = s[i] - med[i]
		if mrr[i] < 0 {
			// Short intervals count double: an extra detection
			// shortens an interval more than a missed one, relative
			// to its length, lengthens one.
			mrr[i] *= 2
		}
	}
	th2 := thresholds(mrr)
	nd := make([]float64, n) // successive differences in thresholds
	nm := make([]float64, n) // deviations from the local median in thresholds
	for i := range s {
		nd[i] = drr[i] / th1[i]
		nm[i] = mrr[i] / th2[i]
	}
	at := func(i int) float64 {
		if i < 0 || i >= n {
			return 0
		}
		return nd[i]
	}
	// s12 is the nearer-to-zero neighbour of a difference: far on the
	// other side of zero only when both neighbours are, the pattern
	// (+ - +, - + -) a beat out of place leaves in the differences. s22
	// looks one and two differences on, where a long or short interval's
	// return to the rhythm shows.
	s12 := func(i int) float64 {
		if nd[i] > 0 {
			return max(at(i-1), at(i+1))
		}
		return min(at(i-1), at(i+1))
	}
	s22 := func(i int) float64 {
		if nd[i] >= 0 {
			return min(at(i+1), at(i+2))
		}
		return max(at(i+1), at(i+2))
	}
	for i := 1; i < n; i++ {
		if math.Abs(nd[i]) <= 1 {
			continue
		}
		if nd[i] > 1 && s12(i) < -ltC1*nd[i]-ltC2 || nd[i] < -1 && s12(i) > -ltC1*nd[i]+ltC2 {
			// The centre of a difference pattern of alternating signs:
			// the beat between intervals i-1 and i is ectopic or
			// misplaced, and both its intervals are wrong.
			bad[i-1], bad[i] = true, true
			continue
		}
		cands := []int{i}
		if i+2 < n && math.Abs(nd[i+1]) < math.Abs(nd[i+2]) {
			cands = append(cands, i+1)
		}
		for _, j := range cands {
			long := nd[j] > 1 && s22(j) < -1
			short := nd[j] < -1 && s22(j) > 1
			if !long && !short && math.Abs(nm[j]) <= ltLongShort {
				continue
			}
			bad[j] = true
			if short && j+1 < n && math.Abs(s[j]+s[j+1]-med[j]) < th2[j] {
				bad[j+1] = true // an extra detection split one interval in two
			}
		}
	}
	return bad
}

// thresholds returns ltAlpha quartile deviations of x over ltWindow values
// centred on each index, at least minThresholdS. The quartiles are those of
// the values themselves, not of their magnitudes: 5.2 quartile deviations
// of normally spread values are 3.5 standard deviations, the 99.95% of
// normal beats the method is meant to leave alone (of the magnitudes they
// would be 2.2, and about one genuine difference in thirty would count).
func thresholds(x []float64) []float64 {
	n := len(x)
	th := make([]float64, n)
	var win []float64
	for i := range x {
		lo, hi := max(0, i-ltWindow/2), min(n, i+ltWindow/2+1)
		if i > 0 && lo == 0 && hi == n {
			th[i] = th[i-1] // the whole series: the same window again
			continue
		}
		win = append(win[:0], x[lo:hi]...)
		slices.Sort(win)
		qd := (stat.Quantile(0.75, stat.Empirical, win, nil) - stat.Quantile(0.25, stat.Empirical, win, nil)) / 2
		th[i] = max(ltAlpha*qd, minThresholdS)
	}
	return th
}

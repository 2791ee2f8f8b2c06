package beats

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
)

// Plausible inter-beat intervals in seconds: 40-200 bpm, the range the
// service measures heart rate in.
const (
	MinIntervalS = 60.0 / 200
	MaxIntervalS = 60.0 / 40
)

// LocalDeviation is the largest relative distance from the local median
// interval that a normal-to-normal (NN) interval may have. 20% is the
// classic rule for rejecting ectopic beats and missed or extra detections
// (Malik et al., "Heart rate variability: standards of measurement",
// Circulation 93(5), 1996; Kamath & Fallen 1995).
const LocalDeviation = 0.20

// localSpan is how many intervals on each side form the local median.
const localSpan = 5

// Interval is the time between two consecutive beats.
type Interval struct {
	S  float64 // seconds
	At float64 // time of the beat that ends it, s
	// NN is true when the interval passed artefact rejection: plausible,
	// within LocalDeviation of the median of its neighbours, and between two
	// beats that look like beats (trusted).
	NN bool
}

// Intervals returns the intervals between consecutive beats with artefact
// rejection applied.
func Intervals(beats []Beat) []Interval {
	if len(beats) < 2 {
		return nil
	}
	out := make([]Interval, len(beats)-1)
	for i := range out {
		out[i] = Interval{S: beats[i+1].T - beats[i].T, At: beats[i+1].T}
	}
	var win []float64
	for i, iv := range out {
		win = win[:0]
		for j := max(0, i-localSpan); j <= min(len(out)-1, i+localSpan); j++ {
			if s := out[j].S; s >= MinIntervalS && s <= MaxIntervalS {
				win = append(win, s)
			}
		}
		med := median(win)
		out[i].NN = iv.S >= MinIntervalS && iv.S <= MaxIntervalS && med > 0 &&
			math.Abs(iv.S-med) <= LocalDeviation*med &&
			trusted(beats[i]) && trusted(beats[i+1])
	}
	rejectMisplaced(out)
	return out
}

// misplacedQD is the multiple of the quartile deviation of the successive
// differences beyond which a difference marks a misplaced beat (Lipponen &
// Tarvainen, J. Med. Eng. Technol. 43(3), 2019: 5.2, about 3.5 standard
// deviations of normally spread differences). minMisplacedS is the least
// difference ever taken for one: 20 ms is an ordinary successive difference
// at rest (normal RMSSD 19-75 ms; Nunan et al., PACE 33(11), 2010), and a
// very regular or quantised series would otherwise have a spread near 0.
const (
	misplacedQD   = 5.2
	minMisplacedS = 0.020
)

// rejectMisplaced marks as not NN the two intervals around a misplaced beat:
// a beat timed late (or early) lengthens one interval and shortens the next
// by the same amount, a successive difference far beyond the spread of the
// others, while sinus rhythm changes its intervals gradually. The spread is
// the quartile deviation of the successive differences of NN intervals, so
// the test adapts to each recording's own variability and timing noise; a
// difference within LocalDeviation can still be twice a normal one.
func rejectMisplaced(iv []Interval) {
	var d []float64
	for i := 1; i < len(iv); i++ {
		if iv[i].NN && iv[i-1].NN {
			d = append(d, iv[i].S-iv[i-1].S)
		}
	}
	if len(d) < 8 {
		return
	}
	slices.Sort(d)
	qd := (stat.Quantile(0.75, stat.Empirical, d, nil) - stat.Quantile(0.25, stat.Empirical, d, nil)) / 2
	th := max(misplacedQD*qd, minMisplacedS)
	bad := make([]bool, len(iv))
	for i := 1; i < len(iv); i++ {
		if iv[i].NN && iv[i-1].NN && math.Abs(iv[i].S-iv[i-1].S) > th {
			bad[i], bad[i-1] = true, true
		}
	}
	for i, b := range bad {
		if b {
			iv[i].NN = false
		}
	}
}

// NNStats summarises the clean intervals.
type NNStats struct {
	Count  int     // NN intervals
	Total  int     // all intervals
	MeanS  float64 // mean NN interval, s
	Pairs  int     // successive NN pairs (both intervals NN and adjacent)
	RMSSDs float64 // root mean square of successive NN differences, s
}

// Stats computes RMSSD, the root mean square of the differences between
// successive NN intervals (Task Force of the ESC and NASPE, "Heart rate
// variability", Circulation 93(5), 1996): only pairs whose two intervals are
// both NN and adjacent count, so one rejected beat removes two differences
// instead of adding a false one.
func Stats(iv []Interval) NNStats {
	st := NNStats{Total: len(iv)}
	var sum, sq float64
	for i, v := range iv {
		if !v.NN {
			continue
		}
		st.Count++
		sum += v.S
		if i > 0 && iv[i-1].NN {
			d := v.S - iv[i-1].S
			sq += d * d
			st.Pairs++
		}
	}
	if st.Count > 0 {
		st.MeanS = sum / float64(st.Count)
	}
	if st.Pairs > 0 {
		st.RMSSDs = math.Sqrt(sq / float64(st.Pairs))
	}
	return st
}

// trusted reports whether a beat's time can be trusted: its shape fits the
// mean beat (Beat.Fit at least MinFit), or it was never compared (Fit 0:
// no Align, or too near an end of the wave).
func trusted(b Beat) bool { return b.Fit == 0 || b.Fit >= MinFit }

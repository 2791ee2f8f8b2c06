package beats

import (
	"math"
	"slices"

	"github.com/pulsewire/pulsewire/dsp/internal/stats"
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
	// Unsampled is true when a beat that bounds it is Unsampled: the
	// interval is unknown, neither NN nor an artefact.
	Unsampled bool
}

// Intervals returns the intervals between consecutive beats with artefact
// rejection applied: an interval is NN when it is plausible, within
// LocalDeviation of its neighbours' median, between two trusted beats, and
// not marked by the beat classification of Lipponen & Tarvainen
// (classifyArtefacts).
func Intervals(beats []Beat) []Interval {
	if len(beats) < 2 {
		return nil
	}
	out := make([]Interval, len(beats)-1)
	for i := range out {
		out[i] = Interval{S: beats[i+1].T - beats[i].T, At: beats[i+1].T, Unsampled: beats[i].Unsampled || beats[i+1].Unsampled}
	}
	s := make([]float64, len(out))
	for i, iv := range out {
		s[i] = iv.S
	}
	artefact := classifyArtefacts(s)
	floor := fitFloor(beats)
	meds := localMedians(s)
	for i, iv := range out {
		med := meds[i]
		out[i].NN = iv.S >= MinIntervalS && iv.S <= MaxIntervalS && med > 0 &&
			math.Abs(iv.S-med) <= LocalDeviation*med &&
			trusted(beats[i], floor) && trusted(beats[i+1], floor) && !artefact[i]
	}
	return out
}

// localMedians returns, for each interval of s (seconds), the median of the
// plausible ones among it and its localSpan neighbours on each side.
func localMedians(s []float64) []float64 {
	meds := make([]float64, len(s))
	var win []float64
	for i := range s {
		win = win[:0]
		for j := max(0, i-localSpan); j <= min(len(s)-1, i+localSpan); j++ {
			if s[j] >= MinIntervalS && s[j] <= MaxIntervalS {
				win = append(win, s[j])
			}
		}
		meds[i] = stats.Median(win)
	}
	return meds
}

// Rate returns the heartbeats per second between the first and the last
// of beats that are not at an Edge, 0 when fewer than two are. Every
// heartbeat counts, a premature or ectopic one too: the heart rate of a
// pulse oximeter or of an ECG counts them, while the mean NN interval
// leaves them out and reads slow (a fingertip recording at 46-52 bpm with
// an early beat every half minute or so read 1-2 bpm under the oximeters
// from its NN intervals, 0.1-1 bpm counting every beat). What is not
// a heartbeat is the detector's: an interval shorter than half its
// neighbours' median ends at an extra detection, and one longer than
// 1.5 times it holds round(S/median) beats, the last one seen and the
// missed ones.
func Rate(beats []Beat) float64 {
	first := slices.IndexFunc(beats, func(b Beat) bool { return !b.Edge })
	last := len(beats) - 1
	for last > first && beats[last].Edge {
		last--
	}
	if first < 0 || last <= first {
		return 0
	}
	s := make([]float64, last-first)
	for i := range s {
		s[i] = beats[first+i+1].T - beats[first+i].T
	}
	meds := localMedians(s)
	var count float64
	for i, v := range s {
		switch med := meds[i]; {
		case !(med > 0):
			count++
		case v < med/2:
		case v > 1.5*med:
			count += math.Round(v / med)
		default:
			count++
		}
	}
	return count / (beats[last].T - beats[first].T)
}

// NNStats summarises the clean intervals.
type NNStats struct {
	Count  int     // NN intervals
	Total  int     // all intervals but the Unsampled ones
	MeanS  float64 // mean NN interval, s
	Pairs  int     // successive NN pairs (both intervals NN and adjacent)
	RMSSDs float64 // root mean square of successive NN differences, s
	// SDNNs is the standard deviation of the NN intervals, s (Task
	// Force 1996): all variability over the capture, slow and fast, where
	// RMSSD keeps the beat-to-beat part. It grows with the length of the
	// capture, so only captures of equal length compare.
	SDNNs float64
}

// Stats computes the mean NN interval, SDNN and RMSSD, the root mean square
// of the differences between
// successive NN intervals (Task Force of the ESC and NASPE, "Heart rate
// variability", Circulation 93(5), 1996): only pairs whose two intervals are
// both NN and adjacent count, so one rejected beat removes two differences
// instead of adding a false one.
func Stats(iv []Interval) NNStats {
	var st NNStats
	var sum, sq float64
	for i, v := range iv {
		if !v.Unsampled {
			st.Total++
		}
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
	if st.Count > 1 {
		var ss float64
		for _, v := range iv {
			if v.NN {
				ss += (v.S - st.MeanS) * (v.S - st.MeanS)
			}
		}
		st.SDNNs = math.Sqrt(ss / float64(st.Count-1))
	}
	if st.Pairs > 0 {
		st.RMSSDs = math.Sqrt(sq / float64(st.Pairs))
	}
	return st
}

// FitShare is the share of the beats Align compared with the mean beat
// (not at an Edge) whose Fit is at least minFit, 0-1; 0 when Align compared
// none.
func FitShare(bs []Beat, minFit float64) float64 {
	n, good := 0, 0
	for _, b := range bs {
		if b.Edge || b.Fit == 0 {
			continue
		}
		n++
		if b.Fit >= minFit {
			good++
		}
	}
	if n == 0 {
		return 0
	}
	return float64(good) / float64(n)
}

// trusted reports whether a beat's time can be trusted: it is not at an Edge
// nor Unsampled, and its shape fits the mean beat (Beat.Fit at least floor,
// see fitFloor), or it was never compared (Fit 0 without Align).
func trusted(b Beat, floor float64) bool {
	return !b.Edge && !b.Unsampled && (b.Fit == 0 || b.Fit >= floor)
}

// A beat unlike the others is not timed like them. Where the beats of a
// capture fit their mean closely, as a finger's do, one whose upstroke is
// deformed (a slow, stepped foot) fits worse yet far above MinFit, and its
// time, where the deformed upstroke is steepest, can be 50-70 ms off the
// heartbeat's: on a finger PPG at 100 Hz beside an ECG, one such beat in
// five minutes (fit 0.86 where the others fit 0.94 ± 0.01) made a
// long-short pair of intervals, +110 and -133 ms, inside both the 20% rule
// and the successive-difference thresholds of a rhythm with an RMSSD of
// 35 ms, and every window that held it read an RMSSD 5-14 ms too high. So a
// beat's fit is also judged against the capture's own: on Fisher's z scale
// (atanh, where correlations spread evenly), a fit more than fitOutlierSDs
// robust standard deviations (1.4826 median absolute deviations) below the
// median is an outlier, and its intervals are not NN. Five deviations
// leave a normal spread alone (one beat in millions) and took only that
// beat of the recording's 430; on a camera, whose fits spread widely, the
// floor stays at MinFit.
const (
	fitOutlierSDs = 5.0
	// minFitBeats: fewer compared beats give no spread to judge by.
	minFitBeats = 8
)

// fitFloor returns the least Fit a compared beat of bs needs for its time
// to be trusted: MinFit, or more where the beats' fits sit close together.
func fitFloor(bs []Beat) float64 {
	var z []float64
	for _, b := range bs {
		if !b.Edge && b.Fit != 0 && !math.IsNaN(b.Fit) {
			z = append(z, math.Atanh(max(-0.999, min(b.Fit, 0.999))))
		}
	}
	if len(z) < minFitBeats {
		return MinFit
	}
	m := stats.Median(z)
	for i := range z {
		z[i] = math.Abs(z[i] - m)
	}
	sd := 1.4826 * stats.Median(z)
	return max(MinFit, math.Tanh(m-fitOutlierSDs*sd))
}

// SplitNoise estimates how much beat-timing noise adds to the mean square
// successive difference that RMSSD is the root of, from the same beats
// timed twice on two halves of the measurement with independent noise (the
// forehead's pixels and the cheeks'; a and b hold the times of the beats of
// iv, in the same order). It is the noise-bias correction of a split-half
// design: with e_a and e_b the two halves' independent timing errors, the
// whole measurement's error is about their mean (e_a+e_b)/2, a matched
// filter's time error being linear in the noise, while the half difference
// d = (t_a-t_b)/2 carries (e_a-e_b)/2, which has the very same covariance
// and no heartbeat in it (a constant lag between the halves cancels). So the
// noise's share of the squared successive differences of the intervals,
// over the pairs Stats counts, is the mean square of the second difference
// of d over the same beats, and
//
//	RMSSD² (true) ≈ RMSSD² (measured) - SplitNoise
//
// (the same idea as the noise variance from the difference of two half
// measurements; Bland & Altman, Lancet 327(8476), 1986, for the
// repeatability use). Noise common to both halves, such as a codec's
// frame-wide decisions or motion, is not seen. found is false when a and b
// do not match iv or no pair is NN.
func SplitNoise(iv []Interval, a, b []Beat) (s2 float64, found bool) {
	if len(iv) < 2 || len(a) != len(iv)+1 || len(b) != len(a) {
		return 0, false
	}
	d := func(k int) float64 { return (a[k].T - b[k].T) / 2 }
	floorA, floorB := fitFloor(a), fitFloor(b)
	ok := func(k int) bool { return trusted(a[k], floorA) && trusted(b[k], floorB) }
	var sum float64
	n := 0
	for i := 1; i < len(iv); i++ {
		// A beat that one half could not time well (its Fit) was never
		// timed that badly in the whole, or it would not be NN there.
		if iv[i].NN && iv[i-1].NN && ok(i-1) && ok(i) && ok(i+1) {
			dd := d(i+1) - 2*d(i) + d(i-1)
			sum += dd * dd
			n++
		}
	}
	if n == 0 {
		return 0, false
	}
	return sum / float64(n), true
}

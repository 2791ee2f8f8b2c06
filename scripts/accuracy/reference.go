package main

import (
	"math"
	"slices"

	"github.com/pulsewire/pulsewire/dsp/filter"
	"gonum.org/v1/gonum/stat"
)

// The reference side of the real recordings: R peaks from an ECG and
// breaths from a respiration belt, with methods independent of the PPG
// pipeline under test (other band, other detector).

// rPeaks finds R peaks in an ECG sampled at rateHz with a Pan-Tompkins style
// detector (Pan & Tompkins, IEEE TBME 32(3), 1985): 5-15 Hz band-pass,
// derivative, square, 150 ms moving integration, peaks of the integral
// above a third of its 98th percentile at least 250 ms apart, each moved to
// the largest band-passed ECG deflection within 120 ms and read to a
// fraction of a sample. Times in s.
func rPeaks(ecg []float64, rateHz float64) []float64 {
	bp := filter.Bandpass(2, 5, 15, rateHz).FiltFilt(nil, ecg)
	sq := make([]float64, len(bp))
	for i := 1; i < len(bp); i++ {
		d := (bp[i] - bp[i-1]) * rateHz
		sq[i] = d * d
	}
	integ := filter.MovingAverage(nil, sq, int(0.15*rateHz))
	sorted := slices.Clone(integ)
	slices.Sort(sorted)
	thr := sorted[int(0.98*float64(len(sorted)-1))] / 3
	// Polarity: R is the larger of the positive and negative deflections.
	var pos, neg float64
	for _, v := range bp {
		pos, neg = max(pos, v), min(neg, v)
	}
	sign := 1.0
	if -neg > pos {
		sign = -1
	}
	minGap := int(0.25 * rateHz)
	search := int(0.12 * rateHz)
	var peaks []float64
	last := -minGap
	for i := 1; i+1 < len(integ); i++ {
		if integ[i] < thr || integ[i] < integ[i-1] || integ[i] < integ[i+1] || i-last < minGap {
			continue
		}
		best := i
		for j := max(0, i-search); j < min(len(bp), i+search); j++ {
			if sign*bp[j] > sign*bp[best] {
				best = j
			}
		}
		if len(peaks) > 0 && float64(best)/rateHz-peaks[len(peaks)-1] < 0.25 {
			continue
		}
		last = i
		// To a fraction of a sample by a parabola through the peak: at
		// 100 Hz whole samples alone would add sqrt(6/12) × 10 ms = 7 ms
		// in quadrature to an RMSSD.
		at := float64(best)
		if best > 0 && best+1 < len(bp) {
			a, b, c := sign*bp[best-1], sign*bp[best], sign*bp[best+1]
			if den := a - 2*b + c; den < 0 {
				at += math.Max(-0.5, math.Min(0.5, 0.5*(a-c)/den))
			}
		}
		peaks = append(peaks, at/rateHz)
	}
	return peaks
}

// minQRSCorrelation: a detected R peak whose QRS complex (±60 ms of the
// band-passed ECG) correlates less than this with the median complex of
// the recording is noise or a T wave taken for a beat, or a beat the noise
// has moved; its intervals are no reference.
const minQRSCorrelation = 0.8

// qrsClean reports for each R peak whether its QRS complex looks like the
// recording's median complex (minQRSCorrelation): a check on the ECG
// alone, independent of the PPG under test.
func qrsClean(ecg []float64, rateHz float64, peaks []float64) []bool {
	bp := filter.Bandpass(2, 5, 15, rateHz).FiltFilt(nil, ecg)
	half := int(0.06 * rateHz)
	segs := make([][]float64, len(peaks))
	for k, p := range peaks {
		c := int(math.Round(p * rateHz))
		if c-half >= 0 && c+half < len(bp) {
			segs[k] = bp[c-half : c+half+1]
		}
	}
	med := make([]float64, 2*half+1)
	col := make([]float64, 0, len(segs))
	for j := range med {
		col = col[:0]
		for _, s := range segs {
			if s != nil {
				col = append(col, s[j])
			}
		}
		if len(col) > 0 {
			slices.Sort(col)
			med[j] = col[len(col)/2]
		}
	}
	clean := make([]bool, len(peaks))
	for k, s := range segs {
		clean[k] = s != nil && stat.Correlation(s, med, nil) >= minQRSCorrelation
	}
	return clean
}

// rrReference returns the mean heart rate (bpm) and RMSSD (ms) of the R
// peaks within [from, to) s. Intervals outside 0.3-1.5 s or ending at a
// peak that is not clean (nil: all are) are dropped from both. The heart
// rate counts every heartbeat, a long or an early one too, as an ECG
// monitor or an oximeter does: it drops only what a detector gets wrong,
// intervals more than 50% from the median of their window (an extra or a
// missed peak). The RMSSD keeps normal-to-normal intervals, within 20% of
// that median; when more than a tenth are dropped the ECG is too noisy to
// serve as reference and hrv is NaN. (The heart rate once kept only the
// RMSSD's intervals, and read two genuine slow beats of the neurokit
// recording, 0.82 and 0.86 s among 0.69 s, as artefacts: 0.5 bpm high in
// every minute that held them.)
func rrReference(peaks []float64, clean []bool, from, to float64) (hr, rmssd float64) {
	var rr []float64
	var ok []bool
	for i := 1; i < len(peaks); i++ {
		if peaks[i-1] >= from && peaks[i] < to {
			rr = append(rr, peaks[i]-peaks[i-1])
			ok = append(ok, clean == nil || clean[i-1] && clean[i])
		}
	}
	if len(rr) < 10 {
		return math.NaN(), math.NaN()
	}
	med := slices.Clone(rr)
	slices.Sort(med)
	m := med[len(med)/2]
	good := make([]bool, len(rr))
	var sum, sq float64
	n, pairs, bad := 0, 0, 0
	for i, v := range rr {
		if ok[i] && v >= 0.3 && v <= 1.5 && math.Abs(v-m) <= 0.5*m {
			sum += v
			n++
		}
		good[i] = ok[i] && v >= 0.3 && v <= 1.5 && math.Abs(v-m) <= 0.2*m
		if !good[i] {
			bad++
			continue
		}
		if i > 0 && good[i-1] {
			d := v - rr[i-1]
			sq += d * d
			pairs++
		}
	}
	hr = 60 / (sum / float64(n))
	rmssd = 1000 * math.Sqrt(sq/float64(max(pairs, 1)))
	if bad*10 > len(rr) || pairs < 5 {
		rmssd = math.NaN()
	}
	return hr, rmssd
}

// breathRate returns breaths per minute of a respiration belt signal within
// [from, to) s: the belt is band-passed to 0.05-0.7 Hz (3-42 /min), and a
// breath is an upward crossing of zero after the signal has been below
// -h, h a tenth of its standard deviation (hysteresis against ripples).
func breathRate(rsp []float64, rateHz, from, to float64) float64 {
	x := filter.Bandpass(2, 0.05, 0.7, rateHz).FiltFilt(nil, rsp)
	i0, i1 := int(from*rateHz), min(len(x), int(to*rateHz))
	seg := x[i0:i1]
	var ss float64
	for _, v := range seg {
		ss += v * v
	}
	h := 0.1 * math.Sqrt(ss/float64(len(seg)))
	var ups []float64
	below := false
	for i, v := range seg {
		if v < -h {
			below = true
		}
		if below && v > 0 && i > 0 && seg[i-1] <= 0 {
			ups = append(ups, float64(i)/rateHz)
			below = false
		}
	}
	if len(ups) < 3 {
		return math.NaN()
	}
	return 60 * float64(len(ups)-1) / (ups[len(ups)-1] - ups[0])
}

// Package beats finds heartbeats in a pulse wave and derives the
// beat-to-beat measures: inter-beat intervals with artefact rejection,
// RMSSD and Baevsky's stress index.
package beats

import (
	"math"
	"slices"

	"github.com/pulsewire/pulsewire/dsp/internal/stats"
)

// Beat is one systolic peak of a pulse wave.
type Beat struct {
	// T is the beat's time, s from the first sample, to a fraction of a
	// sample: the point of steepest rise of the systolic upstroke. Intervals
	// are measured between these points: where the wave is steepest, noise
	// moves a time least (σ_t = σ_noise / slope), while at the flat top of
	// the peak it moves it most. The maximum-slope point is one of the
	// standard PPG fiducials for beat intervals (Peralta et al., "Optimal
	// fiducial points for pulse rate variability analysis from forehead and
	// finger PPG signals", Physiol. Meas. 40(2), 2019).
	T      float64
	PeakT  float64 // time of the systolic peak, s
	Peak   float64 // wave value at the peak
	Trough float64 // lowest wave value since the previous beat (the foot of this one)
	FootT  float64 // time of that lowest value, s
	// Fit is the correlation of the beat with the mean beat after Align,
	// -1 to 1 (0 before Align, or when the beat was too near an end).
	Fit float64
	// Edge is set by Align on a beat too near an end of the wave to be
	// compared with the mean beat: its time is the detector's, at the very
	// samples the filters' start and end transients distort, and it is not
	// trusted.
	Edge bool
	// Unsampled is set on a beat whose time falls where the capture has no
	// samples (dropped frames): its time was interpolated, not measured,
	// and it is not trusted.
	Unsampled bool
}

// Amplitude is the height of the beat above its foot.
func (b Beat) Amplitude() float64 { return b.Peak - b.Trough }

// MinGapFraction is the shortest distance between two accepted peaks as a
// fraction of the expected beat period. The dicrotic wave comes 0.3-0.45 of a
// period after the systolic peak (Elgendi 2012) and the next beat about one
// period after, so 0.6 separates the two even when the interval shortens by
// a third from one beat to the next.
const MinGapFraction = 0.6

// WeakFraction drops a peak whose amplitude is below this fraction of the
// median beat amplitude: a ripple of noise, not a beat.
const WeakFraction = 0.25

// Detect finds the systolic peaks of pulse (oriented so the upstroke rises,
// uniform at rateHz) and appends them to dst in time order. periodS gives the
// expected beat period in seconds at each sample (from the tracked heart
// rate). Peaks are taken greedily from the highest down, each claiming
// MinGapFraction of a period on both sides; a dicrotic wave, always lower
// than its systolic peak and closer to it than that, is never taken for a
// beat. This is the heart-rate-guided counterpart of local-maximum peak
// pickers such as Elgendi et al. 2013 (PLoS ONE 8(10) e76585), which need an
// estimate of the rate to set their windows too.
func Detect(dst []Beat, pulse, periodS []float64, rateHz float64) []Beat {
	n := len(pulse)
	if n < 3 || len(periodS) != n {
		return dst
	}
	var cand []int
	for i := 1; i < n-1; i++ {
		if pulse[i] > pulse[i-1] && pulse[i] >= pulse[i+1] {
			cand = append(cand, i)
		}
	}
	slices.SortFunc(cand, func(a, b int) int {
		switch {
		case pulse[a] > pulse[b]:
			return -1
		case pulse[a] < pulse[b]:
			return 1
		}
		return a - b
	})
	taken := make([]bool, n)
	var kept []int
	for _, i := range cand {
		g := int(MinGapFraction * periodS[i] * rateHz)
		free := true
		for j := max(0, i-g); j <= min(n-1, i+g); j++ {
			if taken[j] {
				free = false
				break
			}
		}
		if free {
			taken[i] = true
			kept = append(kept, i)
		}
	}
	slices.Sort(kept)
	start := len(dst)
	for k, i := range kept {
		lo := 0
		if k > 0 {
			lo = kept[k-1]
		} else {
			lo = max(0, i-int(periodS[i]*rateHz))
		}
		foot := i
		for j := lo; j < i; j++ {
			if pulse[j] < pulse[foot] {
				foot = j
			}
		}
		dst = append(dst, Beat{
			T:      upstroke(pulse, foot, i) / rateHz,
			PeakT:  (float64(i) + vertex(pulse[i-1], pulse[i], pulse[i+1])) / rateHz,
			Peak:   pulse[i],
			Trough: pulse[foot],
			FootT:  float64(foot) / rateHz,
		})
	}
	found := dst[start:]
	amps := make([]float64, len(found))
	for i, b := range found {
		amps[i] = b.Amplitude()
	}
	med := stats.Median(amps)
	out := dst[:start]
	for _, b := range found {
		if b.Amplitude() >= WeakFraction*med {
			out = append(out, b)
		}
	}
	return out
}

// upstroke returns the sample position, to a fraction of a sample, of the
// steepest rise of pulse between its foot and its peak (indices).
func upstroke(pulse []float64, foot, peak int) float64 {
	best, slope := -1, math.Inf(-1)
	for j := max(foot, 1); j < peak && j+1 < len(pulse); j++ {
		if d := pulse[j+1] - pulse[j-1]; d > slope {
			best, slope = j, d
		}
	}
	if best < 2 || best+2 >= len(pulse) {
		return float64(peak)
	}
	d := func(j int) float64 { return pulse[j+1] - pulse[j-1] }
	return float64(best) + vertex(d(best-1), d(best), d(best+1))
}

// vertex returns the offset, within ±0.5 sample, of the vertex of the
// parabola through three equally spaced samples around a maximum.
func vertex(a, b, c float64) float64 {
	den := a - 2*b + c
	if den >= 0 {
		return 0
	}
	return math.Max(-0.5, math.Min(0.5, 0.5*(a-c)/den))
}

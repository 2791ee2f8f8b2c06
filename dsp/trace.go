package dsp

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Bounds of an analysed capture. The analysis's memory and time grow with
// the capture's span and its samples (measured on one core: ten minutes at
// 30 samples a second allocate 64 MiB in 11 s, 100 minutes 650 MiB in 49 s),
// so a signal past either bound is refused (Validate), and the analysis
// keeps the first MaxSpan of any capture (clean).
const (
	// MaxSamples bounds a signal upload: ten minutes at 500 samples a
	// second.
	MaxSamples = 300_000
	// MaxSpan is the longest capture analysed: ten minutes, a session's
	// longest life.
	MaxSpan   = 10 * time.Minute
	maxSpanMs = float64(MaxSpan / time.Millisecond)
	// MaxSampleRateHz bounds how fast a signal's samples come on average:
	// faster is no camera's or pulse sensor's, and almost always
	// timestamps in seconds where milliseconds are due.
	MaxSampleRateHz = 1000
)

// Trace is a camera trace: for each frame its capture time and the mean skin
// colour (the rppg signal route's body).
type Trace struct {
	TimestampsMs []float64 // capture times, ms, strictly increasing
	R, G, B      []float64 // mean skin red, green, blue, 0-255
}

// PPG is a contact trace: capture times and one intensity per sample (the
// cppg signal route). Either polarity works: a photoplethysmograph's
// blood-volume wave or the brightness of a lit fingertip.
type PPG struct {
	TimestampsMs []float64 // capture times, ms, strictly increasing
	Values       []float64 // intensity, any unit
}

// ErrInvalidSignal is the error Validate wraps.
var ErrInvalidSignal = errors.New("invalid signal")

// Validate reports the first structural problem of a trace, for a 400 answer
// before any analysis: channels of different lengths, more than MaxSamples,
// a value that is not a finite number, timestamps that do not increase,
// that span more than MaxSpan or that come faster than MaxSampleRateHz, a
// colour outside 0-255.
// AnalyzeTrace still copes with all of these (it drops the bad samples), so
// validation is a choice of the caller.
func (t Trace) Validate() error {
	if err := validate(t.TimestampsMs, t.R, t.G, t.B); err != nil {
		return err
	}
	for _, ch := range []struct {
		name   string
		values []float64
	}{{"r", t.R}, {"g", t.G}, {"b", t.B}} {
		for i, v := range ch.values {
			if v < 0 || v > 255 {
				return fmt.Errorf("%w: %s.%d is %g: a colour is 0 to 255, as a frame's pixels hold it", ErrInvalidSignal, ch.name, i, v)
			}
		}
	}
	return nil
}

// Validate is Trace.Validate for a contact trace.
func (p PPG) Validate() error {
	return validate(p.TimestampsMs, p.Values)
}

func validate(ts []float64, chans ...[]float64) error {
	for i, c := range chans {
		if len(c) != len(ts) {
			return fmt.Errorf("%w: channel %d has %d values for %d timestamps", ErrInvalidSignal, i, len(c), len(ts))
		}
	}
	if len(ts) > MaxSamples {
		return fmt.Errorf("%w: %d samples, at most %d", ErrInvalidSignal, len(ts), MaxSamples)
	}
	for i, t := range ts {
		if !finite(t) {
			return fmt.Errorf("%w: timestamp %d is not a finite number", ErrInvalidSignal, i)
		}
		if i > 0 && t <= ts[i-1] {
			return fmt.Errorf("%w: timestamp %d (%g ms) does not follow %g ms", ErrInvalidSignal, i, t, ts[i-1])
		}
		if t-ts[0] > maxSpanMs {
			return fmt.Errorf("%w: timestamp %d is %g ms after the first; a signal spans at most %v", ErrInvalidSignal, i, t-ts[0], MaxSpan)
		}
		for j, c := range chans {
			if !finite(c[i]) {
				return fmt.Errorf("%w: value %d of channel %d is not a finite number", ErrInvalidSignal, i, j)
			}
		}
	}
	if n := len(ts); n > 1 {
		if span := ts[n-1] - ts[0]; span < float64(n-1)*1000/MaxSampleRateHz {
			return fmt.Errorf("%w: %d samples span %g ms, more than %d a second: timestamps are milliseconds", ErrInvalidSignal, n, span, MaxSampleRateHz)
		}
	}
	return nil
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// clean returns the usable samples: times converted to seconds from the
// first kept sample, only samples with finite values whose time follows the
// previous kept one, at most MaxSamples and MaxSpan from the first.
// Channels of unequal length are cut to the shortest.
func clean(tsMs []float64, chans ...[]float64) (t []float64, out [][]float64) {
	n := len(tsMs)
	for _, c := range chans {
		n = min(n, len(c))
	}
	n = min(n, MaxSamples)
	out = make([][]float64, len(chans))
	last, first := math.Inf(-1), 0.0
	for i := 0; i < n; i++ {
		if !finite(tsMs[i]) || tsMs[i] <= last {
			continue
		}
		good := true
		for _, c := range chans {
			good = good && finite(c[i])
		}
		if !good {
			continue
		}
		if len(t) == 0 {
			first = tsMs[i]
		} else if tsMs[i]-first > maxSpanMs {
			break
		}
		last = tsMs[i]
		t = append(t, tsMs[i]/1000)
		for j, c := range chans {
			out[j] = append(out[j], c[i])
		}
	}
	if len(t) > 0 {
		t0 := t[0]
		for i := range t {
			t[i] -= t0
		}
	}
	return t, out
}

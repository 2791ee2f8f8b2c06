package dsp

import (
	"math"
	"slices"

	"github.com/pulsewire/pulsewire/dsp/filter"
	"github.com/pulsewire/pulsewire/dsp/internal/stats"
	"github.com/pulsewire/pulsewire/dsp/pulse"
	"github.com/pulsewire/pulsewire/dsp/resample"
)

// Capture-quality thresholds for camera captures analysed from frames
// (documented with their reasons in dsp/README.md). A capture that crosses
// one gets the code on every pulse variable; the stream reports the same
// checks over its recent frames as live guidance.
const (
	// MinFacePresence: a face must be tracked in at least 80% of the frames
	// (CONFORMITY_FACE_PRESENCE). Short losses are bridged by interpolation;
	// longer ones leave too little pulse.
	MinFacePresence = 0.8
	// MinFaceFraction: the face must be at least 15% of the frame height
	// (CONFORMITY_FACE_SIZE). Smaller faces give too few skin pixels for
	// their mean colour to rise above camera noise and compression.
	MinFaceFraction = 0.15
	// MinSkinLuma and MaxSkinLuma bound the median luma of the skin, 0-255
	// (CONFORMITY_POOR_LIGHT): below 35 the 0.1-1% pulse is a fraction of
	// one quantisation level per pixel; above 240 the channels clip.
	MinSkinLuma = 35.0
	MaxSkinLuma = 240.0
	// MaxFaceSpeed: the median speed of the face, in face heights per
	// second, must stay below 0.25 (CONFORMITY_MUCH_VARIATIONS). Sitting
	// still sways at a few hundredths; talking or turning is 0.3 and more,
	// and moves shading across the skin faster than POS can cancel it.
	MaxFaceSpeed = 0.25
	// MaxFlicker: the scene brightness may vary by at most 0.5% RMS within
	// the pulse band, 0.6-4 Hz (CONFORMITY_ONDULATIONS). Flickering or
	// pulsing light there is indistinguishable from a pulse; the pulse
	// itself, diluted over the whole frame, stays near 0.1%.
	MaxFlicker = 0.005
	// MaxSkinFlicker: the skin's own brightness may vary by at most 1% RMS
	// in the same band (CONFORMITY_ONDULATIONS). It catches flicker the
	// scene hides (a background clipped white does not flicker); the pulse
	// itself, even a strong 2% peak-to-peak in green, is about 0.4% RMS in
	// luma.
	MaxSkinFlicker = 0.01
)

// MaxClippedShare is the largest share of a signal channel's samples that
// may sit at its highest or at its lowest value (CONFORMITY_POOR_LIGHT): a
// contact trace's, or any colour's of a camera trace.
// A phone's torch through a fingertip often drives the red channel to
// full scale, and a channel it does not light stays at zero; such a trace
// is a flat line with a few samples escaping the limit now and then. Its
// spectrum is that of those few spikes, and the track locks on a rate of
// its own with full confidence: on real phone recordings a red channel at
// 255 in 97% of its samples read 43 bpm for 88 (confidence 0.86), and a
// green channel at 0 in all but 6 of 2,212 samples 42 bpm for 83 (0.95).
// A wave clipped for a fifth of its samples still shows its pulse in the
// rest (the same phones' red at 255 in 22% read 86.3 bpm for 86.8); one
// clipped for more than half is mostly limit. The rule asks nothing of
// the values' scale, which a contact sensor chooses freely. The same
// recordings sent as camera traces (their three colours) were read from
// the green at 0 just as wrongly; a camera channel at one value for more
// than half its samples is clipped too, or its pulse is under one step of
// its resolution, which is what the skin's too dark light means.
const MaxClippedShare = 0.5

// clippedShare returns the larger of the shares of x's samples equal to
// its maximum and to its minimum.
func clippedShare(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	lo, hi := slices.Min(x), slices.Max(x)
	var nlo, nhi int
	for _, v := range x {
		if v == lo {
			nlo++
		}
		if v == hi {
			nhi++
		}
	}
	return float64(max(nlo, nhi)) / float64(len(x))
}

// frameRecord is what a stream keeps of one frame for the quality checks.
type frameRecord struct {
	t            float64 // s from the first frame
	face         bool
	faceFraction float32
	luma         float32 // skin
	sceneLuma    float32
	motion       float32 // face heights since the previous frame
}

// captureQuality summarises frame records.
type captureQuality struct {
	seconds      float64 // span of the records
	presence     float64 // share of frames with a face
	faceFraction float64 // median over frames with a face
	luma         float64 // median skin luma over frames with a face
	speed        float64 // median face speed, face heights per second
	flicker      float64 // relative RMS of scene luma in the pulse band
	skinFlicker  float64 // relative RMS of skin luma in the pulse band
	clipped      float64 // of a colour trace, its channels' largest clippedShare
	scene        float64 // median luma of the whole pictures
}

// assess measures frame records.
func assess(recs []frameRecord) captureQuality {
	var q captureQuality
	if len(recs) == 0 {
		return q
	}
	q.seconds = recs[len(recs)-1].t - recs[0].t
	var ff, luma, speed, scene []float64
	for i, r := range recs {
		scene = append(scene, float64(r.sceneLuma))
		if !r.face {
			continue
		}
		ff = append(ff, float64(r.faceFraction))
		luma = append(luma, float64(r.luma))
		if i > 0 && recs[i-1].face {
			if dt := r.t - recs[i-1].t; dt > 0 {
				speed = append(speed, float64(r.motion)/dt)
			}
		}
	}
	q.presence = float64(len(ff)) / float64(len(recs))
	q.faceFraction = stats.Median(ff)
	q.luma = stats.Median(luma)
	q.speed = stats.Median(speed)
	q.scene = stats.Median(scene)
	q.flicker = flicker(recs, func(r frameRecord) (float64, bool) { return float64(r.sceneLuma), true })
	q.skinFlicker = flicker(recs, func(r frameRecord) (float64, bool) { return float64(r.luma), r.face })
	return q
}

// flicker returns the RMS within the pulse band of the brightness that
// value reads from each frame (frames where it reports false are left out),
// relative to its mean.
func flicker(recs []frameRecord, value func(frameRecord) (float64, bool)) float64 {
	var t, y []float64
	var mean float64
	for _, r := range recs {
		if v, ok := value(r); ok {
			t = append(t, r.t)
			y = append(y, v)
			mean += v
		}
	}
	if len(t) < 3 {
		return 0
	}
	mean /= float64(len(t))
	span := t[len(t)-1] - t[0]
	rate := math.Min(30, float64(len(t)-1)/span)
	if !(mean > 0) || span < 3 || pulse.BandHiHz >= 0.45*rate {
		return 0
	}
	g := resample.Uniform(nil, t, y, rate)
	filter.Bandpass(2, pulse.BandLoHz, pulse.BandHiHz, rate).FiltFilt(g, g)
	var ss float64
	for _, v := range g {
		ss += v * v
	}
	return math.Sqrt(ss/float64(len(g))) / mean
}

// codes returns the capture-quality codes q crosses, most fundamental first.
func (q captureQuality) codes() []Code {
	var cs []Code
	if q.presence < MinFacePresence {
		cs = append(cs, ConformityFacePresence)
	}
	if q.presence > 0 {
		if q.faceFraction < MinFaceFraction {
			cs = append(cs, ConformityFaceSize)
		}
		if q.luma < MinSkinLuma || q.luma > MaxSkinLuma || q.clipped > MaxClippedShare {
			cs = append(cs, ConformityPoorLight)
		}
		if q.speed > MaxFaceSpeed {
			cs = append(cs, ConformityMuchVariations)
		}
	}
	if q.flicker > MaxFlicker || q.skinFlicker > MaxSkinFlicker {
		cs = append(cs, ConformityOndulations)
	}
	return cs
}

// advice is the guidance of codes: the codes themselves, but a face not
// found in pictures darker than a face needs is first told to find more
// light, which is likely why it is not found, and which moving into the
// oval would not fix.
func (q captureQuality) advice(codes []Code) []Code {
	if slices.Contains(codes, ConformityFacePresence) && !slices.Contains(codes, ConformityPoorLight) && q.scene < MinSkinLuma {
		return append([]Code{ConformityPoorLight}, codes...)
	}
	return codes
}

// onlyDark reports whether the one fault codes found is a face too dark:
// darkness buries a pulse in quantisation noise but puts none on the skin,
// so, unlike motion, flicker or a face lost or too small, it does not make
// a pulse found through it suspect. The decision already weighs the noise.
func (q captureQuality) onlyDark(codes []Code) bool {
	return len(codes) == 1 && codes[0] == ConformityPoorLight && q.luma < MinSkinLuma && q.clipped <= MaxClippedShare
}

// explain returns the outcome of a pulse analysis that ended with err on a
// capture with quality q. A capture fault explains a missing pulse better
// than the absence itself, and a pulse measured through one is not
// trusted, unless the fault is only a dark face: refusing a clear pulse
// there would refuse dark skin in ordinary light first.
func (q captureQuality) explain(err Code) Code {
	codes := q.codes()
	if len(codes) > 0 && (err == ConformityMissingSignal || err == "" && !q.onlyDark(codes)) {
		return codes[0]
	}
	return err
}

// traceQuality is what a bare colour trace tells of its capture: the
// skin's brightness, the median luma (BT.601, full range, as the frames'
// skin luma) of its mean colours, and how much of it a limit clips. It has
// no face to lose, shrink or move and no scene to flicker, so only
// CONFORMITY_POOR_LIGHT can follow from it: a client's skin pixels too
// dark to carry a pulse, or cut off at a limit, are told as the frames of
// one would be.
func traceQuality(r, g, b []float64) captureQuality {
	luma := make([]float64, len(g))
	for i := range luma {
		luma[i] = 0.299*r[i] + 0.587*g[i] + 0.114*b[i]
	}
	clipped := max(clippedShare(r), clippedShare(g), clippedShare(b))
	return captureQuality{presence: 1, faceFraction: 1, luma: stats.Median(luma), clipped: clipped}
}

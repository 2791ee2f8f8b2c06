package main

import (
	"image"
	"math"
	"math/cmplx"
	"time"

	"github.com/pulsewire/pulsewire/dsp"
	"github.com/pulsewire/pulsewire/dsp/face"
	"github.com/pulsewire/pulsewire/dsp/filter"
	"github.com/pulsewire/pulsewire/dsp/pulse"
)

// plainPOS is the textbook pipeline the webcam set is also scored with, to
// tell a clip whose pulse is gone from one the service refuses: the face
// tracker's skin means, POS over the whole clip (Wang et al. 2017), a
// band-pass of 0.7-3 Hz (42-180 bpm) and the highest peak of its spectrum
// in that band, with no gate and no tracking. It always answers; how far off it is says how much pulse the
// clip still carries.
type plainPOS struct {
	tracker *face.Tracker
	r, g, b []float64
	first   time.Duration
	last    time.Duration
}

func newPlainPOS(c *face.Cascade) *plainPOS { return &plainPOS{tracker: face.NewTracker(c)} }

// push observes one frame; frames without a face repeat the last means.
func (p *plainPOS) push(img image.Image, at time.Duration) {
	o := p.tracker.Observe(img)
	switch {
	case o.Face:
		p.r, p.g, p.b = append(p.r, o.R), append(p.g, o.G), append(p.b, o.B)
	case len(p.g) > 0:
		n := len(p.g) - 1
		p.r, p.g, p.b = append(p.r, p.r[n]), append(p.g, p.g[n]), append(p.b, p.b[n])
	default:
		p.first = at
		return
	}
	p.last = at
}

// bpm is the pulse rate the plain pipeline reads, 0 without a face. The
// frames are taken as evenly spaced, which the webcam clips are.
func (p *plainPOS) bpm() float64 {
	n := len(p.g)
	if n < 60 || p.last <= p.first {
		return 0
	}
	return plainPOSRate(p.r, p.g, p.b, float64(n-1)/(p.last-p.first).Seconds())
}

// plainPOSRate is the plain pipeline's reading of mean skin colours
// sampled evenly at rate: POS, the band-pass, and the highest peak of the
// spectrum in 42-180 bpm.
func plainPOSRate(r, g, b []float64, rate float64) float64 {
	n := len(g)
	h := pulse.POS(nil, r, g, b, rate)
	filter.Bandpass(2, 0.7, 3, rate).FiltFilt(h, h)
	best, at := 0.0, 0.0
	for f := 42.0; f <= 180; f += 0.25 {
		var s complex128
		for i, v := range h {
			w := 0.5 - 0.5*math.Cos(2*math.Pi*float64(i)/float64(n-1)) // Hann
			s += complex(w*v, 0) * cmplx.Exp(complex(0, -2*math.Pi*f/60*float64(i)/rate))
		}
		if m := cmplx.Abs(s); m > best {
			best, at = m, f
		}
	}
	return at
}

// plainPOSTrace is the plain pipeline's reading of a colour trace, its
// samples taken as evenly spaced; 0 for fewer than 60 samples.
func plainPOSTrace(tr dsp.Trace) float64 {
	n := len(tr.G)
	if n < 60 || tr.TimestampsMs[n-1] <= tr.TimestampsMs[0] {
		return 0
	}
	return plainPOSRate(tr.R, tr.G, tr.B, float64(n-1)/((tr.TimestampsMs[n-1]-tr.TimestampsMs[0])/1000))
}

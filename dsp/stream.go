package dsp

import (
	"image"
	"iter"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/pulsewire/pulsewire/dsp/face"
)

// Stream analyses a camera capture frame by frame. Live sessions push
// frames as they arrive and ask for Vitals at any time; the batch routes
// (video files, face crops) push each frame as they decode it and ask for
// the Result at the end, so a recording and a live capture of the same
// frames give the same Result.
//
// A Stream keeps per-capture state and is not safe for concurrent use. Push
// does not allocate once the buffers have grown to the capture's length
// (they start sized for a minute at 30 fps).
type Stream struct {
	in      Inputs
	tracker *face.Tracker

	start time.Duration // capture time of the first frame

	recs []frameRecord
	// The skin colour trace: frames with a face only.
	t, r, g, b []float64
	// The references of the trace (pulse.Camera): background luma, face
	// centre and side, same frames.
	bg, cx, cy, side []float64
	// The skin colour (R, G, B) of the two halves whose beat times are
	// compared to measure the timing noise (beats.SplitNoise): the forehead
	// and the two cheeks together, same frames. hidden is the trace index
	// of the last frame in which a half had no skin (-1: none); a window
	// reaching back to it gets no split.
	halves [2][3][]float64
	hidden int
}

// streamCapacity is the number of frames the buffers are first sized for.
const streamCapacity = 60 * 30

// NewStream starts the analysis of one capture. The cascade is shared
// read-only (face.LoadCascade); in says what the final Result holds.
func NewStream(c *face.Cascade, in Inputs) *Stream {
	s := &Stream{
		in:      in,
		tracker: face.NewTracker(c),
		recs:    make([]frameRecord, 0, streamCapacity),
		t:       make([]float64, 0, streamCapacity),
		r:       make([]float64, 0, streamCapacity),
		g:       make([]float64, 0, streamCapacity),
		b:       make([]float64, 0, streamCapacity),
		bg:      make([]float64, 0, streamCapacity),
		cx:      make([]float64, 0, streamCapacity),
		cy:      make([]float64, 0, streamCapacity),
		side:    make([]float64, 0, streamCapacity),
		hidden:  -1,
	}
	for h := range s.halves {
		for c := range s.halves[h] {
			s.halves[h][c] = make([]float64, 0, streamCapacity)
		}
	}
	return s
}

// Push adds a frame captured at the given time since the start of the
// capture (capture time, not arrival time: frames may arrive in bursts). A
// frame not later than the previous one is ignored, as are nil images.
func (s *Stream) Push(img image.Image, at time.Duration) {
	if img == nil || s.Stale(at) {
		return
	}
	s.Observe(s.tracker.Observe(img), at)
}

// Stale reports whether a frame captured at the given time is not later
// than the last accepted one: Push skips the tracker for it, Observe drops
// it, and a caller that must decode a frame first can skip that too.
func (s *Stream) Stale(at time.Duration) bool {
	return len(s.recs) > 0 && (at-s.start).Seconds() <= s.recs[len(s.recs)-1].t
}

// Observe adds the tracker's observation of a frame captured at the given
// time, for callers that run a face.Tracker themselves. Push is Observe of
// the Stream's own tracker.
func (s *Stream) Observe(o face.Observation, at time.Duration) {
	if s.Stale(at) {
		return
	}
	if len(s.recs) == 0 {
		s.start = at
	}
	ts := (at - s.start).Seconds()
	seen := o.Face && o.SkinPixels > 0
	s.recs = append(s.recs, frameRecord{
		t:            ts,
		face:         seen,
		faceFraction: float32(o.FaceFraction),
		luma:         float32(o.Luma),
		sceneLuma:    float32(o.SceneLuma),
		motion:       float32(o.Motion),
	})
	if seen {
		s.t = append(s.t, ts*1000)
		s.r = append(s.r, o.R)
		s.g = append(s.g, o.G)
		s.b = append(s.b, o.B)
		s.bg = append(s.bg, o.BackgroundLuma)
		s.cx = append(s.cx, o.CentreX)
		s.cy = append(s.cy, o.CentreY)
		s.side = append(s.side, o.Side)
		forehead := o.Regions[face.Forehead]
		cheeks := mix(o.Regions[face.LeftCheek], o.Regions[face.RightCheek])
		for h, c := range [2]face.Colour{forehead, cheeks} {
			if c.Pixels == 0 {
				// The slices stay aligned with the trace, but a window
				// holding this frame is not split (analyze): a step
				// to another colour would ring through the filters as
				// noise.
				s.hidden = len(s.t) - 1
				c = face.Colour{R: o.R, G: o.G, B: o.B}
			}
			s.halves[h][0] = append(s.halves[h][0], c.R)
			s.halves[h][1] = append(s.halves[h][1], c.G)
			s.halves[h][2] = append(s.halves[h][2], c.B)
		}
	}
}

// Frames is the number of frames accepted so far.
func (s *Stream) Frames() int { return len(s.recs) }

// FaceSince is the capture time, from the first frame, of the first frame
// with a face; false while no face has been seen.
func (s *Stream) FaceSince() (time.Duration, bool) {
	if len(s.t) == 0 {
		return 0, false
	}
	return time.Duration(math.Round(s.t[0] * float64(time.Millisecond))), true
}

// Result analyses the whole capture: the measure's variables and signal.
// It can be called more than once; frames pushed later are included in the
// next call.
func (s *Stream) Result() Result {
	if len(s.recs) == 0 {
		return missingCaptures(&s.in)
	}
	pa := s.analyze(0, false)
	return assemble(&pa, &s.in)
}

// analyze runs the capture checks and the pulse analysis over the frames
// from the given time (s) on; live says the capture is still going on.
//
// Frames before the face is first found and after it is last seen are
// someone getting ready or leaving, not a capture of the face: a recording
// started 8 s before its person sat down for 30 s was refused as a face
// missing from a fifth of the frames. The checks and the pulse cover the
// face's span. A span too short for a pulse is judged on all the frames
// instead: a face seen only briefly is a face missing. A live capture's
// last frames are the present, though: a face lost now is missing, and a
// face found only lately has just begun its measure.
func (s *Stream) analyze(fromS float64, live bool) pulseAnalysis {
	recs := s.recs[s.recordAt(fromS):]
	a, b := faceSpan(recs)
	if live {
		b = len(recs)
	}
	if b > a && (live || recs[b-1].t-recs[a].t >= MinSeconds) {
		recs = recs[a:b]
	}
	j := sort.SearchFloat64s(s.t, fromS*1000)
	q := assess(recs)
	var pa pulseAnalysis
	codes := q.codes()
	switch {
	case q.seconds < MinSeconds:
		pa.err = ConformityInitialisation
	case len(codes) > 0 && codes[0] == ConformityFacePresence:
		pa.err = codes[0]
	default:
		h := &s.halves
		t, ch := clean(s.t[j:], s.r[j:], s.g[j:], s.b[j:], s.bg[j:], s.cx[j:], s.cy[j:], s.side[j:],
			h[0][0][j:], h[0][1][j:], h[0][2][j:], h[1][0][j:], h[1][1][j:], h[1][2][j:])
		halves := ch[7:]
		if s.hidden >= j {
			halves = nil
		}
		pa = analyzePulse(t, ch[:3], halves, references(ch[3], ch[4:7:7]))
		pa.err = q.explain(pa.err)
	}
	pa.summary.Seconds = q.seconds
	return pa
}

// faceSpan returns the records from the first to the last with a face as
// recs[a:b]; a == b when none has one.
func faceSpan(recs []frameRecord) (a, b int) {
	b = len(recs)
	for a < b && !recs[a].face {
		a++
	}
	for b > a && !recs[b-1].face {
		b--
	}
	return a, b
}

// mix is the colour of two regions together: their means weighted by their
// skin pixels, as the tracker combines the regions of interest (it
// weighs by fractions of a pixel, so the two differ by rounding only).
func mix(a, b face.Colour) face.Colour {
	n := a.Pixels + b.Pixels
	if n == 0 {
		return face.Colour{}
	}
	wa, wb := float64(a.Pixels)/float64(n), float64(b.Pixels)/float64(n)
	return face.Colour{R: wa*a.R + wb*b.R, G: wa*a.G + wb*b.G, B: wa*a.B + wb*b.B, Pixels: n}
}

// recordAt is the index of the first frame record at or after the given
// time (s), len(s.recs) when there is none.
func (s *Stream) recordAt(ts float64) int {
	return sort.Search(len(s.recs), func(i int) bool { return s.recs[i].t >= ts })
}

// references returns the references of a camera trace from frames: the
// background luma, when every frame has one, and the face's position and
// size. Position and size are references even when the face stays put: a
// flat reference costs nothing.
func references(bg []float64, motion [][]float64) [][]float64 {
	refs := motion
	if !slices.Contains(bg, 0) {
		refs = append([][]float64{bg}, motion...)
	}
	return refs
}

// AnalyzeFrames runs a whole recording through a Stream, for callers that
// hold its frames as an iterator (tools, tests). The batch routes write this
// loop themselves around their decoders, whose errors an iterator of frames
// could not carry. frames yields each frame with its capture time since the
// start; the images may be reused by the producer after each step.
func AnalyzeFrames(c *face.Cascade, frames iter.Seq2[time.Duration, image.Image], in Inputs) Result {
	s := NewStream(c, in)
	for at, img := range frames {
		s.Push(img, at)
	}
	return s.Result()
}

// missingCaptures is the Result of a capture without a single frame.
func missingCaptures(in *Inputs) Result {
	pa := pulseAnalysis{err: MissingCaptures}
	return assemble(&pa, in)
}

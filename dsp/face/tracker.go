package face

import (
	"image"
	"math"
	"slices"
)

const (
	// detectEvery is how often, in frames, the cascade re-checks a tracked
	// face (about 6 times a second at 30 fps); block matching follows it in
	// between.
	detectEvery = 5
	// searchEvery is how often, in frames, the cascade searches the whole
	// frame while no face is tracked, and blazeSearchEvery how many of
	// those searches BlazeFace joins on the whole frame (about every 0.6
	// s; at once when a face is lost); the others end with BlazeFace on
	// one tile of the frame when the cascade finds nothing (searchTile). A
	// search costs the cascade 3-15 ms, more in a textured room, and
	// BlazeFace 15-20 ms: about 3-6 ms a frame. After idleSearches searches
	// without a face (2 s at 30 fps: the person has stepped away or not yet
	// sat down) they come half as often, which halves that and still finds
	// a face within 0.4 s of its return.
	searchEvery      = 6
	blazeSearchEvery = 3
	idleSearches     = 10
	// maxLooks is how many of the whole frame's BlazeFace faces, largest
	// first, a search looks at closer to confirm one.
	maxLooks = 2
	// BlazeFace re-reads a tracked face's landmarks (which place the
	// regions) and re-checks a face the cascade does not see (glasses, a
	// tilted or lowered head) every blazeGapMin frames at first (half a
	// second at 30 fps). Each run that finds the face where it was, with
	// the same pose, doubles the gap, up to blazeGapMax frames (2 s) while
	// the cascade confirms the face in between and blazeGapNoCascade (1 s)
	// while BlazeFace alone does; any change brings it back to the start.
	// A steady face then costs well under a millisecond a frame.
	blazeGapMin       = 15
	blazeGapMax       = 60
	blazeGapNoCascade = 30
	// blazeCrop is the side of the square BlazeFace reads around a tracked
	// face, in box sizes: the face then fills about a third of its input,
	// where the short-range model is surest.
	blazeCrop = 2.2
	// maxMisses consecutive failed re-checks drop the face.
	maxMisses = 3
	// minFaceFraction is the smallest face the full search looks for, as a
	// fraction of the frame's smaller side.
	minFaceFraction = 0.1
	// detectRows is the height of the grayscale image a full search scans:
	// the frame is averaged down to about this size first, which keeps the
	// cost independent of the camera resolution.
	detectRows = 240
	// localFace is the face size, in grayscale pixels, of a re-check around
	// the tracked box; the window around the box is averaged down to it.
	localFace = 48
	// minFrameSide is the smallest frame, in pixels, the tracker works on:
	// below it no face is big enough for the detector.
	minFrameSide = 48
	// Minimum summed detector score of a cluster: a full search needs more
	// evidence than a re-check where a face just was.
	minScoreSearch = 20
	minScoreLocal  = 8
	// Smoothing weights given to a re-check's centre and size: the box
	// moves towards the detection instead of jumping, which averages the
	// detector's jitter over several checks.
	centreGain = 0.3
	sizeGain   = 0.2
	// A re-check this far from the box (in face sizes, or as a relative
	// size change) replaces the box outright.
	jumpDistance = 0.3
	jumpSize     = 0.3
	// rekeyDistance (face sizes) of motion since the key frame takes a new
	// one even between detections.
	rekeyDistance = 0.1
	// deadBand (face sizes, and relative size) is how far a re-check may
	// be from the box and still leave it where block matching put it.
	deadBand = 0.04
)

// Tracker follows the largest face through a sequence of frames and measures
// its skin colour. It keeps per-stream state, so use one per stream; it is not
// safe for concurrent use. The Cascade it reads is shared.
type Tracker struct {
	c       *Cascade
	scratch *image.RGBA // conversion buffer for uncommon image types

	w, h   int
	origin image.Point
	gray   []uint8
	acc    []uint32
	hits   []hit

	found        bool
	cx, cy, size float64 // box centre and side, frame pixels
	keyX, keyY   float64 // box centre in the key frame of the block matcher
	moved        float64 // distance moved since the key frame, pixels
	lastX, lastY float64 // displacement from the key frame in the previous frame
	sinceDetect  int
	sinceSearch  int
	misses       int
	motion       matcher
	skin         skinModel
	chroma       chromaHist
	regions      [NumRegions]colourHist
	justAcquired bool // the box was (re)placed from scratch this frame
	detected     bool // the detector confirmed the face this frame
	placed       bool // the detector moved the box this frame

	blaze      *blazeState   // BlazeFace's working memory, made on first use
	pose       pose          // where the regions go in the box
	cascadeOK  bool          // the cascade confirmed the face at its last re-check
	sinceBlaze int           // frames since BlazeFace last ran on the face
	blazeGap   int           // frames from one BlazeFace run on the face to the next
	searches   int           // whole-frame searches since the face was lost
	oriented   bool          // BlazeFace has found the way up of the face
	flip       bool          // and it is upside down
	byBox      bool          // PlaceByBox
	tiles      []image.Point // searchTile's squares, centre first, made on first use
	tileSide   int
	nextTile   int
}

// NewTracker returns a tracker that detects faces with c.
func NewTracker(c *Cascade) *Tracker {
	return &Tracker{c: c}
}

// Reset forgets the tracked face and the skin model, as at the start of a new
// stream.
func (t *Tracker) Reset() {
	c, scratch, blaze, byBox := t.c, t.scratch, t.blaze, t.byBox
	*t = Tracker{c: c, scratch: scratch, blaze: blaze, byBox: byBox}
}

// PlaceByBox(true) places the regions of interest by the face box alone,
// where they lie on an upright, frontal face, instead of from BlazeFace's
// landmarks; PlaceByBox(false) goes back. It is there to measure what the
// landmarks are worth (make accuracy, face detection).
func (t *Tracker) PlaceByBox(on bool) { t.byBox = on }

// Observe finds or follows the face in img and measures it. Frames must come
// in capture order. It does not keep img. In steady state it allocates
// nothing for *image.RGBA, *image.YCbCr (read as JPEG's full range) and
// LimitedRange frames; other image types are converted first.
func (t *Tracker) Observe(img image.Image) Observation {
	f := wrap(img, &t.scratch)
	var obs Observation
	sceneSum, sceneN := f.lumaSum(lumaStep, rect{0, 0, f.w, f.h})
	if sceneN > 0 {
		obs.SceneLuma = float64(sceneSum) / float64(sceneN)
	}
	if f.w < minFrameSide || f.h < minFrameSide {
		// Too small to hold a detectable face.
		return obs
	}
	if f.w != t.w || f.h != t.h {
		t.Reset()
		t.w, t.h = f.w, f.h
	}
	t.origin = img.Bounds().Min

	t.justAcquired, t.detected, t.placed = false, false, false
	if t.found {
		if dx, dy, ok := t.motion.track(f); ok {
			t.cx, t.cy = t.keyX+dx, t.keyY+dy
			obs.Motion = math.Hypot(dx-t.lastX, dy-t.lastY) / t.size
			t.lastX, t.lastY = dx, dy
			t.moved = math.Hypot(dx, dy)
		}
		t.sinceDetect++
		t.sinceBlaze++
		if t.sinceDetect >= detectEvery || t.misses > 0 {
			t.recheck(f)
		} else if t.cascadeOK && t.sinceBlaze >= t.blazeGap {
			t.refreshPose(f)
		}
	} else {
		// At once when the face is lost, then every searchEvery frames,
		// and twice that once idle.
		every := searchEvery
		if t.searches >= idleSearches {
			every *= 2
		}
		if t.sinceSearch == 0 || t.sinceSearch >= every {
			t.search(f)
		}
		t.sinceSearch++
	}
	if !t.found {
		return obs
	}
	if t.justAcquired {
		obs.Motion = 0
	}
	t.measure(f, &obs)
	obs.BackgroundLuma = t.background(f, sceneSum, sceneN)
	// A new key frame when the detector has moved the box, and when the
	// face has moved far from the key frame (its texture may have turned).
	// A still face keeps its key frame, so its box does not move at all.
	if t.placed || !t.motion.ready || t.moved > rekeyDistance*t.size {
		t.motion.capture(f, t.cx, t.cy, t.size)
		t.keyX, t.keyY, t.lastX, t.lastY, t.moved = t.cx, t.cy, 0, 0, 0
	}
	return obs
}

// search looks for the largest face in the whole frame: on every
// blazeSearchEvery-th search first with BlazeFace, which finds faces turned,
// tilted or partly covered and confirms each with a closer look, then with
// the cascade, which finds faces too small for BlazeFace's 128-pixel view
// of the frame (below about a quarter of the frame's height) when they are
// upright and frontal. The other searches end, when the cascade finds
// nothing, with BlazeFace on one tile of the frame (searchTile).
func (t *Tracker) search(f frame) {
	t.sinceSearch = 0
	t.searches++
	blazeTurn := t.searches%blazeSearchEvery == 1
	if blazeTurn && t.confirm(f, t.c.wholeFrame(f, t.blazeState(), CandidateScore), ConfirmScore) {
		return
	}
	k := max(1, (min(f.w, f.h)+detectRows/2)/detectRows)
	gw, gh := f.w/k, f.h/k
	cx, cy, size, ok := t.detect(f, window{0, 0, gw, gh, k},
		max(20, int(minFaceFraction*float64(min(gw, gh)))), min(gw, gh)-2, 0.1, minScoreSearch)
	if !ok {
		if !blazeTurn {
			t.searchTile(f)
		}
		return
	}
	t.acquire(cx, cy, size)
	t.pose = pose{}
	// Read the landmarks on the next frame, around the face just found,
	// both ways up: the cascade finds some faces upside down.
	t.sinceBlaze = t.blazeGap
	t.oriented, t.flip = false, false
}

// confirm looks closer at BlazeFace's candidates, largest first, and
// follows the first that the closer look scores at least minScore.
func (t *Tracker) confirm(f frame, cands []blazeFace, minScore float32) bool {
	for i, d := range cands {
		if i == maxLooks {
			break
		}
		b := d.toBox()
		t.oriented = false
		if e, ok := t.lookOriented(f, b.cx, b.cy, b.size, minScore); ok {
			b = e.toBox()
			t.acquire(b.cx, b.cy, b.size)
			t.pose = b.pose
			t.sinceBlaze = 0
			return true
		}
	}
	return false
}

// tileConfirmScore is the closer look's score that confirms a face found in
// a tile. Fifteen tiles give a faceless scene fifteen more chances to look
// like a face: at ConfirmScore a sweep took something in 4 of the face
// check's 64 faceless frames (make accuracy) for a face, scoring 0.70-0.72
// closer (a cat in a dim room, a field of galaxies), where the small faces
// of the generator's webcam-like frames score 0.87-0.97.
const tileConfirmScore = 0.8

// searchTile runs BlazeFace on the next of the frame's tiles, centre first:
// squares of half the frame's smaller side, overlapping by half, so that
// every face up to a quarter of the frame's height lies whole in one. A
// face of a tenth of the height fills a fifth of the tile, where BlazeFace
// finds it behind glasses, bowed or in a dim room; in the whole frame's
// view it is a dozen pixels. Every search then costs one BlazeFace run,
// and two searches in three sweep the 15 tiles of a 4:3 frame in 4.5 s
// (twice that once idle), the middle ones first.
func (t *Tracker) searchTile(f frame) {
	if t.tiles == nil {
		t.tileSide, t.tiles = tiles(f.w, f.h)
	}
	if len(t.tiles) == 0 {
		return
	}
	p := t.tiles[t.nextTile%len(t.tiles)]
	t.nextTile++
	t.confirm(f, t.c.candidates(f, t.blazeState(), p.X, p.Y, t.tileSide, CandidateScore), tileConfirmScore)
}

// tiles returns the side and the top-left corners, centre first, of the
// squares that searchTile looks at in a w x h frame: none when the frame is
// too small for a square of half its side to show BlazeFace more than its
// view of the whole frame does.
func tiles(w, h int) (int, []image.Point) {
	side := min(w, h) / 2
	if side < blazeSide/2 {
		return 0, nil
	}
	along := func(n int) []int {
		var at []int
		for x := 0; ; x += side / 2 {
			if x+side >= n {
				return append(at, n-side)
			}
			at = append(at, x)
		}
	}
	var corners []image.Point
	for _, y := range along(h) {
		for _, x := range along(w) {
			corners = append(corners, image.Pt(x, y))
		}
	}
	off := func(p image.Point) int {
		dx, dy := 2*p.X+side-w, 2*p.Y+side-h
		return dx*dx + dy*dy
	}
	slices.SortStableFunc(corners, func(a, b image.Point) int { return off(a) - off(b) })
	return side, corners
}

// acquire places a new box.
func (t *Tracker) acquire(cx, cy, size float64) {
	t.cx, t.cy, t.size = cx, cy, size
	t.found, t.justAcquired, t.detected, t.placed = true, true, true, true
	t.sinceDetect, t.misses = 0, 0
	t.skin = skinModel{}
	// The first re-check tries the cheap cascade.
	t.cascadeOK = true
	t.blazeGap = blazeGapMin
}

// window is a grid of w x h cells of k x k pixels whose first cell's
// top-left corner is pixel (k*x0, k*y0).
type window struct{ x0, y0, w, h, k int }

// detect averages the frame down onto the window's grid and returns the
// centre and size, in frame pixels, of the largest face among windows of
// minSize to maxSize cells.
func (t *Tracker) detect(f frame, g window, minSize, maxSize int, step, minScore float64) (cx, cy, size float64, ok bool) {
	t.gray = grow(t.gray, g.w*g.h)
	t.acc = grow(t.acc, g.w)
	f.cells(t.gray, t.acc, g.x0*g.k, g.y0*g.k, g.w, g.h, g.k)
	p := scanParams{minSize: minSize, maxSize: maxSize, step: step, grow: 1.1, area: rect{0, 0, g.w, g.h}}
	t.hits = t.c.faces.scan(t.hits[:0], t.gray, g.w, p)
	cl, ok := largest(t.hits, minScore)
	if !ok {
		return 0, 0, 0, false
	}
	// Cell i covers pixels [(x0+i)k, (x0+i+1)k): its centre is (x0+i+1/2)k.
	k := float64(g.k)
	return (float64(g.x0) + cl.col + 0.5) * k, (float64(g.y0) + cl.row + 0.5) * k, cl.size * k, true
}

// recheck confirms the tracked face and pulls the box towards it: the
// cascade first (on a face the right way up), as it costs a fraction of a
// millisecond, and BlazeFace when the cascade misses: at once when the
// cascade saw the face before (the head may have turned, or left), else
// when its gap is up or a re-check already missed.
func (t *Tracker) recheck(f frame) {
	t.sinceDetect = 0
	// The cascade knows upright faces only: on a face upside down it
	// finds the features turned round and would pull the box off them.
	if !t.flip {
		if cx, cy, size, ok := t.recheckCascade(f); ok {
			t.cascadeOK = true
			t.follow(cx, cy, size)
			if t.sinceBlaze >= t.blazeGap {
				t.refreshPose(f)
			}
			return
		}
	}
	if !t.cascadeOK && t.sinceBlaze < t.blazeGap && t.misses == 0 {
		return
	}
	t.cascadeOK = false
	d, ok := t.blazeAround(f)
	if !ok {
		t.blazeGap = blazeGapMin
		t.misses++
		if t.misses >= maxMisses {
			t.found = false
			t.sinceSearch, t.searches = 0, 0
		}
		return
	}
	moved := t.follow(d.cx, d.cy, d.size)
	t.paceBlaze(t.setPose(d.pose) || moved)
}

// refreshPose re-reads the landmarks of a face the cascade follows; the
// box stays where the cascade and the block matcher put it.
func (t *Tracker) refreshPose(f frame) {
	d, ok := t.blazeAround(f)
	t.paceBlaze(!ok || t.setPose(d.pose))
}

// paceBlaze sets the gap to the next BlazeFace run on the face: back to
// the start after a change, else twice as long, up to the limit of the
// state the face is in.
func (t *Tracker) paceBlaze(changed bool) {
	limit := blazeGapMax
	if !t.cascadeOK {
		limit = blazeGapNoCascade
	}
	if changed {
		t.blazeGap = blazeGapMin
		return
	}
	t.blazeGap = min(2*t.blazeGap, limit)
}

// setPose takes new landmarks when they moved enough to matter, and
// reports whether they did: small changes would only shift the regions by
// the detector's own jitter.
func (t *Tracker) setPose(p pose) bool {
	if !t.pose.differs(p) {
		return false
	}
	t.pose = p
	t.placed = true
	return true
}

// blazeAround runs BlazeFace around the tracked face and returns the face
// nearest the box.
func (t *Tracker) blazeAround(f frame) (blazeBox, bool) {
	t.sinceBlaze = 0
	d, ok := t.lookOriented(f, t.cx, t.cy, t.size, keepScore)
	return d.toBox(), ok
}

// upsideDownMargin is how much more BlazeFace must score a face turned
// upside down than as it is to take it for upside down. BlazeFace finds
// some upside-down faces as they are, reading them as upright (the
// generator's portrait at 0.72-0.83), with the eyes where the mouth is.
// On the labelled frames of the face check (make accuracy), no upright
// face of 793 scored higher turned upside down, and the 64 upside-down
// views of them that BlazeFace found as they are all scored more than 0.1
// higher turned back; the tracker reads all 594 upright faces it finds
// the right way up, and 442 of the 451 it finds upside down.
const upsideDownMargin = 0.1

// lookOriented runs BlazeFace around the box (cx, cy, size) the way up the
// tracked face is. Until that is known it looks both ways and keeps the
// face upside down only when that scores upsideDownMargin more; the way
// up of the first face it finds holds until the face is lost, so this
// costs one more run per face found.
func (t *Tracker) lookOriented(f frame, cx, cy, size float64, minScore float32) (blazeFace, bool) {
	s := t.blazeState()
	if t.oriented {
		return t.c.lookAround(f, s, cx, cy, size, minScore, t.flip)
	}
	d, ok := t.c.lookAround(f, s, cx, cy, size, minScore, false)
	u, uok := t.c.lookAround(f, s, cx, cy, size, minScore, true)
	switch {
	case uok && (!ok || u.score > d.score+upsideDownMargin):
		t.oriented, t.flip = true, true
		return u, true
	case ok:
		t.oriented, t.flip = true, false
		return d, true
	}
	return d, false
}

// blazeState returns BlazeFace's working memory, made on first use.
func (t *Tracker) blazeState() *blazeState {
	if t.blaze == nil {
		t.blaze = newBlazeState(t.c.blaze)
	}
	return t.blaze
}

// recheckCascade runs the cascade in a window around the tracked box, at
// sizes near its own.
func (t *Tracker) recheckCascade(f frame) (cx, cy, size float64, ok bool) {
	k := max(1, int(t.size/localFace))
	// The window spans 1.8 box sizes around the centre so a detection can
	// be up to a third of a face size off and a quarter bigger.
	half := int(0.9*t.size) / k
	side := 2 * half
	s := t.size / float64(k)
	return t.detect(f, window{int(t.cx)/k - half, int(t.cy)/k - half, side, side, k},
		int(0.8*s), min(int(1.25*s), side-2), 0.08, minScoreLocal)
}

// follow moves the box towards a detection at (cx, cy) of the given size,
// and reports whether it moved.
func (t *Tracker) follow(cx, cy, size float64) bool {
	t.misses = 0
	t.detected = true
	off, grown := math.Hypot(cx-t.cx, cy-t.cy)/t.size, math.Abs(size/t.size-1)
	switch {
	case off > jumpDistance || grown > jumpSize:
		t.cx, t.cy, t.size = cx, cy, size
		t.justAcquired, t.placed = true, true
	case off > deadBand || grown > deadBand:
		t.cx += centreGain * (cx - t.cx)
		t.cy += centreGain * (cy - t.cy)
		t.size += sizeGain * (size - t.size)
		t.placed = true
	default:
		// Within the dead band the detection only confirms the face:
		// moving the box by the detector's own jitter would shift the
		// regions over the skin and put that jitter into the colour means.
		return false
	}
	return true
}

// measure fills the face fields of obs from frame f.
func (t *Tracker) measure(f frame, obs *Observation) {
	p := t.pose
	if t.byBox {
		p = pose{}
	}
	var areas [NumRegions]area
	for r := range NumRegions {
		areas[r] = p.roi(r, t.cx, t.cy, t.size)
	}
	// Refit the skin model whenever the detector moves the box, before the
	// pixels are classified; between moves the mask stays as it was.
	if t.placed || !t.skin.ready {
		t.chroma = chromaHist{}
		var n int32
		for _, a := range areas {
			f.eachCovered(a, func(_ int32, _, _, _, y, cb, cr uint8) {
				t.chroma.add(y, cb, cr)
				n++
			})
		}
		t.skin.fit(&t.chroma, n/4+1)
	}
	// The whole is the pixel-weighted mean of the regions' trimmed means:
	// trimming the pooled pixels instead would cut at points that jump
	// between the regions' different skin tones as their sizes change.
	var m Colour
	var weight float64
	var covered int64 // the regions' pixels inside the frame, in 1/coverUnit^2
	for i, a := range areas {
		h := &t.regions[i]
		*h = colourHist{}
		f.eachCovered(a, func(cover int32, r, g, b, y, cb, cr uint8) {
			covered += int64(cover)
			if !t.skin.ready {
				return
			}
			if w := cover * t.skin.weight(r, g, b, y, cb, cr); w > 0 {
				h.add(r, g, b, y, w)
			}
		})
		obs.Regions[i] = h.mean()
		for k, c := range a.corners() {
			obs.Outlines[i][k] = [2]float64{c[0] + float64(t.origin.X), c[1] + float64(t.origin.Y)}
		}
		w := float64(h.n)
		m.R += w * obs.Regions[i].R
		m.G += w * obs.Regions[i].G
		m.B += w * obs.Regions[i].B
		m.Pixels += obs.Regions[i].Pixels
		weight += w
	}
	if weight > 0 {
		m.R, m.G, m.B = m.R/weight, m.G/weight, m.B/weight
	}
	obs.Face = true
	obs.Detected = t.detected
	obs.Box = blazeBox{cx: t.cx, cy: t.cy, size: t.size}.rect().Add(t.origin)
	obs.FaceFraction = t.size / float64(f.h)
	obs.CentreX, obs.CentreY = t.cx+float64(t.origin.X), t.cy+float64(t.origin.Y)
	obs.Side = t.size
	obs.Roll = p.roll
	obs.Landmarks = p.landmarks
	obs.R, obs.G, obs.B, obs.SkinPixels = m.R, m.G, m.B, m.Pixels
	if covered > 0 {
		obs.SkinFraction = min(1, float64(m.Pixels)/(float64(covered)/coverUnit/coverUnit))
	}
	if m.Pixels > 0 {
		obs.Luma = 0.299*m.R + 0.587*m.G + 0.114*m.B
	}
}

// lumaStep is the sampling grid of the scene and background lumas, pixels.
const lumaStep = 4

// background returns the mean luma outside the face, its hair and the body
// below (Observation.BackgroundLuma), given the luma sum and count of the
// whole frame on the lumaStep grid.
func (t *Tracker) background(f frame, sceneSum uint64, sceneN int) float64 {
	excl := rect{int(t.cx - 0.8*t.size), int(t.cy - 0.9*t.size), int(t.cx + 0.8*t.size + 1), f.h}
	inSum, inN := f.lumaSum(lumaStep, excl)
	if n := sceneN - inN; n > 0 && 10*n >= sceneN {
		return float64(sceneSum-inSum) / float64(n)
	}
	return 0
}

// grow returns b resized to n, reallocating only when it is too small.
func grow[T any](b []T, n int) []T {
	if cap(b) < n {
		return make([]T, n)
	}
	return b[:n]
}

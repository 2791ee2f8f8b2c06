package face

import (
	"image"
	"math"
	"slices"
)

// BlazeFace (Bazarevsky et al., "BlazeFace: Sub-millisecond Neural Face
// Detection on Mobile GPUs", 2019) is a single-shot detector: a 128x128 RGB
// image in, and for each of 896 anchors on a 16x16 and an 8x8 grid a face
// score, a box and six keypoints out. The weights are MediaPipe's
// short-range model, for faces within about two metres of the camera
// (model/PROVENANCE.md). The anchors and the decoding follow MediaPipe's
// face_detection_short_range graph: SSD anchors with strides 8 and 16,
// two anchors per cell of the 16x16 grid and six per cell of the 8x8 grid,
// all of unit size centred on their cell; offsets in input pixels.

// blazeSide is the side of the network's square input, pixels.
const blazeSide = 128

// Keypoints of a BlazeFace detection, as MediaPipe names them: the
// person's right eye is the one on the left of an unmirrored image.
const (
	keyRightEye = iota
	keyLeftEye
	keyNose
	keyMouth
	keyRightEar
	keyLeftEar
	numKeys
)

// blazeFace is one detected face in frame pixels.
type blazeFace struct {
	x0, y0, x1, y1 float64 // box
	score          float64 // 0-1
	keys           [numKeys][2]float64
}

func (b blazeFace) area() float64 { return max(0, b.x1-b.x0) * max(0, b.y1-b.y0) }

// iou is the intersection over union of two boxes.
func (b blazeFace) iou(o blazeFace) float64 {
	w := min(b.x1, o.x1) - max(b.x0, o.x0)
	h := min(b.y1, o.y1) - max(b.y0, o.y0)
	if w <= 0 || h <= 0 {
		return 0
	}
	inter := w * h
	return inter / (b.area() + o.area() - inter)
}

// anchor centres, in units of the input side, in the order of the outputs.
var blazeAnchors = func() [][2]float32 {
	var a [][2]float32
	for _, g := range []struct{ cells, per int }{{16, 2}, {8, 6}} {
		for y := range g.cells {
			for x := range g.cells {
				for range g.per {
					a = append(a, [2]float32{(float32(x) + 0.5) / float32(g.cells), (float32(y) + 0.5) / float32(g.cells)})
				}
			}
		}
	}
	return a
}()

// blazeState is one tracker's working memory for the detector: the
// network's activations, the input's row sums and the candidates.
type blazeState struct {
	net   *netState
	acc   []uint32 // per input column: r, g, b sums and pixel count
	cells []int32  // per frame column of the region: its input column
	cands []blazeFace
	faces []blazeFace
	whole []blazeFace // the whole frame's faces while each is looked at closer
}

func newBlazeState(n *network) *blazeState {
	return &blazeState{
		net:   n.newState(),
		acc:   make([]uint32, 4*blazeSide),
		cands: make([]blazeFace, 0, len(blazeAnchors)),
		faces: make([]blazeFace, 0, len(blazeAnchors)),
		whole: make([]blazeFace, 0, len(blazeAnchors)),
	}
}

// BlazeFace's score cut-offs (scores 0-1), chosen on the labelled frames of
// the accuracy check, which prints the curves (make accuracy, face
// detection). A face in the whole frame scoring CandidateScore is looked at
// again, closer, and taken when that look scores ConfirmScore: a face seen
// from nearer fills more of the detector's view and scores higher, while a
// cat, a coffee cup or a star field that looked like one from afar rarely
// does. Once taken, a face is kept while re-checks around it score
// keepScore, MediaPipe's own cut-off: less evidence keeps a face than
// starts one, so a face that turns or darkens for a moment is not dropped.
const (
	CandidateScore = 0.4
	ConfirmScore   = 0.7
	keepScore      = 0.5
)

// detectBlaze runs the network on the square region of side pixels whose
// top-left corner is (x0, y0) in frame pixels (it may reach outside the
// frame, which reads as black) and returns the faces found, largest first,
// in frame pixels. With flip the network sees the region turned upside
// down, so that it finds a face that is upside down in the frame as the
// upright face it was trained on; the boxes and keypoints come back in the
// frame's own pixels all the same. The slice is reused by the next call.
func (c *Cascade) detectBlaze(f frame, s *blazeState, x0, y0, side int, minScore float32, flip bool) []blazeFace {
	side = max(side, blazeSide)
	in := c.blaze.tensor(s.net, 0)
	f.sampleRGB(in, s, x0, y0, side)
	if flip {
		// Turning a picture by half a circle reverses its pixels' order.
		for i, j := 0, len(in)-3; i < j; i, j = i+3, j-3 {
			in[i], in[i+1], in[i+2], in[j], in[j+1], in[j+2] = in[j], in[j+1], in[j+2], in[i], in[i+1], in[i+2]
		}
	}
	c.blaze.run(s.net)
	scale := float64(side) / blazeSide
	s.cands = s.cands[:0]
	// The heads: scores and boxes of the 16x16 grid (2 anchors a cell),
	// then of the 8x8 grid (6 a cell), 16 box values per anchor.
	a := 0
	for h := 0; h < 4; h += 2 {
		scores := c.blaze.tensor(s.net, c.blaze.outputs[h])
		boxes := c.blaze.tensor(s.net, c.blaze.outputs[h+1])
		for i, raw := range scores {
			anc := blazeAnchors[a]
			a++
			if sigmoid(raw) < minScore {
				continue
			}
			r := boxes[16*i : 16*i+16]
			cx := float64(r[0] + anc[0]*blazeSide)
			cy := float64(r[1] + anc[1]*blazeSide)
			d := blazeFace{
				x0: float64(x0) + (cx-float64(r[2])/2)*scale, x1: float64(x0) + (cx+float64(r[2])/2)*scale,
				y0: float64(y0) + (cy-float64(r[3])/2)*scale, y1: float64(y0) + (cy+float64(r[3])/2)*scale,
				score: float64(sigmoid(raw)),
			}
			for k := range numKeys {
				d.keys[k] = [2]float64{
					float64(x0) + float64(r[4+2*k]+anc[0]*blazeSide)*scale,
					float64(y0) + float64(r[5+2*k]+anc[1]*blazeSide)*scale,
				}
			}
			if flip {
				// A point p of the turned region lies at 2*x0+side-p.
				mx, my := float64(2*x0+side), float64(2*y0+side)
				d.x0, d.x1, d.y0, d.y1 = mx-d.x1, mx-d.x0, my-d.y1, my-d.y0
				for k := range numKeys {
					d.keys[k] = [2]float64{mx - d.keys[k][0], my - d.keys[k][1]}
				}
			}
			s.cands = append(s.cands, d)
		}
	}
	return s.blend()
}

// blend merges overlapping candidates as MediaPipe's weighted non-maximum
// suppression does: from the best scored, every candidate overlapping it by
// more than 0.3 IoU joins it, and the merged box and keypoints are their
// score-weighted means. The faces come back largest first.
func (s *blazeState) blend() []blazeFace {
	slices.SortFunc(s.cands, func(a, b blazeFace) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return 0
	})
	s.faces = s.faces[:0]
	rest := s.cands
	for len(rest) > 0 {
		top := rest[0]
		var m blazeFace
		var w float64
		keep := rest[:0]
		for _, d := range rest {
			if d.iou(top) <= 0.3 {
				keep = append(keep, d)
				continue
			}
			m.x0 += d.score * d.x0
			m.y0 += d.score * d.y0
			m.x1 += d.score * d.x1
			m.y1 += d.score * d.y1
			for k := range m.keys {
				m.keys[k][0] += d.score * d.keys[k][0]
				m.keys[k][1] += d.score * d.keys[k][1]
			}
			w += d.score
		}
		rest = keep
		m.x0, m.y0, m.x1, m.y1 = m.x0/w, m.y0/w, m.x1/w, m.y1/w
		for k := range m.keys {
			m.keys[k][0] /= w
			m.keys[k][1] /= w
		}
		m.score = top.score
		s.faces = append(s.faces, m)
	}
	slices.SortFunc(s.faces, func(a, b blazeFace) int {
		switch {
		case a.area() > b.area():
			return -1
		case a.area() < b.area():
			return 1
		}
		return 0
	})
	return s.faces
}

func sigmoid(x float32) float32 {
	x = min(max(x, -100), 100)
	return 1 / (1 + float32(math.Exp(float64(-x))))
}

// sampleRGB fills dst (blazeSide x blazeSide x 3) with the colour of the
// square region of side >= blazeSide pixels at (x0, y0), scaled from 0-255
// to -1..1 as the network was trained. Each input pixel averages the frame
// pixels that fall in it, read on a grid of every step-th row and column
// (step is half the scale, so each input pixel still averages four or more
// samples, as a bilinear resize would read); parts outside the frame read
// as black.
func (f frame) sampleRGB(dst []float32, s *blazeState, x0, y0, side int) {
	scale := float64(side) / blazeSide
	step := max(1, int(scale/2))
	fx0, fx1 := max(x0, 0), min(x0+side, f.w)
	s.cells = grow(s.cells, max(fx1-fx0, 0))
	for x := fx0; x < fx1; x++ {
		s.cells[x-fx0] = int32(min(float64(x-x0)/scale, blazeSide-1))
	}
	for i := range dst {
		dst[i] = -1
	}
	row := -1
	flush := func() {
		if row < 0 {
			return
		}
		out := dst[row*blazeSide*3 : (row+1)*blazeSide*3]
		for i := range blazeSide {
			a := s.acc[4*i : 4*i+4]
			if a[3] > 0 {
				inv := 2 / (255 * float32(a[3]))
				out[3*i] = float32(a[0])*inv - 1
				out[3*i+1] = float32(a[1])*inv - 1
				out[3*i+2] = float32(a[2])*inv - 1
			}
		}
		clear(s.acc)
	}
	clear(s.acc)
	for y := max(y0, 0); y < min(y0+side, f.h); y += step {
		if r := int(min(float64(y-y0)/scale, blazeSide-1)); r != row {
			flush()
			row = r
		}
		for x := fx0; x < fx1; x += step {
			r, g, b := f.rgb(x, y)
			a := s.acc[4*s.cells[x-fx0] : 4*s.cells[x-fx0]+4]
			a[0] += uint32(r)
			a[1] += uint32(g)
			a[2] += uint32(b)
			a[3]++
		}
	}
	flush()
}

// wholeFrame returns the faces BlazeFace sees in the whole frame scoring
// at least minScore, largest first, in s.whole.
func (c *Cascade) wholeFrame(f frame, s *blazeState, minScore float32) []blazeFace {
	side := max(f.w, f.h)
	return c.candidates(f, s, (f.w-side)/2, (f.h-side)/2, side, minScore)
}

// candidates returns the faces detectBlaze finds in a square of the frame,
// in s.whole, where a closer look at each does not overwrite them.
func (c *Cascade) candidates(f frame, s *blazeState, x0, y0, side int, minScore float32) []blazeFace {
	s.whole = append(s.whole[:0], c.detectBlaze(f, s, x0, y0, side, minScore, false)...)
	return s.whole
}

// lookAround runs BlazeFace on the square blazeCrop sizes wide around the
// face box (cx, cy, size), turned upside down with flip, and returns the
// face it finds nearest the box's centre, within half a size.
func (c *Cascade) lookAround(f frame, s *blazeState, cx, cy, size float64, minScore float32, flip bool) (blazeFace, bool) {
	side := max(int(blazeCrop*size), blazeSide)
	var best blazeFace
	found, bestDist := false, 0.5*size
	for _, d := range c.detectBlaze(f, s, int(cx)-side/2, int(cy)-side/2, side, minScore, flip) {
		b := d.toBox()
		if dist := math.Hypot(b.cx-cx, b.cy-cy); dist <= bestDist {
			best, bestDist, found = d, dist, true
		}
	}
	return best, found
}

// Detection is a face found in a still image.
type Detection struct {
	// Box is square, centred just below the eyes, eyebrows to chin, as
	// Observation.Box; Score is BlazeFace's confidence in it, 0-1, both
	// from the whole image.
	Box   image.Rectangle
	Score float64
	// CloserBox and CloserScore are the same face on a second look, the
	// detector run again on the square 2.2 box sides around Box; a score
	// of 0 when that look did not find it.
	CloserBox   image.Rectangle
	CloserScore float64
}

// FindFaces returns the faces BlazeFace finds in a still image scoring at
// least minScore, largest first, each looked at again closer. The whole
// image is scaled into the detector's 128x128 view, so faces under about a
// quarter of the image's longer side are missed; Tracker finds those with
// the cascade. It allocates its working memory on each call.
func (c *Cascade) FindFaces(img image.Image, minScore float64) []Detection {
	var scratch *image.RGBA
	f := wrap(img, &scratch)
	s := newBlazeState(c.blaze)
	var out []Detection
	for _, d := range c.wholeFrame(f, s, float32(minScore)) {
		b := d.toBox()
		det := Detection{Box: b.rect().Add(img.Bounds().Min), Score: d.score}
		// Down to a tenth, to tell how far below the cut-off a face fell.
		if e, ok := c.lookAround(f, s, b.cx, b.cy, b.size, 0.1, false); ok {
			det.CloserBox, det.CloserScore = e.toBox().rect().Add(img.Bounds().Min), e.score
		}
		out = append(out, det)
	}
	return out
}

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
}

func newBlazeState(n *network) *blazeState {
	return &blazeState{
		net:   n.newState(),
		acc:   make([]uint32, 4*blazeSide),
		cands: make([]blazeFace, 0, len(blazeAnchors)),
		faces: make([]blazeFace, 0, len(blazeAnchors)),
	}
}

// blazeMinScore is the score a detection needs. MediaPipe's graph uses
// 0.5; the value here was chosen on the labelled photos of the accuracy
// check, where it keeps false detections on faceless frames at zero.
const blazeMinScore = 0.5

// detectBlaze runs the network on the square region of side pixels whose
// top-left corner is (x0, y0) in frame pixels (it may reach outside the
// frame, which reads as black) and returns the faces found, largest first,
// in frame pixels. The slice is reused by the next call.
func (c *Cascade) detectBlaze(f frame, s *blazeState, x0, y0, side int) []blazeFace {
	side = max(side, blazeSide)
	in := c.blaze.tensor(s.net, 0)
	f.sampleRGB(in, s, x0, y0, side)
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
			if sigmoid(raw) < blazeMinScore {
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

// runBlaze runs BlazeFace on the square region and returns its largest face
// in the tracker's terms.
func (t *Tracker) runBlaze(f frame, x0, y0, side int) (blazeBox, bool) {
	if t.blaze == nil {
		t.blaze = newBlazeState(t.c.blaze)
	}
	t.sinceBlaze = 0
	faces := t.c.detectBlaze(f, t.blaze, x0, y0, side)
	if len(faces) == 0 {
		return blazeBox{}, false
	}
	return faces[0].toBox(), true
}

// FindFaces returns the faces BlazeFace finds in a still image, largest
// first, as boxes of the tracker's kind (Observation.Box): square, centred
// just below the eyes, eyebrows to chin. The whole image is scaled into the
// detector's 128x128 view, so faces under about a quarter of the image's
// longer side are missed; Tracker finds those with the cascade. It
// allocates its working memory on each call.
func (c *Cascade) FindFaces(img image.Image) []image.Rectangle {
	var scratch *image.RGBA
	f := wrap(img, &scratch)
	s := newBlazeState(c.blaze)
	side := max(f.w, f.h)
	var out []image.Rectangle
	for _, d := range c.detectBlaze(f, s, (f.w-side)/2, (f.h-side)/2, side) {
		b := d.toBox()
		h := b.size / 2
		out = append(out, image.Rect(int(b.cx-h+0.5), int(b.cy-h+0.5), int(b.cx+h+0.5), int(b.cy+h+0.5)).Add(img.Bounds().Min))
	}
	return out
}

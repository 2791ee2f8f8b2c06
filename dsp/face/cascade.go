package face

import (
	"embed"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"
)

// The cascades are pigo's trained PICO models (MIT licence, cascade/LICENSE),
// shipped in the repository because go:embed cannot reach into another
// module. facefinder detects frontal faces; puploc finds pupils; lp81, lp82,
// lp84 and lp93 find points on the mouth and nose.
//
//go:embed cascade/facefinder cascade/puploc cascade/lp81 cascade/lp82 cascade/lp84 cascade/lp93
var cascadeFiles embed.FS

// blazeFile is MediaPipe's BlazeFace short-range detector (Apache-2.0,
// model/LICENSE; where it comes from and how it was converted:
// model/PROVENANCE.md).
//
//go:embed model/blazeface.bin
var blazeFile []byte

// Cascade is the loaded face model: the face detector and the landmark
// localisers. It is read-only after loading, so one Cascade serves any number
// of concurrent Trackers and estimates.
type Cascade struct {
	faces  *detector
	pupil  *localizer
	mouth  *localizer // lp84: a mouth corner (mirrored for the other one)
	lipTop *localizer // lp81
	lipLow *localizer // lp82
	nose   *localizer // lp93
	blaze  *network   // BlazeFace (blazeface.go)
}

var loadOnce = sync.OnceValues(load)

// LoadCascade returns the face model, parsed once per process and shared.
func LoadCascade() (*Cascade, error) { return loadOnce() }

func load() (*Cascade, error) {
	read := func(name string) ([]byte, error) {
		return cascadeFiles.ReadFile("cascade/" + name)
	}
	b, err := read("facefinder")
	if err != nil {
		return nil, err
	}
	c := &Cascade{}
	if c.faces, err = parseDetector(b); err != nil {
		return nil, fmt.Errorf("face cascade facefinder: %w", err)
	}
	for _, l := range []struct {
		name string
		dst  **localizer
	}{{"puploc", &c.pupil}, {"lp84", &c.mouth}, {"lp81", &c.lipTop}, {"lp82", &c.lipLow}, {"lp93", &c.nose}} {
		if b, err = read(l.name); err != nil {
			return nil, err
		}
		if *l.dst, err = parseLocalizer(b); err != nil {
			return nil, fmt.Errorf("face cascade %s: %w", l.name, err)
		}
	}
	if c.blaze, err = parseNetwork(blazeFile); err != nil {
		return nil, fmt.Errorf("face model blazeface: %w", err)
	}
	return c, nil
}

var errCascadeFormat = errors.New("malformed cascade")

// detector is a PICO object detector: a sequence of binary decision trees
// whose nodes compare the intensities of two pixels placed relative to the
// scanned window (Markuš et al., "Object Detection with Pixel Intensity
// Comparisons Organized in Decision Trees", 2013). A window is rejected as soon
// as the running sum of leaf scores falls to a tree's threshold.
//
// We evaluate the model ourselves rather than with pigo's RunCascade because
// the tracker needs a scan restricted to a window around the last face, into
// a reused buffer, with no allocation per frame.
type detector struct {
	depth      int
	leaves     int       // 2^depth
	codes      []int8    // per tree, per inner node: row1, col1, row2, col2 offsets in 1/256 of the window size
	preds      []float32 // per tree, per leaf
	thresholds []float32 // per tree
}

// parseDetector reads pigo's facefinder format: 8 ignored bytes, depth and
// tree count (little-endian uint32), then per tree 4*(2^depth-1) node bytes,
// 2^depth float32 leaf scores and one float32 threshold. Every length is
// checked, unlike pigo's Unpack.
func parseDetector(b []byte) (*detector, error) {
	if len(b) < 16 {
		return nil, errCascadeFormat
	}
	depth := int(binary.LittleEndian.Uint32(b[8:]))
	trees := int(binary.LittleEndian.Uint32(b[12:]))
	if depth < 1 || depth > 12 || trees < 1 || trees > 1<<16 {
		return nil, errCascadeFormat
	}
	leaves := 1 << depth
	nodeBytes := 4 * (leaves - 1)
	if len(b) != 16+trees*(nodeBytes+4*leaves+4) {
		return nil, errCascadeFormat
	}
	d := &detector{
		depth:      depth,
		leaves:     leaves,
		codes:      make([]int8, 0, trees*nodeBytes),
		preds:      make([]float32, 0, trees*leaves),
		thresholds: make([]float32, 0, trees),
	}
	pos := 16
	for t := 0; t < trees; t++ {
		for _, v := range b[pos : pos+nodeBytes] {
			d.codes = append(d.codes, int8(v))
		}
		pos += nodeBytes
		for i := 0; i < leaves; i++ {
			d.preds = append(d.preds, math.Float32frombits(binary.LittleEndian.Uint32(b[pos:])))
			pos += 4
		}
		d.thresholds = append(d.thresholds, math.Float32frombits(binary.LittleEndian.Uint32(b[pos:])))
		pos += 4
	}
	return d, nil
}

// classify scores the window centred on pixel at of a grayscale image, of
// the size o was set for; ok is false when a stage rejects it. The caller
// keeps the centre at least s/2+1 pixels inside the image for a window of
// side s, which bounds every node's offsets.
func (d *detector) classify(pix []uint8, at int, o *nodeOffsets) (score float32, ok bool) {
	return d.classifyFrom(pix, at, o, 0, 0)
}

// classifyFrom goes on with classify from tree first, with the leaf scores
// of the trees before it summed in sum.
func (d *detector) classifyFrom(pix []uint8, at int, o *nodeOffsets, first int, sum float32) (score float32, ok bool) {
	nodes := 4 * (d.leaves - 1)
	for t := first; t < len(d.thresholds); t++ {
		code := d.codes[t*nodes : (t+1)*nodes]
		sum += d.preds[t*d.leaves+d.leaf(code, pix, at, o)]
		if sum <= d.thresholds[t] {
			return 0, false
		}
	}
	return sum - d.thresholds[len(d.thresholds)-1], true
}

// classifyPair is classify of two windows of the same size. Their walks
// down the trees do not depend on each other, so the processor overlaps
// them: a walk is a chain of loads, each waiting for the comparison before.
func (d *detector) classifyPair(pix []uint8, a, b int, o *nodeOffsets) (sa float32, oka bool, sb float32, okb bool) {
	nodes := 4 * (d.leaves - 1)
	var suma, sumb float32
	for t, thr := range d.thresholds {
		code := d.codes[t*nodes : (t+1)*nodes]
		na, nb := 0, 0
		for k := 0; k < d.depth; k++ {
			qa := code[4*na : 4*na+4 : 4*na+4]
			qb := code[4*nb : 4*nb+4 : 4*nb+4]
			a1 := pix[a+o.row[uint8(qa[0])]+o.col[uint8(qa[1])]]
			a2 := pix[a+o.row[uint8(qa[2])]+o.col[uint8(qa[3])]]
			b1 := pix[b+o.row[uint8(qb[0])]+o.col[uint8(qb[1])]]
			b2 := pix[b+o.row[uint8(qb[2])]+o.col[uint8(qb[3])]]
			na, nb = next(na, a1, a2), next(nb, b1, b2)
		}
		suma += d.preds[t*d.leaves+na-(d.leaves-1)]
		sumb += d.preds[t*d.leaves+nb-(d.leaves-1)]
		switch {
		case suma <= thr && sumb <= thr:
			return 0, false, 0, false
		case suma <= thr:
			sb, okb = d.classifyFrom(pix, b, o, t+1, sumb)
			return 0, false, sb, okb
		case sumb <= thr:
			sa, oka = d.classifyFrom(pix, a, o, t+1, suma)
			return sa, oka, 0, false
		}
	}
	last := d.thresholds[len(d.thresholds)-1]
	return suma - last, true, sumb - last, true
}

// leaf walks one tree (its node codes) for the window centred on pixel at
// and returns the leaf it ends in, 0 to leaves-1.
func (d *detector) leaf(code []int8, pix []uint8, at int, o *nodeOffsets) int {
	n := 0
	for k := 0; k < d.depth; k++ {
		q := code[4*n : 4*n+4 : 4*n+4]
		p1 := pix[at+o.row[uint8(q[0])]+o.col[uint8(q[1])]]
		p2 := pix[at+o.row[uint8(q[2])]+o.col[uint8(q[3])]]
		n = next(n, p1, p2)
	}
	return n - (d.leaves - 1)
}

// next is the node below node n: its right child 2n+2 when p1 <= p2, else
// its left child 2n+1. Computed without a branch: the comparison goes either
// way about half the time, and a mispredicted branch at every node cost
// more than the rest of the walk.
func next(n int, p1, p2 uint8) int {
	return 2*n + 2 + (int(p2)-int(p1))>>63
}

// nodeOffsets are the offsets from a window's centre, in a grayscale image,
// of the pixels a node code q (-128 to 127, indexed by uint8(q)) names for
// one window size s: PICO places them at (256 r + q s) >> 8, which is
// r + (q s >> 8) for a whole r, so a row's offset and a column's are the
// same for every window of that size and are looked up, not multiplied.
type nodeOffsets struct{ row, col [256]int }

func (o *nodeOffsets) set(s, stride int) {
	for i := range 256 {
		q := int(int8(uint8(i)))
		o.row[i] = (q * s >> 8) * stride
		o.col[i] = q * s >> 8
	}
}

// hit is one window the detector accepted, in the coordinates of the scanned
// grayscale image.
type hit struct {
	row, col, size int
	score          float32
}

// scanParams bounds a scan: the window sizes and the area the windows' centres
// may cover. Step is the shift between neighbouring windows as a fraction of
// their size; sizes grow by the factor grow.
type scanParams struct {
	minSize, maxSize int
	step, grow       float64
	area             rect // the part of the image that may be read
}

// rect is a half-open integer rectangle [x0, x1) x [y0, y1).
type rect struct{ x0, y0, x1, y1 int }

// scan appends every accepted window to dst and returns it. pix holds a
// grayscale image of the given stride; only pixels inside p.area are read.
func (d *detector) scan(dst []hit, pix []uint8, stride int, p scanParams) []hit {
	var o nodeOffsets
	for s := p.minSize; s <= p.maxSize; {
		step := max(int(p.step*float64(s)), 1)
		half := s/2 + 1
		o.set(s, stride)
		for r := p.area.y0 + half; r <= p.area.y1-half; r += step {
			c := p.area.x0 + half
			// Two windows of the row at a time (classifyPair).
			for ; c+step <= p.area.x1-half; c += 2 * step {
				qa, oka, qb, okb := d.classifyPair(pix, r*stride+c, r*stride+c+step, &o)
				if oka {
					dst = append(dst, hit{r, c, s, qa})
				}
				if okb {
					dst = append(dst, hit{r, c + step, s, qb})
				}
			}
			if c <= p.area.x1-half {
				if q, ok := d.classify(pix, r*stride+c, &o); ok {
					dst = append(dst, hit{r, c, s, q})
				}
			}
		}
		// Grow by at least two pixels so small sizes still advance.
		s = max(s+2, int(float64(s)*p.grow))
	}
	return dst
}

// overlap is the intersection over union of two square windows.
func overlap(a, b hit) float64 {
	ov := func(c1, s1, c2, s2 int) float64 {
		lo := max(float64(c1)-float64(s1)/2, float64(c2)-float64(s2)/2)
		hi := min(float64(c1)+float64(s1)/2, float64(c2)+float64(s2)/2)
		return max(0, hi-lo)
	}
	inter := ov(a.row, a.size, b.row, b.size) * ov(a.col, a.size, b.col, b.size)
	union := float64(a.size*a.size+b.size*b.size) - inter
	return inter / union
}

// cluster is a group of overlapping windows merged into one face: its centre
// and size are the score-weighted means and its score is the sum of scores,
// which grows with how many windows agree.
type cluster struct {
	row, col, size float64
	score          float64
}

// largest merges overlapping hits (IoU above 0.3, greedily from the best
// scored) and returns the biggest cluster whose summed score reaches
// minScore. It reorders hits in place.
func largest(hits []hit, minScore float64) (cluster, bool) {
	var best cluster
	found := false
	for len(hits) > 0 {
		top := 0
		for i, h := range hits {
			if h.score > hits[top].score {
				top = i
			}
		}
		seed := hits[top]
		var c cluster
		rest := hits[:0]
		for _, h := range hits {
			if overlap(seed, h) > 0.3 {
				w := float64(h.score)
				c.row += w * float64(h.row)
				c.col += w * float64(h.col)
				c.size += w * float64(h.size)
				c.score += w
				continue
			}
			rest = append(rest, h)
		}
		hits = rest
		if c.score < minScore {
			continue
		}
		c.row, c.col, c.size = c.row/c.score, c.col/c.score, c.size/c.score
		if !found || c.size > best.size {
			best, found = c, true
		}
	}
	return best, found
}

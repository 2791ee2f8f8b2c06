package face

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
)

// localizer is a PICO point localiser: stages of regression trees that each
// move a point (row, col) by a fraction of the current search size and then
// shrink it (Markuš et al., "Eye pupil localization with an ensemble of
// randomized trees", Pattern Recognition 2014). pigo's puploc and lp* files
// use this format.
type localizer struct {
	stages, trees, depth int
	leaves               int
	shrink               float32 // search size factor applied after each stage
	codes                []int8  // per stage, per tree, per inner node: 4 offsets
	preds                []float32
}

// parseLocalizer reads the format: stages (uint32), shrink (float32), trees
// per stage and depth (uint32), then per tree 4*(2^depth-1) node bytes and
// 2^depth (row, col) float32 pairs. Every length is checked.
func parseLocalizer(b []byte) (*localizer, error) {
	if len(b) < 16 {
		return nil, errCascadeFormat
	}
	l := &localizer{
		stages: int(binary.LittleEndian.Uint32(b)),
		shrink: math.Float32frombits(binary.LittleEndian.Uint32(b[4:])),
		trees:  int(binary.LittleEndian.Uint32(b[8:])),
		depth:  int(binary.LittleEndian.Uint32(b[12:])),
	}
	if l.stages < 1 || l.stages > 64 || l.trees < 1 || l.trees > 1<<12 || l.depth < 1 || l.depth > 12 {
		return nil, errCascadeFormat
	}
	l.leaves = 1 << l.depth
	nodeBytes := 4 * (l.leaves - 1)
	n := l.stages * l.trees
	if len(b) != 16+n*(nodeBytes+8*l.leaves) {
		return nil, errCascadeFormat
	}
	l.codes = make([]int8, 0, n*nodeBytes)
	l.preds = make([]float32, 0, n*2*l.leaves)
	pos := 16
	for t := 0; t < n; t++ {
		for _, v := range b[pos : pos+nodeBytes] {
			l.codes = append(l.codes, int8(v))
		}
		pos += nodeBytes
		for i := 0; i < 2*l.leaves; i++ {
			l.preds = append(l.preds, math.Float32frombits(binary.LittleEndian.Uint32(b[pos:])))
			pos += 4
		}
	}
	return l, nil
}

// gray is a grayscale image: pix[y*stride+x].
type gray struct {
	pix    []uint8
	w, h   int
	stride int
}

// point is a landmark in grayscale image coordinates; size is the final
// search size, a measure of the localiser's confidence region.
type point struct{ row, col, size float64 }

// run refines one start point. mirror flips the model left-right, which
// locates the mirrored landmark (the other mouth corner) with the same trees.
func (l *localizer) run(g gray, r, c, s float32, mirror bool) (float32, float32, float32) {
	nodes := 4 * (l.leaves - 1)
	sign := int(1)
	if mirror {
		sign = -1
	}
	clamp := func(v, hi int) int { return min(max(v, 0), hi-1) }
	for st := 0; st < l.stages; st++ {
		var dr, dc float32
		si := int(math.Round(float64(s)))
		for t := 0; t < l.trees; t++ {
			tree := st*l.trees + t
			code := l.codes[tree*nodes : (tree+1)*nodes]
			n := 0
			for k := 0; k < l.depth; k++ {
				q := code[4*n : 4*n+4 : 4*n+4]
				r1 := clamp((256*int(r)+int(q[0])*si)>>8, g.h)
				c1 := clamp((256*int(c)+sign*int(q[1])*si)>>8, g.w)
				r2 := clamp((256*int(r)+int(q[2])*si)>>8, g.h)
				c2 := clamp((256*int(c)+sign*int(q[3])*si)>>8, g.w)
				n = 2*n + 1
				if g.pix[r1*g.stride+c1] > g.pix[r2*g.stride+c2] {
					n++
				}
			}
			lut := 2 * (tree*l.leaves + n - (l.leaves - 1))
			dr += l.preds[lut]
			dc += float32(sign) * l.preds[lut+1]
		}
		r += dr * s
		c += dc * s
		s *= l.shrink
	}
	return r, c, s
}

// locate runs the localiser from perturbed copies of the start point and
// returns the per-coordinate median, which is robust to the occasional
// perturbation that wanders off. The perturbations come from a fixed seed so
// the same image always gives the same point.
func (l *localizer) locate(g gray, start point, perturbs int, mirror bool) point {
	rng := rand.New(rand.NewPCG(0x5eed, uint64(perturbs)))
	rows := make([]float64, perturbs)
	cols := make([]float64, perturbs)
	sizes := make([]float64, perturbs)
	for i := range perturbs {
		r := float32(start.row + start.size*0.15*(0.5-rng.Float64()))
		c := float32(start.col + start.size*0.15*(0.5-rng.Float64()))
		s := float32(start.size * (0.925 + 0.15*rng.Float64()))
		rr, cc, ss := l.run(g, r, c, s, mirror)
		rows[i], cols[i], sizes[i] = float64(rr), float64(cc), float64(ss)
	}
	median := func(v []float64) float64 {
		slices.Sort(v)
		return v[len(v)/2]
	}
	return point{median(rows), median(cols), median(sizes)}
}

package face

// Motion of the face by block matching: the face texture of a key frame (a
// small grayscale template, taken when the detector last confirmed the
// face) is slid over the current frame within ±searchRadius cells of where
// it was found in the previous frame, and the offset with the least sum of
// absolute differences wins, refined to a fraction of a cell by fitting two lines of
// opposite slope through it and its neighbours (the equiangular fit, which
// suits the V-shaped minimum of a sum of absolute differences; Shimizu and
// Okutomi, "Significance and attributes of subpixel estimation on area-based
// matching", 2003). This follows the head with no lag between
// detections, which a detector alone cannot (its boxes jitter by a few
// pixels), and measures the motion the quality checks need. Matching against
// the key frame rather than the previous frame keeps the estimator's small
// per-frame bias from adding up into a drift: a still face stays exactly
// still, so the regions of interest do not wander over the skin.

const (
	// templateCells is the template's side in cells; the cell size is chosen
	// so the template spans templateSpan face sizes.
	templateCells = 24
	templateSpan  = 0.6
	// searchRadius bounds the motion one frame can show, in cells: 6 cells
	// of 0.6/24 face sizes is 0.15 face sizes per frame, 4.5 per second at
	// 30 fps. Faster moves are caught by the next detection.
	searchRadius = 6
)

// matcher holds the key frame's template and the scratch buffers.
//
// The match is on zero-mean texture: the template and each candidate window
// have their own mean subtracted before the absolute differences are summed.
// A change of brightness (the light, or the pulse itself darkening the skin)
// then leaves the match where it was; with plain differences it tilts the
// V of the sum around its minimum and moves the sub-cell estimate in step
// with the pulse, which would make the motion a copy of the pulse.
type matcher struct {
	cell   int // pixels per cell along each axis
	x0, y0 int // template's top-left corner in the key frame, pixels
	px, py int // whole-cell offset where the template was last found
	// tmpl is the template times its cell count, minus its sum.
	tmpl   [templateCells * templateCells]int32
	grey   [templateCells * templateCells]uint8
	search [(templateCells + 2*searchRadius) * (templateCells + 2*searchRadius)]uint8
	// sums[j*(sw+1)+i] is the sum of search over rows < j and columns < i
	// (sw = templateCells + 2 searchRadius): window sums in four look-ups.
	sums  [(templateCells + 2*searchRadius + 1) * (templateCells + 2*searchRadius + 1)]int32
	sad   [(2*searchRadius + 1) * (2*searchRadius + 1)]uint32
	acc   [templateCells + 2*searchRadius]uint32
	ready bool
}

// templateArea is the number of cells in the template.
const templateArea = templateCells * templateCells

// capture makes frame f the key frame: it stores the face texture around
// the box centre (cx, cy) of side size as the template.
func (m *matcher) capture(f frame, cx, cy, size float64) {
	m.cell = max(1, int(templateSpan*size/templateCells+0.5))
	m.cell = min(m.cell, f.w/(templateCells+2*searchRadius), f.h/(templateCells+2*searchRadius))
	if m.cell < 1 {
		m.ready = false
		return
	}
	half := templateCells * m.cell / 2
	m.x0, m.y0 = int(cx+0.5)-half, int(cy+0.5)-half
	m.px, m.py = 0, 0
	f.cells(m.grey[:], m.acc[:], m.x0, m.y0, templateCells, templateCells, m.cell)
	var sum int32
	for _, v := range m.grey {
		sum += int32(v)
	}
	for i, v := range m.grey {
		m.tmpl[i] = templateArea*int32(v) - sum
	}
	m.ready = true
}

// track finds the template in frame f and returns the displacement of the
// face since the key frame, in frame pixels.
func (m *matcher) track(f frame) (dx, dy float64, ok bool) {
	if !m.ready {
		return 0, 0, false
	}
	const sw = templateCells + 2*searchRadius
	const span = 2*searchRadius + 1
	f.cells(m.search[:], m.acc[:], m.x0+(m.px-searchRadius)*m.cell, m.y0+(m.py-searchRadius)*m.cell, sw, sw, m.cell)
	bi := m.match()
	best := m.sad[bi]
	bx, by := bi%span, bi/span
	var fx, fy float64
	if bx > 0 && bx < span-1 {
		fx = vertex(m.sad[bi-1], best, m.sad[bi+1])
	}
	if by > 0 && by < span-1 {
		fy = vertex(m.sad[bi-span], best, m.sad[bi+span])
	}
	m.px += bx - searchRadius
	m.py += by - searchRadius
	c := float64(m.cell)
	return (float64(m.px) + fx) * c, (float64(m.py) + fy) * c, true
}

// match returns the offset, as an index into sad, where the template best
// fits the search window: the least sum of absolute differences, the first
// in raster order on a tie. It leaves the sums of that offset and of its
// neighbours in sad.
func (m *matcher) match() int {
	const sw = templateCells + 2*searchRadius
	const span = 2*searchRadius + 1
	const ss = sw + 1
	for j := 0; j < sw; j++ {
		var row int32
		for i := 0; i < sw; i++ {
			row += int32(m.search[j*sw+i])
			m.sums[(j+1)*ss+i+1] = m.sums[j*ss+i+1] + row
		}
	}
	// The face is most often where it was: the offset of the previous
	// frame (the middle) is summed first, and every other sum stops as
	// soon as it can no longer win.
	const middle = searchRadius*span + searchRadius
	bi := middle
	best := m.sadAt(middle, ^uint32(0))
	for i := range span * span {
		if i == middle {
			continue
		}
		if s := m.sadAt(i, best); s < best || (s == best && i < bi) {
			best, bi = s, i
		}
	}
	// The sub-cell fit needs the neighbours' sums in full.
	for _, i := range [4]int{bi - 1, bi + 1, bi - span, bi + span} {
		if i >= 0 && i < span*span {
			m.sadAt(i, ^uint32(0))
		}
	}
	return bi
}

// sadAt stores in sad[i] and returns the sum of absolute differences
// between the zero-mean template and the zero-mean search window at offset
// i (row-major, span x span), or, once the running sum exceeds bound, a
// partial sum above it.
func (m *matcher) sadAt(i int, bound uint32) uint32 {
	const sw = templateCells + 2*searchRadius
	const span = 2*searchRadius + 1
	const ss = sw + 1
	ox, oy := i%span, i/span
	// The window's sum: both terms of a difference then carry
	// templateArea times their value minus their sum.
	ws := m.sums[(oy+templateCells)*ss+ox+templateCells] - m.sums[oy*ss+ox+templateCells] -
		m.sums[(oy+templateCells)*ss+ox] + m.sums[oy*ss+ox]
	var s uint32
	for j := 0; j < templateCells && s <= bound; j++ {
		t := m.tmpl[j*templateCells : (j+1)*templateCells]
		w := m.search[(oy+j)*sw+ox : (oy+j)*sw+ox+templateCells]
		for k, v := range t {
			d := v - templateArea*int32(w[k]) + ws
			s += uint32(max(d, -d))
		}
	}
	m.sad[i] = s
	return s
}

// vertex is the offset, within ±0.5, of the meeting point of two lines of
// opposite slope through three equally spaced values whose middle one is the
// smallest: d = (l - r) / (2 (max(l, r) - c)).
func vertex(l, c, r uint32) float64 {
	den := 2 * (float64(max(l, r)) - float64(c))
	// A perfect match (c == 0) is a whole-cell shift: an uneven texture
	// would otherwise bias the fit off it.
	if den <= 0 || c == 0 {
		return 0
	}
	return min(0.5, max(-0.5, (float64(l)-float64(r))/den))
}

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
type matcher struct {
	cell   int // pixels per cell along each axis
	x0, y0 int // template's top-left corner in the key frame, pixels
	px, py int // whole-cell offset where the template was last found
	tmpl   [templateCells * templateCells]uint8
	search [(templateCells + 2*searchRadius) * (templateCells + 2*searchRadius)]uint8
	sad    [(2*searchRadius + 1) * (2*searchRadius + 1)]uint32
	acc    [templateCells + 2*searchRadius]uint32
	ready  bool
}

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
	f.cells(m.tmpl[:], m.acc[:], m.x0, m.y0, templateCells, templateCells, m.cell)
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
	best, bi := ^uint32(0), 0
	for oy := 0; oy < span; oy++ {
		for ox := 0; ox < span; ox++ {
			var s uint32
			for j := 0; j < templateCells; j++ {
				t := m.tmpl[j*templateCells : (j+1)*templateCells]
				w := m.search[(oy+j)*sw+ox : (oy+j)*sw+ox+templateCells]
				for i, v := range t {
					d := int32(v) - int32(w[i])
					s += uint32(max(d, -d))
				}
			}
			m.sad[oy*span+ox] = s
			if s < best {
				best, bi = s, oy*span+ox
			}
		}
	}
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

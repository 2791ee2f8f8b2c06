package face

import (
	"image"
	"image/color"
	"image/draw"
	"math"
)

// frame gives the tracker fast access to the pixels of one decoded frame
// without converting it: *image.RGBA, *image.YCbCr (JPEG frames, whose Y
// plane is already the luma) and LimitedRange frames (video, whose levels
// are expanded through tables as they are read) are read in place; any
// other image is first drawn into a reused RGBA buffer.
type frame struct {
	w, h int
	img  image.Image // what the frame reads from
	rgba *image.RGBA
	ycc  *image.YCbCr
	// limited is set when ycc holds limited-range levels; bt709 when
	// their matrix is BT.709 (terms gives the conversion to RGB).
	limited, bt709 bool
}

// wrap prepares img for reading. scratch is the tracker's conversion buffer,
// reallocated only when the frame size changes.
func wrap(img image.Image, scratch **image.RGBA) frame {
	b := img.Bounds()
	f := frame{w: b.Dx(), h: b.Dy(), img: img}
	// Images not anchored at (0, 0) (sub-images) take the slow path: the
	// fast paths index pixels from the top-left corner.
	anchored := b.Min == image.Point{}
	switch m := img.(type) {
	case *image.RGBA:
		if anchored {
			f.rgba = m
			return f
		}
	case *image.YCbCr:
		if anchored {
			f.ycc = m
			return f
		}
	case LimitedRange:
		if p, bt709 := m.LimitedRangeYCbCr(); anchored && p.Rect == b {
			f.ycc, f.limited, f.bt709 = p, true, bt709
			return f
		}
	}
	if *scratch == nil || (*scratch).Rect.Dx() != f.w || (*scratch).Rect.Dy() != f.h {
		*scratch = image.NewRGBA(image.Rect(0, 0, f.w, f.h))
	}
	draw.Draw(*scratch, (*scratch).Rect, img, b.Min, draw.Src)
	f.rgba, f.img = *scratch, *scratch
	return f
}

// luma601 is the BT.601 luma of an 8-bit RGB pixel, 0-255, in fixed point:
// Y = 0.299 R + 0.587 G + 0.114 B.
func luma601(r, g, b uint8) uint32 {
	return (19595*uint32(r) + 38470*uint32(g) + 7471*uint32(b) + 1<<15) >> 16
}

// addLuma adds to acc[i] the luma of the m pixels of row y starting at column
// x0+i*m, for i < len(acc). The caller keeps every pixel inside the frame.
// A limited-range frame adds its own levels: blockMean expands their mean,
// which rounds once where expanding every pixel would round each. A BT.709
// frame adds the BT.601 luma of each pixel's colour in 1/64 of a level
// (luma601Of).
func (f frame) addLuma(acc []uint32, y, x0, m int) {
	if f.bt709 && f.ycc.SubsampleRatio == image.YCbCrSubsampleRatio444 {
		// Video's 4:4:4: the three planes share their indexing.
		p := f.ycc
		yr, cb, cr := p.Y[y*p.YStride+x0:], p.Cb[y*p.CStride+x0:], p.Cr[y*p.CStride+x0:]
		for i := range acc {
			var s uint32
			for j := i * m; j < i*m+m; j++ {
				s += luma709To601(yr[j], cb[j], cr[j])
			}
			acc[i] += s
		}
		return
	}
	if f.bt709 {
		for i := range acc {
			var s uint32
			for x := x0 + i*m; x < x0+i*m+m; x++ {
				s += f.luma601Of(x, y)
			}
			acc[i] += s
		}
		return
	}
	if f.ycc != nil {
		row := f.ycc.Y[y*f.ycc.YStride+x0:]
		for i := range acc {
			var s uint32
			for _, v := range row[i*m : i*m+m] {
				s += uint32(v)
			}
			acc[i] += s
		}
		return
	}
	row := f.rgba.Pix[y*f.rgba.Stride+4*x0:]
	for i := range acc {
		var s uint32
		px := row[4*i*m : 4*(i*m+m)]
		for j := 0; j+3 < len(px); j += 4 {
			s += luma601(px[j], px[j+1], px[j+2])
		}
		acc[i] += s
	}
}

// cells fills dst (w x h cells, row-major) with the mean luma of m x m pixel
// blocks whose top-left corners are (x0+i*m, y0+j*m). Blocks reaching outside
// the frame are moved back inside, which repeats the edge. acc has at least w
// entries.
func (f frame) cells(dst []uint8, acc []uint32, x0, y0, w, h, m int) {
	acc = acc[:w]
	area := uint32(m * m)
	// Column range whose blocks lie inside the frame; the rest are copied
	// from the nearest inside block after the row is summed.
	first := min(max(0, -floorDiv(x0, m)), w)
	last := min(w, max(first, floorDiv(f.w-m-x0, m)+1))
	for j := 0; j < h; j++ {
		by := min(max(y0+j*m, 0), f.h-m)
		clear(acc)
		if last > first {
			for dy := 0; dy < m; dy++ {
				f.addLuma(acc[first:last], by+dy, x0+first*m, m)
			}
		}
		out := dst[j*w : j*w+w]
		for i := first; i < last; i++ {
			out[i] = f.blockMean(acc[i], area)
		}
		for i := 0; i < first; i++ {
			out[i] = f.edgeCell(by, 0, m, area)
		}
		for i := last; i < w; i++ {
			out[i] = f.edgeCell(by, f.w-m, m, area)
		}
	}
}

// edgeCell is the mean luma of the m x m block at (x, y).
func (f frame) edgeCell(y, x, m int, area uint32) uint8 {
	var acc [1]uint32
	for dy := 0; dy < m; dy++ {
		f.addLuma(acc[:], y+dy, x, m)
	}
	return f.blockMean(acc[0], area)
}

// blockMean is the mean full-range luma of a block from the sum of its area
// pixels' addLuma levels, rounded: for a limited-range frame 255/219 (mean
// - 16), clipped to 0-255.
func (f frame) blockMean(sum, area uint32) uint8 {
	if !f.limited {
		return uint8((sum + area/2) / area)
	}
	unit := int64(1)
	if f.bt709 {
		unit = 64
	}
	v, d := (int64(sum)-16*unit*int64(area))*255, 219*unit*int64(area)
	return uint8(min(max((v+d/2)/d, 0), 255))
}

// lumaSum sums the luma of the pixels of rc (clipped to the frame) that lie
// on the grid of every step-th pixel in both directions, starting at step/2,
// and counts them. A BT.709 frame's sum is expanded to full range as a
// whole, so levels below black or above white are not clipped.
func (f frame) lumaSum(step int, rc rect) (sum uint64, n int) {
	x0, y0 := max(rc.x0, 0), max(rc.y0, 0)
	x1, y1 := min(rc.x1, f.w), min(rc.y1, f.h)
	// The first grid point at or after x0 (and y0): grid points sit at
	// step/2 + k*step.
	first := func(v int) int { return step/2 + max(0, (v-step/2+step-1)/step)*step }
	for y := first(y0); y < y1; y += step {
		if f.bt709 {
			for x := first(x0); x < x1; x += step {
				sum += uint64(f.luma601Of(x, y))
				n++
			}
			continue
		}
		if f.ycc != nil {
			row := f.ycc.Y[y*f.ycc.YStride : y*f.ycc.YStride+f.w]
			if f.limited {
				for x := first(x0); x < x1; x += step {
					sum += uint64(fullY[row[x]])
					n++
				}
				continue
			}
			for x := first(x0); x < x1; x += step {
				sum += uint64(row[x])
				n++
			}
			continue
		}
		row := f.rgba.Pix[y*f.rgba.Stride : y*f.rgba.Stride+4*f.w]
		for x := first(x0); x < x1; x += step {
			sum += uint64(luma601(row[4*x], row[4*x+1], row[4*x+2]))
			n++
		}
	}
	if f.bt709 {
		// Expand the total, not each pixel: 255/219 (sum/64 - 16 n).
		sum = uint64(max(int64(sum)-16*64*int64(n), 0)*255+219*32) / (219 * 64)
	}
	return sum, n
}

// luma601Of is the limited-range BT.601 luma, in 1/64 of a level, of the
// colour of pixel (x, y) of a BT.709 frame. Its Y plane holds BT.709 luma
// (0.2126 R + 0.7152 G + 0.0722 B), which differs from BT.601's by up to 3
// levels on skin and moved the detector's box by 2 pixels on a test face;
// BT.601 luma is the BT.709 one plus a term linear in each chroma level
// (luma709Cb, luma709Cr), so it costs two lookups, not a conversion to RGB.
func (f frame) luma601Of(x, y int) uint32 {
	m := f.ycc
	c := y*m.CStride + x // video's 4:4:4, on every fourth pixel of a frame
	if m.SubsampleRatio != image.YCbCrSubsampleRatio444 {
		c = m.COffset(x, y)
	}
	return luma709To601(m.Y[y*m.YStride+x], m.Cb[c], m.Cr[c])
}

// luma709To601 is the BT.601 luma, in 1/64 of a level, of a limited-range
// BT.709 pixel (luma601Of).
func luma709To601(y, cb, cr uint8) uint32 {
	return uint32(max(int32(y)<<6+luma709Cb[cb]+luma709Cr[cr], 0))
}

// area is a rectangle turned by an angle about its centre, in frame
// pixels: centre (cx, cy), half extents hw along its own x axis (cos, sin)
// and hh along its own y axis (-sin, cos). Its edges fall between pixel
// boundaries.
type area struct{ cx, cy, hw, hh, sin, cos float64 }

// corners returns the area's corners in order around it, starting at its
// own top left (the image's top left for an unturned area).
func (a area) corners() [4][2]float64 {
	var c [4][2]float64
	for i, s := range [4][2]float64{{-1, -1}, {1, -1}, {1, 1}, {-1, 1}} {
		x, y := s[0]*a.hw, s[1]*a.hh
		c[i] = [2]float64{a.cx + x*a.cos - y*a.sin, a.cy + x*a.sin + y*a.cos}
	}
	return c
}

// Coverage weights are in 1/coverUnit of a pixel.
const coverUnit = 16

// edgeCover is the part of a pixel inside an edge, in 1/coverUnit: d is
// the distance from the pixel's centre to the edge (positive inside), and
// span the pixel's width across the edge (1 for an upright edge, up to
// sqrt 2 for a turned one). For an upright edge it is exact.
func edgeCover(d, span float64) int32 {
	return int32(min(max(d/span+0.5, 0), 1)*coverUnit + 0.5)
}

// eachCovered calls fn for every pixel of the frame the area touches,
// with how much of the pixel it covers (1 to coverUnit squared). Weighting
// the edge pixels makes a mean over the area change smoothly as the area
// moves or turns by a fraction of a pixel, instead of jumping whenever an
// edge crosses a pixel boundary, which would add noise to the tiny colour
// changes of the pulse.
func (f frame) eachCovered(a area, fn func(cover int32, r, g, b, y, cb, cr uint8)) {
	// A pixel's width across either axis of the area, and the distances
	// from the centre, along the axes, inside which pixels are touched.
	span := math.Abs(a.cos) + math.Abs(a.sin)
	u, v := a.hw+span/2, a.hh+span/2
	ey := u*math.Abs(a.sin) + v*math.Abs(a.cos)
	for y := max(0, int(math.Floor(a.cy-ey))); y < min(f.h, int(math.Ceil(a.cy+ey))); y++ {
		dy := float64(y) + 0.5 - a.cy
		// The row's pixels whose centres lie within u along the x axis
		// and v along the y axis.
		x0, x1 := a.row(f.w, dy, u, v)
		if x0 >= x1 {
			continue
		}
		// Those whose centres lie half a pixel's span further in are
		// covered whole: their cover needs no computing. A margin keeps
		// rounding from calling a pixel on the edge whole.
		const margin = 1e-6
		i0, i1 := a.row(f.w, dy, a.hw-span/2-margin, a.hh-span/2-margin)
		i0, i1 = min(max(i0, x0), x1), max(min(i1, x1), x0)
		if i0 >= i1 {
			i0, i1 = x1, x1
		}
		x := x0
		edge := func(r, g, b, yy, cb, cr uint8) {
			dx := float64(x) + 0.5 - a.cx
			x++
			c := edgeCover(a.hw-math.Abs(dx*a.cos+dy*a.sin), span) * edgeCover(a.hh-math.Abs(dy*a.cos-dx*a.sin), span)
			if c > 0 {
				fn(c, r, g, b, yy, cb, cr)
			}
		}
		f.each(rect{x0, y, i0, y + 1}, edge)
		f.each(rect{i0, y, i1, y + 1}, func(r, g, b, yy, cb, cr uint8) {
			fn(coverUnit*coverUnit, r, g, b, yy, cb, cr)
		})
		x = i1
		f.each(rect{i1, y, x1, y + 1}, edge)
	}
}

// row returns the columns [x0, x1), within a frame w pixels wide, of the
// pixels of a row dy below the area's centre whose centres lie within u of
// the centre along the area's x axis and within v along its y axis.
func (a area) row(w int, dy, u, v float64) (x0, x1 int) {
	if u < 0 || v < 0 {
		return 0, 0
	}
	lo, hi := math.Inf(-1), math.Inf(1)
	slab := func(c, s, r float64) { // |dx c + s| <= r
		if math.Abs(c) < 1e-9 {
			if math.Abs(s) > r {
				lo, hi = 1, 0
			}
			return
		}
		p, q := (-r-s)/c, (r-s)/c
		lo, hi = max(lo, min(p, q)), min(hi, max(p, q))
	}
	slab(a.cos, dy*a.sin, u)
	slab(-a.sin, dy*a.cos, v)
	if lo > hi {
		return 0, 0
	}
	return max(0, int(math.Ceil(a.cx+lo-0.5))), min(w, int(math.Floor(a.cx+hi-0.5))+1)
}

// pixelFunc receives one pixel's colour, its luma and its chroma (BT.601,
// full range, as JPEG stores them, whatever the frame's own form).
type pixelFunc func(r, g, b, y, cb, cr uint8)

// each calls fn for every pixel of the rectangle, which lies inside the frame.
func (f frame) each(rc rect, fn pixelFunc) {
	if f.ycc != nil {
		m, t := f.ycc, terms(f.bt709)
		for y := rc.y0; y < rc.y1; y++ {
			for x := rc.x0; x < rc.x1; x++ {
				yy := m.Y[m.YOffset(x, y)]
				ci := m.COffset(x, y)
				cb, cr := m.Cb[ci], m.Cr[ci]
				if f.bt709 {
					// The skin model reads BT.601 values: those of the
					// same RGB, not BT.709's own levels.
					r, g, b := t.rgb(yy, cb, cr)
					cb, cr := chroma601(r, g, b)
					fn(r, g, b, uint8(luma601(r, g, b)), cb, cr)
					continue
				}
				if f.limited {
					r, g, b := t.rgb(yy, cb, cr)
					fn(r, g, b, fullY[yy], fullC[cb], fullC[cr])
					continue
				}
				r, g, b := color.YCbCrToRGB(yy, cb, cr)
				fn(r, g, b, yy, cb, cr)
			}
		}
		return
	}
	for y := rc.y0; y < rc.y1; y++ {
		row := f.rgba.Pix[y*f.rgba.Stride+4*rc.x0 : y*f.rgba.Stride+4*rc.x1]
		for j := 0; j+3 < len(row); j += 4 {
			r, g, b := row[j], row[j+1], row[j+2]
			cb, cr := chroma601(r, g, b)
			fn(r, g, b, uint8(luma601(r, g, b)), cb, cr)
		}
	}
}

// rgb is the colour of pixel (x, y), which lies inside the frame, as each
// reads it.
func (f frame) rgb(x, y int) (r, g, b uint8) {
	if f.ycc == nil {
		p := f.rgba.Pix[y*f.rgba.Stride+4*x:]
		return p[0], p[1], p[2]
	}
	m := f.ycc
	yy, ci := m.Y[m.YOffset(x, y)], m.COffset(x, y)
	if f.limited {
		return terms(f.bt709).rgb(yy, m.Cb[ci], m.Cr[ci])
	}
	return color.YCbCrToRGB(yy, m.Cb[ci], m.Cr[ci])
}

// chroma601 is the BT.601 full-range chroma of an RGB pixel, as in JFIF:
// Cb = 128 - 0.168736 R - 0.331264 G + 0.5 B, Cr = 128 + 0.5 R - 0.418688 G - 0.081312 B.
func chroma601(r, g, b uint8) (cb, cr uint8) {
	cb32 := (-11059*int32(r) - 21709*int32(g) + 32768*int32(b) + 128<<16 + 1<<15) >> 16
	cr32 := (32768*int32(r) - 27439*int32(g) - 5329*int32(b) + 128<<16 + 1<<15) >> 16
	return uint8(min(max(cb32, 0), 255)), uint8(min(max(cr32, 0), 255))
}

// floorDiv is a/b rounded towards minus infinity, for b > 0.
func floorDiv(a, b int) int {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

package media

import (
	"image"
	"image/color"
	"math"
)

// YCbCr is a decoded video frame: 4:4:4 YCbCr in limited ("tv") range, Y
// 16-235 from black to white and Cb, Cr 16-240 around 128 (ITU-R BT.601-7,
// 2.5.3; BT.709-6, 3.4), as ffmpeg's scale filter writes it (yuv444p), with
// the BT.709 matrix when the video is tagged so and the BT.601 one
// otherwise. Its planes are not a JPEG picture's, which span 0-255: readers
// that take them directly must expand the levels. The face tracker
// recognises the type by its LimitedRangeYCbCr method (face.LimitedRange);
// At converts each pixel to RGB for any other reader.
type YCbCr struct {
	planes *image.YCbCr
	bt709  bool
}

// newYCbCr allocates a w x h frame.
func newYCbCr(w, h int) *YCbCr {
	return &YCbCr{planes: image.NewYCbCr(image.Rect(0, 0, w, h), image.YCbCrSubsampleRatio444)}
}

// LimitedRangeYCbCr returns the frame's planes, anchored at (0, 0), all at
// full resolution, in limited range, and whether their matrix is BT.709
// (else BT.601).
func (m *YCbCr) LimitedRangeYCbCr() (*image.YCbCr, bool) { return m.planes, m.bt709 }

// Bounds returns the frame's rectangle, anchored at (0, 0).
func (m *YCbCr) Bounds() image.Rectangle { return m.planes.Rect }

// ColorModel is RGBA: At converts.
func (m *YCbCr) ColorModel() color.Model { return color.RGBAModel }

// At returns the pixel's colour as 8-bit RGB: the levels expanded to full
// range (Y' = 255/219 (Y - 16), C' = 255/224 (C - 128)), then the frame's
// matrix (matrix.rgb), rounded and clipped.
func (m *YCbCr) At(x, y int) color.Color {
	if !image.Pt(x, y).In(m.planes.Rect) {
		return color.RGBA{}
	}
	p := m.planes
	c := p.COffset(x, y)
	mx := bt601
	if m.bt709 {
		mx = bt709
	}
	r, g, b := mx.rgb(p.Y[p.YOffset(x, y)], p.Cb[c], p.Cr[c])
	return color.RGBA{level(r), level(g), level(b), 255}
}

// level rounds and clips v to 0-255.
func level(v float64) uint8 { return uint8(min(max(v+0.5, 0), 255)) }

// matrix is a YCbCr matrix by its luma weights Kr and Kb (ITU-T H.273,
// 8.3; the green weight is 1 - Kr - Kb).
type matrix struct{ kr, kb float64 }

var (
	bt601 = matrix{0.299, 0.114}   // BT.601-7, 2.5.1
	bt709 = matrix{0.2126, 0.0722} // BT.709-6, 3.2
)

// matrices maps ffmpeg's color_space names (as showinfo logs them) to
// matrices. Names missing here (unknown, gbr, ycgco, ...) read as BT.601,
// which is what swscale assumes for a matrix it is not told or has no
// coefficients for. bt2020c is not linear but swscale uses the bt2020nc
// weights for it, and so do we.
var matrices = map[string]matrix{
	"bt709":     bt709,
	"fcc":       {0.30, 0.11},
	"bt470bg":   bt601,
	"smpte170m": bt601,
	"smpte240m": {0.212, 0.087},
	"bt2020nc":  {0.2627, 0.0593},
	"bt2020c":   {0.2627, 0.0593},
}

// matrixOf is the matrix of a showinfo color_space name.
func matrixOf(space string) matrix {
	if m, ok := matrices[space]; ok {
		return m
	}
	return bt601
}

// rgb converts one limited-range pixel to full-range R, G, B, unrounded:
// R = Y' + 2 (1 - Kr) Cr', B = Y' + 2 (1 - Kb) Cb', G = (Y' - Kr R - Kb B)
// / (1 - Kr - Kb).
func (mx matrix) rgb(y, cb, cr uint8) (r, g, b float64) {
	return mx.fromFull(255.0/219*float64(int(y)-16), 255.0/224*float64(int(cb)-128), 255.0/224*float64(int(cr)-128))
}

// fromFull is rgb on expanded levels, chroma centred on 0.
func (mx matrix) fromFull(y, cb, cr float64) (r, g, b float64) {
	r, b = y+2*(1-mx.kr)*cr, y+2*(1-mx.kb)*cb
	return r, (y - mx.kr*r - mx.kb*b) / (1 - mx.kr - mx.kb), b
}

// toBT601 rewrites p's pixels, in matrix mx, as the BT.601 pixels of the
// same colours, still in limited range. It serves the rare videos whose
// matrix is neither BT.601 nor BT.709 (BT.2020 among them, as iPhones
// record HDR): ffmpeg passes their planes through unconverted (args), and
// the readers know only those two. p is 4:4:4 with one stride, as newYCbCr
// makes it.
//
// The conversion is linear in the levels' offsets from black and from 128,
// so each output level is a sum of three table entries, one per input
// plane, in 1/65536 of a level, rounded once: 0.6 ms for a 480x270 frame,
// where the same arithmetic in floating point per pixel took 3.7 ms.
func toBT601(p *image.YCbCr, mx matrix) {
	// t[out][in][level]: Y, Cb, Cr from Y, Cb, Cr.
	var t [3][3][256]int32
	offset := [3]float64{16, 128, 128}
	for in := range 3 {
		// The column of the linear map: the output of a unit step of
		// one input over its offset.
		var unit [3]float64
		unit[in] = 1
		col := mx.to601(unit)
		for out := range 3 {
			for v := range 256 {
				f := col[out] * (float64(v) - offset[in]) * (1 << 16)
				if in == 0 {
					f += (offset[out] + 0.5) * (1 << 16) // the output offset and rounding half
				}
				t[out][in][v] = int32(math.Floor(f + 0.5))
			}
		}
	}
	for i := range p.Y {
		y, cb, cr := p.Y[i], p.Cb[i], p.Cr[i]
		p.Y[i] = clip16(t[0][0][y] + t[0][1][cb] + t[0][2][cr])
		p.Cb[i] = clip16(t[1][0][y] + t[1][1][cb] + t[1][2][cr])
		p.Cr[i] = clip16(t[2][0][y] + t[2][1][cb] + t[2][2][cr])
	}
}

// to601 maps offsets from black and from 128 of a limited-range pixel in
// matrix mx to those of the BT.601 pixel of the same colour: expanded to
// full range (Y' = 255/219 Y, C' = 255/224 C), to R, G, B (rgb's
// formulas), to BT.601 (Y = 0.299 R + 0.587 G + 0.114 B, Cb = (B - Y) /
// 1.772, Cr = (R - Y) / 1.402) and narrowed back.
func (mx matrix) to601(v [3]float64) [3]float64 {
	r, g, b := mx.fromFull(255.0/219*v[0], 255.0/224*v[1], 255.0/224*v[2])
	y := bt601.kr*r + (1-bt601.kr-bt601.kb)*g + bt601.kb*b
	return [3]float64{219.0 / 255 * y, 224.0 / 255 * (b - y) / (2 - 2*bt601.kb), 224.0 / 255 * (r - y) / (2 - 2*bt601.kr)}
}

// clip16 is v/65536 (already offset by a half) clipped to 0-255.
func clip16(v int32) uint8 { return uint8(min(max(v>>16, 0), 255)) }

package media

import (
	"image"
	"image/color"
)

// YCbCr is a decoded video frame: 4:4:4 YCbCr with the BT.601 matrix in
// limited ("tv") range, Y 16-235 from black to white and Cb, Cr 16-240
// around 128 (ITU-R BT.601-7, 2.5.3), as ffmpeg's scale filter writes it
// (yuv444p). Its planes are not a JPEG picture's, which span 0-255: readers
// that take them directly must expand the levels. The face tracker
// recognises the type by its LimitedRangeYCbCr method (face.LimitedRange);
// At converts each pixel to RGB for any other reader.
type YCbCr struct {
	planes *image.YCbCr
}

// newYCbCr allocates a w x h frame.
func newYCbCr(w, h int) *YCbCr {
	return &YCbCr{image.NewYCbCr(image.Rect(0, 0, w, h), image.YCbCrSubsampleRatio444)}
}

// LimitedRangeYCbCr returns the frame's planes, anchored at (0, 0), all at
// full resolution, in limited range, and false: their matrix is BT.601.
func (m *YCbCr) LimitedRangeYCbCr() (*image.YCbCr, bool) { return m.planes, false }

// Bounds returns the frame's rectangle, anchored at (0, 0).
func (m *YCbCr) Bounds() image.Rectangle { return m.planes.Rect }

// ColorModel is RGBA: At converts.
func (m *YCbCr) ColorModel() color.Model { return color.RGBAModel }

// At returns the pixel's colour as 8-bit RGB: the levels expanded to full
// range (Y' = 255/219 (Y - 16), C' = 128 + 255/224 (C - 128)), then JFIF's
// conversion.
func (m *YCbCr) At(x, y int) color.Color {
	if !image.Pt(x, y).In(m.planes.Rect) {
		return color.RGBA{}
	}
	p := m.planes
	c := p.COffset(x, y)
	r, g, b := color.YCbCrToRGB(expand(p.Y[p.YOffset(x, y)], 16, 219, 0), expand(p.Cb[c], 128, 224, 128), expand(p.Cr[c], 128, 224, 128))
	return color.RGBA{r, g, b, 255}
}

// expand maps a limited-range level v, whose span of span levels starts
// (luma) or centres (chroma) at from, onto 0-255 around to: to + 255/span
// (v - from), rounded and clipped.
func expand(v uint8, from, span, to int32) uint8 {
	e := to*span + 255*(int32(v)-from)
	return uint8(min(max((2*e+span)/(2*span), 0), 255))
}

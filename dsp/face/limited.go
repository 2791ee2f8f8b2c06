package face

import "image"

// LimitedRange is a frame stored as limited-range BT.601 YCbCr, the form
// video decoders deliver (dsp/media's video frames are one; the interface
// lives here so that neither package imports the other). Limited ("studio
// swing", ffmpeg's "tv") range puts black at Y = 16 and white at Y = 235, and
// Cb and Cr within 16-240 around 128 (ITU-R BT.601-7, 2.5.3), where a JPEG
// frame's planes span 0-255. The tracker reads the planes in place and
// expands every level to the full-range value a JPEG frame of the same
// picture would hold, so both read the same lumas and colours.
type LimitedRange interface {
	image.Image
	// LimitedRangeYCbCr returns the picture's planes, with the image's
	// bounds and 4:2:0, 4:2:2 or 4:4:4 chroma.
	LimitedRangeYCbCr() *image.YCbCr
}

// Tables of the limited-range expansion, built once.
var (
	// fullY and fullC are the full-range levels of limited-range luma
	// and chroma levels: Y' = 255/219 (Y - 16), C' = 128 + 255/224 (C -
	// 128), rounded and clipped to 0-255.
	fullY, fullC [256]uint8
	// Terms of limited-range YCbCr to RGB in 1/65536 of a level: the JFIF
	// formulas (R = Y' + 1.402 (Cr'-128), G = Y' - 0.344136 (Cb'-128) -
	// 0.714136 (Cr'-128), B = Y' + 1.772 (Cb'-128)) on the expanded levels,
	// with the expansion folded in so R, G and B are rounded once, not
	// after rounding Y', Cb' and Cr'.
	rgbY, rgbCrR, rgbCbG, rgbCrG, rgbCbB [256]int32
)

func init() {
	const ky, kc, unit = 255.0 / 219, 255.0 / 224, 1 << 16
	clip := func(v float64) uint8 { return uint8(min(max(v+0.5, 0), 255)) }
	for v := range 256 {
		y, c := float64(v-16)*ky, float64(v-128)*kc
		fullY[v], fullC[v] = clip(y), clip(128+c)
		rgbY[v] = int32(y*unit + 0.5*unit) // the rounding half rides here
		rgbCrR[v] = round32(1.402 * c * unit)
		rgbCbG[v] = round32(-0.344136 * c * unit)
		rgbCrG[v] = round32(-0.714136 * c * unit)
		rgbCbB[v] = round32(1.772 * c * unit)
	}
}

func round32(v float64) int32 {
	if v < 0 {
		return int32(v - 0.5)
	}
	return int32(v + 0.5)
}

// LimitedRangeRGB converts one limited-range BT.601 pixel to 8-bit RGB, as
// the tracker reads it: the same R, G, B a JPEG decoder gives for the
// full-range pixel of the same colour, rounded once and clipped to 0-255.
func LimitedRangeRGB(y, cb, cr uint8) (r, g, b uint8) {
	yv := rgbY[y]
	return clip16(yv + rgbCrR[cr]), clip16(yv + rgbCbG[cb] + rgbCrG[cr]), clip16(yv + rgbCbB[cb])
}

// clip16 is v/65536 (already offset by a half) clipped to 0-255.
func clip16(v int32) uint8 {
	return uint8(min(max(v>>16, 0), 255))
}

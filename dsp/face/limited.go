package face

import "image"

// LimitedRange is a frame stored as limited-range YCbCr with the BT.601 or
// the BT.709 matrix, the form video decoders deliver (dsp/media's video
// frames are one; the interface lives here so that neither package imports
// the other). Limited ("studio swing", ffmpeg's "tv") range puts black at
// Y = 16 and white at Y = 235, and Cb and Cr within 16-240 around 128
// (ITU-R BT.601-7, 2.5.3; BT.709-6, 3.4). The tracker reads the planes in
// place and expands every level to the full-range value a JPEG frame of the
// same picture would hold, so both read the same lumas and colours.
type LimitedRange interface {
	image.Image
	// LimitedRangeYCbCr returns the picture's planes, with the image's
	// bounds and 4:2:0, 4:2:2 or 4:4:4 chroma, and whether they hold
	// BT.709 YCbCr (else BT.601).
	LimitedRangeYCbCr() (planes *image.YCbCr, bt709 bool)
}

// rgbTerms are the terms of limited-range YCbCr to RGB for one matrix, in
// 1/65536 of a level, with the level expansion folded in so R, G and B are
// rounded once, not after rounding Y', Cb' and Cr'.
type rgbTerms struct {
	y, crR, cbG, crG, cbB [256]int32
}

// Tables of the limited-range expansion, built once.
var (
	// fullY and fullC are the full-range levels of limited-range luma
	// and chroma levels: Y' = 255/219 (Y - 16), C' = 128 + 255/224 (C -
	// 128), rounded and clipped to 0-255.
	fullY, fullC [256]uint8
	// rgb601 applies the JFIF formulas (R = Y' + 1.402 (Cr'-128), G = Y' -
	// 0.344136 (Cb'-128) - 0.714136 (Cr'-128), B = Y' + 1.772 (Cb'-128))
	// to the expanded levels; rgb709 applies BT.709-6's (R = Y' + 1.5748
	// Cr', G = Y' - 0.1873 Cb' - 0.4681 Cr', B = Y' + 1.8556 Cb', chroma
	// centred on 0).
	rgb601, rgb709 rgbTerms
	// luma709Cb and luma709Cr turn a limited-range BT.709 luma into the
	// BT.601 luma of the same colour, in 1/64 of a level: Y601 = Y709 +
	// 219/224 (a (Cb - 128) + b (Cr - 128)), with a = 0.114 * 1.8556 -
	// 0.587 * 0.1873 and b = 0.299 * 1.5748 - 0.587 * 0.4681 from the BT.709
	// terms of B, G and R.
	luma709Cb, luma709Cr [256]int32
)

func init() {
	const ky, kc, unit = 255.0 / 219, 255.0 / 224, 1 << 16
	clip := func(v float64) uint8 { return uint8(min(max(v+0.5, 0), 255)) }
	for v := range 256 {
		y, c := float64(v-16)*ky, float64(v-128)*kc
		fullY[v], fullC[v] = clip(y), clip(128+c)
		luma709Cb[v] = round32(64 * 219.0 / 224 * (0.114*1.8556 - 0.587*0.1873) * float64(v-128))
		luma709Cr[v] = round32(64 * 219.0 / 224 * (0.299*1.5748 - 0.587*0.4681) * float64(v-128))
		for _, t := range []struct {
			terms              *rgbTerms
			crR, cbG, crG, cbB float64
		}{
			{&rgb601, 1.402, -0.344136, -0.714136, 1.772},
			{&rgb709, 1.5748, -0.1873, -0.4681, 1.8556},
		} {
			t.terms.y[v] = int32(y*unit + 0.5*unit) // the rounding half rides here
			t.terms.crR[v] = round32(t.crR * c * unit)
			t.terms.cbG[v] = round32(t.cbG * c * unit)
			t.terms.crG[v] = round32(t.crG * c * unit)
			t.terms.cbB[v] = round32(t.cbB * c * unit)
		}
	}
}

func round32(v float64) int32 {
	if v < 0 {
		return int32(v - 0.5)
	}
	return int32(v + 0.5)
}

// terms returns the conversion terms of a matrix.
func terms(bt709 bool) *rgbTerms {
	if bt709 {
		return &rgb709
	}
	return &rgb601
}

// LimitedRangeRGB converts one limited-range pixel, BT.709 or BT.601, to
// 8-bit RGB as the tracker reads it: for BT.601 the same R, G, B a JPEG
// decoder gives for the full-range pixel of the same colour, rounded once
// and clipped to 0-255.
func LimitedRangeRGB(y, cb, cr uint8, bt709 bool) (r, g, b uint8) {
	return terms(bt709).rgb(y, cb, cr)
}

func (t *rgbTerms) rgb(y, cb, cr uint8) (r, g, b uint8) {
	yv := t.y[y]
	return clip16(yv + t.crR[cr]), clip16(yv + t.cbG[cb] + t.crG[cr]), clip16(yv + t.cbB[cb])
}

// clip16 is v/65536 (already offset by a half) clipped to 0-255.
func clip16(v int32) uint8 {
	return uint8(min(max(v>>16, 0), 255))
}

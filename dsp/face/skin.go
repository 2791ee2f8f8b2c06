package face

import "math"

// Skin segmentation and robust colour means.
//
// A pixel counts as skin when its chroma lies within skinRadius of the
// person's own skin chroma and it is neither too dark nor clipped. The
// person's chroma is the median over the regions of interest, restricted to a
// broad prior box of human skin tones in Cb/Cr (after Chai and Ngan, "Face
// segmentation using skin-color map in videophone applications", IEEE TCSVT
// 1999, widened for dim light and dark skin). Chroma barely depends on
// brightness, so one model serves bright and dim scenes; adapting it to the
// person avoids the skin-tone bias of a fixed box.

const (
	// Prior box of skin chroma (BT.601 full range).
	priorCbMin, priorCbMax = 70, 135
	priorCrMin, priorCrMax = 128, 185
	// skinRadius is the chroma distance from the person's median skin
	// chroma where a pixel counts half as skin (Cb/Cr units); its weight
	// falls linearly from 1 at skinRadius-skinSoftness to 0 at
	// skinRadius+skinSoftness. A soft edge keeps pixels near the boundary
	// from flipping in and out of the mask with the pulse and the noise.
	skinRadius   = 14
	skinSoftness = 4
	// Luma bounds: darker pixels carry mostly noise and shadow, brighter
	// ones are specular highlights; a channel at 255 is clipped and has lost
	// the pulse.
	minSkinLuma, maxSkinLuma = 25, 245
	// trimFraction is cut from each end of every channel's distribution
	// before averaging (a 20% trimmed mean), which drops the remaining
	// outliers: eyebrow and hair edges, moles, glints.
	trimFraction = 0.1
)

// skinModel is the person's skin chroma, updated at each face detection.
type skinModel struct {
	cb, cr float64
	ready  bool
}

// weight is how much a pixel counts as skin under the model, 0 to
// skinUnit.
func (m *skinModel) weight(r, g, b, y, cb, cr uint8) int32 {
	if y < minSkinLuma || y > maxSkinLuma || r == 255 || g == 255 || b == 255 {
		return 0
	}
	dcb, dcr := float64(cb)-m.cb, float64(cr)-m.cr
	d2 := dcb*dcb + dcr*dcr
	const in, out = skinRadius - skinSoftness, skinRadius + skinSoftness
	switch {
	case d2 <= in*in:
		return skinUnit
	case d2 >= out*out:
		return 0
	}
	return int32(skinUnit*(out-math.Sqrt(d2))/(out-in) + 0.5)
}

// skinUnit is a full skin weight.
const skinUnit = 16

// chromaHist collects the chroma of candidate skin pixels to refit the model.
type chromaHist struct {
	cb, cr [256]int32
	n      int32
}

func (h *chromaHist) add(y, cb, cr uint8) {
	if y < minSkinLuma || y > maxSkinLuma || cb < priorCbMin || cb > priorCbMax || cr < priorCrMin || cr > priorCrMax {
		return
	}
	h.cb[cb]++
	h.cr[cr]++
	h.n++
}

// fit moves the model to the median chroma of the collected pixels: at once
// the first time, then halfway, so one odd detection cannot flip it. It
// needs minPixels candidates to say anything.
func (m *skinModel) fit(h *chromaHist, minPixels int32) {
	if h.n < minPixels {
		return
	}
	cb, cr := histQuantile(&h.cb, h.n, 0.5), histQuantile(&h.cr, h.n, 0.5)
	if !m.ready {
		m.cb, m.cr, m.ready = cb, cr, true
		return
	}
	m.cb += 0.5 * (cb - m.cb)
	m.cr += 0.5 * (cr - m.cr)
}

// histQuantile returns the value below which a fraction q of the n counted
// values lie, interpolated within the bin.
func histQuantile(h *[256]int32, n int32, q float64) float64 {
	target := q * float64(n)
	var cum float64
	for v, c := range h {
		if c == 0 {
			continue
		}
		if cum+float64(c) >= target {
			return float64(v) + (target-cum)/float64(c) - 0.5
		}
		cum += float64(c)
	}
	return 255
}

// colourHist accumulates the skin pixels of one region, each with a weight:
// the part of it inside the region times how much it is skin, in
// 1/pixelWeight of a whole skin pixel.
type colourHist struct {
	ch   [3][256]int64 // R, G, B
	n    int64
	luma int64
}

// pixelWeight is the weight of a whole pixel that is wholly skin.
const pixelWeight = coverUnit * coverUnit * skinUnit

func (h *colourHist) add(r, g, b, y uint8, w int32) {
	h.ch[0][r] += int64(w)
	h.ch[1][g] += int64(w)
	h.ch[2][b] += int64(w)
	h.n += int64(w)
	h.luma += int64(w) * int64(y)
}

// trimmedMean returns the mean of the counted values after dropping a
// fraction trim of them from each end. Bins at the cut points contribute
// their remaining fraction, so the result varies smoothly with the data:
// a change of a fraction of one level in a thousand pixels still shows.
func trimmedMean(h *[256]int64, n int64, trim float64) float64 {
	lo := trim * float64(n)
	hi := float64(n) - lo
	var cum, sum, kept float64
	for v, c := range h {
		if c == 0 {
			continue
		}
		a, b := cum, cum+float64(c)
		cum = b
		w := min(b, hi) - max(a, lo)
		if w <= 0 {
			if a >= hi {
				break
			}
			continue
		}
		sum += w * float64(v)
		kept += w
	}
	if kept == 0 {
		return 0
	}
	return sum / kept
}

// mean returns the robust R, G, B means of the histogram.
func (h *colourHist) mean() Colour {
	if h.n == 0 {
		return Colour{}
	}
	return Colour{
		R:      trimmedMean(&h.ch[0], h.n, trimFraction),
		G:      trimmedMean(&h.ch[1], h.n, trimFraction),
		B:      trimmedMean(&h.ch[2], h.n, trimFraction),
		Pixels: int(h.n / pixelWeight),
	}
}

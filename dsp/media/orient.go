package media

import (
	"encoding/binary"
	"image"
	"image/color"
)

// Phone cameras store a photo the way the sensor lay and say in its EXIF
// data how to turn it for display: a portrait photo is usually stored on
// its side with orientation 6. Browsers and viewers turn it; a decoder
// that does not hands the face detector a face lying on its side, and
// faceBmi finds no face. DecodeImage turns JPEGs upright.

// jpegOrientation returns the EXIF orientation of a JPEG (1-8, TIFF 6.0
// and EXIF 2.32 tag 0x0112), or 1 when it has none or it cannot be read:
// a damaged tag leaves the picture as stored rather than failing it.
func jpegOrientation(b []byte) int {
	if len(b) < 4 || b[0] != 0xFF || b[1] != 0xD8 {
		return 1
	}
	for i := 2; i+4 <= len(b); {
		if b[i] != 0xFF {
			return 1
		}
		m := b[i+1]
		switch {
		case m == 0xFF: // fill byte
			i++
			continue
		case m == 0xDA || m == 0xD9: // start of scan or end of image: no EXIF before the picture
			return 1
		case m >= 0xD0 && m <= 0xD7 || m == 0x01: // markers without a length
			i += 2
			continue
		}
		n := int(b[i+2])<<8 | int(b[i+3])
		if n < 2 || i+2+n > len(b) {
			return 1
		}
		if m == 0xE1 { // APP1
			if o := exifOrientation(b[i+4 : i+2+n]); o != 0 {
				return o
			}
		}
		i += 2 + n
	}
	return 1
}

// exifOrientation reads the orientation tag from the first image file
// directory of an APP1 segment's payload, 0 when the payload is not EXIF or
// holds no valid orientation.
func exifOrientation(p []byte) int {
	const header = "Exif\x00\x00"
	if len(p) < len(header)+8 || string(p[:len(header)]) != header {
		return 0
	}
	t := p[len(header):] // a TIFF file: byte order, 42, offset of IFD0
	var bo binary.ByteOrder
	switch string(t[:2]) {
	case "II":
		bo = binary.LittleEndian
	case "MM":
		bo = binary.BigEndian
	default:
		return 0
	}
	if bo.Uint16(t[2:]) != 42 {
		return 0
	}
	ifd := int64(bo.Uint32(t[4:]))
	if ifd < 8 || ifd+2 > int64(len(t)) {
		return 0
	}
	entries := t[ifd+2:]
	for k := range int(bo.Uint16(t[ifd:])) {
		e := entries[min(len(entries), 12*k):]
		if len(e) < 12 {
			return 0
		}
		if bo.Uint16(e) != 0x0112 {
			continue
		}
		// One SHORT, held in the first two bytes of the value field.
		if bo.Uint16(e[2:]) != 3 || bo.Uint32(e[4:]) != 1 {
			return 0
		}
		if v := int(bo.Uint16(e[8:])); v >= 1 && v <= 8 {
			return v
		}
		return 0
	}
	return 0
}

// turns maps each EXIF orientation to where a pixel (x', y') of the
// upright picture lies in the stored one: x = ax·x' + bx·y' + cx·(w-1),
// y = ay·x' + by·y' + cy·(h-1), for a stored picture w by h. Orientations
// 5-8 exchange width and height.
var turns = [9]struct{ ax, bx, cx, ay, by, cy int }{
	1: {1, 0, 0, 0, 1, 0},
	2: {-1, 0, 1, 0, 1, 0},  // mirrored left to right
	3: {-1, 0, 1, 0, -1, 1}, // turned half round
	4: {1, 0, 0, 0, -1, 1},  // mirrored top to bottom
	5: {0, 1, 0, 1, 0, 0},   // transposed
	6: {0, 1, 0, -1, 0, 1},  // stored a quarter anticlockwise: turn it clockwise
	7: {0, -1, 1, -1, 0, 1}, // transversed
	8: {0, -1, 1, 1, 0, 0},  // stored a quarter clockwise: turn it anticlockwise
}

// orient returns img turned upright from EXIF orientation o. The JPEG
// decoder's forms (YCbCr at 4:4:4, 4:2:0, 4:2:2 or 4:4:0, grey, CMYK) are
// turned plane by plane and stay in their form, which the face tracker
// reads without a copy; anything else becomes RGBA.
func orient(img image.Image, o int) image.Image {
	if o <= 1 || o >= len(turns) {
		return img
	}
	swap := o >= 5
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	r := image.Rect(0, 0, w, h)
	if swap {
		r = image.Rect(0, 0, h, w)
	}
	if b.Min == (image.Point{}) {
		switch m := img.(type) {
		case *image.YCbCr:
			if ratio, ok := turnedRatio(m.SubsampleRatio, swap); ok {
				out := image.NewYCbCr(r, ratio)
				turnPlane(out.Y, out.YStride, m.Y, m.YStride, w, h, 1, o)
				cw, ch := chromaSize(m)
				turnPlane(out.Cb, out.CStride, m.Cb, m.CStride, cw, ch, 1, o)
				turnPlane(out.Cr, out.CStride, m.Cr, m.CStride, cw, ch, 1, o)
				return out
			}
		case *image.Gray:
			out := image.NewGray(r)
			turnPlane(out.Pix, out.Stride, m.Pix, m.Stride, w, h, 1, o)
			return out
		case *image.CMYK:
			out := image.NewCMYK(r)
			turnPlane(out.Pix, out.Stride, m.Pix, m.Stride, w, h, 4, o)
			return out
		}
	}
	out := image.NewRGBA(r)
	t := turns[o]
	for y := range r.Dy() {
		for x := range r.Dx() {
			sx := t.ax*x + t.bx*y + t.cx*(w-1)
			sy := t.ay*x + t.by*y + t.cy*(h-1)
			out.Set(x, y, color.RGBAModel.Convert(img.At(b.Min.X+sx, b.Min.Y+sy)))
		}
	}
	return out
}

// turnedRatio is the chroma subsampling of a YCbCr picture after a turn
// that exchanges width and height when swap, false when Go has no form
// for it (4:1:1 and 4:1:0 turned).
func turnedRatio(r image.YCbCrSubsampleRatio, swap bool) (image.YCbCrSubsampleRatio, bool) {
	if !swap {
		return r, true
	}
	switch r {
	case image.YCbCrSubsampleRatio444, image.YCbCrSubsampleRatio420:
		return r, true
	case image.YCbCrSubsampleRatio422:
		return image.YCbCrSubsampleRatio440, true
	case image.YCbCrSubsampleRatio440:
		return image.YCbCrSubsampleRatio422, true
	}
	return r, false
}

// chromaSize is the size of a YCbCr picture's chroma planes.
func chromaSize(m *image.YCbCr) (w, h int) {
	w, h = m.Rect.Dx(), m.Rect.Dy()
	switch m.SubsampleRatio {
	case image.YCbCrSubsampleRatio422:
		return (w + 1) / 2, h
	case image.YCbCrSubsampleRatio420:
		return (w + 1) / 2, (h + 1) / 2
	case image.YCbCrSubsampleRatio440:
		return w, (h + 1) / 2
	case image.YCbCrSubsampleRatio411:
		return (w + 3) / 4, h
	case image.YCbCrSubsampleRatio410:
		return (w + 3) / 4, (h + 1) / 2
	}
	return w, h
}

// turnPlane writes the w by h plane src (bpp bytes a sample) turned by
// orientation o into dst.
func turnPlane(dst []byte, dstStride int, src []byte, srcStride, w, h, bpp, o int) {
	t := turns[o]
	ow, oh := w, h
	if o >= 5 {
		ow, oh = h, w
	}
	for y := range oh {
		row := dst[y*dstStride : y*dstStride+ow*bpp]
		for x := range ow {
			sx := t.ax*x + t.bx*y + t.cx*(w-1)
			sy := t.ay*x + t.by*y + t.cy*(h-1)
			copy(row[x*bpp:(x+1)*bpp], src[sy*srcStride+sx*bpp:])
		}
	}
}

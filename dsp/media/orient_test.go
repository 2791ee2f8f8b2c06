package media

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"testing"
)

// exifAPP1 is an APP1 segment holding EXIF data whose first directory has
// one entry: tag, of type typ and count, with value v.
func exifAPP1(bo binary.AppendByteOrder, tag, typ uint16, count uint32, v uint16) []byte {
	tiff := []byte("II*\x00\x08\x00\x00\x00")
	if bo == binary.AppendByteOrder(binary.BigEndian) {
		tiff = []byte("MM\x00*\x00\x00\x00\x08")
	}
	tiff = bo.AppendUint16(tiff, 1)
	tiff = bo.AppendUint16(tiff, tag)
	tiff = bo.AppendUint16(tiff, typ)
	tiff = bo.AppendUint32(tiff, count)
	tiff = bo.AppendUint16(tiff, v)
	tiff = append(tiff, 0, 0, 0, 0, 0, 0) // rest of the value field, next directory: none
	return app1(append([]byte("Exif\x00\x00"), tiff...))
}

// app1 wraps payload in an APP1 marker segment.
func app1(payload []byte) []byte {
	return append([]byte{0xFF, 0xE1, byte((len(payload) + 2) >> 8), byte(len(payload) + 2)}, payload...)
}

// withSegments inserts marker segments into a JPEG right after its SOI.
func withSegments(jpg []byte, segs ...[]byte) []byte {
	out := append([]byte{}, jpg[:2]...)
	for _, s := range segs {
		out = append(out, s...)
	}
	return append(out, jpg[2:]...)
}

// banded is a picture as a sensor stores it: w x h, its first rows red,
// its first columns green (blue where they meet), grey elsewhere, so that
// where the first row and column end up after turning can be read.
func banded(w, h int) *image.RGBA {
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			c := color.RGBA{128, 128, 128, 255}
			switch {
			case y < 16 && x < 16:
				c = color.RGBA{40, 40, 200, 255}
			case y < 16:
				c = color.RGBA{200, 40, 40, 255}
			case x < 16:
				c = color.RGBA{40, 200, 40, 255}
			}
			m.Set(x, y, c)
		}
	}
	return m
}

func encodeJPEG(t *testing.T, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 95}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestJPEGOrientation: a JPEG comes out upright for each of the eight EXIF
// orientations, in either byte order. The check follows the standard's own
// words, not the code's table: orientation o puts the stored first row and
// first column on these sides of the picture as it is viewed.
func TestJPEGOrientation(t *testing.T) {
	sides := [9][2]string{
		1: {"top", "left"}, 2: {"top", "right"}, 3: {"bottom", "right"}, 4: {"bottom", "left"},
		5: {"left", "top"}, 6: {"right", "top"}, 7: {"right", "bottom"}, 8: {"left", "bottom"},
	}
	const w, h = 64, 48
	stored := encodeJPEG(t, banded(w, h))
	for _, bo := range []binary.AppendByteOrder{binary.LittleEndian, binary.BigEndian} {
		for o := 1; o <= 8; o++ {
			data := withSegments(stored, exifAPP1(bo, 0x0112, 3, 1, uint16(o)))
			img, f, err := DecodeImage(context.Background(), data, ImageOptions{})
			if err != nil || f != JPEG {
				t.Fatalf("%v orientation %d: %v, %s", bo, o, err, f)
			}
			if _, ok := img.(*image.YCbCr); !ok {
				t.Errorf("%v orientation %d: %T, want the decoder's YCbCr kept", bo, o, img)
			}
			b := img.Bounds()
			wantW, wantH := w, h
			if o >= 5 {
				wantW, wantH = h, w
			}
			if b.Dx() != wantW || b.Dy() != wantH {
				t.Errorf("%v orientation %d: %dx%d, want %dx%d", bo, o, b.Dx(), b.Dy(), wantW, wantH)
				continue
			}
			// The middle of each side, 8 pixels in.
			at := map[string]image.Point{
				"top": {b.Dx() / 2, 8}, "bottom": {b.Dx() / 2, b.Dy() - 9},
				"left": {8, b.Dy() / 2}, "right": {b.Dx() - 9, b.Dy() / 2},
			}
			red := func(c color.Color) bool { r, g, _, _ := c.RGBA(); return r > 150<<8 && g < 90<<8 }
			green := func(c color.Color) bool { r, g, _, _ := c.RGBA(); return g > 150<<8 && r < 90<<8 }
			row, col := sides[o][0], sides[o][1]
			if c := img.At(at[row].X, at[row].Y); !red(c) {
				t.Errorf("%v orientation %d: %v at the %s, want the first row (red) there", bo, o, c, row)
			}
			if c := img.At(at[col].X, at[col].Y); !green(c) {
				t.Errorf("%v orientation %d: %v at the %s, want the first column (green) there", bo, o, c, col)
			}
		}
	}
}

// TestJPEGOrientationIgnored: EXIF that does not hold a valid orientation
// leaves the picture as stored, and a JPEG still decodes whatever its EXIF
// says; an orientation in a second APP1 (after an XMP one) is found.
func TestJPEGOrientationIgnored(t *testing.T) {
	stored := encodeJPEG(t, banded(64, 48))
	le := binary.LittleEndian
	valid := exifAPP1(le, 0x0112, 3, 1, 6)
	wrongIFD := append([]byte{}, valid...)
	wrongIFD[4+6+4] = 0xF0 // IFD0 past the segment
	for _, tc := range []struct {
		name string
		segs [][]byte
		want int
	}{
		{"none", nil, 1},
		{"orientation 6", [][]byte{valid}, 6},
		{"after an XMP segment", [][]byte{app1([]byte("http://ns.adobe.com/xap/1.0/\x00<x/>")), valid}, 6},
		{"another tag", [][]byte{exifAPP1(le, 0x010F, 3, 1, 6)}, 1},
		{"value 9", [][]byte{exifAPP1(le, 0x0112, 3, 1, 9)}, 1},
		{"value 0", [][]byte{exifAPP1(le, 0x0112, 3, 1, 0)}, 1},
		{"a LONG", [][]byte{exifAPP1(le, 0x0112, 4, 1, 6)}, 1},
		{"two values", [][]byte{exifAPP1(le, 0x0112, 3, 2, 6)}, 1},
		{"directory past the end", [][]byte{wrongIFD}, 1},
		{"not EXIF", [][]byte{app1([]byte("Exif\x00\x00XX*\x00\x08\x00\x00\x00"))}, 1},
		{"cut short", [][]byte{valid[:12]}, 1},
	} {
		data := withSegments(stored, tc.segs...)
		if got := jpegOrientation(data); got != tc.want {
			t.Errorf("%s: orientation %d, want %d", tc.name, got, tc.want)
		}
		img, _, err := DecodeImage(context.Background(), data, ImageOptions{})
		if tc.name == "cut short" {
			continue // the cut segment swallows the JPEG's own markers
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if wantW := map[bool]int{true: 48, false: 64}[tc.want >= 5]; img.Bounds().Dx() != wantW {
			t.Errorf("%s: %v, want %d wide", tc.name, img.Bounds(), wantW)
		}
	}
}

// TestJPEGOrientationMemory: a picture to be turned is held twice while it
// is turned, and the memory limit counts it so, before decoding.
func TestJPEGOrientationMemory(t *testing.T) {
	stored := encodeJPEG(t, banded(64, 48))
	limit := int64(3*64*48 + 100) // the decoded picture fits once, not twice
	if _, _, err := DecodeImage(context.Background(), stored, ImageOptions{MaxMemory: limit}); err != nil {
		t.Fatalf("upright: %v", err)
	}
	turned := withSegments(stored, exifAPP1(binary.BigEndian, 0x0112, 3, 1, 6))
	if _, _, err := DecodeImage(context.Background(), turned, ImageOptions{MaxMemory: limit}); !errors.Is(err, ErrTooManyPixels) {
		t.Fatalf("turned, at a limit of one copy: %v, want ErrTooManyPixels", err)
	}
	if _, _, err := DecodeImage(context.Background(), turned, ImageOptions{MaxMemory: 2 * limit}); err != nil {
		t.Fatalf("turned, at a limit of two copies: %v", err)
	}
}

// TestOrientForms: every form a picture can have is turned alike. Grey and
// CMYK pictures, and YCbCr ones turned into a form Go lacks (4:1:1 on its
// side, made RGBA), match the picture read pixel by pixel through the
// turn; YCbCr pictures stay YCbCr, their luma turned pixel by pixel and
// each chroma plane as a picture of its own (a mirrored subsampled plane
// cannot match pixel by pixel: its samples straddle pixel pairs).
func TestOrientForms(t *testing.T) {
	const w, h = 13, 7 // odd: chroma planes round up
	fill := func(p []byte, seed int) {
		for i := range p {
			p[i] = byte(i*7 + seed*31)
		}
	}
	var pics []image.Image
	for _, r := range []image.YCbCrSubsampleRatio{image.YCbCrSubsampleRatio444, image.YCbCrSubsampleRatio422,
		image.YCbCrSubsampleRatio420, image.YCbCrSubsampleRatio440, image.YCbCrSubsampleRatio411, image.YCbCrSubsampleRatio410} {
		m := image.NewYCbCr(image.Rect(0, 0, w, h), r)
		fill(m.Y, 1)
		fill(m.Cb, 2)
		fill(m.Cr, 3)
		pics = append(pics, m)
	}
	g := image.NewGray(image.Rect(0, 0, w, h))
	fill(g.Pix, 4)
	c := image.NewCMYK(image.Rect(0, 0, w, h))
	fill(c.Pix, 5)
	pics = append(pics, g, c)
	// from returns where pixel x, y of a picture turned by o lies in the
	// stored pw x ph one.
	from := func(o, x, y, pw, ph int) (int, int) {
		t := turns[o]
		return t.ax*x + t.bx*y + t.cx*(pw-1), t.ay*x + t.by*y + t.cy*(ph-1)
	}
	for _, p := range pics {
		for o := 1; o <= 8; o++ {
			got := orient(p, o)
			b := got.Bounds()
			if (o >= 5) != (b.Dx() == h) || b.Dx()*b.Dy() != w*h {
				t.Fatalf("%T %s, orientation %d: %v", p, subsampling(p), o, b)
			}
			if m, ok := got.(*image.YCbCr); ok {
				src := p.(*image.YCbCr)
				if want, _ := turnedRatio(src.SubsampleRatio, o >= 5); m.SubsampleRatio != want {
					t.Fatalf("%s, orientation %d: %s, want %s", subsampling(p), o, m.SubsampleRatio, want)
				}
				for y := range b.Dy() {
					for x := range b.Dx() {
						sx, sy := from(o, x, y, w, h)
						if m.Y[y*m.YStride+x] != src.Y[sy*src.YStride+sx] {
							t.Fatalf("%s, orientation %d: luma %d,%d", subsampling(p), o, x, y)
						}
					}
				}
				cw, ch := chromaSize(src)
				ow, oh := chromaSize(m)
				if ow*oh != cw*ch {
					t.Fatalf("%s, orientation %d: chroma %dx%d from %dx%d", subsampling(p), o, ow, oh, cw, ch)
				}
				for y := range oh {
					for x := range ow {
						sx, sy := from(o, x, y, cw, ch)
						if m.Cb[y*m.CStride+x] != src.Cb[sy*src.CStride+sx] || m.Cr[y*m.CStride+x] != src.Cr[sy*src.CStride+sx] {
							t.Fatalf("%s, orientation %d: chroma %d,%d", subsampling(p), o, x, y)
						}
					}
				}
				continue
			}
			if _, ycc := p.(*image.YCbCr); ycc && o < 5 {
				t.Fatalf("%s, orientation %d: %T, want YCbCr kept", subsampling(p), o, got)
			}
			for y := range b.Dy() {
				for x := range b.Dx() {
					sx, sy := from(o, x, y, w, h)
					want := color.RGBAModel.Convert(p.At(sx, sy))
					if have := color.RGBAModel.Convert(got.At(x, y)); have != want {
						t.Fatalf("%T %s, orientation %d, pixel %d,%d: %v, want %v", p, subsampling(p), o, x, y, have, want)
					}
				}
			}
		}
	}
}

func subsampling(img image.Image) string {
	if m, ok := img.(*image.YCbCr); ok {
		return m.SubsampleRatio.String()
	}
	return ""
}

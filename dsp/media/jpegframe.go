package media

import (
	"errors"
	"fmt"
	"image"
	"math"
)

// Smallest picture DecodeJPEGFrame delivers at half size: below it, the face
// would be too few pixels for the detector.
const minHalfWidth, minHalfHeight = 160, 120

// DecodeJPEGFrame decodes a live session's JPEG frame for analysis, at half
// its width and height when that leaves at least 160x120 pixels: a 320x240
// frame arrives as 160x120. Face tracking and skin colour means need no
// more, and a session server decodes some 1200 frames a second, of which
// the inverse DCT is most of the cost.
//
// Each 8x8 block of a baseline JPEG becomes 2x2 times fewer pixels through
// a reduced inverse DCT of its 4x4 lowest frequencies (as libjpeg's scaled
// decoding does; the idea is from the JPEG standard's DCT, ITU-T T.81 A.3.3):
//
//	p(m, n) = 128 + Σ_{u,v<4} a(u, m) a(v, n) F(u, v),
//	a(u, m) = C(u)/2 · cos((2m+1)uπ/8) · cos(uπ/16),  C(0) = 1/√2, else 1,
//
// which is the mean of each 2x2 pixel square of the full decode without the
// block's highest frequencies (they would only alias). Only baseline
// YCbCr (4:4:4, 4:2:2, 4:2:0, 4:4:0) and grayscale JPEGs in one scan take
// this path; others (progressive, arithmetic, Adobe RGB, 12-bit) decode at
// full size through DecodeJPEG. The dimensions are checked against
// maxPixels before any pixel is decoded. A colour frame is an
// *image.YCbCr, which face.Tracker reads in place.
//
// A stream of frames is better decoded by one FrameDecoder, which does not
// allocate once it has seen the frames' size.
func DecodeJPEGFrame(data []byte, maxPixels int64) (image.Image, error) {
	return new(FrameDecoder).Decode(data, maxPixels)
}

// FrameDecoder decodes frames as DecodeJPEGFrame does, keeping its tables,
// its planes and the picture it returns from one frame to the next: frames
// no larger than the largest before it decode without allocating, where
// DecodeJPEGFrame allocates some 36 KB for a 320x240 frame. The picture
// Decode returns is valid until the next Decode, which may overwrite it
// (one the full-size decode gives is the caller's to keep). A FrameDecoder
// is for one goroutine at a time; its zero value is ready to use.
type FrameDecoder struct {
	d halfDecoder
}

// Decode decodes one frame, as DecodeJPEGFrame.
func (fd *FrameDecoder) Decode(data []byte, maxPixels int64) (image.Image, error) {
	if len(data) == 0 {
		return nil, ErrEmpty
	}
	if f, ok := SniffImage(data[:min(len(data), SniffLen)]); !ok || f != JPEG {
		return nil, ErrUnsupported
	}
	img, err := fd.d.decode(data, maxPixels, minHalfWidth, minHalfHeight)
	fd.d.data = nil // the caller's, not to be kept alive
	if errors.Is(err, errFullSize) {
		return DecodeJPEG(data, maxPixels)
	}
	return img, err
}

// errFullSize: the JPEG is valid as far as read, but not one decodeHalf
// decodes, or too small to halve.
var errFullSize = errors.New("decode at full size")

// halfDecoder reads one baseline JPEG at a time. The fields up to minH
// are one JPEG's; the others are storage they point into, kept from one
// JPEG to the next.
type halfDecoder struct {
	data    []byte
	width   int // of the full picture
	height  int
	comps   []halfComponent // of compBuf
	hmax    int
	vmax    int
	quant   [4]*[64]int32 // zigzag order; of quantBuf
	dc, ac  [4]*huffman   // of dcBuf, acBuf
	restart int           // MCUs between restart markers, 0: none
	minW    int           // smallest halved picture
	minH    int

	compBuf      [3]halfComponent // their planes are kept
	quantBuf     [4][64]int32
	dcBuf, acBuf [4]huffman
	ycbcr        image.YCbCr // the picture decodeScan returns
	gray         image.Gray
}

type halfComponent struct {
	id         byte
	h, v       int
	tq         int
	dc, ac     *huffman
	pred       int32
	plane      []byte // the reduced picture, 4x4 pixels a block
	stride     int
	blocksWide int // blocks of a row (the plane's stride / 4)
}

func corruptf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

// decodeHalf parses the markers up to the first scan and decodes it, when
// the halved picture is at least minW x minH.
func decodeHalf(data []byte, maxPixels int64, minW, minH int) (image.Image, error) {
	return new(halfDecoder).decode(data, maxPixels, minW, minH)
}

// decode is decodeHalf with d's storage; what it returns is valid until
// the next decode.
func (d *halfDecoder) decode(data []byte, maxPixels int64, minW, minH int) (img image.Image, err error) {
	d.data, d.width, d.height, d.comps, d.hmax, d.vmax = data, 0, 0, nil, 0, 0
	d.quant, d.dc, d.ac = [4]*[64]int32{}, [4]*huffman{}, [4]*huffman{}
	d.restart, d.minW, d.minH = 0, minW, minH
	if len(data) < 4 || data[0] != 0xFF || data[1] != 0xD8 {
		return nil, corruptf("no start of image")
	}
	pos := 2
	for {
		if pos+4 > len(data) || data[pos] != 0xFF {
			return nil, corruptf("marker expected at byte %d", pos)
		}
		for pos < len(data) && data[pos] == 0xFF {
			pos++ // fill bytes
		}
		if pos+2 >= len(data) {
			return nil, corruptf("truncated at byte %d", pos)
		}
		m := data[pos]
		pos++
		if m == 0x01 || (m >= 0xD0 && m <= 0xD7) {
			continue // markers without a segment
		}
		if m == 0xD8 || m == 0xD9 || m == 0x00 {
			return nil, corruptf("marker %#x before the scan", m)
		}
		n := int(data[pos])<<8 | int(data[pos+1])
		if n < 2 || pos+n > len(data) {
			return nil, corruptf("segment %#x of %d bytes at byte %d", m, n, pos)
		}
		seg := data[pos+2 : pos+n]
		pos += n
		switch {
		case m == 0xDB:
			err = d.readQuant(seg)
		case m == 0xC4:
			err = d.readHuffman(seg)
		case m == 0xC0 || m == 0xC1:
			err = d.readFrame(seg, maxPixels)
		case m >= 0xC2 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC:
			return nil, errFullSize // progressive, lossless, hierarchical or arithmetic
		case m == 0xDD:
			if len(seg) != 2 {
				return nil, corruptf("restart interval of %d bytes", len(seg))
			}
			d.restart = int(seg[0])<<8 | int(seg[1])
		case m == 0xEE:
			// Adobe's segment: transform 0 means RGB, not YCbCr.
			if len(seg) >= 12 && string(seg[:5]) == "Adobe" && seg[11] == 0 {
				return nil, errFullSize
			}
		case m == 0xDA:
			if err := d.readScan(seg); err != nil {
				return nil, err
			}
			return d.decodeScan(pos)
		}
		if err != nil {
			return nil, err
		}
	}
}

func (d *halfDecoder) readQuant(seg []byte) error {
	for len(seg) > 0 {
		precision, id := seg[0]>>4, seg[0]&15
		if id > 3 || precision > 1 {
			return corruptf("quantisation table %d of precision %d", id, precision)
		}
		size := 64 << precision
		if len(seg) < 1+size {
			return corruptf("short quantisation table")
		}
		q := &d.quantBuf[id]
		for k := range q {
			if precision == 0 {
				q[k] = int32(seg[1+k])
			} else {
				q[k] = int32(seg[1+2*k])<<8 | int32(seg[2+2*k])
			}
		}
		d.quant[id] = q
		seg = seg[1+size:]
	}
	return nil
}

func (d *halfDecoder) readFrame(seg []byte, maxPixels int64) error {
	if d.comps != nil {
		return corruptf("two frame headers")
	}
	if len(seg) < 6 {
		return corruptf("short frame header")
	}
	if seg[0] != 8 {
		return errFullSize
	}
	d.height, d.width = int(seg[1])<<8|int(seg[2]), int(seg[3])<<8|int(seg[4])
	nf := int(seg[5])
	if d.height == 0 {
		return errFullSize // the height comes later, in a DNL segment
	}
	if err := checkPixels(int64(d.width), int64(d.height), maxPixels); err != nil {
		return err
	}
	if (nf != 1 && nf != 3) || len(seg) != 6+3*nf {
		return errFullSize
	}
	if (d.width+1)/2 < d.minW || (d.height+1)/2 < d.minH {
		return errFullSize
	}
	d.comps = d.compBuf[:nf]
	for i := range d.comps {
		c := &d.comps[i]
		*c = halfComponent{plane: c.plane}
		c.id, c.h, c.v, c.tq = seg[6+3*i], int(seg[7+3*i]>>4), int(seg[7+3*i]&15), int(seg[8+3*i])
		if c.h < 1 || c.h > 4 || c.v < 1 || c.v > 4 || c.tq > 3 {
			return corruptf("component %d: sampling %dx%d, table %d", i, c.h, c.v, c.tq)
		}
		d.hmax, d.vmax = max(d.hmax, c.h), max(d.vmax, c.v)
	}
	if nf == 1 {
		// One component is one block per unit, whatever it declares.
		d.comps[0].h, d.comps[0].v, d.hmax, d.vmax = 1, 1, 1, 1
		return nil
	}
	// Luma at the highest sampling, chroma at the same one for both and at
	// a ratio image.YCbCr has (some encoders write 4:4:4 as all 2x2).
	y, cb, cr := d.comps[0], d.comps[1], d.comps[2]
	if y.h != d.hmax || y.v != d.vmax || cb.h != cr.h || cb.v != cr.v || y.h%cb.h != 0 || y.v%cb.v != 0 ||
		y.h/cb.h > 2 || y.v/cb.v > 2 {
		return errFullSize
	}
	return nil
}

func (d *halfDecoder) readScan(seg []byte) error {
	if d.comps == nil {
		return corruptf("scan before the frame header")
	}
	if len(seg) < 1 || len(seg) != 4+2*int(seg[0]) {
		return corruptf("scan header of %d bytes", len(seg))
	}
	if int(seg[0]) != len(d.comps) {
		return errFullSize // components in separate scans
	}
	for i := range d.comps {
		sel, tables := seg[1+2*i], seg[2+2*i]
		var c *halfComponent
		for j := range d.comps {
			if d.comps[j].id == sel {
				c = &d.comps[j]
			}
		}
		if c == nil || tables>>4 > 3 || tables&15 > 3 {
			return corruptf("scan component %d", sel)
		}
		if c.dc != nil {
			return corruptf("scan component %d named twice", sel)
		}
		c.dc, c.ac = d.dc[tables>>4], d.ac[tables&15]
		if c.dc == nil || c.ac == nil || d.quant[c.tq] == nil {
			return corruptf("scan component %d lacks a table", sel)
		}
	}
	ss, se, a := seg[1+2*len(d.comps)], seg[2+2*len(d.comps)], seg[3+2*len(d.comps)]
	if ss != 0 || se != 63 || a != 0 {
		return corruptf("baseline scan with spectral selection %d-%d", ss, se)
	}
	return nil
}

// decodeScan decodes the entropy-coded data from pos into the reduced
// planes and returns the picture.
func (d *halfDecoder) decodeScan(pos int) (image.Image, error) {
	mcuW, mcuH := 8*d.hmax, 8*d.vmax
	mcusX, mcusY := (d.width+mcuW-1)/mcuW, (d.height+mcuH-1)/mcuH
	if len(d.comps) == 1 {
		mcusX, mcusY = (d.width+7)/8, (d.height+7)/8
	}
	for i := range d.comps {
		c := &d.comps[i]
		c.blocksWide = mcusX * c.h
		c.stride = 4 * c.blocksWide
		// Every block is decoded, so every byte of the plane written.
		if n := c.stride * 4 * mcusY * c.v; cap(c.plane) >= n {
			c.plane = c.plane[:n]
		} else {
			c.plane = make([]byte, n)
		}
	}
	b := bitReader{data: d.data, pos: pos}
	var coef [16]float32
	for my := range mcusY {
		for mx := range mcusX {
			n := my*mcusX + mx
			if d.restart > 0 && n > 0 && n%d.restart == 0 {
				if err := b.restart(n/d.restart - 1); err != nil {
					return nil, err
				}
				for i := range d.comps {
					d.comps[i].pred = 0
				}
			}
			for i := range d.comps {
				c := &d.comps[i]
				for by := range c.v {
					for bx := range c.h {
						if err := d.decodeBlock(&b, c, &coef); err != nil {
							return nil, fmt.Errorf("block %d of MCU %d,%d: %w", by*c.h+bx, mx, my, err)
						}
						reduce(&coef, c.plane[4*(my*c.v+by)*c.stride+4*(mx*c.h+bx):], c.stride)
					}
				}
			}
		}
	}
	rect := image.Rect(0, 0, (d.width+1)/2, (d.height+1)/2)
	y := d.comps[0]
	if len(d.comps) == 1 {
		d.gray = image.Gray{Pix: y.plane, Stride: y.stride, Rect: rect}
		return &d.gray, nil
	}
	// readFrame allows these four ratios only.
	var ratio image.YCbCrSubsampleRatio
	switch [2]int{y.h / d.comps[1].h, y.v / d.comps[1].v} {
	case [2]int{1, 1}:
		ratio = image.YCbCrSubsampleRatio444
	case [2]int{2, 1}:
		ratio = image.YCbCrSubsampleRatio422
	case [2]int{2, 2}:
		ratio = image.YCbCrSubsampleRatio420
	case [2]int{1, 2}:
		ratio = image.YCbCrSubsampleRatio440
	}
	d.ycbcr = image.YCbCr{Y: y.plane, Cb: d.comps[1].plane, Cr: d.comps[2].plane,
		YStride: y.stride, CStride: d.comps[1].stride, SubsampleRatio: ratio, Rect: rect}
	return &d.ycbcr, nil
}

// decodeBlock reads one block's coefficients and keeps the dequantised 4x4
// lowest frequencies in coef (row-major: vertical frequency, then
// horizontal).
func (d *halfDecoder) decodeBlock(b *bitReader, c *halfComponent, coef *[16]float32) error {
	*coef = [16]float32{}
	q := d.quant[c.tq]
	t, err := b.decode(c.dc)
	if err != nil {
		return err
	}
	if t > 11 {
		return corruptf("DC difference of %d bits", t)
	}
	diff, err := b.receiveExtend(t)
	if err != nil {
		return err
	}
	c.pred += diff
	coef[0] = float32(c.pred) * float32(q[0])
	for k := 1; k < 64; k++ {
		rs, err := b.decode(c.ac)
		if err != nil {
			return err
		}
		r, s := int(rs>>4), rs&15
		if s == 0 {
			if r != 15 {
				break // end of block
			}
			k += 15 // sixteen zeros
			continue
		}
		k += r
		if k > 63 {
			return corruptf("coefficient past the block")
		}
		v, err := b.receiveExtend(s)
		if err != nil {
			return err
		}
		if z := zigzag[k]; z>>3 < 4 && z&7 < 4 {
			coef[(z>>3)*4+z&7] = float32(v) * float32(q[k])
		}
	}
	return nil
}

// zigzag maps a coefficient's position in the stream to its natural index
// (row*8 + column).
var zigzag = [64]uint8{
	0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5,
	12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6, 7, 14, 21, 28,
	35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51,
	58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63,
}

// reducedBasis is a(u, m) of DecodeJPEGFrame's formula, [u][m].
var reducedBasis = func() (a [4][4]float32) {
	for u := range 4 {
		cu := 1.0
		if u == 0 {
			cu = 1 / math.Sqrt2
		}
		for m := range 4 {
			a[u][m] = float32(cu / 2 * math.Cos(float64((2*m+1)*u)*math.Pi/8) * math.Cos(float64(u)*math.Pi/16))
		}
	}
	return a
}()

// reduce writes the 4x4 pixels of a block's reduced inverse DCT at dst
// (rows stride apart), level-shifted and clamped to 0-255.
func reduce(coef *[16]float32, dst []byte, stride int) {
	a := &reducedBasis
	var rows [4][4]float32 // [v][m]: horizontal transform of each frequency row
	for v := range 4 {
		c := coef[4*v : 4*v+4]
		if c[0] == 0 && c[1] == 0 && c[2] == 0 && c[3] == 0 {
			continue
		}
		for m := range 4 {
			rows[v][m] = a[0][m]*c[0] + a[1][m]*c[1] + a[2][m]*c[2] + a[3][m]*c[3]
		}
	}
	for n := range 4 {
		out := dst[n*stride : n*stride+4]
		for m := range 4 {
			p := 128 + a[0][n]*rows[0][m] + a[1][n]*rows[1][m] + a[2][n]*rows[2][m] + a[3][n]*rows[3][m]
			switch {
			case p <= 0:
				out[m] = 0
			case p >= 255:
				out[m] = 255
			default:
				out[m] = uint8(p + 0.5)
			}
		}
	}
}

// huffman is a decoding table: the codes of up to lutBits bits by lookup,
// longer ones by their canonical ranges (ITU-T T.81 F.2.2.3).
type huffman struct {
	lut     [1 << lutBits]uint16 // length<<8 | symbol; 0: a longer code
	maxCode [17]int32            // largest code of each length, -1 for none
	valPtr  [17]int32            // index in symbols of the first code of each length
	minCode [17]int32
	symbols []uint8 // of symBuf
	symBuf  [256]uint8
}

const lutBits = 9

func (d *halfDecoder) readHuffman(seg []byte) error {
	for len(seg) > 0 {
		if len(seg) < 17 {
			return corruptf("short Huffman table")
		}
		class, id := seg[0]>>4, seg[0]&15
		if class > 1 || id > 3 {
			return corruptf("Huffman table %d of class %d", id, class)
		}
		total := 0
		for _, n := range seg[1:17] {
			total += int(n)
		}
		if total == 0 || total > 256 || len(seg) < 17+total {
			return corruptf("Huffman table of %d codes", total)
		}
		h := &d.dcBuf[id]
		if class == 1 {
			h = &d.acBuf[id]
		}
		*h = huffman{}
		h.symbols = h.symBuf[:copy(h.symBuf[:], seg[17:17+total])]
		code, k := int32(0), int32(0)
		for l := 1; l <= 16; l++ {
			count := int32(seg[l])
			h.minCode[l], h.valPtr[l], h.maxCode[l] = code, k, -1
			if count > 0 {
				h.maxCode[l] = code + count - 1
			}
			if code+count > 1<<l {
				return corruptf("Huffman codes overflow %d bits", l)
			}
			for ; count > 0; count-- {
				if l <= lutBits {
					shift := lutBits - l
					for i := code << shift; i < (code+1)<<shift; i++ {
						h.lut[i] = uint16(l)<<8 | uint16(h.symbols[k])
					}
				}
				code++
				k++
			}
			code <<= 1
		}
		if class == 0 {
			d.dc[id] = h
		} else {
			d.ac[id] = h
		}
		seg = seg[17+total:]
	}
	return nil
}

// bitReader reads entropy-coded data: bytes with 0xFF stuffed as 0xFF
// 0x00, up to the next marker. At a marker it pads with zero bits, and
// reading any of them is an error (the data ended inside a block).
type bitReader struct {
	data []byte
	pos  int
	acc  uint64 // bits, the next one highest among the n low bits
	n    uint   // bits in acc
	pad  uint   // of them, zero bits added at a marker (the lowest)
}

func (b *bitReader) fill() {
	for b.n <= 56 {
		if b.pad == 0 && b.pos < len(b.data) {
			c := b.data[b.pos]
			if c != 0xFF {
				b.pos++
				b.acc, b.n = b.acc<<8|uint64(c), b.n+8
				continue
			}
			if b.pos+1 < len(b.data) && b.data[b.pos+1] == 0x00 {
				b.pos += 2
				b.acc, b.n = b.acc<<8|0xFF, b.n+8
				continue
			}
		}
		// A marker, or the end of the data.
		b.acc, b.n, b.pad = b.acc<<8, b.n+8, b.pad+8
	}
}

var errShortData = corruptf("the entropy-coded data ends inside a block")

// take consumes k bits, which must be real ones.
func (b *bitReader) take(k uint) (uint32, error) {
	if b.n < k+8 {
		b.fill()
	}
	if k > b.n-b.pad {
		return 0, errShortData
	}
	b.n -= k
	return uint32(b.acc>>b.n) & (1<<k - 1), nil
}

func (b *bitReader) decode(h *huffman) (uint8, error) {
	if b.n < 16+8 {
		b.fill()
	}
	if e := h.lut[uint32(b.acc>>(b.n-lutBits))&(1<<lutBits-1)]; e != 0 {
		if l := uint(e >> 8); l <= b.n-b.pad {
			b.n -= l
			return uint8(e), nil
		}
		return 0, errShortData
	}
	for l := lutBits + 1; l <= 16; l++ {
		code := int32(b.acc>>(b.n-uint(l))) & (1<<l - 1)
		if code <= h.maxCode[l] {
			if uint(l) > b.n-b.pad {
				return 0, errShortData
			}
			b.n -= uint(l)
			i := h.valPtr[l] + code - h.minCode[l]
			if i < 0 || int(i) >= len(h.symbols) {
				return 0, corruptf("bad Huffman code")
			}
			return h.symbols[i], nil
		}
	}
	return 0, corruptf("bad Huffman code")
}

// receiveExtend reads an s-bit magnitude and gives it its sign (T.81
// F.2.2.1).
func (b *bitReader) receiveExtend(s uint8) (int32, error) {
	if s == 0 {
		return 0, nil
	}
	if s > 16 {
		return 0, corruptf("coefficient of %d bits", s)
	}
	v, err := b.take(uint(s))
	if err != nil {
		return 0, err
	}
	if v < 1<<(s-1) {
		return int32(v) - 1<<s + 1, nil
	}
	return int32(v), nil
}

// restart expects restart marker i (mod 8) where the data stopped, and
// starts reading after it.
func (b *bitReader) restart(i int) error {
	// The interval's last byte, padded with one bits, may not have been
	// read yet: skip to the marker.
	for b.pad == 0 && b.pos+1 < len(b.data) && (b.data[b.pos] != 0xFF || b.data[b.pos+1] == 0x00) {
		b.pos++
	}
	for b.pos+2 < len(b.data) && b.data[b.pos] == 0xFF && b.data[b.pos+1] == 0xFF {
		b.pos++ // fill bytes
	}
	if b.pos+1 >= len(b.data) || b.data[b.pos] != 0xFF || b.data[b.pos+1] != byte(0xD0+i%8) {
		return corruptf("restart marker %d missing", i%8)
	}
	b.pos += 2
	b.acc, b.n, b.pad = 0, 0, 0
	return nil
}

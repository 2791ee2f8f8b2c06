package face

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// network is a small convolutional network in inference form: a list of
// operators over float32 tensors stored height x width x channels
// (channels fastest). It is read-only after loading; the activations live in
// a netState, one per caller, so one network serves concurrent trackers.
//
// The file format (written by scripts/blazeface): "BLZF", then little-endian
// uint16s: version (1), tensor count, per tensor its height, width and
// channels (tensor 0 is the input), the four output tensors, the operator
// count, and per operator kind, relu, in0, in1, out, k, stride, padTop,
// padLeft, followed for convolutions by their float16 weights and biases.
// Weights are stored as in TensorFlow Lite: [out][k][k][in] for a
// convolution, [k][k][channels] for a depthwise one.
type network struct {
	shapes  [][3]int // per tensor: height, width, channels
	outputs [4]int
	ops     []netOp
	slots   []int // per tensor: the activation buffer it lives in
	sizes   []int // per buffer: its length in float32s
}

// Operator kinds.
const (
	opConv      = 1 // k x k convolution
	opDepthwise = 2 // k x k convolution of each channel alone
	opAdd       = 3 // out = in0 + in1, in1's channels a prefix of in0's (the rest pass through)
	opMaxPool   = 4 // k x k maximum
)

type netOp struct {
	kind, in0, in1, out      int
	relu                     bool
	k, stride, padTop, padLt int
	// w is the convolution's filter as [ky][kx][in][out] (channels out
	// fastest, so a pixel's contribution is one contiguous multiply-add
	// per input channel), or a depthwise filter as [ky][kx][c].
	w, bias []float32
}

var errNetFormat = errors.New("malformed network")

// maxTensor bounds a tensor's values, so a malformed file cannot make the
// activations huge; BlazeFace's largest has 64x64x28.
const maxTensor = 1 << 20

// parseNetwork reads and checks the converted network: every shape must
// follow from its operator, and every length must match.
func parseNetwork(b []byte) (*network, error) {
	if len(b) < 8 || string(b[:4]) != "BLZF" {
		return nil, errNetFormat
	}
	pos := 4
	u16 := func() (int, error) {
		if pos+2 > len(b) {
			return 0, errNetFormat
		}
		v := int(binary.LittleEndian.Uint16(b[pos:]))
		pos += 2
		return v, nil
	}
	halfs := func(n int) ([]float32, error) {
		if n > (len(b)-pos)/2 {
			return nil, errNetFormat
		}
		out := make([]float32, n)
		for i := range out {
			out[i] = halfToFloat(binary.LittleEndian.Uint16(b[pos:]))
			pos += 2
		}
		return out, nil
	}
	var hdr [2]int
	for i := range hdr {
		v, err := u16()
		if err != nil {
			return nil, err
		}
		hdr[i] = v
	}
	if hdr[0] != 1 || hdr[1] < 2 || hdr[1] > 1024 {
		return nil, fmt.Errorf("%w: version %d, %d tensors", errNetFormat, hdr[0], hdr[1])
	}
	n := &network{shapes: make([][3]int, hdr[1])}
	for i := range n.shapes {
		for d := range 3 {
			v, err := u16()
			if err != nil {
				return nil, err
			}
			if v < 1 || v > 1024 {
				return nil, errNetFormat
			}
			n.shapes[i][d] = v
		}
		if n.shapes[i][0]*n.shapes[i][1]*n.shapes[i][2] > maxTensor {
			return nil, fmt.Errorf("%w: tensor %d of %v", errNetFormat, i, n.shapes[i])
		}
	}
	for i := range n.outputs {
		v, err := u16()
		if err != nil {
			return nil, err
		}
		if v < 1 || v >= len(n.shapes) {
			return nil, errNetFormat
		}
		n.outputs[i] = v
	}
	count, err := u16()
	if err != nil {
		return nil, err
	}
	produced := make([]bool, len(n.shapes))
	produced[0] = true
	for range count {
		var f [9]int
		for i := range f {
			if f[i], err = u16(); err != nil {
				return nil, err
			}
		}
		op := netOp{kind: f[0], relu: f[1] != 0, in0: f[2], in1: f[3], out: f[4], k: f[5], stride: f[6], padTop: f[7], padLt: f[8]}
		if op.in0 >= len(n.shapes) || op.out >= len(n.shapes) || !produced[op.in0] || produced[op.out] {
			return nil, fmt.Errorf("%w: operator %d reads or writes the wrong tensor", errNetFormat, len(n.ops))
		}
		in, out := n.shapes[op.in0], n.shapes[op.out]
		switch op.kind {
		case opConv, opDepthwise, opMaxPool:
			if op.k < 1 || op.k > 7 || op.stride < 1 || op.stride > 4 || op.padTop >= op.k || op.padLt >= op.k ||
				out[0] != (in[0]+op.stride-1)/op.stride && out[0] != (in[0]-op.k)/op.stride+1 ||
				out[1] != (in[1]+op.stride-1)/op.stride && out[1] != (in[1]-op.k)/op.stride+1 {
				return nil, fmt.Errorf("%w: operator %d has shape %v from %v", errNetFormat, len(n.ops), out, in)
			}
		case opAdd:
			if op.in1 >= len(n.shapes) || !produced[op.in1] {
				return nil, errNetFormat
			}
			o := n.shapes[op.in1]
			if out != in || o[0] != in[0] || o[1] != in[1] || o[2] > in[2] {
				return nil, fmt.Errorf("%w: addition of %v and %v", errNetFormat, in, o)
			}
		default:
			return nil, fmt.Errorf("%w: operator kind %d", errNetFormat, op.kind)
		}
		switch op.kind {
		case opConv:
			w, err := halfs(out[2] * op.k * op.k * in[2])
			if err != nil {
				return nil, err
			}
			// [out][ky][kx][in] -> [ky][kx][in][out]
			op.w = make([]float32, len(w))
			kk := op.k * op.k * in[2]
			for o := range out[2] {
				for j := range kk {
					op.w[j*out[2]+o] = w[o*kk+j]
				}
			}
		case opDepthwise:
			if out[2] != in[2] {
				return nil, errNetFormat
			}
			if op.w, err = halfs(op.k * op.k * in[2]); err != nil {
				return nil, err
			}
		case opMaxPool:
			if out[2] != in[2] {
				return nil, errNetFormat
			}
		}
		if op.kind == opConv || op.kind == opDepthwise {
			if op.bias, err = halfs(out[2]); err != nil {
				return nil, err
			}
		}
		produced[op.out] = true
		n.ops = append(n.ops, op)
	}
	if pos != len(b) {
		return nil, fmt.Errorf("%w: %d trailing bytes", errNetFormat, len(b)-pos)
	}
	for _, o := range n.outputs {
		if !produced[o] {
			return nil, fmt.Errorf("%w: output %d never produced", errNetFormat, o)
		}
	}
	n.allocate()
	return n, nil
}

// allocate assigns the tensors to as few buffers as their lifetimes allow:
// a buffer is free again after the last operator that reads its tensor,
// and the outputs are never freed.
func (n *network) allocate() {
	last := make([]int, len(n.shapes))
	for i, op := range n.ops {
		last[op.in0] = i
		if op.kind == opAdd {
			last[op.in1] = i
		}
	}
	for _, o := range n.outputs {
		last[o] = len(n.ops)
	}
	n.slots = make([]int, len(n.shapes))
	var free []int
	take := func(t int) {
		size := n.shapes[t][0] * n.shapes[t][1] * n.shapes[t][2]
		for i, s := range free {
			n.slots[t] = s
			n.sizes[s] = max(n.sizes[s], size)
			free = append(free[:i], free[i+1:]...)
			return
		}
		n.slots[t] = len(n.sizes)
		n.sizes = append(n.sizes, size)
	}
	take(0)
	for i, op := range n.ops {
		take(op.out)
		if last[op.in0] == i {
			free = append(free, n.slots[op.in0])
		}
		if op.kind == opAdd && op.in1 != op.in0 && last[op.in1] == i {
			free = append(free, n.slots[op.in1])
		}
	}
}

// netState holds one caller's activations, and the input patches of one
// output row of a convolution wider than 1x1.
type netState struct {
	bufs  [][]float32
	patch []float32
}

func (n *network) newState() *netState {
	s := &netState{bufs: make([][]float32, len(n.sizes))}
	for i, size := range n.sizes {
		s.bufs[i] = make([]float32, size)
	}
	for _, op := range n.ops {
		if op.kind == opConv && !op.pointwise() {
			os, ci := n.shapes[op.out], n.shapes[op.in0][2]
			s.patch = grow(s.patch, max(len(s.patch), os[1]*op.k*op.k*ci))
		}
	}
	return s
}

// tensor returns tensor t's values in s.
func (n *network) tensor(s *netState, t int) []float32 {
	sh := n.shapes[t]
	return s.bufs[n.slots[t]][:sh[0]*sh[1]*sh[2]]
}

// run evaluates the network on the input already written to tensor 0.
func (n *network) run(s *netState) {
	for i := range n.ops {
		op := &n.ops[i]
		in, out := n.tensor(s, op.in0), n.tensor(s, op.out)
		switch op.kind {
		case opConv:
			n.conv(op, in, out, s.patch)
		case opDepthwise:
			n.depthwise(op, in, out)
		case opMaxPool:
			n.maxPool(op, in, out)
		case opAdd:
			n.add(op, in, n.tensor(s, op.in1), out)
		}
		// conv and add apply their ReLU as they go.
		if op.relu && (op.kind == opDepthwise || op.kind == opMaxPool) {
			relu(out)
		}
	}
}

// add is out = in0 + in1, where in1 may have fewer channels (the rest of
// in0's pass through), with the ReLU applied in the same pass.
func (n *network) add(op *netOp, in0, in1, out []float32) {
	c, oc := n.shapes[op.in0][2], n.shapes[op.in1][2]
	for p := 0; p < len(out)/c; p++ {
		o, a, b := out[p*c:p*c+c], in0[p*c:p*c+c], in1[p*oc:p*oc+oc]
		a = a[:len(o)]
		b = b[:min(len(b), len(o))]
		for j, v := range b {
			o[j] = a[j] + v
		}
		copy(o[len(b):], a[len(b):])
		if op.relu {
			relu(o)
		}
	}
}

func relu(x []float32) {
	for j, v := range x {
		x[j] = max(v, 0)
	}
}

// pointwise reports whether op is a 1x1 convolution of stride 1, which
// reads its input as it is laid out.
func (op *netOp) pointwise() bool { return op.k == 1 && op.stride == 1 }

// conv is a k x k convolution with zero padding, as a matrix product per
// output row: the row's input patches ([ky][kx][in], the layout of the
// filter's rows) are gathered into patch first, which a 1x1 convolution
// skips as its input row already is that matrix.
func (n *network) conv(op *netOp, in, out, patch []float32) {
	is, os := n.shapes[op.in0], n.shapes[op.out]
	ci, co := is[2], os[2]
	kk := op.k * op.k * ci
	rowOut := os[1] * co
	for oy := range os[0] {
		y := out[oy*rowOut : (oy+1)*rowOut]
		if op.pointwise() {
			gemm(y, in[oy*is[1]*ci:(oy+1)*is[1]*ci], op.w, op.bias, ci)
		} else {
			p := patch[:os[1]*kk]
			n.gather(op, in, p, oy)
			gemm(y, p, op.w, op.bias, kk)
		}
		if op.relu {
			relu(y)
		}
	}
}

// gather writes the input patches of output row oy into p, one of k*k*ci
// values per output pixel; taps on the padding read zero.
func (n *network) gather(op *netOp, in, p []float32, oy int) {
	is, os := n.shapes[op.in0], n.shapes[op.out]
	ci := is[2]
	kk, krow := op.k*op.k*ci, op.k*ci
	ky0, ky1 := op.taps(oy, op.padTop, is[0])
	for ox := range os[1] {
		d := p[ox*kk : (ox+1)*kk]
		kx0, kx1 := op.taps(ox, op.padLt, is[1])
		if ky0 > 0 || ky1 < op.k || kx0 > 0 || kx1 < op.k {
			clear(d)
		}
		ix := ox*op.stride + kx0 - op.padLt
		for ky := ky0; ky < ky1; ky++ {
			iy := oy*op.stride + ky - op.padTop
			// The taps of one filter row are adjacent in the input.
			copy(d[ky*krow+kx0*ci:ky*krow+kx1*ci], in[(iy*is[1]+ix)*ci:])
		}
	}
}

// gemm sets y, a row of pixels of len(bias) channels, to the product of
// x (the same pixels' k inputs each) and the filter w ([k][out]), plus the
// bias. Two pixels go at once, so each filter value loaded serves two
// multiply-adds, and four inputs at once, so each output loaded and stored
// serves four.
func gemm(y, x, w, bias []float32, k int) {
	co := len(bias)
	np := len(y) / co
	p := 0
	for ; p+2 <= np; p += 2 {
		y0, y1 := y[p*co:(p+1)*co], y[(p+1)*co:(p+2)*co]
		x0, x1 := x[p*k:(p+1)*k], x[(p+1)*k:(p+2)*k]
		copy(y0, bias)
		copy(y1, bias)
		c := 0
		for ; c+4 <= k; c += 4 {
			axpy4x2(y0, y1, w[c*co:(c+4)*co], x0[c:c+4], x1[c:c+4])
		}
		for ; c < k; c++ {
			axpy(y0, w[c*co:(c+1)*co], x0[c])
			axpy(y1, w[c*co:(c+1)*co], x1[c])
		}
	}
	if p < np {
		y0, x0 := y[p*co:(p+1)*co], x[p*k:(p+1)*k]
		copy(y0, bias)
		for c, v := range x0 {
			axpy(y0, w[c*co:(c+1)*co], v)
		}
	}
}

// axpy4x2 adds a0 w0 + a1 w1 + a2 w2 + a3 w3 to y0 and the same with b's
// to y1, where w holds w0 to w3 one after the other, each as long as y0.
func axpy4x2(y0, y1, w, a, b []float32) {
	n := len(y0)
	y1 = y1[:n]
	w0, w1, w2, w3 := w[:n:n], w[n:2*n:2*n], w[2*n:3*n:3*n], w[3*n:4*n:4*n]
	a0, a1, a2, a3 := a[0], a[1], a[2], a[3]
	b0, b1, b2, b3 := b[0], b[1], b[2], b[3]
	for i := range y0 {
		v0, v1, v2, v3 := w0[i], w1[i], w2[i], w3[i]
		y0[i] += a0*v0 + a1*v1 + a2*v2 + a3*v3
		y1[i] += b0*v0 + b1*v1 + b2*v2 + b3*v3
	}
}

// taps returns the range [k0, k1) of filter taps that output position o
// reads inside an input of n positions; the rest fall on the zero padding.
func (op *netOp) taps(o, pad, n int) (k0, k1 int) {
	first := o*op.stride - pad
	return max(0, -first), min(op.k, n-first)
}

// axpy adds a*x to y; len(x) >= len(y).
func axpy(y, x []float32, a float32) {
	x = x[:len(y)]
	for i := range y {
		y[i] += a * x[i]
	}
}

// depthwise convolves each channel with its own k x k filter, one filter
// row at a time over a whole output row. Inside the row a 3-wide filter's
// three taps go together, one load and store of the output for three
// multiply-adds; the edge pixels, whose taps reach into the padding, take
// them one by one.
func (n *network) depthwise(op *netOp, in, out []float32) {
	is, os := n.shapes[op.in0], n.shapes[op.out]
	c := is[2]
	rowIn, rowOut := is[1]*c, os[1]*c
	for oy := range os[0] {
		acc := out[oy*rowOut : (oy+1)*rowOut]
		for ox := range os[1] {
			copy(acc[ox*c:(ox+1)*c], op.bias)
		}
		ky0, ky1 := op.taps(oy, op.padTop, is[0])
		for ky := ky0; ky < ky1; ky++ {
			iy := oy*op.stride + ky - op.padTop
			x := in[iy*rowIn : (iy+1)*rowIn]
			w := op.w[ky*op.k*c : (ky+1)*op.k*c]
			for ox := range os[1] {
				a := acc[ox*c : (ox+1)*c]
				kx0, kx1 := op.taps(ox, op.padLt, is[1])
				ix := ox*op.stride + kx0 - op.padLt
				if op.k == 3 && kx0 == 0 && kx1 == 3 {
					mulAdd3(a, x[ix*c:(ix+3)*c], w)
					continue
				}
				for kx := kx0; kx < kx1; kx, ix = kx+1, ix+1 {
					mulAdd(a, x[ix*c:(ix+1)*c], w[kx*c:(kx+1)*c])
				}
			}
		}
	}
}

// mulAdd adds x*w, element by element, to a.
func mulAdd(a, x, w []float32) {
	x, w = x[:len(a)], w[:len(a)]
	for j := range a {
		a[j] += x[j] * w[j]
	}
}

// mulAdd3 adds x0*w0 + x1*w1 + x2*w2 to a, where x and w hold three
// vectors as long as a one after the other.
func mulAdd3(a, x, w []float32) {
	n := len(a)
	x0, x1, x2 := x[:n:n], x[n:2*n:2*n], x[2*n:3*n:3*n]
	w0, w1, w2 := w[:n:n], w[n:2*n:2*n], w[2*n:3*n:3*n]
	for j := range a {
		a[j] += x0[j]*w0[j] + x1[j]*w1[j] + x2[j]*w2[j]
	}
}

// maxPool takes the maximum of k x k windows; padding never wins.
func (n *network) maxPool(op *netOp, in, out []float32) {
	is, os := n.shapes[op.in0], n.shapes[op.out]
	c := is[2]
	for oy := range os[0] {
		for ox := range os[1] {
			acc := out[(oy*os[1]+ox)*c : (oy*os[1]+ox+1)*c]
			for j := range acc {
				acc[j] = float32(math.Inf(-1))
			}
			ky0, ky1 := op.taps(oy, op.padTop, is[0])
			kx0, kx1 := op.taps(ox, op.padLt, is[1])
			for ky := ky0; ky < ky1; ky++ {
				iy := oy*op.stride + ky - op.padTop
				for kx := kx0; kx < kx1; kx++ {
					ix := ox*op.stride + kx - op.padLt
					px := in[(iy*is[1]+ix)*c : (iy*is[1]+ix+1)*c]
					for j, v := range px {
						acc[j] = max(acc[j], v)
					}
				}
			}
		}
	}
}

// halfToFloat converts an IEEE 754 binary16 value.
func halfToFloat(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // infinity or NaN
		return math.Float32frombits(sign | 0xff<<23 | frac<<13)
	case exp == 0 && frac == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal: normalise
		e := uint32(127 - 15 + 1)
		for frac&0x400 == 0 {
			frac <<= 1
			e--
		}
		return math.Float32frombits(sign | e<<23 | (frac&0x3ff)<<13)
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | frac<<13)
}

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

// netState holds one caller's activations.
type netState struct {
	bufs [][]float32
}

func (n *network) newState() *netState {
	s := &netState{bufs: make([][]float32, len(n.sizes))}
	for i, size := range n.sizes {
		s.bufs[i] = make([]float32, size)
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
			n.conv(op, in, out)
		case opDepthwise:
			n.depthwise(op, in, out)
		case opMaxPool:
			n.maxPool(op, in, out)
		case opAdd:
			other := n.tensor(s, op.in1)
			c, oc := n.shapes[op.in0][2], n.shapes[op.in1][2]
			for p := 0; p < len(out); p += c {
				o, a, b := out[p:p+c:p+c], in[p:p+c:p+c], other[p/c*oc:p/c*oc+oc]
				for j := range o {
					o[j] = a[j]
				}
				for j, v := range b {
					o[j] += v
				}
			}
		}
		if op.relu {
			for j, v := range out {
				out[j] = max(v, 0)
			}
		}
	}
}

// conv is a k x k convolution with zero padding. Each input value adds its
// weights to all output channels at once, and zeros, which the ReLUs make
// common, are skipped.
func (n *network) conv(op *netOp, in, out []float32) {
	is, os := n.shapes[op.in0], n.shapes[op.out]
	ci, co := is[2], os[2]
	for oy := range os[0] {
		for ox := range os[1] {
			acc := out[(oy*os[1]+ox)*co : (oy*os[1]+ox+1)*co]
			copy(acc, op.bias)
			ky0, ky1 := op.taps(oy, op.padTop, is[0])
			kx0, kx1 := op.taps(ox, op.padLt, is[1])
			for ky := ky0; ky < ky1; ky++ {
				iy := oy*op.stride + ky - op.padTop
				for kx := kx0; kx < kx1; kx++ {
					ix := ox*op.stride + kx - op.padLt
					px := in[(iy*is[1]+ix)*ci : (iy*is[1]+ix+1)*ci]
					w := op.w[(ky*op.k+kx)*ci*co:]
					c := 0
					for ; c+4 <= ci; c += 4 {
						v := px[c : c+4 : c+4]
						if v[0] == 0 && v[1] == 0 && v[2] == 0 && v[3] == 0 {
							continue
						}
						axpy4(acc, w[c*co:(c+4)*co], v[0], v[1], v[2], v[3])
					}
					if ci-c == 3 { // the RGB input
						axpy3(acc, w[c*co:(c+3)*co], px[c], px[c+1], px[c+2])
						continue
					}
					for ; c < ci; c++ {
						if v := px[c]; v != 0 {
							axpy(acc, w[c*co:c*co+co], v)
						}
					}
				}
			}
		}
	}
}

// axpy3 is axpy4 for three vectors.
func axpy3(y, x []float32, a0, a1, a2 float32) {
	n := len(y)
	x0, x1, x2 := x[:n:n], x[n:2*n:2*n], x[2*n:3*n:3*n]
	for i := range y {
		y[i] += a0*x0[i] + a1*x1[i] + a2*x2[i]
	}
}

// axpy4 adds a0 x0 + a1 x1 + a2 x2 + a3 x3 to y, where x holds x0, x1, x2
// and x3 one after the other, each as long as y: one load and store of y
// for four multiply-adds.
func axpy4(y, x []float32, a0, a1, a2, a3 float32) {
	n := len(y)
	x0, x1, x2, x3 := x[:n:n], x[n:2*n:2*n], x[2*n:3*n:3*n], x[3*n:4*n:4*n]
	for i := range y {
		y[i] += a0*x0[i] + a1*x1[i] + a2*x2[i] + a3*x3[i]
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
	i := 0
	for ; i+4 <= len(y); i += 4 {
		yy, xx := y[i:i+4:i+4], x[i:i+4:i+4]
		yy[0] += a * xx[0]
		yy[1] += a * xx[1]
		yy[2] += a * xx[2]
		yy[3] += a * xx[3]
	}
	for ; i < len(y); i++ {
		y[i] += a * x[i]
	}
}

// depthwise convolves each channel with its own k x k filter.
func (n *network) depthwise(op *netOp, in, out []float32) {
	is, os := n.shapes[op.in0], n.shapes[op.out]
	c := is[2]
	for oy := range os[0] {
		for ox := range os[1] {
			acc := out[(oy*os[1]+ox)*c : (oy*os[1]+ox+1)*c]
			copy(acc, op.bias)
			ky0, ky1 := op.taps(oy, op.padTop, is[0])
			kx0, kx1 := op.taps(ox, op.padLt, is[1])
			for ky := ky0; ky < ky1; ky++ {
				iy := oy*op.stride + ky - op.padTop
				for kx := kx0; kx < kx1; kx++ {
					ix := ox*op.stride + kx - op.padLt
					px := in[(iy*is[1]+ix)*c : (iy*is[1]+ix+1)*c]
					w := op.w[(ky*op.k+kx)*c : (ky*op.k+kx+1)*c]
					for j := range acc {
						acc[j] += px[j] * w[j]
					}
				}
			}
		}
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

// Command blazeface converts MediaPipe's BlazeFace short-range face detector
// (face_detection_short_range.tflite from the npm package
// @mediapipe/face_detection, Apache-2.0) into the compact file that package
// dsp/face embeds (dsp/face/model/blazeface.bin; its format is described in
// dsp/face/cnn.go).
//
//	npm pack @mediapipe/face_detection@0.4.1657300184   # in a temporary folder
//	tar xzf mediapipe-face_detection-*.tgz
//	go run ./scripts/blazeface -in package/face_detection_short_range.tflite -out dsp/face/model/blazeface.bin
//
// The TensorFlow Lite graph is a chain of convolutions, depthwise
// convolutions, channel paddings, additions, ReLUs and max poolings, with
// float16 weights behind DEQUANTIZE operators. The converter keeps the
// weights as float16, folds every DEQUANTIZE into the weights it reads,
// every ReLU into the operator before it and every channel padding into the
// addition that consumes it, and writes the four output heads in the order
// the detector decodes them. Anything else in the graph is an error: the
// Go forward pass implements exactly these operators.
package main

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"slices"
)

func main() {
	in := flag.String("in", "", "face_detection_short_range.tflite")
	out := flag.String("out", "dsp/face/model/blazeface.bin", "converted model to write")
	flag.Parse()
	if err := run(*in, *out); err != nil {
		fmt.Fprintln(os.Stderr, "blazeface:", err)
		os.Exit(1)
	}
}

func run(in, out string) error {
	b, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	m, err := parseTFLite(b)
	if err != nil {
		return err
	}
	enc, err := convert(m)
	if err != nil {
		return err
	}
	return os.WriteFile(out, enc, 0o644)
}

// Operator kinds of the converted file (dsp/face/cnn.go reads the same).
const (
	kindConv      = 1
	kindDepthwise = 2
	kindAdd       = 3
	kindMaxPool   = 4
)

// node is one operator of the converted network. Tensors are numbered in
// the order they are first produced; 0 is the input.
type node struct {
	kind                     int
	relu                     bool
	in0, in1, out            int // in1 only for additions
	k, stride, padTop, padLt int
	weights, bias            []byte // float16, the model's own bytes
}

type converter struct {
	m       *model
	weights map[int]int // dequantized tensor -> its float16 constant
	ids     map[int]int // tflite tensor -> converted tensor
	shapes  [][3]int    // converted tensor -> height, width, channels
	nodes   []node
	pads    map[int]int // padded tensor -> its unpadded source
	users   map[int]int // how many operators read each tflite tensor
}

func convert(m *model) ([]byte, error) {
	c := &converter{m: m, weights: map[int]int{}, ids: map[int]int{}, pads: map[int]int{}, users: map[int]int{}}
	if len(m.inputs) != 1 {
		return nil, fmt.Errorf("%d inputs, want 1", len(m.inputs))
	}
	in := m.tensors[m.inputs[0]].shape
	if len(in) != 4 || in[0] != 1 || in[3] != 3 {
		return nil, fmt.Errorf("input shape %v, want [1 h w 3]", in)
	}
	c.ids[m.inputs[0]] = 0
	c.shapes = append(c.shapes, [3]int{in[1], in[2], in[3]})
	for _, op := range m.ops {
		for _, t := range op.inputs {
			c.users[t]++
		}
	}
	for i, op := range m.ops {
		if err := c.add(op); err != nil {
			return nil, fmt.Errorf("operator %d: %w", i, err)
		}
	}
	heads, err := c.heads()
	if err != nil {
		return nil, err
	}
	return c.encode(heads), nil
}

// add converts one tflite operator.
func (c *converter) add(op operator) error {
	m := c.m
	switch op.code {
	case opDequantize:
		src := m.tensors[op.inputs[0]]
		if src.typ != float16Type || src.data == nil {
			return fmt.Errorf("dequantize of a %d tensor", src.typ)
		}
		c.weights[op.outputs[0]] = op.inputs[0]
		return nil
	case opReshape, opConcatenation:
		// The heads' flattening; heads() reads the convolutions instead.
		return nil
	case opRelu:
		src := op.inputs[0]
		id, ok := c.ids[src]
		last := len(c.nodes) - 1
		if !ok || last < 0 || c.nodes[last].out != id || c.users[src] != 1 || c.nodes[last].kind == kindMaxPool {
			return fmt.Errorf("relu not after its only producer")
		}
		c.nodes[last].relu = true
		c.ids[op.outputs[0]] = id
		return nil
	case opPad:
		p := m.tensors[op.inputs[1]]
		if p.typ != int32Type || len(p.data) != 32 {
			return fmt.Errorf("pad amounts of type %d", p.typ)
		}
		var amounts [8]int32
		if err := binary.Read(bytes.NewReader(p.data), binary.LittleEndian, &amounts); err != nil {
			return err
		}
		if slices.ContainsFunc(amounts[:7], func(v int32) bool { return v != 0 }) || c.users[op.outputs[0]] != 1 {
			return fmt.Errorf("padding %v is not a trailing channel padding read once", amounts)
		}
		c.pads[op.outputs[0]] = op.inputs[0]
		return nil
	case opAdd:
		a, b := op.inputs[0], op.inputs[1]
		if _, ok := c.pads[b]; ok {
			a, b = b, a
		}
		if src, ok := c.pads[a]; ok {
			a = src
		}
		ia, ok1 := c.ids[a]
		ib, ok2 := c.ids[b]
		if !ok1 || !ok2 {
			return fmt.Errorf("addition of unknown tensors")
		}
		// The converted addition: out = b + a, a's channels a prefix of b's.
		if c.shapes[ia][0] != c.shapes[ib][0] || c.shapes[ia][1] != c.shapes[ib][1] || c.shapes[ia][2] > c.shapes[ib][2] {
			return fmt.Errorf("addition of shapes %v and %v", c.shapes[ia], c.shapes[ib])
		}
		if act, _ := op.options.scalar(0, 1, 0); op.hasOpts && act != 0 {
			return fmt.Errorf("fused activation %d", act)
		}
		return c.emit(node{kind: kindAdd, in0: ib, in1: ia}, op.outputs[0], c.shapes[ib])
	case opConv2D, opDepthwise, opMaxPool2D:
		return c.spatial(op)
	}
	return fmt.Errorf("unsupported builtin operator %d", op.code)
}

// spatial converts a convolution, depthwise convolution or max pooling.
func (c *converter) spatial(op operator) error {
	m := c.m
	id, ok := c.ids[op.inputs[0]]
	if !ok {
		return fmt.Errorf("input tensor %d not produced yet", op.inputs[0])
	}
	in := c.shapes[id]
	opt := func(i int, def int64) int {
		v, _ := op.options.scalar(i, 4, def)
		return int(v)
	}
	// Options: padding (int8), strides; the activation's field differs.
	pad, _ := op.options.scalar(0, 1, 0)
	n := node{in0: id, stride: opt(1, 1)}
	if opt(2, 1) != n.stride {
		return fmt.Errorf("unequal strides")
	}
	actField := 3
	var outC int
	switch op.code {
	case opConv2D:
		n.kind = kindConv
		w, b, err := c.constants(op)
		if err != nil {
			return err
		}
		ws := m.tensors[w].shape // [cout, k, k, cin]
		if len(ws) != 4 || ws[1] != ws[2] || ws[3] != in[2] {
			return fmt.Errorf("conv filter %v on %d channels", ws, in[2])
		}
		n.k, outC = ws[1], ws[0]
		n.weights, n.bias = m.tensors[w].data, m.tensors[b].data
	case opDepthwise:
		n.kind = kindDepthwise
		actField = 4
		if opt(3, 1) != 1 {
			return fmt.Errorf("depth multiplier %d", opt(3, 1))
		}
		w, b, err := c.constants(op)
		if err != nil {
			return err
		}
		ws := m.tensors[w].shape // [1, k, k, c]
		if len(ws) != 4 || ws[0] != 1 || ws[1] != ws[2] || ws[3] != in[2] {
			return fmt.Errorf("depthwise filter %v on %d channels", ws, in[2])
		}
		n.k, outC = ws[1], in[2]
		n.weights, n.bias = m.tensors[w].data, m.tensors[b].data
	case opMaxPool2D:
		n.kind = kindMaxPool
		actField = 5
		n.k, outC = opt(3, 1), in[2]
		if opt(4, 1) != n.k {
			return fmt.Errorf("non-square pooling")
		}
	}
	if n.kind != kindMaxPool && (opt(actField+1, 1) != 1 || opt(actField+2, 1) != 1) {
		return fmt.Errorf("dilated convolution")
	}
	if act, _ := op.options.scalar(actField, 1, 0); act != 0 {
		return fmt.Errorf("fused activation %d", act)
	}
	// VALID keeps only whole windows; SAME pads to ceil(in/stride), the
	// extra row and column after.
	oh, ow := (in[0]-n.k)/n.stride+1, (in[1]-n.k)/n.stride+1
	if pad == 0 {
		oh, ow = (in[0]+n.stride-1)/n.stride, (in[1]+n.stride-1)/n.stride
		n.padTop = max((oh-1)*n.stride+n.k-in[0], 0) / 2
		n.padLt = max((ow-1)*n.stride+n.k-in[1], 0) / 2
	}
	want := m.tensors[op.outputs[0]].shape
	if len(want) != 4 || want[1] != oh || want[2] != ow || want[3] != outC {
		return fmt.Errorf("output shape %v, computed %dx%dx%d", want, oh, ow, outC)
	}
	return c.emit(n, op.outputs[0], [3]int{oh, ow, outC})
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// constants returns the float16 constants behind a convolution's filter and
// bias inputs.
func (c *converter) constants(op operator) (w, b int, err error) {
	if len(op.inputs) != 3 {
		return 0, 0, fmt.Errorf("%d inputs", len(op.inputs))
	}
	w, ok1 := c.weights[op.inputs[1]]
	b, ok2 := c.weights[op.inputs[2]]
	if !ok1 || !ok2 {
		return 0, 0, fmt.Errorf("filter or bias is not a dequantized constant")
	}
	if len(c.m.tensors[b].data) != 2*c.m.tensors[b].shape[0] {
		return 0, 0, fmt.Errorf("bias of %d bytes", len(c.m.tensors[b].data))
	}
	return w, b, nil
}

func (c *converter) emit(n node, tfl int, shape [3]int) error {
	n.out = len(c.shapes)
	c.ids[tfl] = n.out
	c.shapes = append(c.shapes, shape)
	c.nodes = append(c.nodes, n)
	return nil
}

// heads returns the converted tensors of the four outputs: scores and boxes
// of the 16x16 grid, then of the 8x8 grid. The tflite outputs concatenate
// reshaped copies of them; the names tell which is which.
func (c *converter) heads() ([4]int, error) {
	var h [4]int
	for i, name := range []string{"classificator_8", "regressor_8", "classificator_16", "regressor_16"} {
		found := false
		for t, x := range c.m.tensors {
			if x.name == name {
				id, ok := c.ids[t]
				if !ok {
					return h, fmt.Errorf("head %s not produced", name)
				}
				h[i], found = id, true
			}
		}
		if !found {
			return h, fmt.Errorf("no head %s", name)
		}
	}
	return h, nil
}

// encode writes the converted file: "BLZF", version 1, the tensor shapes,
// the four heads, then the operators with their float16 weights. All
// integers are little-endian uint16 unless said otherwise.
func (c *converter) encode(heads [4]int) []byte {
	var b bytes.Buffer
	put := func(v ...int) {
		for _, x := range v {
			binary.Write(&b, binary.LittleEndian, uint16(x))
		}
	}
	b.WriteString("BLZF")
	put(1, len(c.shapes))
	for _, s := range c.shapes {
		put(s[0], s[1], s[2])
	}
	put(heads[:]...)
	put(len(c.nodes))
	for _, n := range c.nodes {
		put(n.kind, boolInt(n.relu), n.in0, n.in1, n.out, n.k, n.stride, n.padTop, n.padLt)
		switch n.kind {
		case kindConv, kindDepthwise:
			b.Write(n.weights)
			b.Write(n.bias)
		}
	}
	return b.Bytes()
}

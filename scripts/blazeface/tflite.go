package main

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// A TensorFlow Lite model is a FlatBuffer (schema: tensorflow/lite/schema/
// schema.fbs). This file reads the few tables a convolutional network
// needs: tensors with their shapes, types and data, and operators with
// their options. Every offset is checked against the file's length.

var errFlat = errors.New("malformed tflite file")

// fb is a FlatBuffer held in memory.
type fb []byte

func (b fb) u8(p int) (uint8, error) {
	if p < 0 || p+1 > len(b) {
		return 0, errFlat
	}
	return b[p], nil
}

func (b fb) u16(p int) (uint16, error) {
	if p < 0 || p+2 > len(b) {
		return 0, errFlat
	}
	return binary.LittleEndian.Uint16(b[p:]), nil
}

func (b fb) u32(p int) (uint32, error) {
	if p < 0 || p+4 > len(b) {
		return 0, errFlat
	}
	return binary.LittleEndian.Uint32(b[p:]), nil
}

// table is the position of a FlatBuffer table.
type table struct {
	b fb
	p int
}

// field returns the absolute position of field i, or 0 when it is absent.
func (t table) field(i int) (int, error) {
	soff, err := t.b.u32(t.p)
	if err != nil {
		return 0, err
	}
	vt := t.p - int(int32(soff))
	vsize, err := t.b.u16(vt)
	if err != nil {
		return 0, err
	}
	if 4+2*i >= int(vsize) {
		return 0, nil
	}
	off, err := t.b.u16(vt + 4 + 2*i)
	if err != nil || off == 0 {
		return 0, err
	}
	return t.p + int(off), nil
}

// deref follows the unsigned offset stored at p.
func (b fb) deref(p int) (int, error) {
	off, err := b.u32(p)
	if err != nil {
		return 0, err
	}
	q := p + int(off)
	if q >= len(b) {
		return 0, errFlat
	}
	return q, nil
}

// sub returns the table field i refers to; ok is false when it is absent.
func (t table) sub(i int) (table, bool, error) {
	p, err := t.field(i)
	if err != nil || p == 0 {
		return table{}, false, err
	}
	q, err := t.b.deref(p)
	return table{t.b, q}, err == nil, err
}

// vector returns the element count and the position of the first element
// of the vector field i (0, 0 when absent). elem is the element size.
func (t table) vector(i, elem int) (n, start int, err error) {
	p, err := t.field(i)
	if err != nil || p == 0 {
		return 0, 0, err
	}
	q, err := t.b.deref(p)
	if err != nil {
		return 0, 0, err
	}
	l, err := t.b.u32(q)
	if err != nil {
		return 0, 0, err
	}
	if int64(q)+4+int64(l)*int64(elem) > int64(len(t.b)) {
		return 0, 0, errFlat
	}
	return int(l), q + 4, nil
}

// tables returns the tables of the vector-of-tables field i.
func (t table) tables(i int) ([]table, error) {
	n, start, err := t.vector(i, 4)
	if err != nil {
		return nil, err
	}
	out := make([]table, n)
	for k := range out {
		q, err := t.b.deref(start + 4*k)
		if err != nil {
			return nil, err
		}
		out[k] = table{t.b, q}
	}
	return out, nil
}

// ints returns the int32 vector field i.
func (t table) ints(i int) ([]int, error) {
	n, start, err := t.vector(i, 4)
	if err != nil {
		return nil, err
	}
	out := make([]int, n)
	for k := range out {
		v, _ := t.b.u32(start + 4*k)
		out[k] = int(int32(v))
	}
	return out, nil
}

// bytes returns the ubyte vector field i (a string too).
func (t table) bytes(i int) ([]byte, error) {
	n, start, err := t.vector(i, 1)
	if err != nil {
		return nil, err
	}
	return t.b[start : start+n], nil
}

// scalar returns the little-endian scalar field i of size bytes, or def.
func (t table) scalar(i, size int, def int64) (int64, error) {
	p, err := t.field(i)
	if err != nil || p == 0 {
		return def, err
	}
	switch size {
	case 1:
		v, err := t.b.u8(p)
		return int64(int8(v)), err
	case 4:
		v, err := t.b.u32(p)
		return int64(int32(v)), err
	}
	return 0, fmt.Errorf("scalar size %d", size)
}

// tensorType is the TensorType enum of the schema.
type tensorType int

const (
	float32Type tensorType = 0
	float16Type tensorType = 1
	int32Type   tensorType = 2
)

// Builtin operator codes of the schema.
const (
	opAdd           = 0
	opConv2D        = 3
	opDepthwise     = 4
	opDequantize    = 6
	opMaxPool2D     = 17
	opRelu          = 19
	opReshape       = 22
	opConcatenation = 2
	opPad           = 34
)

type tensor struct {
	name  string
	shape []int
	typ   tensorType
	data  []byte // constant contents, nil for activations
}

type operator struct {
	code    int
	inputs  []int
	outputs []int
	options table
	hasOpts bool
}

type model struct {
	tensors []tensor
	ops     []operator
	inputs  []int
	outputs []int
}

// parseTFLite reads the first subgraph of a TensorFlow Lite model.
func parseTFLite(b []byte) (*model, error) {
	if len(b) < 8 || string(b[4:8]) != "TFL3" {
		return nil, fmt.Errorf("%w: no TFL3 identifier", errFlat)
	}
	f := fb(b)
	rootPos, err := f.deref(0)
	if err != nil {
		return nil, err
	}
	root := table{f, rootPos}
	codes, err := root.tables(1)
	if err != nil {
		return nil, err
	}
	opcodes := make([]int, len(codes))
	for i, c := range codes {
		dep, err := c.scalar(0, 1, 0)
		if err != nil {
			return nil, err
		}
		code, err := c.scalar(3, 4, 0)
		if err != nil {
			return nil, err
		}
		opcodes[i] = int(max(dep, code))
	}
	bufs, err := root.tables(4)
	if err != nil {
		return nil, err
	}
	subs, err := root.tables(2)
	if err != nil {
		return nil, err
	}
	if len(subs) == 0 {
		return nil, fmt.Errorf("%w: no subgraph", errFlat)
	}
	g := subs[0]
	m := &model{}
	ts, err := g.tables(0)
	if err != nil {
		return nil, err
	}
	for _, t := range ts {
		var x tensor
		if x.shape, err = t.ints(0); err != nil {
			return nil, err
		}
		typ, err := t.scalar(1, 1, 0)
		if err != nil {
			return nil, err
		}
		x.typ = tensorType(typ)
		buf, err := t.scalar(2, 4, 0)
		if err != nil {
			return nil, err
		}
		name, err := t.bytes(3)
		if err != nil {
			return nil, err
		}
		x.name = string(name)
		if buf < 0 || int(buf) >= len(bufs) {
			return nil, fmt.Errorf("%w: tensor %s buffer %d", errFlat, x.name, buf)
		}
		if x.data, err = bufs[buf].bytes(0); err != nil {
			return nil, err
		}
		if len(x.data) == 0 {
			x.data = nil
		}
		m.tensors = append(m.tensors, x)
	}
	if m.inputs, err = g.ints(1); err != nil {
		return nil, err
	}
	if m.outputs, err = g.ints(2); err != nil {
		return nil, err
	}
	ops, err := g.tables(3)
	if err != nil {
		return nil, err
	}
	for _, o := range ops {
		var op operator
		idx, err := o.scalar(0, 4, 0)
		if err != nil {
			return nil, err
		}
		if idx < 0 || int(idx) >= len(opcodes) {
			return nil, fmt.Errorf("%w: opcode index %d", errFlat, idx)
		}
		op.code = opcodes[idx]
		if op.inputs, err = o.ints(1); err != nil {
			return nil, err
		}
		if op.outputs, err = o.ints(2); err != nil {
			return nil, err
		}
		if op.options, op.hasOpts, err = o.sub(4); err != nil {
			return nil, err
		}
		for _, i := range append(append([]int{}, op.inputs...), op.outputs...) {
			if i >= len(m.tensors) {
				return nil, fmt.Errorf("%w: tensor index %d", errFlat, i)
			}
		}
		m.ops = append(m.ops, op)
	}
	return m, nil
}

package face

import (
	"math/rand/v2"
	"testing"
)

// TestMatchIsExhaustive checks the matcher's pruned search against summing
// every offset in full: the same offset (the first in raster order on a
// tie) and the same sums at it and its neighbours, which the sub-cell fit
// reads. Textures: random, the template cut from the search window at
// each offset, flat (every offset ties) and a repeating pattern (rows of
// ties).
func TestMatchIsExhaustive(t *testing.T) {
	const sw = templateCells + 2*searchRadius
	const span = 2*searchRadius + 1
	rng := rand.New(rand.NewPCG(1, 2))
	var m matcher
	setTemplate := func(grey func(i, j int) uint8) {
		var sum int32
		for j := range templateCells {
			for i := range templateCells {
				m.grey[j*templateCells+i] = grey(i, j)
				sum += int32(grey(i, j))
			}
		}
		for k, v := range m.grey {
			m.tmpl[k] = templateArea*int32(v) - sum
		}
	}
	type texture struct {
		name     string
		search   func(i, j int) uint8
		template func(i, j int) uint8
	}
	var cases []texture
	random := func(i, j int) uint8 { return uint8(rng.IntN(256)) }
	for range 5 {
		cases = append(cases, texture{"random", random, random})
	}
	for o := range span * span {
		pix := make([]uint8, sw*sw)
		for k := range pix {
			pix[k] = uint8(rng.IntN(256))
		}
		ox, oy := o%span, o/span
		cases = append(cases, texture{"cut",
			func(i, j int) uint8 { return pix[j*sw+i] },
			func(i, j int) uint8 { return pix[(oy+j)*sw+ox+i] + uint8(rng.IntN(3)) }})
	}
	cases = append(cases,
		texture{"flat", func(int, int) uint8 { return 90 }, func(int, int) uint8 { return 90 }},
		texture{"stripes", func(i, _ int) uint8 { return uint8(40 * (i % 3)) }, func(i, _ int) uint8 { return uint8(40 * (i % 3)) }})
	for n, c := range cases {
		for j := range sw {
			for i := range sw {
				m.search[j*sw+i] = c.search(i, j)
			}
		}
		setTemplate(c.template)
		got := m.match()
		// Every offset in full, in raster order.
		var full [span * span]uint32
		want := 0
		for o := range span * span {
			full[o] = m.sadAt(o, ^uint32(0))
			if full[o] < full[want] {
				want = o
			}
		}
		m.match()
		if got != want {
			t.Fatalf("case %d (%s): offset %d, want %d", n, c.name, got, want)
		}
		for _, o := range []int{want, want - 1, want + 1, want - span, want + span} {
			if o >= 0 && o < span*span && m.sad[o] != full[o] {
				t.Errorf("case %d (%s): sum at %d is %d, want %d", n, c.name, o, m.sad[o], full[o])
			}
		}
	}
}

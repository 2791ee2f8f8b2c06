package main

import (
	"fmt"
	"math"
	"os"
	"strings"

	"github.com/pulsewire/pulsewire/dsp"
)

// The decision picture: for 30 s pieces of the real face-skin clips, the
// share answered at each confidence level, without a pulse (every answer
// false) and with a real fingertip pulse added (answers within 5 bpm, and
// more than 10 off), beside the service's own level.

// decisionCurve is one line of the picture: the share of outs that pass
// each level and satisfy keep.
type decisionCurve struct {
	label  string
	colour string
	dashed bool
	outs   []outcome
	keep   func(outcome) bool
}

// passes reports whether o would be answered at confidence level c (the
// period correlation held at the service's level for its length).
func passes(o outcome, c float64) bool {
	_, corr := dsp.AnswerLevel(o.seconds)
	return o.code != dsp.ConformityInitialisation && o.code != dsp.ConformityLowFPS && o.confidence >= c && o.correlation >= corr
}

// share is the fraction of outs answered at level c that keep accepts.
func (d decisionCurve) share(c float64) float64 {
	n := 0
	for _, o := range d.outs {
		if passes(o, c) && d.keep(o) {
			n++
		}
	}
	return float64(n) / float64(max(1, len(d.outs)))
}

// decisionFigure writes the decision picture to path (SVG) from the 30 s
// pieces: noise, the real skin pieces alone; pulses, the same pieces with
// a fingertip pulse at each strength (in percent, their labels' order).
func decisionFigure(path string, noise []outcome, pulses map[float64][]outcome) error {
	all := func(outcome) bool { return true }
	within5 := func(o outcome) bool { return math.Abs(o.tracked-o.ref) <= 5 }
	off10 := func(o outcome) bool { return math.Abs(o.tracked-o.ref) > 10 }
	curves := []decisionCurve{{"real skin, no readable pulse: answered (all false)", "#d62728", false, noise, all}}
	for _, s := range []struct {
		amp    float64
		colour string
	}{{0.008, "#2ca02c"}, {0.004, "#98df8a"}} {
		curves = append(curves,
			decisionCurve{fmt.Sprintf("with a real %.1f%% pulse: answered within 5 bpm", 100*s.amp), s.colour, false, pulses[s.amp], within5},
			decisionCurve{fmt.Sprintf("with a real %.1f%% pulse: answered more than 10 bpm off", 100*s.amp), s.colour, true, pulses[s.amp], off10})
	}
	level, _ := dsp.AnswerLevel(30)
	return os.WriteFile(path, []byte(decisionSVG(curves, level, len(noise))), 0o644)
}

// decisionSVG draws the curves over confidence levels 0.5-1 against the
// share answered, with a vertical line at level.
func decisionSVG(curves []decisionCurve, level float64, pieces int) string {
	const (
		w, h                     = 720, 420
		left, right, top, bottom = 60, 20, 40, 150
		lo, hi                   = 0.5, 1.0
	)
	// The share axis ends at the next fifth above the highest share.
	peak := 0.0
	for _, cv := range curves {
		peak = max(peak, cv.share(lo))
	}
	yMax := max(0.2, math.Ceil(peak*5-1e-9)/5)
	pw, ph := float64(w-left-right), float64(h-top-bottom)
	x := func(c float64) float64 { return left + pw*(c-lo)/(hi-lo) }
	y := func(s float64) float64 { return top + ph*(1-s/yMax) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", w, h, w, h)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", w, h)
	fmt.Fprintf(&b, `<text x="%d" y="22" font-size="14">Pieces of 30 s of real face-skin video (%d), answered at each confidence level</text>`+"\n", left, pieces)
	for i := 0; i <= int(math.Round(yMax*10)); i++ {
		s := float64(i) / 10
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/><text x="%d" y="%.1f" text-anchor="end">%.0f%%</text>`+"\n",
			left, y(s), w-right, y(s), left-6, y(s)+4, 100*s)
	}
	for c := lo; c <= hi+1e-9; c += 0.1 {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/><text x="%.1f" y="%d" text-anchor="middle">%.1f</text>`+"\n",
			x(c), top, x(c), h-bottom, x(c), h-bottom+16, c)
	}
	fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">confidence level an answer needs (the qualityScore)</text>`+"\n", left+pw/2, h-bottom+34)
	fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#444" stroke-dasharray="2,3"/><text x="%.1f" y="%d" text-anchor="middle">the service: %.2f</text>`+"\n",
		x(level), top, x(level), h-bottom, x(level), top-4, level)
	for i, cv := range curves {
		var pts []string
		for c := lo; c <= hi+1e-9; c += 0.01 {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(c), y(cv.share(c))))
		}
		dash := ""
		if cv.dashed {
			dash = ` stroke-dasharray="6,4"`
		}
		fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"%s/>`+"\n", strings.Join(pts, " "), cv.colour, dash)
		ly := float64(h-bottom+56) + 16*float64(i)
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="%s" stroke-width="2"%s/><text x="%d" y="%.1f">%s: %.0f%% at %.2f</text>`+"\n",
			left, ly-4, left+30, ly-4, cv.colour, dash, left+38, ly, cv.label, 100*cv.share(level), level)
	}
	b.WriteString("</svg>\n")
	return b.String()
}

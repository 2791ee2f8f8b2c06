package main

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"

	"github.com/pulsewire/pulsewire/dsp"
)

// What dropped frames cost. Cameras lose frames: a phone's variable frame
// rate in dim light, a browser on a busy machine, a network that drops
// pictures. The real recordings are scored again with samples taken out in
// the patterns below, each recording at its own rate (the fingertip video
// at 30 fps, the finger sensor at 100 Hz, the face-skin clips at 15 fps).

// dropPattern says which samples survive (index i, time t in seconds from
// the first); rng draws the random patterns.
type dropPattern struct {
	name string
	keep func(i int, t float64, rng *rand.Rand) bool
}

var dropPatterns = []dropPattern{
	{"none", func(int, float64, *rand.Rand) bool { return true }},
	{"every 4th", func(i int, _ float64, _ *rand.Rand) bool { return i%4 != 3 }},
	{"every 3rd", func(i int, _ float64, _ *rand.Rand) bool { return i%3 != 2 }},
	{"every 2nd", func(i int, _ float64, _ *rand.Rand) bool { return i%2 != 1 }},
	{"every 2nd, 2 s in 4", func(i int, t float64, _ *rand.Rand) bool { return math.Mod(t, 4) < 2 || i%2 == 0 }},
	{"20% at random", func(_ int, _ float64, r *rand.Rand) bool { return r.Float64() >= 0.2 }},
	{"30% at random", func(_ int, _ float64, r *rand.Rand) bool { return r.Float64() >= 0.3 }},
	{"50% at random", func(_ int, _ float64, r *rand.Rand) bool { return r.Float64() >= 0.5 }},
	{"0.3 s every 2 s", func(_ int, t float64, _ *rand.Rand) bool { return math.Mod(t, 2) >= 0.3 }},
	{"0.5 s every 3 s", func(_ int, t float64, _ *rand.Rand) bool { return math.Mod(t, 3) >= 0.5 }},
	{"1 s every 8 s", func(_ int, t float64, _ *rand.Rand) bool { return math.Mod(t, 8) >= 1 }},
	{"1 s every 4 s", func(_ int, t float64, _ *rand.Rand) bool { return math.Mod(t, 4) >= 1 }},
}

// kept returns the indices of the samples at times ts (ms) that p keeps,
// the first and last always (the capture's length stays).
func (p dropPattern) kept(ts []float64, seed uint64) []int {
	rng := rand.New(rand.NewPCG(seed, 3))
	var idx []int
	for i, t := range ts {
		if i == 0 || i == len(ts)-1 || p.keep(i, (t-ts[0])/1000, rng) {
			idx = append(idx, i)
		}
	}
	return idx
}

// pick returns x at the indices idx.
func pick(x []float64, idx []int) []float64 {
	out := make([]float64, len(idx))
	for j, i := range idx {
		out[j] = x[i]
	}
	return out
}

// dropScore counts the answers of one variable against its references.
type dropScore struct {
	n, answered, off10 int
	sum                float64
}

func (s *dropScore) add(res dsp.Result, name string, ref float64) {
	if math.IsNaN(ref) {
		return
	}
	s.n++
	v := res.Variables[name]
	if v.Error != "" {
		return
	}
	d := math.Abs(v.Value.(dsp.Mean).Mean - ref)
	s.answered++
	s.sum += d
	if d > 10 {
		s.off10++
	}
}

// cell is "answered/n, MAE".
func (s dropScore) cell() string {
	if s.answered == 0 {
		return fmt.Sprintf("%d/%d, -", s.answered, s.n)
	}
	return fmt.Sprintf("%d/%d, %.2f", s.answered, s.n, s.sum/float64(s.answered))
}

// droppedFrames prints what each pattern of dropped samples does to the
// fingertip video's one-minute windows, the finger sensor's one-minute
// windows and the 30 s pieces of real face skin with a real 0.8% pulse.
func droppedFrames(w io.Writer, data string) error {
	uw, err := oximetryMinutes(data, func(r, _, _ float64) float64 { return r })
	if err != nil {
		return err
	}
	rest, err := restingCuts(data, 60, 15)
	if err != nil {
		return err
	}
	clips, err := loadSkinClips(data)
	if err != nil {
		return err
	}
	fingers, err := loadFingertips(data)
	if err != nil {
		return err
	}
	skin := pulsePieces(fingers, clips, 30, 0.008, defaultSignature)
	fmt.Fprint(w, `
## Dropped frames

The real recordings again with samples taken out, each at its own rate: the fingertip video's one-minute windows
(uw-phone-oximetry, red channel, 30 fps), the finger sensor's one-minute windows every 15 s (neurokit-resting,
100 Hz) and 30 s pieces of the real face-skin clips (15 fps) with a real fingertip pulse added at 0.8%. The
first and last samples stay. Each cell: answered of scored, MAE (bpm; ms for hrv); >10: answers more than 10 bpm off.

| dropped | fingertip hr | finger hr | finger hrv | face skin hr | >10 |
|---|---|---|---|---|---|
`)
	for _, p := range dropPatterns {
		var fingertip, finger, hrv, face dropScore
		for j, win := range uw {
			idx := p.kept(win.ppg.TimestampsMs, uint64(j))
			res := dsp.AnalyzePPG(dsp.PPG{TimestampsMs: pick(win.ppg.TimestampsMs, idx), Values: pick(win.ppg.Values, idx)}, dsp.Inputs{Variables: []string{dsp.HR}})
			fingertip.add(res, dsp.HR, win.hr)
		}
		for j, win := range rest {
			idx := p.kept(win.ppg.TimestampsMs, uint64(j))
			res := dsp.AnalyzePPG(dsp.PPG{TimestampsMs: pick(win.ppg.TimestampsMs, idx), Values: pick(win.ppg.Values, idx)}, dsp.Inputs{Variables: []string{dsp.HR, dsp.HRV}})
			finger.add(res, dsp.HR, win.hr)
			hrv.add(res, dsp.HRV, win.rmssd)
		}
		for j, piece := range skin {
			tr := piece.trace
			idx := p.kept(tr.TimestampsMs, uint64(j))
			res := dsp.AnalyzeTrace(dsp.Trace{TimestampsMs: pick(tr.TimestampsMs, idx), R: pick(tr.R, idx), G: pick(tr.G, idx), B: pick(tr.B, idx)}, dsp.Inputs{Variables: []string{dsp.HR}})
			face.add(res, dsp.HR, piece.ref)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %d |\n", p.name, fingertip.cell(), finger.cell(), hrv.cell(), face.cell(), fingertip.off10+finger.off10+face.off10)
	}
	return nil
}

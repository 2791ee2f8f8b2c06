package main

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/pulsewire/pulsewire/dsp"
	"github.com/pulsewire/pulsewire/dsp/filter"
)

// The answer-or-refuse decision (dsp.AnswerLevels): how high the evidence
// of captures without a readable pulse reaches, per capture length, and
// what the levels answer on captures with one.

// decisionLengths are the capture lengths, s, the noise is measured at.
var decisionLengths = []float64{12, 15, 20, 30, 45, 60, 90, 120}

// printCurve prints, for one data set, what the service answers and how the
// answered share and the error move with the confidence level (the period
// correlation held at the service's level for each capture's length).
func printCurve(w io.Writer, title string, outs []outcome) {
	fmt.Fprintf(w, "\n### %s: answered share against error\n\n", title)
	fmt.Fprintf(w, "| confidence level | answered | MAE | RMSE | within 5 bpm | more than 10 off |\n|---|---|---|---|---|---|\n")
	row := func(label string, answered func(outcome) bool) {
		scoreAnswered(outs, answered).row(w, label)
	}
	row("the service's decision", func(o outcome) bool { return o.answered })
	for _, c := range []float64{0, 0.5, 0.7, 0.8, 0.84, 0.9, 0.95, 0.98} {
		row(fmt.Sprintf("%.2f", c), func(o outcome) bool { return passes(o, c) })
	}
}

// decisionNoise measures the evidence of captures without a readable pulse:
// the real skin clips cut into pieces (their own weak pulse is buried in
// camera and compression noise; no piece may be answered) and generated
// noise, camera and contact, at 15, 30 and 60 fps. It returns the real
// pieces' outcomes by length, each against its clip's oximeter.
func decisionNoise(w io.Writer, clips []skinClip, every float64) map[float64][]outcome {
	real := map[float64][]outcome{}
	fmt.Fprintf(w, "\n## The decision: evidence of captures without a readable pulse\n\n")
	cut := "consecutive pieces of each length"
	if every > 0 {
		cut = fmt.Sprintf("pieces of each length, one starting every %g s (overlapping)", every)
	}
	fmt.Fprintf(w, "Real: the face-skin clips cut into %s. Generated: white noise plus a random\n", cut)
	fmt.Fprintln(w, "walk (camera: three channels at 120, 110, 90 levels; contact: one), 15, 30 and 60 fps, 40 of each.")
	fmt.Fprintln(w, "Levels: what dsp.AnswerLevels requires at that length. Answered: pieces that got a heart rate anyway (false answers).")
	fmt.Fprintln(w, "Own pulse: real pieces whose tracked rate is within 5 bpm of their clip's oximeter, among those with a confidence")
	fmt.Fprintln(w, "of 0.70 or more and among all (a confident piece that had found its person's weak pulse would be a right answer refused).")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| length | pieces | confidence q50 / q99 / max | period correlation q50 / q99 / max | levels | answered | own pulse: confident, all |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	unique := distinct(clips)
	for _, L := range decisionLengths {
		var confs, corrs []float64
		answered := 0
		var sure, sureOwn, own int // real pieces: confident, and tracking the oximeter's rate
		count := func(res dsp.Result) {
			confs = append(confs, res.Summary.QualityScore)
			corrs = append(corrs, res.Summary.PeriodCorrelation)
			if res.Variables[dsp.HR].Error == "" {
				answered++
			}
		}
		for _, c := range unique {
			for _, p := range pieces(c.trace, L, every) {
				res := dsp.AnalyzeTrace(p, dsp.Inputs{Variables: []string{dsp.HR}})
				count(res)
				real[L] = append(real[L], outcomeOf(c.name, c.ref, res))
				near := math.Abs(res.Summary.TrackedBpm-c.ref) <= 5
				if near {
					own++
				}
				if res.Summary.QualityScore >= 0.7 {
					sure++
					if near {
						sureOwn++
					}
				}
			}
		}
		nReal := len(confs)
		for _, fps := range []float64{15, 30, 60} {
			for seed := range uint64(40) {
				cam, con := generatedNoise(seed, fps, L)
				count(dsp.AnalyzeTrace(cam, dsp.Inputs{Variables: []string{dsp.HR}}))
				count(dsp.AnalyzePPG(con, dsp.Inputs{Variables: []string{dsp.HR}}))
			}
		}
		c, r := dsp.AnswerLevel(L)
		q := func(x []float64) string {
			return fmt.Sprintf("%.3f / %.3f / %.3f", quantile(x, 0.5), quantile(x, 0.99), quantile(x, 1))
		}
		fmt.Fprintf(w, "| %.0f s | %d real, %d generated | %s | %s | %.3f, %.2f | %d | %d/%d, %d/%d |\n", L, nReal, len(confs)-nReal, q(confs), q(corrs), c, r, answered, sureOwn, sure, own, nReal)
	}
	return real
}

// distinct drops clips whose trace repeats an earlier one (two subjects of
// the study share one recording).
func distinct(clips []skinClip) []skinClip {
	var out []skinClip
	for _, c := range clips {
		if !slices.ContainsFunc(out, func(o skinClip) bool { return slices.Equal(o.trace.G, c.trace.G) }) {
			out = append(out, c)
		}
	}
	return out
}

// generatedNoise returns a camera and a contact trace of the given rate and
// length holding no pulse: white noise of 0.3 levels plus a random walk of
// 0.05 levels a sample, seeded.
func generatedNoise(seed uint64, fps, seconds float64) (dsp.Trace, dsp.PPG) {
	rng := rand.New(rand.NewPCG(seed, uint64(fps*1000+seconds)))
	n := int(seconds*fps) + 1
	var cam dsp.Trace
	var con dsp.PPG
	var walk [4]float64
	for i := range n {
		t := float64(i) * 1000 / fps
		cam.TimestampsMs = append(cam.TimestampsMs, t)
		con.TimestampsMs = append(con.TimestampsMs, t)
		for k := range walk {
			walk[k] += 0.05 * rng.NormFloat64()
		}
		cam.R = append(cam.R, 120+walk[0]+0.3*rng.NormFloat64())
		cam.G = append(cam.G, 110+walk[1]+0.3*rng.NormFloat64())
		cam.B = append(cam.B, 90+walk[2]+0.3*rng.NormFloat64())
		con.Values = append(con.Values, 100+walk[3]+0.3*rng.NormFloat64())
	}
	return cam, con
}

// semiSynthetic measures sensitivity with real noise and a real pulse:
// pieces of the real skin clips (noise of a real camera on real skin, and
// their own weak pulse) with a real fingertip pulse of known rate added at
// a known strength (fingers: uw-phone-oximetry, oximeter reference).
func semiSynthetic(w io.Writer, fingers []fingertip, clips []skinClip, sig [3]float64) map[[2]float64][]outcome {
	outs := map[[2]float64][]outcome{} // by length and strength
	fmt.Fprintf(w, "\n## Semi-synthetic: real skin noise with a real fingertip pulse added\n\n")
	fmt.Fprintln(w, "Pieces of the face-skin clips (their noise and their own weak pulse) with a fingertip pulse of known rate")
	fmt.Fprintf(w, "(uw-phone-oximetry, band-passed, with the colour signature R %.2f, G 1, B %.2f) added at the relative strength given\n", sig[0], sig[2])
	fmt.Fprintln(w, "(standard deviation of green); reference: the oximeters over the same seconds. MAE and the shares within")
	fmt.Fprintln(w, "5 bpm and more than 10 off are of the answered pieces; tracked within 5 bpm is of all pieces, answered or")
	fmt.Fprintln(w, "not: how often the analysis follows the pulse, whatever the decision; plain POS, how often the textbook")
	fmt.Fprintln(w, "pipeline (scripts/accuracy/baseline.go: one spectrum of the whole piece, no gate) reads it within 5 bpm.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| length | pulse | pieces | answered | MAE | within 5 bpm | more than 10 off | tracked within 5 bpm | plain POS within 5 bpm |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	for _, L := range []float64{30, 60} {
		for _, amp := range []float64{0.002, 0.004, 0.008} {
			var n, answered, in5, off10, tracked, plain int
			var sum float64
			for _, p := range pulsePieces(fingers, clips, L, amp, sig) {
				res := dsp.AnalyzeTrace(p.trace, dsp.Inputs{Variables: []string{dsp.HR}})
				outs[[2]float64{L, amp}] = append(outs[[2]float64{L, amp}], outcomeOf(p.name, p.ref, res))
				n++
				if math.Abs(res.Summary.TrackedBpm-p.ref) <= 5 {
					tracked++
				}
				if math.Abs(plainPOSTrace(p.trace)-p.ref) <= 5 {
					plain++
				}
				v := res.Variables[dsp.HR]
				if v.Error != "" {
					continue
				}
				answered++
				d := math.Abs(v.Value.(dsp.Mean).Mean - p.ref)
				sum += d
				if d <= 5 {
					in5++
				}
				if d > 10 {
					off10++
				}
			}
			mae := math.NaN()
			if answered > 0 {
				mae = sum / float64(answered)
			}
			fmt.Fprintf(w, "| %.0f s | %.1f%% | %d | %s | %s | %s | %s | %s | %s |\n", L, 100*amp, n, pct(answered, n), cell(mae, 2), pct(in5, answered), pct(off10, answered), pct(tracked, n), pct(plain, n))
		}
	}
	return outs
}

// pulsePiece is a piece of a real skin clip with a real fingertip pulse
// added, and the oximeters' rate over the pulse's seconds.
type pulsePiece struct {
	name  string
	trace dsp.Trace
	ref   float64
}

// pulsePieces cuts the distinct skin clips into pieces of L seconds end to
// end and adds to each the pulse of another fingertip recording (in turn)
// at the relative strength amp with the colour signature sig.
func pulsePieces(fingers []fingertip, clips []skinClip, L, amp float64, sig [3]float64) []pulsePiece {
	var out []pulsePiece
	k := 0
	for _, c := range distinct(clips) {
		for _, p := range pieces(c.trace, L, 0) {
			f := fingers[k%len(fingers)]
			off := 30 + float64((k*97)%max(1, int(f.seconds()-L-60)))
			k++
			ref := f.refMean(off, off+L)
			if math.IsNaN(ref) {
				continue
			}
			out = append(out, pulsePiece{c.name, withPulse(p, f.wave, f.rateHz, off, amp, sig), ref})
		}
	}
	return out
}

// fingertip is one uw-phone-oximetry recording: the band-passed fingertip
// wave (unit standard deviation) and the per-second oximeter reference.
type fingertip struct {
	wave   []float64
	rateHz float64
	ref    []float64
}

func (f fingertip) seconds() float64 { return float64(len(f.wave)) / f.rateHz }

// refMean is the mean reference over [from, to) s, NaN when fewer than half
// the seconds have one.
func (f fingertip) refMean(from, to float64) float64 {
	var sum float64
	n := 0
	for s := int(from); s < int(to) && s < len(f.ref); s++ {
		if !math.IsNaN(f.ref[s]) {
			sum += f.ref[s]
			n++
		}
	}
	if n < int(to-from)/2 {
		return math.NaN()
	}
	return sum / float64(n)
}

func loadFingertips(data string) ([]fingertip, error) {
	var out []fingertip
	err := eachOximetry(data, func(id string, rgb, gt [][]float64) {
		const fps = 30.0
		x := make([]float64, len(rgb[0]))
		var mean float64
		for i := range x {
			x[i] = (rgb[0][i] + rgb[1][i] + rgb[2][i]) / 3
			mean += x[i]
		}
		mean /= float64(len(x))
		for i := range x {
			x[i] = x[i]/mean - 1
		}
		filter.Bandpass(4, 0.5, 8, fps).FiltFilt(x, x)
		var ss float64
		for _, v := range x {
			ss += v * v
		}
		sd := math.Sqrt(ss / float64(len(x)))
		for i := range x {
			x[i] /= sd
		}
		ref := make([]float64, len(gt[0]))
		for s := range ref {
			ref[s] = oximeterMean(gt, s, s+1)
		}
		out = append(out, fingertip{x, fps, ref})
	})
	return out, err
}

package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/pulsewire/pulsewire/dsp"
	"github.com/pulsewire/pulsewire/scripts/synth/clip"
)

// webcamSet is one of the webcam set's parts.
type webcamSet struct {
	presets func() []clip.Preset
	title   string
	notes   []string // what sets the part apart, under the set's own notes
}

// webcamSets are the parts of make accuracy that score the webcam set:
// the set (clip.WebcamPresets: 24 clips of 45-65 s made to look like
// webcam recordings of a person at a computer), its held-out half, and
// both transcoded (clip.Transcoded).
var webcamSets = map[string]webcamSet{
	"webcam":       {clip.WebcamPresets, "Webcam-like synthetic clips", nil},
	"webcam-fresh": {clip.FreshWebcamPresets, "Webcam-like synthetic clips, fresh seeds", freshNotes},
	"webcam-transcoded": {func() []clip.Preset { return clip.Transcoded(clip.WebcamPresets()) },
		"Webcam-like synthetic clips, transcoded", transcodedNotes},
	"webcam-fresh-transcoded": {func() []clip.Preset { return clip.Transcoded(clip.FreshWebcamPresets()) },
		"Webcam-like synthetic clips, fresh seeds, transcoded", append(slices.Clone(freshNotes), transcodedNotes...)},
}

var (
	freshNotes = []string{
		"Fresh seeds: the same conditions with other people (seeds, rates, pulse strengths, face sizes, sway),",
		"none of them looked at while the method was built: the set's held-out half."}
	transcodedNotes = []string{
		"Transcoded: the same clips as files made after the recording, every one H.264 at its bit rate as ffmpeg's",
		"x264 reaches it by default (B-frames, look-ahead, an average rate), not by a real-time encoder."}
)

// webcamClips scores a part of the webcam set through the batch path, like
// the benchmark set, with its pulse multiplied by strength and, unless sig
// is nil, of colour signature sig, and returns the usual table and one
// that breaks heart rate down by condition. Clips already in dir are
// reused; without dir they go to a temporary folder.
func webcamClips(dir string, set webcamSet, strength float64, sig *[3]float64, verbose bool) (*table, *conditionTable, error) {
	title := set.title
	presets := withSignature(strongerPulse(set.presets(), strength), sig)
	clips, err := encodedClips(dir, presets, true)
	if err != nil {
		return nil, nil, err
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range presets {
		lo, hi = min(lo, p.Config.PulseAmplitude), max(hi, p.Config.PulseAmplitude)
	}
	pulse := fmt.Sprintf("a %.1f-%.1f%% pulse", 100*lo, 100*hi)
	if strength != 1 {
		title = fmt.Sprintf("%s, pulse x%g", title, strength)
	}
	if sig != nil {
		title = fmt.Sprintf("%s, pulse signature R %g, G 1, B %g", title, sig[0], sig[2])
	}
	t := newTable(fmt.Sprintf("%s: %d generated videos, decoded and analysed by the batch path", title, len(presets)), dsp.HR, dsp.BR, dsp.HRV)
	t.notes = append(t.notes,
		"Clips: scripts/synth webcam set (45-65 s, 640x480, 30 fps; H.264 or VP9 at 100-500 kbit/s from real-time encoders;",
		"hr 62-122 bpm, half rising by 10-30 bpm and a few falling; head bowed 0-25°; glasses; fringe; light to dark skin;",
		pulse+" on light skin (less on darker); office to dark rooms lit partly by the screen; exposure and white balance steps; shot noise; drift).",
		"Reference: the generator's ground truth (hr from the mean RR interval over the clip). docs/synthetic-data.md explains the model.")
	t.notes = append(t.notes, set.notes...)
	for i, c := range clips {
		t.units++
		hr, _ := t.add(c.result, dsp.HR, c.truth.HeartRate)
		br, _ := t.add(c.result, dsp.BR, c.truth.BreathingRate)
		hrv, _ := t.add(c.result, dsp.HRV, c.truth.RMSSD)
		if verbose {
			course := c.truth.HRCourse
			s := c.result.Summary
			fmt.Printf("%-62s hr %5.1f/%5.1f (%3.0f->%3.0f) tracked %5.1f confidence %.2f plain POS %5.1f br %4.1f/%4.1f rmssd %5.1f/%5.1f %s snr %.1f %s\n", presets[i].Name,
				hr, c.truth.HeartRate, course[0], course[len(course)-1], s.TrackedBpm, s.QualityScore, c.plainPOS, br, c.truth.BreathingRate, hrv, c.truth.RMSSD,
				s.Method, s.SNRdB, s.Conformity)
		}
	}
	ct := byCondition(clips, append(slices.Clone(webcamConditions), pulseHalves(clips)...))
	ct.title = title
	return t, ct, nil
}

// strongerPulse returns the presets with their pulse multiplied by k and,
// unless k is 1, a name that says so, so that clips of both strengths can
// share a folder.
func strongerPulse(presets []clip.Preset, k float64) []clip.Preset {
	if k == 1 {
		return presets
	}
	out := slices.Clone(presets)
	for i := range out {
		out[i].Config.PulseAmplitude *= k
		out[i].Name += fmt.Sprintf("-pulse%gx", k)
	}
	return out
}

// withSignature returns the presets with the pulse's colour signature sig
// (red and blue as shares of green, on light skin; darker skin dilutes it
// as usual) and a name that says so, or the presets themselves when sig
// is nil.
func withSignature(presets []clip.Preset, sig *[3]float64) []clip.Preset {
	if sig == nil {
		return presets
	}
	out := slices.Clone(presets)
	for i := range out {
		out[i].Config.PulseRed, out[i].Config.PulseBlue = sig[0], sig[2]
		out[i].Name += fmt.Sprintf("-red%g-blue%g", sig[0], sig[2])
	}
	return out
}

// condition is a group of clips that share a capture condition.
type condition struct {
	name string
	in   func(clip.Truth) bool
}

// webcamConditions are the groups the webcam set is broken down by; each
// clip is in one group of every kind.
var webcamConditions = []condition{
	{"all clips", func(clip.Truth) bool { return true }},
	{"100-150 kbit/s", func(t clip.Truth) bool { return t.BitrateKbps <= 150 }},
	{"250 kbit/s", func(t clip.Truth) bool { return t.BitrateKbps > 150 && t.BitrateKbps < 400 }},
	{"400-500 kbit/s", func(t clip.Truth) bool { return t.BitrateKbps >= 400 }},
	{"H.264", func(t clip.Truth) bool { return t.Codec == "h264" }},
	{"VP9", func(t clip.Truth) bool { return t.Codec == "vp9" }},
	{"hr steady", func(t clip.Truth) bool { return t.Conditions.HeartRateEnd == 0 }},
	{"hr rising 10-30 bpm", func(t clip.Truth) bool { return t.Conditions.HeartRateEnd > t.HRCourse[0] }},
	{"hr falling 12 bpm", func(t clip.Truth) bool {
		return t.Conditions.HeartRateEnd != 0 && t.Conditions.HeartRateEnd < t.HRCourse[0]
	}},
	{"facing the camera", func(t clip.Truth) bool { return t.Conditions.Pitch == 0 }},
	{"head bowed 10°", func(t clip.Truth) bool { return t.Conditions.Pitch > 0 && t.Conditions.Pitch < 15 }},
	{"head bowed 18-25°", func(t clip.Truth) bool { return t.Conditions.Pitch >= 15 }},
	{"glasses", func(t clip.Truth) bool { return t.Conditions.Glasses }},
	{"no glasses", func(t clip.Truth) bool { return !t.Conditions.Glasses }},
	{"fringe", func(t clip.Truth) bool { return t.Conditions.Fringe > 0 }},
	{"no fringe", func(t clip.Truth) bool { return t.Conditions.Fringe == 0 }},
	{"skin light", skinTone("light")},
	{"skin medium", skinTone("medium")},
	{"skin brown", skinTone("brown")},
	{"skin dark", skinTone("dark")},
	{"office light (0.8-1)", func(t clip.Truth) bool { return t.Conditions.Brightness >= 0.8 }},
	{"dim room (0.5)", func(t clip.Truth) bool { return t.Conditions.Brightness < 0.8 && t.Conditions.Brightness > 0.4 }},
	{"dark room (0.35)", func(t clip.Truth) bool { return t.Conditions.Brightness <= 0.4 }},
	{"exposure steps", func(t clip.Truth) bool { return t.Conditions.AutoExposure > 0 }},
	{"fixed exposure", func(t clip.Truth) bool { return t.Conditions.AutoExposure == 0 }},
}

// skinTone is the condition of one of the set's skin tones.
func skinTone(name string) func(clip.Truth) bool {
	i := slices.IndexFunc(clip.SkinTones, func(s clip.SkinTone) bool { return s.Name == name })
	return func(t clip.Truth) bool { return t.Conditions.Melanin == clip.SkinTones[i].Melanin }
}

// conditionTable is heart rate on the webcam set, one row per condition.
type conditionTable struct {
	title string
	rows  []conditionRow
}

type conditionRow struct {
	name     string
	clips    int
	errs     []float64 // estimate - reference, bpm, of the answered clips
	refusals map[dsp.Code]int
	plain    []float64 // the plain pipeline's errors, bpm, of every clip
}

// pulseHalves splits the clips at the median of the pulse on their skin
// (after its tone's dilution): the weaker half and the stronger.
func pulseHalves(clips []analysedClip) []condition {
	var pulses []float64
	for _, c := range clips {
		pulses = append(pulses, c.truth.Conditions.SkinPulse)
	}
	if len(pulses) == 0 {
		return nil
	}
	slices.Sort(pulses)
	mid := pulses[len(pulses)/2]
	return []condition{
		{fmt.Sprintf("skin pulse < %.2f%%", 100*mid), func(t clip.Truth) bool { return t.Conditions.SkinPulse < mid }},
		{fmt.Sprintf("skin pulse ≥ %.2f%%", 100*mid), func(t clip.Truth) bool { return t.Conditions.SkinPulse >= mid }},
	}
}

// byCondition breaks the clips' heart rate down by the conditions, one row
// each.
func byCondition(clips []analysedClip, conds []condition) *conditionTable {
	ct := &conditionTable{}
	for _, cond := range conds {
		row := conditionRow{name: cond.name, refusals: map[dsp.Code]int{}}
		for _, c := range clips {
			if !cond.in(c.truth) {
				continue
			}
			row.clips++
			if !math.IsNaN(c.plainPOS) { // a contact signal has no plain reading
				row.plain = append(row.plain, c.plainPOS-c.truth.HeartRate)
			}
			v := c.result.Variables[dsp.HR]
			if v.Error != "" {
				row.refusals[v.Error]++
				continue
			}
			if m, ok := v.Value.(dsp.Mean); ok {
				row.errs = append(row.errs, m.Mean-c.truth.HeartRate)
			}
		}
		ct.rows = append(ct.rows, row)
	}
	return ct
}

func (ct *conditionTable) print(w io.Writer) {
	fmt.Fprintf(w, "\n## %s: heart rate by condition\n\n", ct.title)
	fmt.Fprintln(w, "Answered: clips with an hr value. MAE, RMSE and the shares within 5 bpm and more than 10 bpm off are of the answered clips.")
	fmt.Fprintln(w, "Plain POS: the textbook pipeline with no gate (scripts/accuracy/baseline.go) on every clip: how much pulse the clips carry.")
	fmt.Fprintln(w)
	fmt.Fprintf(w, "| condition | clips | answered | MAE | RMSE | within 5 bpm | > 10 bpm off | refused with | plain POS: MAE, within 5 bpm |\n")
	fmt.Fprintf(w, "|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range ct.rows {
		var codes []string
		for c, k := range r.refusals {
			codes = append(codes, fmt.Sprintf("%s %d", c, k))
		}
		slices.Sort(codes)
		plain := "-"
		if len(r.plain) > 0 {
			mae, _, within, _ := errorStats(r.plain)
			plain = fmt.Sprintf("%.1f, %.0f%%", mae, 100*within)
		}
		if len(r.errs) == 0 {
			fmt.Fprintf(w, "| %s | %d | 0 | - | - | - | - | %s | %s |\n", r.name, r.clips, strings.Join(codes, ", "), plain)
			continue
		}
		mae, rmse, within, far := errorStats(r.errs)
		fmt.Fprintf(w, "| %s | %d | %d (%.0f%%) | %.2f | %.2f | %.0f%% | %.0f%% | %s | %s |\n", r.name, r.clips, len(r.errs),
			100*float64(len(r.errs))/float64(r.clips), mae, rmse, 100*within, 100*far, strings.Join(codes, ", "), plain)
	}
}

// errorStats returns the mean absolute error, the root mean square error
// and the shares within 5 bpm and more than 10 bpm off of errs (not empty).
func errorStats(errs []float64) (mae, rmse, within5, over10 float64) {
	for _, e := range errs {
		mae += math.Abs(e)
		rmse += e * e
		if math.Abs(e) <= 5 {
			within5++
		}
		if math.Abs(e) > 10 {
			over10++
		}
	}
	n := float64(len(errs))
	return mae / n, math.Sqrt(rmse / n), within5 / n, over10 / n
}

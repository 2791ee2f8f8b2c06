package main

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"maps"
	"math"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/pulsewire/pulsewire/dsp"
)

// skinClip is one clip of bias-eval-rppg: real webcam video of a face-skin
// patch, sent as the rppg colour trace it is (its mean R, G, B per frame).
type skinClip struct {
	name    string // region_subject_patch
	group   string // India or Sierra Leone, the study's two sites
	subject string
	ref     float64 // the subject's mean pulse-oximeter heart rate
	trace   dsp.Trace
}

// loadSkinClips decodes every clip of bias-eval-rppg into its colour trace.
// Frames are decoded by ffmpeg to RGB and averaged over the whole patch;
// times come from the clips' 15 fps.
func loadSkinClips(data string) ([]skinClip, error) {
	root := filepath.Join(data, "bias-eval-rppg")
	refs := map[string]float64{}
	for _, region := range []string{"India", "Sierra_Leone"} {
		cols, err := readColumns(filepath.Join(root, "Ground_Truth", region+"_GT.csv"), "Heart_Rate(BPM)")
		if err != nil {
			return nil, err
		}
		subjects, err := readStrings(filepath.Join(root, "Ground_Truth", region+"_GT.csv"), "Subject")
		if err != nil {
			return nil, err
		}
		for i, s := range subjects {
			refs[region+"/"+s] = cols[0][i]
		}
	}
	files, _ := filepath.Glob(filepath.Join(root, "Data", "*", "*.avi"))
	if len(files) == 0 {
		return nil, fmt.Errorf("no clips under %s", filepath.Join(root, "Data"))
	}
	var clips []skinClip
	for _, f := range files {
		region := filepath.Base(filepath.Dir(f))
		base := strings.TrimSuffix(filepath.Base(f), ".avi")
		subject := base[:strings.IndexByte(base, '_')]
		ref, ok := refs[region+"/"+subject]
		if !ok {
			return nil, fmt.Errorf("%s: no reference for %s", f, subject)
		}
		tr, err := meanColours(f, 15)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		clips = append(clips, skinClip{region + "_" + base, strings.ReplaceAll(region, "_", " "), region + "_" + subject, ref, tr})
	}
	return clips, nil
}

// meanColours decodes a video with ffmpeg and returns the mean R, G, B of
// every frame, timed at fps.
func meanColours(path string, fps float64) (dsp.Trace, error) {
	probe, err := exec.Command("ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height", "-of", "csv=p=0", path).Output()
	if err != nil {
		return dsp.Trace{}, fmt.Errorf("ffprobe: %w", err)
	}
	var w, h int
	if _, err := fmt.Sscanf(strings.TrimSpace(string(probe)), "%d,%d", &w, &h); err != nil {
		return dsp.Trace{}, fmt.Errorf("frame size %q: %w", probe, err)
	}
	cmd := exec.Command("ffmpeg", "-v", "error", "-nostdin", "-i", path, "-f", "rawvideo", "-pix_fmt", "rgb24", "pipe:1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return dsp.Trace{}, err
	}
	if err := cmd.Start(); err != nil {
		return dsp.Trace{}, err
	}
	r := bufio.NewReaderSize(out, 1<<20)
	frame := make([]byte, 3*w*h)
	var tr dsp.Trace
	for n := 0; ; n++ {
		if _, err := io.ReadFull(r, frame); err != nil {
			break
		}
		var sum [3]float64
		for i := 0; i < len(frame); i += 3 {
			sum[0] += float64(frame[i])
			sum[1] += float64(frame[i+1])
			sum[2] += float64(frame[i+2])
		}
		px := float64(w * h)
		tr.TimestampsMs = append(tr.TimestampsMs, float64(n)*1000/fps)
		tr.R = append(tr.R, sum[0]/px)
		tr.G = append(tr.G, sum[1]/px)
		tr.B = append(tr.B, sum[2]/px)
	}
	if err := cmd.Wait(); err != nil {
		return dsp.Trace{}, fmt.Errorf("ffmpeg: %w", err)
	}
	return tr, nil
}

// skinOptions are the choices of the skin part beyond the data folder.
type skinOptions struct {
	verbose bool
	picture string // the decision figure's file, or "" for none
	// noiseEvery starts a real noise piece of the decision table every so
	// many seconds, the pieces overlapping: a denser sample of real noise
	// for comparing false answers. 0 cuts them end to end.
	noiseEvery float64
	// signature is the added pulse's change in R, G and B relative to
	// green's (defaultSignature unless set).
	signature [3]float64
	// summary, when set, receives the skin clips' and the semi-synthetic
	// pieces' heart-rate decisions for the run's closing table.
	summary *summary
}

// defaultSignature is the skin's blood-volume signature in normalised RGB
// (de Haan & van Leest, Physiol. Meas. 35(9), 2014: 0.33, 0.77, 0.53),
// relative to green.
var defaultSignature = [3]float64{0.33 / 0.77, 1, 0.53 / 0.77}

// realSkin runs the evaluations on the real face-skin clips: hr per site
// with its answered-share curve, the semi-synthetic sensitivity and the
// decision's noise levels.
func realSkin(w io.Writer, data string, o skinOptions) error {
	clips, err := loadSkinClips(data)
	if err != nil {
		return err
	}
	tables := skinTraces(clips, o.verbose)
	for _, t := range tables {
		t.print(w)
		o.summary.add(t.title, t.outcomes)
	}
	fingers, err := loadFingertips(data)
	if err != nil {
		return err
	}
	pulses := semiSynthetic(w, fingers, clips, o.signature)
	byLengthAndStrength := func(a, b [2]float64) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) }
	for _, k := range slices.SortedFunc(maps.Keys(pulses), byLengthAndStrength) {
		o.summary.add(fmt.Sprintf("Semi-synthetic: real skin noise with a real %.1f%% fingertip pulse, %.0f s pieces", 100*k[1], k[0]), pulses[k])
	}
	noise := decisionNoise(w, clips, o.noiseEvery)
	var all []outcome
	for _, L := range decisionLengths {
		all = append(all, noise[L]...)
	}
	o.summary.addNoise(fmt.Sprintf("Real face-skin pieces of %g-%g s without an added pulse", decisionLengths[0], decisionLengths[len(decisionLengths)-1]), all)
	if o.picture == "" {
		return nil
	}
	pulses30 := map[float64][]outcome{}
	for k, outs := range pulses {
		if k[0] == 30 {
			pulses30[k[1]] = outs
		}
	}
	return decisionFigure(o.picture, noise[30], pulses30)
}

// outcome is one measure of an evaluation: the reference, what the track
// followed (answered or not), and the evidence the decision read.
type outcome struct {
	name        string
	ref         float64
	tracked     float64
	answered    bool
	confidence  float64
	correlation float64
	code        dsp.Code
	seconds     float64 // the capture's length
}

// outcomeOf reads the hr decision of res: the answered rate, or when hr
// was refused the rate the track followed (what it would have answered).
func outcomeOf(name string, ref float64, res dsp.Result) outcome {
	hr := res.Variables[dsp.HR]
	est := res.Summary.TrackedBpm
	if m, ok := hr.Value.(dsp.Mean); ok && hr.Error == "" {
		est = m.Mean
	}
	return outcome{name, ref, est, hr.Error == "",
		res.Summary.QualityScore, res.Summary.PeriodCorrelation, hr.Error, res.Summary.Seconds}
}

// skinTraces scores hr on the real face-skin clips, each whole clip one
// measure through dsp.AnalyzeTrace (the rppg signal route), per site and
// in all.
func skinTraces(clips []skinClip, verbose bool) []*table {
	groups := map[string]*table{}
	all := newTable("Real face skin: bias-eval-rppg clips as colour traces, hr vs pulse oximeter, all", dsp.HR)
	all.notes = append(all.notes,
		"Input: each clip's mean R, G, B per frame (15 fps; forehead 60x30 and cheek 25x25 patches cut from webcam video,",
		"MPEG-4 at about 100 kbit/s) through dsp.AnalyzeTrace, one measure per clip (27-370 s).",
		"Reference: the subject's mean pulse-oximeter heart rate over the recording (one number per person).",
		"The study's two sites stand in for the skin-tone groups (India: lighter to medium; Sierra Leone: darker).")
	for _, c := range clips {
		res := dsp.AnalyzeTrace(c.trace, dsp.Inputs{Variables: []string{dsp.HR}})
		t := groups[c.group]
		if t == nil {
			t = newTable("Real face skin: bias-eval-rppg, "+c.group, dsp.HR)
			groups[c.group] = t
		}
		for _, t := range []*table{all, t} {
			t.units++
			t.label = c.name
			t.add(res, dsp.HR, c.ref)
		}
		if verbose {
			o := outcomeOf(c.name, c.ref, res)
			fmt.Printf("%-34s ref %5.1f tracked %6.1f confidence %.3f correlation %5.2f %s\n", c.name, c.ref, o.tracked, o.confidence, o.correlation, o.code)
		}
	}
	out := []*table{all}
	for _, g := range slices.Sorted(maps.Keys(groups)) {
		out = append(out, groups[g])
	}
	return out
}

// readStrings reads one named column of a CSV file with a header row.
func readStrings(path, name string) ([]string, error) {
	cols, err := readColumnsRaw(path, name)
	if err != nil {
		return nil, err
	}
	return cols[0], nil
}

// pieces cuts a trace into pieces of the given length, one starting every
// `every` seconds (overlapping when every is shorter than the length), or
// end to end when every is 0.
func pieces(tr dsp.Trace, seconds, every float64) []dsp.Trace {
	if every <= 0 {
		every = seconds
	}
	ts := tr.TimestampsMs
	var out []dsp.Trace
	for from := 0; from < len(ts); {
		end := from
		for end < len(ts) && ts[end]-ts[from] < seconds*1000 {
			end++
		}
		if end == len(ts) {
			break // too short for a whole piece
		}
		out = append(out, dsp.Trace{TimestampsMs: ts[from:end], R: tr.R[from:end], G: tr.G[from:end], B: tr.B[from:end]})
		next := from + 1
		for next < len(ts) && ts[next]-ts[from] < every*1000 {
			next++
		}
		from = next
	}
	return out
}

// withPulse returns a copy of a camera trace with a contact pulse added: the
// fingertip wave p (band-passed, unit standard deviation, sampled at
// rateHz from offS on) at relative standard deviation amp on green, and
// in each channel in proportion to sig, the pulse's colour signature.
func withPulse(tr dsp.Trace, p []float64, rateHz, offS, amp float64, sig [3]float64) dsp.Trace {
	out := dsp.Trace{TimestampsMs: tr.TimestampsMs, R: slices.Clone(tr.R), G: slices.Clone(tr.G), B: slices.Clone(tr.B)}
	t0 := tr.TimestampsMs[0]
	for i, t := range tr.TimestampsMs {
		x := (offS + (t-t0)/1000) * rateHz
		k := int(x)
		if k+1 >= len(p) {
			break
		}
		v := p[k] + (x-float64(k))*(p[k+1]-p[k])
		out.R[i] *= 1 + amp*sig[0]*v
		out.G[i] *= 1 + amp*sig[1]*v
		out.B[i] *= 1 + amp*sig[2]*v
	}
	return out
}

// pct formats a share as a percentage.
func pct(k, n int) string {
	if n == 0 {
		return "-"
	}
	return strconv.FormatFloat(100*float64(k)/float64(n), 'f', 0, 64) + "%"
}

// quantile returns the q-quantile of x (nearest rank; x is sorted in place).
func quantile(x []float64, q float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	slices.Sort(x)
	return x[max(0, min(len(x)-1, int(math.Ceil(q*float64(len(x))))-1))]
}

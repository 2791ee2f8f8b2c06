package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/pulsewire/pulsewire/dsp"
	"github.com/pulsewire/pulsewire/dsp/face"
	"github.com/pulsewire/pulsewire/scripts/synth/clip"
)

// referencesFile names the list of recordings in a folder of one's own
// recordings (ownRecordings): a CSV file with a header row and the columns
//
//	file   the video's path, relative to the folder, or a signal's: a
//	       .json file holding what the signal routes take (isSignal)
//	hr     the reference heart rate over the recording, bpm (a pulse
//	       oximeter's or an ECG's mean)
//	br     optional: the reference breathing rate, breaths per minute
//	       (a belt's or a capnograph's)
//	rmssd  optional: the reference HRV, RMSSD in ms (an ECG's)
//	group  optional: a label to break the results down by (skin tone,
//	       camera, light, ...)
//
// in any order; other columns are ignored, and an empty br or rmssd cell
// means that recording has no such reference.
const referencesFile = "reference.csv"

// recording is one row of referencesFile; br and rmssd are NaN without a
// reference.
type recording struct {
	file          string
	hr, br, rmssd float64
	group         string
}

// readReferences reads dir's referencesFile. Every listed video must exist,
// once, with a reference heart rate, and every reference must be a
// positive number.
func readReferences(dir string) ([]recording, error) {
	name := filepath.Join(dir, referencesFile)
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.TrimLeadingSpace = true
	header, err := r.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("%s is empty: want a header row with the columns file and hr (and group, if any)", name)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.ToLower(strings.TrimSpace(h))] = i
	}
	fileCol, hasFile := col["file"]
	_, hasHR := col["hr"]
	groupCol, hasGroup := col["group"]
	if !hasFile || !hasHR {
		return nil, fmt.Errorf("%s: the header %q lacks the column file or hr", name, strings.Join(header, ","))
	}
	r.FieldsPerRecord = len(header)
	var recs []recording
	seen := map[string]int{}
	for line := 2; ; line++ {
		row, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		rec := recording{file: strings.TrimSpace(row[fileCol])}
		if hasGroup {
			rec.group = strings.TrimSpace(row[groupCol])
		}
		// value reads the reference of column c: NaN without the column
		// or in an empty cell (unless required).
		value := func(c, what string, required bool) (float64, error) {
			i, has := col[c]
			if !has || (!required && strings.TrimSpace(row[i]) == "") {
				return math.NaN(), nil
			}
			v, err := strconv.ParseFloat(strings.TrimSpace(row[i]), 64)
			if err != nil || !(v > 0) || math.IsInf(v, 0) {
				return 0, fmt.Errorf("%s line %d: %s %q is not %s", name, line, c, row[i], what)
			}
			return v, nil
		}
		if rec.hr, err = value("hr", "a heart rate in bpm", true); err != nil {
			return nil, err
		}
		if rec.br, err = value("br", "a breathing rate in breaths per minute", false); err != nil {
			return nil, err
		}
		if rec.rmssd, err = value("rmssd", "an RMSSD in ms", false); err != nil {
			return nil, err
		}
		if rec.file == "" {
			return nil, fmt.Errorf("%s line %d: no file", name, line)
		}
		if first, dup := seen[rec.file]; dup {
			return nil, fmt.Errorf("%s line %d: %s is listed on line %d already", name, line, rec.file, first)
		}
		seen[rec.file] = line
		if info, err := os.Stat(filepath.Join(dir, rec.file)); err != nil || info.IsDir() {
			return nil, fmt.Errorf("%s line %d: no file %s in %s", name, line, rec.file, dir)
		}
		recs = append(recs, rec)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("%s lists no recordings", name)
	}
	return recs, nil
}

// ownRecordings scores one's own real recordings, the evidence that counts
// most: the videos and signals dir's referencesFile lists, each video
// decoded and analysed by the batch path of video uploads, each signal by
// the analysis of the signal routes, and a video or camera signal read by
// the plain pipeline too. It returns the usual table (with the curve of
// answered share against error) and one row per group.
func ownRecordings(dir string, verbose bool) (*table, *conditionTable, error) {
	recs, err := readReferences(dir)
	if err != nil {
		return nil, nil, err
	}
	cascade, err := face.LoadCascade()
	if err != nil {
		return nil, nil, err
	}
	clips := make([]analysedClip, len(recs))
	analysed := progress(os.Stderr, "analysed", len(recs))
	if err := parallel(len(recs), func(i int) error {
		var err error
		path := filepath.Join(dir, recs[i].file)
		if isSignal(path) {
			clips[i], err = analyseSignal(path)
		} else {
			clips[i], err = analyseVideo(context.Background(), cascade, path, true)
		}
		clips[i].truth = clip.Truth{File: recs[i].file, HeartRate: recs[i].hr}
		analysed(recs[i].file)
		return err
	}); err != nil {
		return nil, nil, err
	}
	title := "Your recordings"
	variables, columns := []string{dsp.HR}, "hr"
	if slices.ContainsFunc(recs, func(r recording) bool { return !math.IsNaN(r.br) }) {
		variables, columns = append(variables, dsp.BR), columns+", br"
	}
	if slices.ContainsFunc(recs, func(r recording) bool { return !math.IsNaN(r.rmssd) }) {
		variables, columns = append(variables, dsp.HRV), columns+", rmssd"
	}
	noun := "recordings"
	if len(recs) == 1 {
		noun = "recording"
	}
	t := newTable(fmt.Sprintf("%s: %d %s in %s, videos decoded and analysed by the batch path, signals by the signal routes' analysis", title, len(recs), noun, dir), variables...)
	t.notes = append(t.notes, fmt.Sprintf("Reference: the %s columns of %s.", columns, filepath.Join(dir, referencesFile)))
	for i, c := range clips {
		t.units++
		t.label = recs[i].file
		hr, _ := t.add(c.result, dsp.HR, recs[i].hr)
		br, _ := t.add(c.result, dsp.BR, recs[i].br)
		hrv, _ := t.add(c.result, dsp.HRV, recs[i].rmssd)
		if verbose {
			s := c.result.Summary
			fmt.Printf("%-40s hr %5.1f/%5.1f tracked %5.1f confidence %.2f plain POS %5.1f br %4.1f/%4.1f rmssd %5.1f/%5.1f %s %s\n",
				recs[i].file, hr, recs[i].hr, s.TrackedBpm, s.QualityScore, c.plainPOS, br, recs[i].br, hrv, recs[i].rmssd,
				s.Method, s.Conformity)
		}
	}
	ct := byCondition(clips, recordingGroups(recs))
	ct.title = title
	return t, ct, nil
}

// recordingGroups returns the condition "all recordings" and one for each
// group named in recs, in name order.
func recordingGroups(recs []recording) []condition {
	groupOf := map[string]string{}
	var names []string
	for _, r := range recs {
		groupOf[r.file] = r.group
		if r.group != "" && !slices.Contains(names, r.group) {
			names = append(names, r.group)
		}
	}
	slices.Sort(names)
	conds := []condition{{"all recordings", func(clip.Truth) bool { return true }}}
	for _, g := range names {
		conds = append(conds, condition{"group " + g, func(t clip.Truth) bool { return groupOf[t.File] == g }})
	}
	return conds
}

// errNoRecordings is the usage error of -only recordings without a folder.
var errNoRecordings = errors.New("-only recordings needs -recordings DIR: a folder of videos with a " + referencesFile)

// isSignal reports whether a recording is a signal file rather than a
// video: its name ends in .json.
func isSignal(path string) bool { return strings.EqualFold(filepath.Ext(path), ".json") }

// analyseSignal analyses a signal file: the JSON the signal routes take,
// {"signal": {"timestamps": [ms, ...], "r": [...], "g": [...], "b": [...]}}
// for a camera's mean skin colours, or {"signal": {"timestamps": [...],
// "values": [...]}} for a contact sensor (other members are ignored). A
// camera signal is read by the plain pipeline too, its samples taken as
// evenly spaced; a contact signal has no plain reading (NaN).
func analyseSignal(path string) (analysedClip, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return analysedClip{}, err
	}
	var body struct {
		Signal *struct {
			Timestamps, R, G, B, Values []float64
		}
	}
	if err := json.Unmarshal(data, &body); err != nil {
		return analysedClip{}, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	sig := body.Signal
	if sig == nil {
		return analysedClip{}, fmt.Errorf("%s: no signal member", filepath.Base(path))
	}
	in := dsp.Inputs{Variables: []string{dsp.HR, dsp.BR, dsp.HRV}}
	if sig.Values != nil && sig.R == nil && sig.G == nil && sig.B == nil {
		ppg := dsp.PPG{TimestampsMs: sig.Timestamps, Values: sig.Values}
		if err := ppg.Validate(); err != nil {
			return analysedClip{}, fmt.Errorf("%s: %w", filepath.Base(path), err)
		}
		return analysedClip{result: dsp.AnalyzePPG(ppg, in), plainPOS: math.NaN()}, nil
	}
	tr := dsp.Trace{TimestampsMs: sig.Timestamps, R: sig.R, G: sig.G, B: sig.B}
	if err := tr.Validate(); err != nil {
		return analysedClip{}, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	return analysedClip{result: dsp.AnalyzeTrace(tr, in), plainPOS: plainPOSTrace(tr)}, nil
}

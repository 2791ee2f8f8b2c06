package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/pulsewire/pulsewire/dsp"
)

// The phone part: fingertips on people's own phones, held out from
// everything the analysis was built on. The Welltory PPG data set
// (github.com/Welltory/welltory-ppg-dataset; Neshitov et al., Sensors
// 21(20), 6798, 2021) holds 21 recordings of 68-112 s by 13 adults, each
// a fingertip on their own Android phone's camera (every frame's time in
// ms and mean R, G, B in PPG.csv) beside a Polar H10 chest strap (the RR
// intervals of the same 100 beats in RR.txt). It is free for research
// but not for passing on, so it is not shipped: -phones names a folder
// laid out as its repository is (subject_NN/PPG.csv, subject_NN/RR.txt).

// phoneRecordings scores the recordings whole and in 30 s pieces every
// 15 s, the red channel as the trace (what such an app reads).
func phoneRecordings(dir string, verbose bool) ([]*table, error) {
	var tables []*table
	for _, cut := range [][2]float64{{0, 0}, {30, 15}} {
		t, err := phoneWindows(dir, verbose, cut[0], cut[1])
		if err != nil {
			return nil, err
		}
		tables = append(tables, t)
	}
	return tables, nil
}

// phoneWindows scores pieces of windowS seconds every stepS seconds of
// every recording (windowS 0: each recording whole) against the strap.
func phoneWindows(dir string, verbose bool, windowS, stepS float64) (*table, error) {
	wins, err := phoneCuts(dir, windowS, stepS)
	if err != nil {
		return nil, err
	}
	what := "whole recordings"
	if windowS > 0 {
		what = fmt.Sprintf("%.0f s pieces every %.0f s", windowS, stepS)
	}
	t := newTable("Contact PPG on people's own phones: Welltory PPG, "+what+", vs a chest strap", dsp.HR, dsp.HRV)
	t.notes = append(t.notes,
		"Input: the fingertip's mean red per frame, at the phones' own frame times, through dsp.AnalyzePPG.",
		"Reference: the Polar H10's RR intervals over the same seconds (beats counted from the recording's start); hr counts",
		"every beat, RMSSD only intervals within 20% of their median, as for the ECG of the resting recording.")
	for _, w := range wins {
		res := dsp.AnalyzePPG(w.ppg, dsp.Inputs{Variables: []string{dsp.HR, dsp.HRV}})
		t.units++
		t.label = w.label
		hr, _ := t.add(res, dsp.HR, w.hr)
		hrv, _ := t.add(res, dsp.HRV, w.rmssd)
		if verbose {
			fmt.Printf("%-16s hr %5.1f/%5.1f  rmssd %5.1f/%5.1f  confidence %.2f  clipped %.2f %s\n",
				w.label, hr, w.hr, hrv, w.rmssd, res.Summary.QualityScore, res.Summary.ClippedShare, res.Variables[dsp.HR].Error)
		}
	}
	return t, nil
}

// phoneCuts reads every recording under dir and cuts it into windows (see
// phoneWindows) with the strap's heart rate and RMSSD over each.
func phoneCuts(dir string, windowS, stepS float64) ([]contactWindow, error) {
	subjects, _ := filepath.Glob(filepath.Join(dir, "subject_*"))
	if len(subjects) == 0 {
		return nil, fmt.Errorf("-phones %s: no subject_NN folders", dir)
	}
	var wins []contactWindow
	for _, s := range subjects {
		cols, err := readColumns(filepath.Join(s, "PPG.csv"), "time", "R")
		if err != nil {
			return nil, err
		}
		peaks, err := strapBeats(filepath.Join(s, "RR.txt"))
		if err != nil {
			return nil, err
		}
		ms, red := cols[0], cols[1]
		span := ms[len(ms)-1] / 1000
		from, to := 0.0, span+1
		for {
			if windowS > 0 {
				to = from + windowS
				if to > span {
					break
				}
			}
			hr, rmssd := rrReference(peaks, nil, from, to)
			if !math.IsNaN(hr) {
				w := contactWindow{label: filepath.Base(s), hr: hr, rmssd: rmssd, br: math.NaN()}
				if windowS > 0 {
					w.label += fmt.Sprintf(" %3.0f s", from)
				}
				for i, t := range ms {
					if t >= 1000*from && t < 1000*to {
						w.ppg.TimestampsMs = append(w.ppg.TimestampsMs, t)
						w.ppg.Values = append(w.ppg.Values, red[i])
					}
				}
				wins = append(wins, w)
			}
			if windowS == 0 {
				break
			}
			from += stepS
		}
	}
	return wins, nil
}

// strapBeats reads an RR.txt (intervals in ms, separated by white space)
// as beat times in seconds, the first at 0.
func strapBeats(path string) ([]float64, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	beats := []float64{0}
	for _, f := range strings.Fields(string(raw)) {
		ms, err := strconv.ParseFloat(f, 64)
		if err != nil || !(ms > 0) {
			return nil, fmt.Errorf("%s: %q is not an interval in ms", path, f)
		}
		beats = append(beats, beats[len(beats)-1]+ms/1000)
	}
	return beats, nil
}

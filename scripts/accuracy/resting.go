package main

import (
	"fmt"
	"path/filepath"

	"github.com/pulsewire/pulsewire/dsp"
)

// restingPPG scores heart rate, HRV and breathing from a finger PPG at rest
// (neurokit-resting: 5 min at 100 Hz with ECG and a respiration belt) in
// 30 s windows every 15 s, each analysed as its own measure through
// dsp.AnalyzePPG.
func restingPPG(data string, verbose bool) (*table, error) {
	return restingWindows(data, verbose, 30, 15)
}

// restingWindows scores windows of windowS seconds every stepS seconds of
// the neurokit-resting recording.
func restingWindows(data string, verbose bool, windowS, stepS float64) (*table, error) {
	wins, err := restingCuts(data, windowS, stepS)
	if err != nil {
		return nil, err
	}
	t := newTable(fmt.Sprintf("Contact PPG at rest: neurokit-resting, %.0f s windows every %.0f s, vs ECG and belt", windowS, stepS),
		dsp.HR, dsp.HRV, dsp.BR)
	t.notes = append(t.notes,
		"Input: the finger PPG at 100 Hz through dsp.AnalyzePPG.",
		"Reference: hr and RMSSD from ECG R peaks (Pan-Tompkins style, scripts/accuracy/reference.go; beats whose QRS is unlike the",
		"median QRS end no interval; hr counts every beat, RMSSD only intervals within 20% of the local median, and windows",
		"whose ECG loses more than a tenth of its intervals that way have no hrv reference),",
		"br from upward crossings of the band-passed belt.",
		"Overlapping windows are not independent: all come from one 5-minute recording of one person.")
	for _, w := range wins {
		res := dsp.AnalyzePPG(w.ppg, dsp.Inputs{Variables: []string{dsp.HR, dsp.HRV, dsp.BR}})
		t.units++
		t.label = w.label
		hr, _ := t.add(res, dsp.HR, w.hr)
		hrv, _ := t.add(res, dsp.HRV, w.rmssd)
		br, _ := t.add(res, dsp.BR, w.br)
		if verbose {
			fmt.Printf("neurokit %5s  hr %5.1f/%5.1f  rmssd %5.1f/%5.1f  br %4.1f/%4.1f  snr %.1f\n",
				w.label, hr, w.hr, hrv, w.rmssd, br, w.br, res.Summary.SNRdB)
		}
	}
	return t, nil
}

// restingCuts cuts the neurokit-resting finger PPG into windows of windowS
// seconds every stepS seconds, with their ECG and belt references.
func restingCuts(data string, windowS, stepS float64) ([]contactWindow, error) {
	const rate = 100.0
	path := filepath.Join(data, "neurokit-resting", "bio_resting_5min_100hz.csv")
	cols, err := readColumns(path, "ECG", "PPG", "RSP")
	if err != nil {
		return nil, err
	}
	ecg, ppg, rsp := cols[0], cols[1], cols[2]
	peaks := rPeaks(ecg, rate)
	clean := qrsClean(ecg, rate, peaks)
	var wins []contactWindow
	seconds := float64(len(ppg)) / rate
	for from := 0.0; from+windowS <= seconds; from += stepS {
		i0, i1 := int(from*rate), int((from+windowS)*rate)
		w := contactWindow{label: fmt.Sprintf("%.0f s", from), ppg: dsp.PPG{TimestampsMs: make([]float64, i1-i0), Values: ppg[i0:i1]}}
		for i := range w.ppg.TimestampsMs {
			w.ppg.TimestampsMs[i] = float64(i0+i) * 1000 / rate
		}
		w.hr, w.rmssd = rrReference(peaks, clean, from, from+windowS)
		w.br = breathRate(rsp, rate, from, from+windowS)
		wins = append(wins, w)
	}
	return wins, nil
}

package main

import (
	"fmt"
	"path/filepath"

	"github.com/pulsewire/pulsewire/dsp"
)

// restingPPG scores heart rate, HRV and breathing from a finger PPG at rest
// (neurokit-resting: 5 min at 100 Hz with ECG and a respiration belt),
// windows of windowS seconds each analysed as its own measure through
// dsp.AnalyzePPG.
func restingPPG(data string, verbose bool) (*table, error) {
	const rate = 100.0
	path := filepath.Join(data, "neurokit-resting", "bio_resting_5min_100hz.csv")
	cols, err := readColumns(path, "ECG", "PPG", "RSP")
	if err != nil {
		return nil, err
	}
	ecg, ppg, rsp := cols[0], cols[1], cols[2]
	peaks := rPeaks(ecg, rate)
	t := newTable("Contact PPG at rest: neurokit-resting, 30 s windows every 15 s, vs ECG and belt", dsp.HR, dsp.HRV, dsp.BR)
	t.notes = append(t.notes,
		"Input: the finger PPG at 100 Hz through dsp.AnalyzePPG.",
		"Reference: hr and RMSSD from ECG R peaks (Pan-Tompkins style, scripts/accuracy/reference.go; windows whose ECG loses",
		"more than a tenth of its intervals have no hrv reference), br from upward crossings of the band-passed belt.",
		"Overlapping windows are not independent: 19 windows from one 5-minute recording of one person.")
	const windowS, stepS = 30.0, 15.0
	seconds := float64(len(ppg)) / rate
	for from := 0.0; from+windowS <= seconds; from += stepS {
		i0, i1 := int(from*rate), int((from+windowS)*rate)
		ts := make([]float64, i1-i0)
		for i := range ts {
			ts[i] = float64(i0+i) * 1000 / rate
		}
		res := dsp.AnalyzePPG(dsp.PPG{TimestampsMs: ts, Values: ppg[i0:i1]}, dsp.Inputs{Variables: []string{dsp.HR, dsp.HRV, dsp.BR}})
		t.units++
		hrRef, rmssdRef := rrReference(peaks, from, from+windowS)
		brRef := breathRate(rsp, rate, from, from+windowS)
		hr, _ := t.add(res, dsp.HR, hrRef)
		hrv, _ := t.add(res, dsp.HRV, rmssdRef)
		br, _ := t.add(res, dsp.BR, brRef)
		if verbose {
			fmt.Printf("neurokit %5.0f s  hr %5.1f/%5.1f  rmssd %5.1f/%5.1f  br %4.1f/%4.1f  snr %.1f\n",
				from, hr, hrRef, hrv, rmssdRef, br, brRef, res.Summary.SNRdB)
		}
	}
	return t, nil
}

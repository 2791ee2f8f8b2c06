package main

import (
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/pulsewire/pulsewire/dsp"
)

// contactOximetry scores heart rate from fingertip camera PPG
// (uw-phone-oximetry: 6 people x 2 hands, 14-19 min each, per-frame mean
// R, G, B at 30 Hz) against clinical pulse oximeters, one-minute windows,
// each analysed as a measure of its own through dsp.AnalyzePPG.
func contactOximetry(data string, verbose bool) (*table, error) {
	return oximetryWindows(data, verbose, "Contact PPG: uw-phone-oximetry, 1-minute windows, hr vs oximeters",
		"the fingertip brightness (R+G+B)/3", func(r, g, b float64) float64 { return (r + g + b) / 3 })
}

// oximetryWindows scores the uw-phone-oximetry windows with the intensity
// value(R, G, B) of each frame as the contact trace (described by input).
func oximetryWindows(data string, verbose bool, title, input string, value func(r, g, b float64) float64) (*table, error) {
	t := newTable(title, dsp.HR)
	t.notes = append(t.notes,
		"Input: "+input+" per frame at 30 fps, through dsp.AnalyzePPG.",
		"Reference: per second the median of oximeters 1, 2, 4, 5 (channel 3 is empty), averaged over the minute.")
	wins, err := oximetryMinutes(data, value)
	for _, w := range wins {
		res := dsp.AnalyzePPG(w.ppg, dsp.Inputs{Variables: []string{dsp.HR}})
		t.units++
		t.label = w.label
		est, ok := t.add(res, dsp.HR, w.hr)
		if verbose {
			fmt.Printf("%s  ref %6.1f  est %6.1f ok=%v quality %.2f\n", w.label, w.hr, est, ok, res.Summary.QualityScore)
		}
	}
	return t, err
}

// contactWindow is a window of a contact recording with its references
// (NaN where there is none).
type contactWindow struct {
	label         string
	ppg           dsp.PPG
	hr, rmssd, br float64
}

// oximetryMinutes cuts the uw-phone-oximetry recordings into one-minute
// windows with an oximeter reference, the intensity value(R, G, B) of each
// frame as the trace.
func oximetryMinutes(data string, value func(r, g, b float64) float64) ([]contactWindow, error) {
	const fps = 30.0
	var wins []contactWindow
	err := eachOximetry(data, func(id string, rgb, gt [][]float64) {
		const win = int(60 * fps)
		for m := 0; (m+1)*win <= len(rgb[0]); m++ {
			ref := oximeterMean(gt, m*60, (m+1)*60)
			if math.IsNaN(ref) {
				continue
			}
			w := contactWindow{label: fmt.Sprintf("%s min %2d", id, m), hr: ref, rmssd: math.NaN(), br: math.NaN()}
			w.ppg.TimestampsMs = make([]float64, win)
			w.ppg.Values = make([]float64, win)
			for i := range win {
				k := m*win + i
				w.ppg.TimestampsMs[i] = float64(k) * 1000 / fps
				w.ppg.Values[i] = value(rgb[0][k], rgb[1][k], rgb[2][k])
			}
			wins = append(wins, w)
		}
	})
	return wins, err
}

// eachOximetry calls fn for every recording of uw-phone-oximetry with its id
// (hand and subject), its per-frame R, G, B at 30 fps, and the oximeters'
// pulse rates per second (oximeters 1, 2, 4, 5: channel 3 is empty).
func eachOximetry(data string, fn func(id string, rgb, gt [][]float64)) error {
	root := filepath.Join(data, "uw-phone-oximetry", "data")
	for _, hand := range []string{"Left", "Right"} {
		files, _ := filepath.Glob(filepath.Join(root, "ppg-csv", hand, "*.csv"))
		if len(files) == 0 {
			return fmt.Errorf("no recordings under %s", filepath.Join(root, "ppg-csv", hand))
		}
		for _, f := range files {
			id := strings.TrimSuffix(filepath.Base(f), ".csv")
			rgb, err := readColumns(f, "R", "G", "B")
			if err != nil {
				return err
			}
			gt, err := readColumns(filepath.Join(root, "gt", id+".csv"), "Pulse 1", "Pulse 2", "Pulse 4", "Pulse 5")
			if err != nil {
				return err
			}
			fn(id+" "+hand, rgb, gt)
		}
	}
	return nil
}

// oximeterMean averages over rows [from, to) the per-second median of the
// oximeters' pulse rates that are plausible (25-250 bpm); NaN when fewer
// than half the seconds have one.
func oximeterMean(cols [][]float64, from, to int) float64 {
	var sum float64
	n := 0
	for r := from; r < to && r < len(cols[0]); r++ {
		var vals []float64
		for _, c := range cols {
			if v := c[r]; v >= 25 && v <= 250 {
				vals = append(vals, v)
			}
		}
		if len(vals) == 0 {
			continue
		}
		slices.Sort(vals)
		med := vals[len(vals)/2]
		if len(vals)%2 == 0 {
			med = (vals[len(vals)/2-1] + med) / 2
		}
		sum += med
		n++
	}
	if n < (to-from)/2 {
		return math.NaN()
	}
	return sum / float64(n)
}

// readColumns reads the named columns of a CSV file with a header row as
// numbers (NaN where a cell is not a number).
func readColumns(path string, names ...string) ([][]float64, error) {
	raw, err := readColumnsRaw(path, names...)
	if err != nil {
		return nil, err
	}
	cols := make([][]float64, len(raw))
	for i, c := range raw {
		for _, cell := range c {
			v := math.NaN()
			if x, err := strconv.ParseFloat(strings.TrimSpace(cell), 64); err == nil {
				v = x
			}
			cols[i] = append(cols[i], v)
		}
	}
	return cols, nil
}

// readColumnsRaw reads the named columns of a CSV file with a header row as
// text ("" where a row is short).
func readColumnsRaw(path string, names ...string) ([][]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	header, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	idx := make([]int, len(names))
	for i, n := range names {
		idx[i] = -1
		for j, h := range header {
			if strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")) == n {
				idx[i] = j
			}
		}
		if idx[i] < 0 {
			return nil, fmt.Errorf("%s: no column %q", path, n)
		}
	}
	cols := make([][]string, len(names))
	for {
		rec, err := r.Read()
		if err != nil {
			break
		}
		for i, j := range idx {
			cell := ""
			if j < len(rec) {
				cell = rec[j]
			}
			cols[i] = append(cols[i], cell)
		}
	}
	return cols, nil
}

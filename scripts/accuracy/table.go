package main

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/pulsewire/pulsewire/dsp"
)

// table collects estimate/reference pairs per variable and error codes.
type table struct {
	title string
	notes []string
	units int                         // windows or clips analysed
	pairs map[string][][2]float64     // variable -> (estimate, reference)
	codes map[string]map[dsp.Code]int // variable -> code -> count
	order []string
	// label names the window or clip being added (set before add); the
	// pairs keep it so the worst ones can be listed.
	label  string
	labels map[string][]string
	// outcomes are the hr decisions, answered or not, for the curve of
	// answered share against error printed under the table.
	outcomes []outcome
}

func newTable(title string, variables ...string) *table {
	return &table{title: title, pairs: map[string][][2]float64{}, codes: map[string]map[dsp.Code]int{},
		labels: map[string][]string{}, order: variables}
}

// add records variable name of res against ref (NaN: no reference).
func (t *table) add(res dsp.Result, name string, ref float64) (est float64, ok bool) {
	if name == dsp.HR && !math.IsNaN(ref) {
		t.outcomes = append(t.outcomes, outcomeOf(t.label, ref, res))
	}
	v, present := res.Variables[name]
	if !present {
		return 0, false
	}
	if v.Error != "" {
		if t.codes[name] == nil {
			t.codes[name] = map[dsp.Code]int{}
		}
		t.codes[name][v.Error]++
		return 0, false
	}
	m, isMean := v.Value.(dsp.Mean)
	if !isMean || math.IsNaN(ref) {
		return 0, false
	}
	t.pairs[name] = append(t.pairs[name], [2]float64{m.Mean, ref})
	t.labels[name] = append(t.labels[name], t.label)
	return m.Mean, true
}

func (t *table) print(w io.Writer) {
	fmt.Fprintf(w, "\n## %s\n\n", t.title)
	for _, n := range t.notes {
		fmt.Fprintf(w, "%s\n", n)
	}
	if len(t.notes) > 0 {
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "| variable | answered | n | MAE | RMSE | Pearson r | errors |\n|---|---|---|---|---|---|---|\n")
	for _, name := range t.order {
		ps := t.pairs[name]
		var codes []string
		for c, k := range t.codes[name] {
			codes = append(codes, fmt.Sprintf("%s %d", c, k))
		}
		slices.Sort(codes)
		errs := strings.Join(codes, ", ")
		if errs == "" {
			errs = "none"
		}
		mae, rmse, r := stats(ps)
		refused := 0
		for _, k := range t.codes[name] {
			refused += k
		}
		answered := 100 * float64(t.units-refused) / float64(max(t.units, 1))
		fmt.Fprintf(w, "| %s | %.0f%% | %d/%d | %s | %s | %s | %s |\n", name, answered, len(ps), t.units, cell(mae, 2), cell(rmse, 2), cell(r, 3), errs)
	}
	t.printWorst(w)
	if len(t.outcomes) > 0 {
		printCurve(w, "hr", t.outcomes)
	}
}

// cell is x with prec decimals for a table's cell, or "-" when there is
// nothing to say (NaN: an error of no answers, a correlation of fewer
// than two).
func cell(x float64, prec int) string {
	if math.IsNaN(x) {
		return "-"
	}
	return strconv.FormatFloat(x, 'f', prec, 64)
}

// worstShown is how many of the largest errors are listed per variable.
const worstShown = 3

// printWorst lists, per variable, the labelled windows or clips with the
// largest absolute errors.
func (t *table) printWorst(w io.Writer) {
	var lines []string
	for _, name := range t.order {
		ps, ls := t.pairs[name], t.labels[name]
		idx := make([]int, 0, len(ps))
		for i := range ps {
			if i < len(ls) && ls[i] != "" {
				idx = append(idx, i)
			}
		}
		if len(idx) == 0 {
			continue
		}
		slices.SortStableFunc(idx, func(a, b int) int {
			return cmp.Compare(math.Abs(ps[b][0]-ps[b][1]), math.Abs(ps[a][0]-ps[a][1]))
		})
		var worst []string
		for _, i := range idx[:min(worstShown, len(idx))] {
			worst = append(worst, fmt.Sprintf("%s %.1f vs %.1f", ls[i], ps[i][0], ps[i][1]))
		}
		lines = append(lines, fmt.Sprintf("- worst %s: %s", name, strings.Join(worst, "; ")))
	}
	if len(lines) > 0 {
		fmt.Fprintf(w, "\n%s\n", strings.Join(lines, "\n"))
	}
}

// stats returns the mean absolute error, root mean square error and
// Pearson correlation of estimate against reference.
func stats(ps [][2]float64) (mae, rmse, r float64) {
	n := float64(len(ps))
	if n == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	var mx, my float64
	for _, p := range ps {
		d := p[0] - p[1]
		mae += math.Abs(d)
		rmse += d * d
		mx += p[0]
		my += p[1]
	}
	mae /= n
	rmse = math.Sqrt(rmse / n)
	mx /= n
	my /= n
	var sxy, sxx, syy float64
	for _, p := range ps {
		sxy += (p[0] - mx) * (p[1] - my)
		sxx += (p[0] - mx) * (p[0] - mx)
		syy += (p[1] - my) * (p[1] - my)
	}
	r = sxy / math.Sqrt(sxx*syy)
	return mae, rmse, r
}

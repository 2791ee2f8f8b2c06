package main

import (
	"fmt"
	"io"
	"math"
)

// answeredErrors are the heart-rate errors of the outcomes one rule
// answers: how many it answers of how many, and of those the mean absolute
// and root mean square error and how many lie within 5 bpm of the
// reference and more than 10 bpm off it.
type answeredErrors struct {
	n, of, in5, off10 int
	mae, rmse         float64 // NaN when nothing is answered
}

// scoreAnswered scores the outcomes answered accepts, each by the rate its
// track followed against its reference.
func scoreAnswered(outs []outcome, answered func(outcome) bool) answeredErrors {
	e := answeredErrors{of: len(outs), mae: math.NaN(), rmse: math.NaN()}
	var sum, sq float64
	for _, o := range outs {
		if !answered(o) {
			continue
		}
		e.n++
		d := math.Abs(o.tracked - o.ref)
		sum += d
		sq += d * d
		if d <= 5 {
			e.in5++
		}
		if d > 10 {
			e.off10++
		}
	}
	if e.n > 0 {
		e.mae, e.rmse = sum/float64(e.n), math.Sqrt(sq/float64(e.n))
	}
	return e
}

// row prints e as the cells of a markdown row after label; errors of
// nothing answered are "-".
func (e answeredErrors) row(w io.Writer, label string) {
	fmt.Fprintf(w, "| %s | %d/%d (%s) | %s | %s | %s | %s |\n", label, e.n, e.of, pct(e.n, e.of), cell(e.mae, 2), cell(e.rmse, 2), pct(e.in5, e.n), pct(e.off10, e.n))
}

// summary gathers what the service answered on every data set of a run,
// for one closing table: whether every answer is right is then read in one
// place rather than under each of a long run's tables.
type summary struct {
	titles []string
	errs   []answeredErrors
	// noise are lines on captures without a readable pulse, where every
	// answer is a false one.
	noise []string
}

// add records a data set's heart-rate decisions; a data set without any
// (no heart rate, or no reference) adds nothing. A nil summary ignores it.
func (s *summary) add(title string, outs []outcome) {
	if s == nil || len(outs) == 0 {
		return
	}
	s.titles = append(s.titles, title)
	s.errs = append(s.errs, scoreAnswered(outs, func(o outcome) bool { return o.answered }))
}

// addNoise records captures without a readable pulse: how many of them
// were answered, each answer a false one. A nil summary ignores it.
func (s *summary) addNoise(title string, outs []outcome) {
	if s == nil || len(outs) == 0 {
		return
	}
	e := scoreAnswered(outs, func(o outcome) bool { return o.answered })
	s.noise = append(s.noise, fmt.Sprintf("%s: %d of %d answered, each a false answer.", title, e.n, e.of))
}

// print writes the closing table, nothing when no data set was added.
func (s *summary) print(w io.Writer) {
	if s == nil || len(s.titles) == 0 {
		return
	}
	fmt.Fprintf(w, "\n## Summary: the heart rate on every data set\n\n")
	fmt.Fprintln(w, "What the service answered, as in the first row of each data set's curve: the answered share, and of the")
	fmt.Fprintln(w, "answers the MAE and RMSE (bpm) and the shares within 5 bpm and more than 10 bpm off the reference.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| data set | answered | MAE | RMSE | within 5 bpm | more than 10 off |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	worst, at := 0.0, ""
	for i, e := range s.errs {
		e.row(w, s.titles[i])
		if e.n > 0 && float64(e.off10)/float64(e.n) > worst {
			worst, at = float64(e.off10)/float64(e.n), s.titles[i]
		}
	}
	fmt.Fprintln(w)
	if at == "" {
		fmt.Fprintln(w, "No answer on any data set is more than 10 bpm off.")
	} else {
		fmt.Fprintf(w, "The largest share of answers more than 10 bpm off: %.0f%%, %s.\n", 100*worst, at)
	}
	for _, l := range s.noise {
		fmt.Fprintln(w, l)
	}
}

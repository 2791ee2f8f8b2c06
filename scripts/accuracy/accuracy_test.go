package main

import (
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/pulsewire/pulsewire/dsp"
)

func TestStats(t *testing.T) {
	mae, rmse, r := stats([][2]float64{{1, 2}, {3, 2}, {5, 6}, {7, 6}})
	if mae != 1 || rmse != 1 || math.Abs(r-0.894427191) > 1e-6 {
		t.Errorf("mae %g rmse %g r %g, want 1, 1, 0.894", mae, rmse, r)
	}
	if mae, _, _ := stats(nil); !math.IsNaN(mae) {
		t.Errorf("empty stats gave %g", mae)
	}
}

// TestRPeaks: a spike train at 75 bpm with a slow baseline and an inverted
// polarity is read back beat for beat.
func TestRPeaks(t *testing.T) {
	const rate = 250.0
	ecg := make([]float64, int(20*rate))
	var want []float64
	for b := 0.4; b < 19.8; b += 0.8 {
		want = append(want, b)
		for i := range ecg {
			d := (float64(i)/rate - b) / 0.012
			ecg[i] -= math.Exp(-d * d / 2)
		}
	}
	for i := range ecg {
		ecg[i] += 0.3 * math.Sin(2*math.Pi*0.2*float64(i)/rate)
	}
	got := rPeaks(ecg, rate)
	if len(got) != len(want) {
		t.Fatalf("%d peaks, want %d", len(got), len(want))
	}
	for i := range got {
		if math.Abs(got[i]-want[i]) > 0.01 {
			t.Errorf("peak %d at %.3f s, want %.3f", i, got[i], want[i])
		}
	}
	hr, rmssd := rrReference(got, qrsClean(ecg, rate, got), 0, 20)
	if math.Abs(hr-75) > 0.5 || rmssd > 5 {
		t.Errorf("hr %.2f rmssd %.2f, want 75 and ~0", hr, rmssd)
	}
}

// TestQRSClean: a beat whose detection the noise moved 40 ms off its QRS
// complex is unlike the others and marked, the others are not.
func TestQRSClean(t *testing.T) {
	const rate = 250.0
	ecg := make([]float64, int(20*rate))
	var peaks []float64
	for b := 0.4; b < 19.8; b += 0.8 {
		for i := range ecg {
			d := (float64(i)/rate - b) / 0.012
			ecg[i] += math.Exp(-d * d / 2)
		}
		peaks = append(peaks, b)
	}
	const moved = 12
	peaks[moved] += 0.04
	clean := qrsClean(ecg, rate, peaks)
	for i := range peaks {
		if want := i != moved; clean[i] != want {
			t.Errorf("peak %d at %.2f s: clean %v, want %v", i, peaks[i], clean[i], want)
		}
	}
	if _, rmssd := rrReference(peaks, clean, 0, 20); rmssd > 1 {
		t.Errorf("rmssd %.1f ms with the moved beat's intervals dropped, want ~0", rmssd)
	}
	if _, rmssd := rrReference(peaks, nil, 0, 20); rmssd < 10 {
		t.Errorf("rmssd %.1f ms with the moved beat kept, want it to show", rmssd)
	}
}

// TestTableNothingAnswered: a table whose every measure was refused says
// "-" for the errors it cannot have, not NaN, and counts the refusals.
func TestTableNothingAnswered(t *testing.T) {
	tb := newTable("refused", dsp.HR)
	for range 2 {
		tb.units++
		tb.add(dsp.Result{Variables: map[string]dsp.Variable{dsp.HR: {Error: dsp.ConformityMissingSignal}}}, dsp.HR, 70)
	}
	var b strings.Builder
	tb.print(&b)
	if want := "| hr | 0% | 0/2 | - | - | - | CONFORMITY_MISSING_SIGNAL 2 |"; !strings.Contains(b.String(), want) {
		t.Errorf("the table lacks %q:\n%s", want, b.String())
	}
	if strings.Contains(b.String(), "NaN") {
		t.Errorf("the table prints NaN:\n%s", b.String())
	}
}

// TestProgress: workers finishing at once each get a line of their own,
// numbered 1 to n whatever their order.
func TestProgress(t *testing.T) {
	var b strings.Builder
	done := progress(&b, "analysed", 20)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() { done(fmt.Sprintf("clip%02d", i)) })
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 20 {
		t.Fatalf("%d lines, want 20:\n%s", len(lines), b.String())
	}
	for k, line := range lines {
		if prefix := fmt.Sprintf("accuracy: analysed [%d/20] clip", k+1); !strings.HasPrefix(line, prefix) {
			t.Errorf("line %d: %q, want it to start %q", k+1, line, prefix)
		}
	}
}

package dsp

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"
)

func TestValidate(t *testing.T) {
	ok3 := []float64{0, 33, 66}
	for _, tc := range []struct {
		name string
		tr   Trace
		ok   bool
	}{
		{"valid", Trace{ok3, ok3, ok3, ok3}, true},
		{"empty", Trace{}, true},
		{"short channel", Trace{ok3, ok3[:2], ok3, ok3}, false},
		{"NaN value", Trace{ok3, []float64{1, math.NaN(), 1}, ok3, ok3}, false},
		// NaN passes the colour range's comparisons: each channel is
		// checked for it, not only the first.
		{"NaN blue", Trace{ok3, ok3, ok3, []float64{1, math.NaN(), 1}}, false},
		{"NaN green", Trace{ok3, ok3, []float64{math.NaN(), 1, 1}, ok3}, false},
		{"infinite time", Trace{[]float64{0, math.Inf(1), 99}, ok3, ok3, ok3}, false},
		{"repeated time", Trace{[]float64{0, 33, 33}, ok3, ok3, ok3}, false},
		{"time going back", Trace{[]float64{0, 33, 20}, ok3, ok3, ok3}, false},
		{"colours at 0 and 255", Trace{ok3, []float64{0, 255, 0}, []float64{255, 0, 255}, ok3}, true},
		{"a colour under 0", Trace{ok3, ok3, []float64{1, -0.5, 1}, ok3}, false},
		{"a colour over 255", Trace{ok3, ok3, ok3, []float64{1, 255.5, 1}}, false},
		{"a sample a millisecond", Trace{[]float64{0, 1, 2}, ok3, ok3, ok3}, true},
		{"samples faster than a millisecond", Trace{[]float64{0, 1, 1.998}, ok3, ok3, ok3}, false},
		{"timestamps in seconds", Trace{[]float64{0, 0.033, 0.066}, ok3, ok3, ok3}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.tr.Validate()
			if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrInvalidSignal)) {
				t.Errorf("Validate() = %v, want ok=%v", err, tc.ok)
			}
		})
	}
	n := MaxSamples
	at := PPG{TimestampsMs: make([]float64, n), Values: make([]float64, n)}
	for i := range at.TimestampsMs {
		at.TimestampsMs[i] = float64(i)
	}
	if err := at.Validate(); err != nil {
		t.Errorf("MaxSamples samples refused: %v", err)
	}
	past := PPG{TimestampsMs: append(at.TimestampsMs, float64(n)), Values: append(at.Values, 0)}
	if err := past.Validate(); err == nil {
		t.Error("MaxSamples+1 samples accepted")
	}
	span := PPG{TimestampsMs: []float64{1000, 2000, 1000 + maxSpanMs}, Values: []float64{1, 2, 3}}
	if err := span.Validate(); err != nil {
		t.Errorf("a span of MaxSpan refused: %v", err)
	}
	span.TimestampsMs[2]++
	if err := span.Validate(); !errors.Is(err, ErrInvalidSignal) {
		t.Errorf("a span 1 ms over MaxSpan: %v", err)
	}
}

// TestCleanKeepsMaxSpan: the analysis keeps the samples within MaxSpan of
// the first kept one and drops those after.
func TestCleanKeepsMaxSpan(t *testing.T) {
	ts := []float64{math.NaN(), 500, 1000, 500 + maxSpanMs, 501 + maxSpanMs, 2 * maxSpanMs}
	v := []float64{1, 1, 1, 1, 1, 1}
	got, _ := clean(ts, v)
	if len(got) != 3 || got[2] != maxSpanMs/1000 {
		t.Fatalf("kept %v, want the three samples within %v of the first", got, MaxSpan)
	}
}

// FuzzAnalyzeTrace feeds arbitrary samples to both signal routes: they may
// answer any code but must not panic, and every variable must be a value or
// a code.
func FuzzAnalyzeTrace(f *testing.F) {
	f.Add([]byte{})
	f.Add(make([]byte, 32*40))
	seed := make([]byte, 0, 32*400)
	for i := range 400 {
		for _, v := range []float64{float64(i) * 33.3, 150 + math.Sin(float64(i)/4), 110 + math.Sin(float64(i)/4), 90} {
			seed = binary.LittleEndian.AppendUint64(seed, math.Float64bits(v))
		}
	}
	f.Add(seed)
	f.Fuzz(func(t *testing.T, b []byte) {
		var tr Trace
		for len(b) >= 32 {
			tr.TimestampsMs = append(tr.TimestampsMs, math.Float64frombits(binary.LittleEndian.Uint64(b)))
			tr.R = append(tr.R, math.Float64frombits(binary.LittleEndian.Uint64(b[8:])))
			tr.G = append(tr.G, math.Float64frombits(binary.LittleEndian.Uint64(b[16:])))
			tr.B = append(tr.B, math.Float64frombits(binary.LittleEndian.Uint64(b[24:])))
			b = b[32:]
		}
		for _, r := range []Result{AnalyzeTrace(tr, Inputs{}), AnalyzePPG(PPG{tr.TimestampsMs, tr.G}, Inputs{})} {
			for name, v := range r.Variables {
				if (v.Error == "") == (v.Value == nil) {
					t.Fatalf("%s: %+v", name, v)
				}
				if m, isMean := v.Value.(Mean); isMean && !finite(m.Mean) {
					t.Fatalf("%s: %v", name, m.Mean)
				}
			}
		}
	})
}

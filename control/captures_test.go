package control

import (
	"slices"
	"strings"
	"testing"
)

func TestParseTimestamps(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []float64
		err        string
	}{
		{"empty", "", []float64{}, ""},
		{"one", "0", []float64{0}, ""},
		{"spaces and fractions", " 0, 33.3 ,66.7", []float64{0, 33.3, 66.7}, ""},
		{"epoch milliseconds", "1767225600000,1767225600033", []float64{1767225600000, 1767225600033}, ""},
		{"ten minutes", "0,600000", []float64{0, 600000}, ""},
		{"more than ten minutes", "0,600001", nil, "timestamps.1: the captures span more than 10m0s"},
		{"repeated", "0,10,10", nil, "timestamps.2 (10 ms) does not follow 10 ms"},
		{"backwards", "0,10,5", nil, "timestamps.2 (5 ms) does not follow 10 ms"},
		{"not a number", "0,ten", nil, "timestamps.1 must be a finite number"},
		{"NaN", "0,NaN", nil, "timestamps.1 must be a finite number"},
		{"infinite", "0,Inf", nil, "timestamps.1 must be a finite number"},
		{"an empty item", "0,,20", nil, "timestamps.1 must be a finite number"},
		{"a capture a millisecond", "0,1,2", []float64{0, 1, 2}, ""},
		{"seconds", "0,0.033,0.067", nil, "timestamps: 3 captures span 0.067 ms, more than 1000 a second: capture times are milliseconds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseTimestamps(tc.text)
			switch {
			case tc.err != "":
				if ErrorCode(err) != Invalid || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
			case err != nil || !slices.Equal(got, tc.want):
				t.Fatalf("got %v %v, want %v", got, err, tc.want)
			}
		})
	}
}

// FuzzParseTimestamps: accepted times are strictly increasing and finite;
// anything else is a validation error.
func FuzzParseTimestamps(f *testing.F) {
	f.Add("0,33.3,66.7")
	f.Add("1e308,-1e308")
	f.Add(" 1 , 2 ,")
	f.Fuzz(func(t *testing.T, text string) {
		times, err := ParseTimestamps(text)
		if err != nil {
			if ErrorCode(err) != Invalid {
				t.Fatalf("error %v is not a validation error", err)
			}
			return
		}
		for i := 1; i < len(times); i++ {
			if !(times[i] > times[i-1]) {
				t.Fatalf("%v accepted", times)
			}
		}
	})
}

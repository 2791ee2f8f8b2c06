package beats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// rrSeries returns n intervals around 0.8 s with a sinus arrhythmia of
// ±30 ms over five beats and a random part of sdS seconds.
func rrSeries(seed uint64, n int, sdS float64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 5))
	s := make([]float64, n)
	for i := range s {
		s[i] = 0.8 + 0.03*math.Sin(2*math.Pi*float64(i)/5) + sdS*rng.NormFloat64()
	}
	return s
}

func flagged(bad []bool) []int {
	var out []int
	for i, b := range bad {
		if b {
			out = append(out, i)
		}
	}
	return out
}

// TestClassifyArtefacts: each kind of artefact is found where it is, and
// nothing else is flagged.
func TestClassifyArtefacts(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func([]float64) []float64
		want   []int
	}{
		{"clean", func(s []float64) []float64 { return s }, nil},
		{"premature beat", func(s []float64) []float64 {
			s[20] -= 0.25
			s[21] += 0.25
			return s
		}, []int{20, 21}},
		{"beat timed 80 ms late", func(s []float64) []float64 {
			s[30] += 0.08
			s[31] -= 0.08
			return s
		}, []int{30, 31}},
		{"missed beat", func(s []float64) []float64 {
			s[40] += s[41]
			return slices.Delete(s, 41, 42)
		}, []int{40}},
		{"extra beat", func(s []float64) []float64 {
			s[24] -= 0.3
			return slices.Insert(s, 25, 0.3)
		}, []int{24, 25}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.change(rrSeries(3, 60, 0.005))
			if got := flagged(classifyArtefacts(s)); !slices.Equal(got, tc.want) {
				t.Errorf("flagged %v, want %v", got, tc.want)
			}
		})
	}
}

// TestArtefactsKeepRhythmSteps: a rhythm that mostly holds steady and now
// and then steps to a new level (a large successive difference not
// followed by its compensation) is sinus rhythm, and its RMSSD is mostly
// made of those steps. A rule that rejects every large difference reads
// such a heart as nearly constant; the classification keeps nearly all of
// them.
func TestArtefactsKeepRhythmSteps(t *testing.T) {
	for seed := uint64(1); seed <= 8; seed++ {
		rng := rand.New(rand.NewPCG(seed, 8))
		level := 0.7
		s := make([]float64, 85)
		for i := range s {
			if rng.Float64() < 0.08 {
				level += 0.05 * rng.NormFloat64()
			}
			s[i] = level + 0.003*rng.NormFloat64()
		}
		bad := classifyArtefacts(s)
		var all, kept float64
		var nAll, nKept int
		for i := 1; i < len(s); i++ {
			d := (s[i] - s[i-1]) * (s[i] - s[i-1])
			all += d
			nAll++
			if !bad[i] && !bad[i-1] {
				kept += d
				nKept++
			}
		}
		want, got := math.Sqrt(all/float64(nAll)), math.Sqrt(kept/float64(nKept))
		if got < 0.85*want {
			t.Errorf("seed %d: RMSSD %.1f ms of %.1f ms kept (flagged %v)", seed, 1000*got, 1000*want, flagged(bad))
		}
	}
}

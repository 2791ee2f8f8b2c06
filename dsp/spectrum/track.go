package spectrum

import "math"

// Candidate is one frequency a window of a spectrogram could hold.
type Candidate struct {
	Hz    float64
	Score float64 // log-likelihood of the candidate on its own; higher is better
}

// Track chooses one candidate per window so that the sum of scores minus the
// cost of the jumps between consecutive windows is largest (Viterbi dynamic
// programming). A jump of d Hz between windows hopS seconds apart costs
// (d / (sigmaHzPerS · hopS))² / 2, the log-likelihood of a Gaussian random
// walk: a heart rate changes smoothly, so one strong spurious peak (a motion
// burst, a harmonic) does not pull the track away. Empty windows keep the
// track going with no observation. It returns the chosen index per window
// (-1 for empty ones) in dst.
func Track(dst []int, windows [][]Candidate, hopS, sigmaHzPerS float64) []int {
	dst = dst[:0]
	n := len(windows)
	if n == 0 {
		return dst
	}
	sigma := sigmaHzPerS * hopS
	// best[w][i]: best total ending in candidate i of window w; from[w][i]
	// its predecessor in the last non-empty window before w.
	best := make([][]float64, n)
	from := make([][]int, n)
	prev := -1 // last non-empty window
	gap := 0   // empty windows since it
	for w, cs := range windows {
		best[w] = make([]float64, len(cs))
		from[w] = make([]int, len(cs))
		if len(cs) == 0 {
			gap++
			continue
		}
		for i, c := range cs {
			best[w][i] = c.Score
			from[w][i] = -1
			if prev < 0 {
				continue
			}
			s := sigma * math.Sqrt(float64(gap+1))
			top := math.Inf(-1)
			for j, p := range windows[prev] {
				d := (c.Hz - p.Hz) / s
				if v := best[prev][j] - d*d/2; v > top {
					top, from[w][i] = v, j
				}
			}
			best[w][i] += top
		}
		prev, gap = w, 0
	}
	dst = append(dst, make([]int, n)...)
	for w := range dst {
		dst[w] = -1
	}
	// Back-track from the best end.
	k := -1
	top := math.Inf(-1)
	for i, v := range best[prev] {
		if v > top {
			top, k = v, i
		}
	}
	for w := prev; w >= 0 && k >= 0; {
		dst[w] = k
		next := from[w][k]
		w--
		for w >= 0 && len(windows[w]) == 0 {
			w--
		}
		k = next
	}
	return dst
}

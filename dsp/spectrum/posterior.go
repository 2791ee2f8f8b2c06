package spectrum

import "math"

// Grid is a set of evenly spaced frequencies: LoHz, LoHz+StepHz, ...,
// N of them.
type Grid struct {
	LoHz, StepHz float64
	N            int
}

// NewGrid returns the grid from loHz to hiHz (both included) in steps of
// about stepHz.
func NewGrid(loHz, hiHz, stepHz float64) Grid {
	n := int(math.Round((hiHz-loHz)/stepHz)) + 1
	return Grid{LoHz: loHz, StepHz: (hiHz - loHz) / float64(max(n-1, 1)), N: n}
}

// Hz is the frequency of state k.
func (g Grid) Hz(k int) float64 { return g.LoHz + float64(k)*g.StepHz }

// Chain is a hidden Markov model of a frequency that moves along a Grid
// from one window to the next: a Gaussian random walk of SigmaHz per step,
// and with probability Escape a jump anywhere on the grid, so that a track
// that locked onto an artefact can still leave it when the evidence says so.
type Chain struct {
	Grid    Grid
	SigmaHz float64
	Escape  float64
}

// Posterior returns, for windows of log-likelihoods over the grid's states
// (loglik[w][k]: the log-likelihood of window w's observation if the
// frequency were state k, up to a constant per window), the posterior
// probability of each state in each window given all windows
// (forward-backward; Rabiner, Proc. IEEE 77(2), 1989) and the most likely
// sequence of states (Viterbi). The start is uniform over the grid.
func (c Chain) Posterior(loglik [][]float64) (post [][]float64, path []int) {
	n, m := len(loglik), c.Grid.N
	if n == 0 || m == 0 {
		return nil, nil
	}
	kernel := c.kernel()
	half := len(kernel) / 2
	// like[w][k] = exp(loglik - max): each window scaled on its own, which
	// the normalisation of alpha and beta absorbs.
	like := make([][]float64, n)
	for w, ll := range loglik {
		top := math.Inf(-1)
		for _, v := range ll {
			top = max(top, v)
		}
		like[w] = make([]float64, m)
		for k, v := range ll {
			like[w][k] = math.Exp(v - top)
		}
	}
	// spread convolves x with the kernel into dst, reflecting at the
	// grid's ends: the moves are symmetric and each state's sum to one,
	// so the chain favours no rate for where it lies on the grid, and the
	// backward pass spreads the same way.
	spread := func(dst, x []float64) {
		for k := range dst {
			var s float64
			if k >= half && k+half < m {
				for i, v := range x[k-half : k+half+1] {
					s += v * kernel[i]
				}
			} else {
				for d := -half; d <= half; d++ {
					s += x[reflect(k+d, m)] * kernel[d+half]
				}
			}
			dst[k] = s
		}
	}
	// step moves a distribution one window on: each state's moves plus
	// the escape mass spread evenly.
	step := func(dst, src []float64) {
		var total float64
		for _, v := range src {
			total += v
		}
		spread(dst, src)
		for k := range dst {
			dst[k] = (1-c.Escape)*dst[k] + c.Escape*total/float64(m)
		}
	}
	alpha := make([][]float64, n)
	for w := range alpha {
		alpha[w] = make([]float64, m)
		if w == 0 {
			for k := range alpha[w] {
				alpha[w][k] = like[w][k] / float64(m)
			}
		} else {
			step(alpha[w], alpha[w-1])
			for k := range alpha[w] {
				alpha[w][k] *= like[w][k]
			}
		}
		normalise(alpha[w])
	}
	beta := make([]float64, m)
	next := make([]float64, m)
	for k := range beta {
		beta[k] = 1
	}
	post = make([][]float64, n)
	for w := n - 1; w >= 0; w-- {
		if w < n-1 {
			for k := range next {
				next[k] = like[w+1][k] * beta[k]
			}
			step(beta, next)
			normalise(beta)
		}
		post[w] = make([]float64, m)
		for k := range post[w] {
			post[w][k] = alpha[w][k] * beta[k]
		}
		normalise(post[w])
	}
	return post, c.viterbi(loglik, kernel)
}

// viterbi returns the most likely sequence of states.
func (c Chain) viterbi(loglik [][]float64, kernel []float64) []int {
	n, m := len(loglik), c.Grid.N
	half := len(kernel) / 2
	logK := make([]float64, len(kernel))
	for i, v := range kernel {
		logK[i] = math.Log((1-c.Escape)*v + c.Escape/float64(m))
	}
	logEscape := math.Log(c.Escape / float64(m))
	score := make([]float64, m)
	prev := make([]float64, m)
	from := make([][]int32, n)
	copy(score, loglik[0])
	for w := 1; w < n; w++ {
		copy(prev, score)
		best, arg := math.Inf(-1), 0
		for j, v := range prev {
			if v > best {
				best, arg = v, j
			}
		}
		from[w] = make([]int32, m)
		for k := range score {
			top, at := best+logEscape, arg
			// Near the ends two moves can reach the same state; the
			// stronger of them stands for both.
			if k >= half && k+half < m {
				for i, v := range prev[k-half : k+half+1] {
					if v += logK[i]; v > top {
						top, at = v, k-half+i
					}
				}
			} else {
				for d := -half; d <= half; d++ {
					j := reflect(k+d, m)
					if v := prev[j] + logK[d+half]; v > top {
						top, at = v, j
					}
				}
			}
			score[k] = top + loglik[w][k]
			from[w][k] = int32(at)
		}
	}
	path := make([]int, n)
	best := math.Inf(-1)
	for k, v := range score {
		if v > best {
			best, path[n-1] = v, k
		}
	}
	for w := n - 1; w > 0; w-- {
		path[w-1] = int(from[w][path[w]])
	}
	return path
}

// kernel is the random walk's step distribution over state offsets
// -half..half, half = 4 sigmas.
func (c Chain) kernel() []float64 {
	sigma := max(c.SigmaHz/c.Grid.StepHz, 1e-3)
	half := max(1, int(math.Ceil(4*sigma)))
	k := make([]float64, 2*half+1)
	for i := range k {
		d := float64(i-half) / sigma
		k[i] = math.Exp(-d * d / 2)
	}
	normalise(k)
	return k
}

// normalise scales x to sum 1 (leaves an all-zero x alone).
func normalise(x []float64) {
	var s float64
	for _, v := range x {
		s += v
	}
	if s > 0 {
		for i := range x {
			x[i] /= s
		}
	}
}

// reflect maps a state index beyond [0, m) back into it, mirrored at the
// ends (-1 is 0, m is m-1).
func reflect(k, m int) int {
	for k < 0 || k >= m {
		if k < 0 {
			k = -k - 1
		} else {
			k = 2*m - 1 - k
		}
	}
	return k
}

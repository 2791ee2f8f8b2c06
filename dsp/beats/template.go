package beats

import (
	"math"

	"github.com/pulsewire/pulsewire/dsp/internal/stats"
	"gonum.org/v1/gonum/stat"
)

// Beat timing by template matching.
//
// The steepest point of one upstroke is read from the two or three samples
// around it, so at 30 frames a second camera noise moves it by 10-20 ms,
// and RMSSD, the difference of differences of beat times, adds six times
// that variance to its own. A matched filter uses every sample of the beat
// instead: the beats are averaged into a template on a fine grid, and each
// beat's time is the shift that best correlates the template with it
// (Kay, "Fundamentals of Statistical Signal Processing: Estimation Theory",
// 1993, ch. 3, time-delay estimation; Rodríguez-Molinero et al., Physiol.
// Meas. 34(12), 2013, compare template fiducials favourably for PPG beat
// intervals). The beat times keep their meaning: the template's own
// reference is its steepest rise.

const (
	// upsample is how many fine grid points the template has per sample,
	// fewer for a wave sampled faster than fineGridHz / upsample: a grid
	// of about 1 kHz (1 ms, read between points by a parabola) times a
	// beat finer than any beat-to-beat measure needs, and a clinical
	// sensor's 250 Hz would otherwise be matched at 2 kHz for nothing.
	upsample   = 8
	fineGridHz = 1000.0
	// templateBefore and templateAfter bound the template around the
	// upstroke, in beat periods: the foot, the upstroke and the systolic
	// peak, where the timing information is. The diastolic part, whose
	// shape changes with the heart rate and the vessels, is left out.
	templateBefore, templateAfter = 0.3, 0.3
	// searchFraction bounds a beat's shift, in periods, from where the
	// steepest-slope detection put it.
	searchFraction = 0.12
	// alignPasses: the template is rebuilt from the aligned beats and the
	// beats aligned again.
	alignPasses = 2
	// MinFit is the smallest correlation between a beat and the template
	// for its time to be trusted (Beat.Fit): below it the beat is distorted
	// by motion or noise and its intervals are not NN.
	MinFit = 0.5
	// lanczosA is the half-width in samples of the interpolation kernel.
	lanczosA = 3
)

// Align refines the times of beats found in wave (uniform at rateHz) by
// template matching: each Beat's T moves to the shift that best correlates
// the mean beat with it (read between fine-grid points by a parabola), and
// Fit is set to that correlation. Beats too close to the ends of the wave for a whole
// template keep their time, get Fit 0 and are marked Edge. It needs three beats.
func Align(bs []Beat, wave []float64, rateHz float64) {
	if len(bs) < 3 {
		return
	}
	periods := make([]float64, len(bs)-1)
	for i := range periods {
		periods[i] = bs[i+1].T - bs[i].T
	}
	period := stats.Median(periods)
	if !(period > 0) {
		return
	}
	k := max(2, min(upsample, int(math.Round(fineGridHz/rateHz))))
	step := 1 / (rateHz * float64(k))
	lo := int(math.Round(-templateBefore * period / step))
	hi := int(math.Round(templateAfter * period / step))
	span := hi - lo + 1
	search := int(math.Round(searchFraction * period / step))
	fine := upsampled(wave, k)
	at := func(tS float64) int { return int(math.Round(tS / step)) }
	inside := func(c int) bool { return c+lo-search >= 0 && c+hi+search < len(fine) }

	tmpl := make([]float64, span)
	weight := make([]float64, span)
	for k := range weight {
		// A Hann taper: the template fades out towards its ends, where
		// the neighbouring beats' feet and dicrotic waves begin.
		weight[k] = 0.5 * (1 - math.Cos(2*math.Pi*(float64(k)+0.5)/float64(span)))
	}
	fits := make([]float64, len(bs))
	edge := make([]bool, len(bs))
	scores := make([]float64, 2*search+1)
	for range alignPasses {
		clear(tmpl)
		n := 0
		for _, b := range bs {
			c := at(b.T)
			if !inside(c) {
				continue
			}
			seg := fine[c+lo : c+hi+1]
			m := stat.Mean(seg, nil)
			for k, v := range seg {
				tmpl[k] += v - m
			}
			n++
		}
		if n < 3 {
			return
		}
		for k := range tmpl {
			tmpl[k] *= weight[k] / float64(n)
		}
		// The template's reference point: its steepest rise, so the times
		// keep the meaning Detect gave them.
		ref := steepest(tmpl, -lo)
		for i := range bs {
			c := at(bs[i].T)
			edge[i] = !inside(c)
			if edge[i] {
				fits[i] = 0
				continue
			}
			best, bestScore := 0, math.Inf(-1)
			for s := -search; s <= search; s++ {
				seg := fine[c+s+lo : c+s+hi+1]
				var sc float64
				for k, v := range seg {
					sc += v * tmpl[k]
				}
				scores[s+search] = sc
				if sc > bestScore {
					best, bestScore = s, sc
				}
			}
			off := 0.0
			if j := best + search; j > 0 && j < len(scores)-1 {
				off = vertex(scores[j-1], scores[j], scores[j+1])
			}
			fits[i] = correlation(fine[c+best+lo:c+best+hi+1], tmpl, weight)
			bs[i].T = (float64(c+best) + off + ref) * step
		}
	}
	for i := range bs {
		bs[i].Fit = fits[i]
		bs[i].Edge = edge[i]
	}
}

// steepest returns the offset, in fine grid points relative to index
// centre, of the steepest rise of t near its centre (within the middle
// half), to a fraction of a point.
func steepest(t []float64, centre int) float64 {
	q := len(t) / 4
	best, slope := -1, math.Inf(-1)
	for j := max(1, q); j < min(len(t)-1, len(t)-q); j++ {
		if d := t[j+1] - t[j-1]; d > slope {
			best, slope = j, d
		}
	}
	if best < 2 || best+2 >= len(t) {
		return 0
	}
	d := func(j int) float64 { return t[j+1] - t[j-1] }
	return float64(best-centre) + vertex(d(best-1), d(best), d(best+1))
}

// correlation is Pearson's correlation of a and b (equal lengths), each
// sample weighted by w.
func correlation(a, b, w []float64) float64 {
	var sw, ma, mb float64
	for i := range a {
		sw += w[i]
		ma += w[i] * a[i]
		mb += w[i] * b[i]
	}
	if sw == 0 {
		return 0
	}
	ma /= sw
	mb /= sw
	var sab, saa, sbb float64
	for i := range a {
		da, db := a[i]-ma, b[i]-mb
		sab += w[i] * da * db
		saa += w[i] * da * da
		sbb += w[i] * db * db
	}
	if saa <= 0 || sbb <= 0 {
		return 0
	}
	return sab / math.Sqrt(saa*sbb)
}

// upsampled returns x interpolated onto a grid k times finer (point j at
// sample j/k) with a Lanczos kernel of lanczosA lobes: a band-limited wave
// well below the Nyquist frequency comes back without the flattening linear
// interpolation gives its peaks.
func upsampled(x []float64, k int) []float64 {
	n := len(x)
	if n == 0 {
		return nil
	}
	out := make([]float64, (n-1)*k+1)
	// The kernel weights depend only on the fraction j/k.
	kern := make([][2 * lanczosA]float64, k)
	for f := range k {
		u := float64(f) / float64(k)
		var sum float64
		for m := range 2 * lanczosA {
			d := u - float64(m-lanczosA+1)
			kern[f][m] = lanczos(d)
			sum += kern[f][m]
		}
		for m := range kern[f] {
			kern[f][m] /= sum
		}
	}
	for j := range out {
		i, f := j/k, j%k
		if f == 0 {
			out[j] = x[i]
			continue
		}
		var v float64
		for m := range 2 * lanczosA {
			s := min(max(i+m-lanczosA+1, 0), n-1)
			v += kern[f][m] * x[s]
		}
		out[j] = v
	}
	return out
}

// lanczos is the Lanczos kernel sinc(d) sinc(d/a) for |d| < a.
func lanczos(d float64) float64 {
	if d == 0 {
		return 1
	}
	if math.Abs(d) >= lanczosA {
		return 0
	}
	pd := math.Pi * d
	return lanczosA * math.Sin(pd) * math.Sin(pd/lanczosA) / (pd * pd)
}

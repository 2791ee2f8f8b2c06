package spectrum

// Whiten writes into dst the spectrum s divided by its local noise floor,
// the median power within ±halfHz of each frequency, for the bins within
// [loHz, hiHz] (zero elsewhere). A peak's whitened height is how far it
// stands above its surroundings: camera noise is far from white (video
// compression leaves steps and slow drifts whose power piles up at low
// frequencies), and a raw spectrum would let that slope outbid a pulse.
// The median ignores the peak itself when the peak is narrower than the
// window. The floor is evaluated every halfHz/8 and interpolated, each
// median over every fourth bin (FFTLen pads at least fourfold, so
// neighbouring bins carry the same information).
func Whiten(dst, s *Spectrum, loHz, hiHz, halfHz float64) {
	if cap(dst.Power) < len(s.Power) {
		dst.Power = make([]float64, len(s.Power))
	}
	dst.Power = dst.Power[:len(s.Power)]
	dst.BinHz, dst.Seconds = s.BinHz, s.Seconds
	clear(dst.Power)
	step := max(1, s.bin(halfHz/8))
	half := max(2, s.bin(halfHz))
	lo, hi := s.bin(loHz), s.bin(hiHz)
	var buf []float64
	// The window stays inside [lo, hi], shifted rather than cut at the
	// edges: the waves whitened here are band-passed to that band, and a
	// window reaching past its edge would take its median from the
	// filter's stop band and lift every bin near the edge above its
	// true surroundings.
	floor := func(k int) float64 {
		buf = buf[:0]
		from := max(lo, min(k-half, hi-2*half))
		for j := max(0, from); j <= min(len(s.Power)-1, from+2*half); j += 4 {
			buf = append(buf, s.Power[j])
		}
		return nth(buf, len(buf)/2)
	}
	prevK, prevF := lo, floor(lo)
	for k := lo; k <= hi; {
		nextK := min(hi, prevK+step)
		nextF := floor(nextK)
		for ; k <= nextK; k++ {
			f := prevF
			if nextK > prevK {
				w := float64(k-prevK) / float64(nextK-prevK)
				f = (1-w)*prevF + w*nextF
			}
			if f > 0 {
				dst.Power[k] = s.Power[k] / f
			}
		}
		if nextK == hi {
			break
		}
		prevK, prevF = nextK, nextF
	}
}

// nth returns the value that would be at index k of a sorted, reordering a
// (Hoare's selection with a median-of-three pivot): a median in linear
// time. The noise floor takes hundreds of medians per spectrum, and a full
// sort for each was a fifth of the live analysis's time.
func nth(a []float64, k int) float64 {
	lo, hi := 0, len(a)-1
	for lo < hi {
		mid := lo + (hi-lo)/2
		if a[mid] < a[lo] {
			a[mid], a[lo] = a[lo], a[mid]
		}
		if a[hi] < a[lo] {
			a[hi], a[lo] = a[lo], a[hi]
		}
		if a[hi] < a[mid] {
			a[hi], a[mid] = a[mid], a[hi]
		}
		p := a[mid]
		i, j := lo, hi
		for i <= j {
			for a[i] < p {
				i++
			}
			for a[j] > p {
				j--
			}
			if i <= j {
				a[i], a[j] = a[j], a[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return a[k]
		}
	}
	return a[k]
}

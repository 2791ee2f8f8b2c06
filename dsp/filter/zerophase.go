package filter

import "fmt"

// apply runs the cascade forward over x in place. Every section starts in the
// steady state of a constant input equal to x[0], so a signal that does not
// start at zero causes no step transient (the lfilter_zi idea of Gustafsson,
// "Determining the initial states in forward-backward filtering", IEEE TSP
// 44(4), 1996).
func (f *Filter) apply(x []float64) {
	if len(x) == 0 {
		return
	}
	in0 := x[0]
	for _, s := range f.sections {
		yss := in0 * s.dcGain()
		z1 := yss - s.B0*in0
		z2 := s.B2*in0 - s.A2*yss
		for i, v := range x {
			y := s.B0*v + z1
			z1 = s.B1*v - s.A1*y + z2
			z2 = s.B2*v - s.A2*y
			x[i] = y
		}
		in0 = yss
	}
}

// Apply filters x causally (one forward pass) into dst and returns it.
// dst may be x.
func (f *Filter) Apply(dst, x []float64) []float64 {
	dst = prepare(dst, len(x))
	copy(dst, x)
	f.apply(dst)
	return dst
}

// FiltFilt filters x forward and then backward into dst and returns it: zero
// phase, the magnitude response squared, so pulse peaks keep their timing.
// Both ends are extended by odd reflection (2 x[0] - x[k]) so the filter
// starts on a signal that continues smoothly; dst may be x.
func (f *Filter) FiltFilt(dst, x []float64) []float64 {
	n := len(x)
	dst = prepare(dst, n)
	if n == 0 {
		return dst
	}
	p := min(f.pad, n-1)
	if cap(f.work) < n+2*p {
		f.work = make([]float64, n+2*p)
	}
	w := f.work[:n+2*p]
	for i := 0; i < p; i++ {
		w[i] = 2*x[0] - x[p-i]
		w[p+n+i] = 2*x[n-1] - x[n-2-i]
	}
	copy(w[p:], x)
	f.apply(w)
	reverse(w)
	f.apply(w)
	reverse(w)
	copy(dst, w[p:p+n])
	return dst
}

func reverse(x []float64) {
	for i, j := 0, len(x)-1; i < j; i, j = i+1, j-1 {
		x[i], x[j] = x[j], x[i]
	}
}

// prepare returns dst ready to hold n values: allocated when nil, checked
// otherwise (a wrong length is a programming error, as in gonum).
func prepare(dst []float64, n int) []float64 {
	if dst == nil {
		return make([]float64, n)
	}
	if len(dst) != n {
		panic(fmt.Sprintf("filter: destination length %d, want %d", len(dst), n))
	}
	return dst
}

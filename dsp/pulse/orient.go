package pulse

// Orient flips x in place, if needed, so that the pulse rises steeply and
// falls slowly, the shape of blood volume in a beat (systolic upstroke in
// about a sixth of the cycle, slower diastolic decay). It decides from the
// skewness of the first difference: a short steep rise and a long gentle
// fall skew it positive. Camera intensity falls when blood volume rises, so
// raw reflectance traces come out flipped. It reports whether it flipped.
func Orient(x []float64) bool {
	if len(x) < 3 {
		return false
	}
	var m float64
	for i := 1; i < len(x); i++ {
		m += x[i] - x[i-1]
	}
	m /= float64(len(x) - 1)
	var m2, m3 float64
	for i := 1; i < len(x); i++ {
		d := x[i] - x[i-1] - m
		m2 += d * d
		m3 += d * d * d
	}
	if m3 >= 0 || m2 == 0 {
		return false
	}
	for i := range x {
		x[i] = -x[i]
	}
	return true
}

package testsignal

import (
	"math"
	"math/rand/v2"
)

// FingerConfig describes a synthetic contact PPG: a finger on a clinical
// sensor or on a phone's lit camera. Beats follow a known RR series;
// breathing modulates the baseline (RIIV), the pulse amplitude (RIAV) and
// the intervals (RIFV, respiratory sinus arrhythmia) at known depths; the
// degradations a phone adds (drift, pressure changes, motion, clipping)
// can be switched on one by one. Zero fields take the defaults noted.
type FingerConfig struct {
	Seed    uint64
	Seconds float64 // default 60
	Rate    float64 // samples per second; default 125

	HR float64 // mean heart rate, bpm; default 75
	// RMSSDms is the RMSSD of the RR series' random part (AR(1),
	// coefficient 0.5), before the sinus arrhythmia is added.
	RMSSDms float64
	// Steps makes the random part heavy-tailed: with probability Steps per
	// beat the rhythm steps to a new level (standard deviation StepMs),
	// as a sick or ageing heart does more often than a young one.
	Steps, StepMs float64

	BR float64 // breaths per minute; 0: no breathing
	// Depths of the respiratory modulations: of the baseline (fraction of
	// the pulse amplitude), of the pulse amplitude (fraction) and of the
	// RR interval (fraction of the mean interval, peak).
	RIIV, RIAV, RIFV float64
	// Shape is the second harmonic of the breath, relative to the first:
	// a breath that is not a sine (a quick inspiration, a long expiration,
	// or the two humps of a ventilator's cycle).
	Shape float64
	// Mayer is the depth of a slow wave near 0.1 Hz (Mayer waves of blood
	// pressure regulation) in the pulse amplitude and the RR interval, as
	// a fraction like RIAV and RIFV.
	Mayer float64

	// Notch is the height of the diastolic wave relative to the systolic
	// one; default 0.35.
	Notch float64
	// Noise is the sensor noise, standard deviation as a fraction of the
	// pulse amplitude.
	Noise float64
	// Drift is a random walk of the baseline, standard deviation per
	// square root of a second as a fraction of the pulse amplitude.
	Drift float64
	// Pressure makes the fingertip press and relax: every few seconds the
	// baseline moves by up to Pressure pulse amplitudes over half a
	// second, and the pulse amplitude by up to a third.
	Pressure float64
	// Motion adds bursts of movement: with probability Motion per second
	// a 0.5-2 s burst of large, irregular swings (several pulse
	// amplitudes).
	Motion float64
	// ClipAt clips the intensity at this level (0: never); the level is
	// in units of the trace (Level + pulse, the pulse lowers it).
	ClipAt float64
	// Level is the mean intensity; Amplitude the pulse's depth in the same
	// units (defaults 200 and 2: a phone's red channel).
	Level, Amplitude float64
	// EctopicEvery makes every n-th beat premature (30% early, then a
	// compensatory pause), 0 for none.
	EctopicEvery int
	// Alternans makes every other beat smaller by this fraction (pulsus
	// alternans): the pulse gets a sub-harmonic at half the heart rate.
	Alternans float64
}

func (c *FingerConfig) defaults() {
	def := func(v *float64, d float64) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.Seconds, 60)
	def(&c.Rate, 125)
	def(&c.HR, 75)
	def(&c.Notch, 0.35)
	def(&c.Level, 200)
	def(&c.Amplitude, 2)
}

// Finger is a synthetic contact recording and its ground truth.
type Finger struct {
	T []float64 // sample times, ms
	I []float64 // intensity: falls as blood volume rises, like a camera's
	// Onsets are the beat onsets (s); RR their intervals within the
	// recording and RMSSDms, HR and BR the ground truth over it.
	Onsets, RR  []float64
	RMSSDms, HR float64
	BR          float64
}

// MakeFinger generates the recording c describes.
func MakeFinger(c FingerConfig) Finger {
	c.defaults()
	rng := rand.New(rand.NewPCG(c.Seed, 0x51ed2701))
	rr0 := 60 / c.HR
	phase0 := 2 * math.Pi * rng.Float64()
	// Breathing drifts by ±6% over a 20 s cycle, as spontaneous breathing
	// does.
	breathPhase := func(t float64) float64 {
		f := c.BR / 60
		return phase0 + 2*math.Pi*f*(t+0.06*20/(2*math.Pi)*(1-math.Cos(2*math.Pi*t/20)))
	}
	resp := func(t float64) float64 {
		if c.BR == 0 {
			return 0
		}
		ph := breathPhase(t)
		return (math.Sin(ph) + c.Shape*math.Sin(2*ph+0.7)) / (1 + c.Shape)
	}
	mayerPhase := 2 * math.Pi * rng.Float64()
	mayer := func(t float64) float64 { return math.Sin(2*math.Pi*0.1*t + mayerPhase) }
	// The RR series: AR(1) noise scaled to RMSSDms, steps, and sinus
	// arrhythmia (longer intervals on expiration).
	n := int((c.Seconds+4*rr0)/rr0*1.5) + 8
	ar := make([]float64, n)
	var x float64
	for i := range ar {
		x = 0.5*x + rng.NormFloat64()
		ar[i] = x
	}
	var ss float64
	for i := 1; i < n; i++ {
		ss += (ar[i] - ar[i-1]) * (ar[i] - ar[i-1])
	}
	scale := c.RMSSDms / 1000 / math.Sqrt(ss/float64(n-1))
	var onsets []float64
	level := 0.0
	t := -2*rr0 - rr0*rng.Float64()
	for i := 0; t < c.Seconds+2*rr0; i++ {
		onsets = append(onsets, t)
		if c.Steps > 0 && rng.Float64() < c.Steps {
			level += c.StepMs / 1000 * rng.NormFloat64()
			level = max(-0.25*rr0, min(0.25*rr0, level))
		}
		ibi := rr0 + level + scale*ar[i%n] - c.RIFV*rr0*resp(t) + c.Mayer*rr0*mayer(t)
		if e := c.EctopicEvery; e > 0 && i%e == e-1 {
			ibi *= 0.7
		} else if e > 0 && i%e == 0 && i > 0 {
			ibi *= 1.3
		}
		t += max(0.3, ibi)
	}
	var f Finger
	for i, o := range onsets {
		if o >= 0 && o < c.Seconds {
			f.Onsets = append(f.Onsets, o)
			if i > 0 && onsets[i-1] >= 0 {
				f.RR = append(f.RR, o-onsets[i-1])
			}
		}
	}
	var sum, sq float64
	for i, r := range f.RR {
		sum += r
		if i > 0 {
			sq += (r - f.RR[i-1]) * (r - f.RR[i-1])
		}
	}
	f.HR = 60 * float64(len(f.RR)) / sum
	if len(f.RR) > 1 {
		f.RMSSDms = 1000 * math.Sqrt(sq/float64(len(f.RR)-1))
	}
	if c.BR > 0 {
		f.BR = 60 * (breathPhase(c.Seconds) - breathPhase(0)) / (2 * math.Pi) / c.Seconds
	}

	// The beat's time course from its onset, the same whatever the
	// interval: a systolic wave peaking 0.13 s after the onset and a
	// diastolic one at 0.33 s (two-Gaussian model, widths in s).
	shape := func(s float64) float64 {
		if s < 0 || s > 1.2 {
			return 0
		}
		g := func(at, w float64) float64 { d := (s - at) / w; return math.Exp(-d * d / 2) }
		return g(0.13, 0.05) + c.Notch*g(0.33, 0.08)
	}
	// Pressure changes: a new target every 3-8 s, approached over 0.5 s.
	type press struct{ at, base, gain float64 }
	var presses []press
	if c.Pressure > 0 {
		for s := 0.0; s < c.Seconds; s += 3 + 5*rng.Float64() {
			presses = append(presses, press{s, c.Pressure * (2*rng.Float64() - 1), 1 + (2*rng.Float64()-1)/3})
		}
	}
	pressAt := func(t float64) (base, gain float64) {
		base, gain = 0, 1
		for _, p := range presses {
			if t < p.at {
				break
			}
			w := math.Min(1, (t-p.at)/0.5)
			base += w * (p.base - base)
			gain += w * (p.gain - gain)
		}
		return base, gain
	}
	type burst struct{ from, to, f1, f2, a float64 }
	var bursts []burst
	if c.Motion > 0 {
		for s := 0.0; s < c.Seconds; s++ {
			if rng.Float64() < c.Motion {
				bursts = append(bursts, burst{s, s + 0.5 + 1.5*rng.Float64(), 0.5 + 3*rng.Float64(), 2 + 5*rng.Float64(), 2 + 6*rng.Float64()})
			}
		}
	}
	motionAt := func(t float64) float64 {
		var v float64
		for _, b := range bursts {
			if t >= b.from && t < b.to {
				u := (t - b.from) / (b.to - b.from)
				v += b.a * math.Sin(math.Pi*u) * (math.Sin(2*math.Pi*b.f1*t) + 0.5*math.Sin(2*math.Pi*b.f2*t+1))
			}
		}
		return v
	}
	drift := 0.0
	dt := 1 / c.Rate
	k := 0
	for i := 0; ; i++ {
		t := float64(i) * dt
		if t > c.Seconds {
			break
		}
		for k+1 < len(onsets) && onsets[k+1] <= t {
			k++
		}
		var p float64
		for j := k; j >= 0 && t-onsets[j] < 1.2; j-- {
			a := 1.0
			if j%2 == 1 {
				a -= c.Alternans
			}
			p += a * shape(t-onsets[j])
		}
		base, gain := pressAt(t)
		drift += c.Drift * math.Sqrt(dt) * rng.NormFloat64()
		p *= gain * (1 + c.RIAV*resp(t) + c.Mayer*mayer(t))
		v := p + c.RIIV*resp(t) + base + drift + motionAt(t) + c.Noise*rng.NormFloat64()
		y := c.Level - c.Amplitude*v
		if c.ClipAt > 0 {
			y = math.Min(y, c.ClipAt)
		}
		f.T = append(f.T, 1000*t)
		f.I = append(f.I, y)
	}
	return f
}

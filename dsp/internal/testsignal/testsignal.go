// Package testsignal makes seeded synthetic pulse traces with known answers
// for the dsp tests: beat times with a known heart rate and RMSSD, a pulse
// wave with a systolic peak and a dicrotic wave, breathing that modulates
// the baseline, the amplitude and the beat rate, uneven and dropped frames,
// and camera colour or contact intensity with noise.
package testsignal

import (
	"math"
	"math/rand/v2"
)

// Config describes one synthetic recording. Zero fields take the defaults
// noted beside them.
type Config struct {
	Seed    uint64
	Seconds float64 // default 30
	FPS     float64 // default 30
	Jitter  float64 // timestamp jitter, fraction of a frame interval (uniform)
	Drop    float64 // probability that a frame is lost

	HR float64 // mean heart rate, bpm; default 72
	// HREnd, when set, makes the rate move linearly from HR at the start
	// to HREnd at the end (a rate that rises during a stress task).
	HREnd   float64
	RMSSDms float64 // beat-to-beat variability (successive differences), ms
	BR      float64 // breaths per minute; 0 means no breathing
	// Respiratory modulation depths: of the baseline intensity (fraction),
	// of the pulse amplitude (fraction) and of the beat interval (fraction,
	// respiratory sinus arrhythmia).
	BaselineDepth, AmplitudeDepth, RSADepth float64

	Level    float64 // mean green level 0-255 of the skin; default 120
	PulseAmp float64 // relative pulse amplitude of green; default 0.005
	Notch    float64 // height of the dicrotic wave relative to the systolic peak; default 0.4
	Noise    float64 // camera noise, standard deviation in levels
	// Flicker adds an illumination oscillation at FlickerHz with relative
	// depth FlickerDepth, common to all channels.
	FlickerHz, FlickerDepth float64
	// EctopicEvery makes every n-th beat come 35% of an interval early,
	// followed by a compensatory pause (0: none): premature beats, which
	// artefact rejection must keep out of the NN intervals.
	EctopicEvery int
}

// Signal is a synthetic recording and its ground truth.
type Signal struct {
	T       []float64 // capture times, ms
	R, G, B []float64 // camera colour traces, 0-255
	I       []float64 // contact intensity trace, arbitrary units
	Beats   []float64 // systolic peak times, s
	HR      float64   // 60 / mean interval, bpm
	RMSSDms float64   // of the generated intervals, ms
}

func (c *Config) defaults() {
	if c.Seconds == 0 {
		c.Seconds = 30
	}
	if c.FPS == 0 {
		c.FPS = 30
	}
	if c.HR == 0 {
		c.HR = 72
	}
	if c.Level == 0 {
		c.Level = 120
	}
	if c.PulseAmp == 0 {
		c.PulseAmp = 0.005
	}
	if c.Notch == 0 {
		c.Notch = 0.4
	}
}

// Make generates the recording described by c.
func Make(c Config) Signal {
	c.defaults()
	rng := rand.New(rand.NewPCG(c.Seed, 0x9e3779b97f4a7c15))
	var s Signal
	// Beat onsets (feet) with respiratory sinus arrhythmia and independent
	// interval noise; RMSSD of iid noise of deviation σ is σ√2.
	t0 := 60 / c.HR // the first beats' interval
	sigma := c.RMSSDms / 1000 / math.Sqrt2
	var feet []float64
	for t, k := -2*t0, 0; t < c.Seconds+2*t0; k++ {
		feet = append(feet, t)
		rate := c.HR
		if c.HREnd > 0 {
			rate += (c.HREnd - c.HR) * min(1, max(0, t/c.Seconds))
		}
		ibi := 60 / rate * (1 + c.RSADepth*math.Sin(2*math.Pi*c.BR/60*t))
		if n := c.EctopicEvery; n > 0 && k%n == n-1 {
			ibi *= 0.65
		} else if n > 0 && k%n == 0 && k > 0 {
			ibi *= 1.35
		}
		t += ibi + sigma*rng.NormFloat64()
	}
	var sumIBI, sumSq float64
	var nIBI, nSq int
	const peakPhase = 0.18 // systolic peak, fraction of the beat after its foot
	for i, f := range feet {
		if i+1 < len(feet) {
			p := f + peakPhase*(feet[i+1]-f)
			if p >= 0 && p <= c.Seconds {
				s.Beats = append(s.Beats, p)
			}
		}
	}
	for i := 1; i < len(s.Beats); i++ {
		sumIBI += s.Beats[i] - s.Beats[i-1]
		nIBI++
		if i >= 2 {
			d := (s.Beats[i] - s.Beats[i-1]) - (s.Beats[i-1] - s.Beats[i-2])
			sumSq += d * d
			nSq++
		}
	}
	s.HR = 60 / (sumIBI / float64(nIBI))
	if nSq > 0 {
		s.RMSSDms = 1000 * math.Sqrt(sumSq/float64(nSq))
	}

	wave := func(t float64) float64 {
		// The beat containing t and the one before (its diastolic tail).
		var v float64
		for i := len(feet) - 2; i >= 0; i-- {
			if feet[i] > t {
				continue
			}
			T := feet[i+1] - feet[i]
			ph := (t - feet[i]) / T
			v += math.Exp(-sq((ph-peakPhase)/0.075)/2) + c.Notch*math.Exp(-sq((ph-0.45)/0.11)/2)
			if ph > 1.5 {
				break
			}
		}
		return v
	}
	resp := func(t float64) float64 { return math.Sin(2 * math.Pi * c.BR / 60 * t) }
	// Relative pulsatile strength per channel: the standardised skin
	// blood-volume signature of de Haan & van Leest 2014, [0.33 0.77 0.53].
	skin := [3]float64{0.33 / 0.77, 1, 0.53 / 0.77}
	base := [3]float64{1.35 * c.Level, c.Level, 0.8 * c.Level}
	step := 1 / c.FPS
	for k := 0; ; k++ {
		t := float64(k)*step + c.Jitter*step*(rng.Float64()-0.5)
		if t > c.Seconds {
			break
		}
		if k > 0 && rng.Float64() < c.Drop {
			continue
		}
		t = max(t, 0)
		p := wave(t) * (1 + c.AmplitudeDepth*resp(t))
		light := (1 + c.BaselineDepth*resp(t)) * (1 + c.FlickerDepth*math.Sin(2*math.Pi*c.FlickerHz*t))
		var rgb [3]float64
		for ch := range rgb {
			rgb[ch] = base[ch]*light*(1-c.PulseAmp*skin[ch]*p) + c.Noise*rng.NormFloat64()
		}
		if n := len(s.T); n > 0 && t*1000 <= s.T[n-1] {
			continue
		}
		s.T = append(s.T, t*1000)
		s.R = append(s.R, rgb[0])
		s.G = append(s.G, rgb[1])
		s.B = append(s.B, rgb[2])
		s.I = append(s.I, 1000*light*(1-10*c.PulseAmp*p)+c.Noise*rng.NormFloat64())
	}
	return s
}

func sq(x float64) float64 { return x * x }

package clip

import (
	"math"
	"math/rand/v2"
)

// physiology is the ground truth of one clip: when each heart beat starts,
// how breathing evolves, and the resulting pulse wave.
type physiology struct {
	beats []float64 // onset of each beat, seconds; beats[i+1]-beats[i] is an RR interval
	// periods[i] is the time scale of beat i's shape (see pulse): the
	// trend RR interval at its onset, which is the mean RR interval when
	// the rate does not change. period is the longest of them.
	periods []float64
	period  float64
	br      breathing
	// riav is the depth of the respiratory modulation of pulse amplitude
	// (fraction); riiv that of skin brightness (fraction).
	riav, riiv float64
}

// breathing is a respiration with slowly varying rate and depth: the rate
// swings ±rateSwing around the mean over a rateCycle-second cycle, the depth
// ±depthSwing over depthCycle seconds, as spontaneous breathing does.
type breathing struct {
	meanHz float64
	phase0 float64
}

const (
	rateSwing, rateCycle   = 0.08, 23.0
	depthSwing, depthCycle = 0.2, 17.0
)

// phase is the breathing phase at t (radians): the integral of 2π times the
// instantaneous rate meanHz (1 + rateSwing sin(2πt/rateCycle)).
func (b breathing) phase(t float64) float64 {
	// ∫ f0 (1 + s sin(2πu/T)) du = f0 (t + s T/(2π) (1 - cos(2πt/T)))
	return b.phase0 + 2*math.Pi*b.meanHz*(t+rateSwing*rateCycle/(2*math.Pi)*(1-math.Cos(2*math.Pi*t/rateCycle)))
}

// value is the respiration signal at t, in [-1.2, 1.2]: positive on
// inspiration.
func (b breathing) value(t float64) float64 {
	return (1 + depthSwing*math.Sin(2*math.Pi*t/depthCycle)) * math.Sin(b.phase(t))
}

// heartTrend is the heart rate the beats follow, beats per minute: hr0
// throughout, or a change from hr0 to hr1 along a half cosine between
// rampFrom and rampTo of the clip. Heart rate rises within the first half
// minute of a mental stress task and then holds (mental arithmetic and
// public speaking raise it by 10-30 bpm: Kirschbaum, Pirke and
// Hellhammer, "The Trier Social Stress Test", Neuropsychobiology 1993);
// a fall is the recovery after one.
type heartTrend struct {
	hr0, hr1         float64
	rampFrom, rampTo float64 // seconds
}

// Share of the clip before and at the end of the rate change.
const rampStart, rampEnd = 0.2, 0.6

func newHeartTrend(seconds, hr0, hr1 float64) heartTrend {
	if hr1 == 0 {
		hr1 = hr0
	}
	return heartTrend{hr0: hr0, hr1: hr1, rampFrom: rampStart * seconds, rampTo: rampEnd * seconds}
}

// rr is the trend RR interval at t, seconds: 60 over the rate.
func (h heartTrend) rr(t float64) float64 {
	if h.hr1 == h.hr0 || t <= h.rampFrom {
		return 60 / h.hr0
	}
	if t >= h.rampTo {
		return 60 / h.hr1
	}
	u := (t - h.rampFrom) / (h.rampTo - h.rampFrom)
	return 60 / (h.hr0 + (h.hr1-h.hr0)*(1-math.Cos(math.Pi*u))/2)
}

// newPhysiology draws the beat sequence for a clip of the given length.
//
// RR intervals: the trend 60/rate (hr.rr); their variation has two parts,
// respiratory sinus arrhythmia (RR longer on expiration, in phase with
// breathing) and an AR(1) random part (coefficient 0.5) for the rest of
// the beat-to-beat variability. The variation is then scaled so the
// successive differences of the variation have exactly the requested
// RMSSD, and its mean is zero: with a steady rate the mean RR interval is
// exactly 60/rate. The ground truth is always computed from the beats
// themselves, so a rate change's own contribution to the successive
// differences (about 1 ms for 20 bpm over 20 s) is in it.
func newPhysiology(rng *rand.Rand, seconds float64, hr heartTrend, brPerMin, rmssdMs float64) physiology {
	rr0 := hr.rr(-1)
	fastest := min(rr0, hr.rr(seconds))
	p := physiology{
		br:   breathing{meanHz: brPerMin / 60, phase0: 2 * math.Pi * rng.Float64()},
		riav: 0.15,
		riiv: 0.002,
	}
	// Beats from one interval before the clip to one after it, so the
	// wave is defined over the whole clip.
	n := int((seconds+2*rr0)/fastest*1.3) + 4
	dev := make([]float64, n)
	t := -rr0
	ar := 0.0
	for i := range dev {
		ar = 0.5*ar + rng.NormFloat64()
		// RSA: the heart slows on expiration (value < 0).
		dev[i] = ar - 1.5*p.br.value(t)
		t += hr.rr(t)
	}
	mean := 0.0
	for _, d := range dev {
		mean += d
	}
	mean /= float64(n)
	for i := range dev {
		dev[i] -= mean
	}
	scale := 0.0
	if got := rmssd(dev); got > 0 {
		scale = rmssdMs / 1000 / got
	}
	p.beats = make([]float64, 0, n+1)
	p.periods = make([]float64, 0, n+1)
	t = -rr0 - 0.5*rr0*rng.Float64()
	for _, d := range dev {
		rr := hr.rr(t)
		p.beats = append(p.beats, t)
		p.periods = append(p.periods, rr)
		p.period = max(p.period, rr)
		// A floor of 0.25 s (240 bpm) keeps a wild draw physiological.
		t += max(0.25, rr+scale*d)
	}
	p.beats = append(p.beats, t)
	p.periods = append(p.periods, hr.rr(t))
	return p
}

// rmssd is the root mean square of successive differences of x, in x's
// units.
func rmssd(x []float64) float64 {
	if len(x) < 2 {
		return 0
	}
	var s float64
	for i := 1; i < len(x); i++ {
		d := x[i] - x[i-1]
		s += d * d
	}
	return math.Sqrt(s / float64(len(x)-1))
}

// waveform is one beat of the blood volume pulse against φ, the time since
// the beat's onset in mean beat periods: a systolic peak at 0.2 and a
// smaller, wider diastolic wave at 0.42, with the dicrotic notch between them
// where the two Gaussians cross (the two-Gaussian model of the
// photoplethysmogram pulse; Rubins, "Photoplethysmography analysis of artery
// properties in patients with cardiovascular diseases", IFMBE 2008). It is
// offset to mean zero over [0, 1) and peaks near 0.8; beyond φ = 0.9 it is
// flat at its offset.
func waveform(phi float64) float64 { return beatShape(phi) - shapeMean }

// shapeMean is the mean of beatShape over [0, 1):
// sqrt(2π)(sysWidth + diaAmp diaWidth) ≈ 0.2507.
const shapeMean = 0.2507

// beatShape is waveform without its offset: 0 before the onset and long
// after it.
func beatShape(phi float64) float64 {
	const (
		sysAt, sysWidth         = 0.20, 0.055
		diaAt, diaWidth, diaAmp = 0.42, 0.10, 0.45
	)
	g := func(x, at, w float64) float64 { d := (x - at) / w; return math.Exp(-d * d / 2) }
	return g(phi, sysAt, sysWidth) + diaAmp*g(phi, diaAt, diaWidth)
}

// pulse is the blood volume pulse at t: the sum of the shapes of the beats
// begun in the last two periods, its amplitude modulated by breathing.
// Multiply by the pulse amplitude to get the relative change of skin
// absorption.
//
// Every beat keeps the same time course from its own onset (the ejection
// and the wave's travel to the skin take as long whenever the next beat
// comes); a short interval lets the next beat start on the tail of the
// last, a long one leaves a flat diastole. Stretching each beat to fill its
// own interval instead would move the systolic peak with the onset of the
// next beat, which the heart cannot know, and the peak-to-peak intervals
// would average neighbouring RR intervals: about 13% less RMSSD than the
// beats have.
func (p *physiology) pulse(t float64) float64 {
	// Beats are sorted; the clip walks forwards, so a binary search is
	// plenty fast.
	lo, hi := 0, len(p.beats)-1
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if p.beats[mid] <= t {
			lo = mid
		} else {
			hi = mid
		}
	}
	if t < p.beats[0] || t >= p.beats[len(p.beats)-1] {
		return 0
	}
	var v float64
	for i := lo; i >= 0 && t-p.beats[i] < 2*p.period; i-- {
		v += beatShape((t - p.beats[i]) / p.periods[i])
	}
	return (v - shapeMean) * (1 + p.riav*p.br.value(t))
}

// truthWindow returns, for the beats wholly inside [0, seconds), their
// onsets, the mean heart rate (beats per minute from the mean RR interval)
// and RMSSD (ms) of their intervals.
func (p *physiology) truthWindow(seconds float64) (beats []float64, hrBPM, rmssdMs float64) {
	for _, b := range p.beats {
		if b >= 0 && b < seconds {
			beats = append(beats, b)
		}
	}
	if len(beats) < 2 {
		return beats, 0, 0
	}
	rr := make([]float64, len(beats)-1)
	var sum float64
	for i := range rr {
		rr[i] = beats[i+1] - beats[i]
		sum += rr[i]
	}
	return beats, 60 / (sum / float64(len(rr))), 1000 * rmssd(rr)
}

// course is the heart rate at each whole second of [0, seconds): 60 over
// the RR interval in progress, beats per minute, to 0.01.
func (p *physiology) course(seconds float64) []float64 {
	var hr []float64
	j := 0
	for t := 0.0; t < seconds; t++ {
		for j+2 < len(p.beats) && p.beats[j+1] <= t {
			j++
		}
		hr = append(hr, math.Round(6000/(p.beats[j+1]-p.beats[j]))/100)
	}
	return hr
}

// meanBreathing is the mean breathing rate over [0, seconds), breaths per
// minute: the number of cycles the phase completes divided by the time.
func (p *physiology) meanBreathing(seconds float64) float64 {
	return 60 * (p.br.phase(seconds) - p.br.phase(0)) / (2 * math.Pi) / seconds
}

package clip

import (
	"math"
	"math/rand/v2"
)

// Auto-exposure: the camera raises its gain to bring the picture to the
// level of exposureTarget light, by at most maxGain; darker scenes stay
// darker. Sensor noise is amplified with the signal.
const (
	exposureTarget = 0.8
	maxGain        = 2.0
)

// exposureGain is the camera gain for a scene lit at brightness b.
func exposureGain(b float64) float64 {
	return min(maxGain, max(1, exposureTarget/b))
}

// camera is a webcam's automatic exposure and white balance at work. Both
// run all the time in a webcam (browsers and video-call software leave
// them on), and both move in steps: whenever the metered level or colour
// leaves the controller's tolerance, as the person shifts or the screen
// changes, the controller writes a new exposure time, analog gain or
// colour gain, and the picture jumps by a few percent within a few
// frames. The exposure steps every 2-7 s by AutoExposure times 0.5-1.5;
// the white balance every 5-12 s by a third of that, red and blue gains
// in opposite directions (a shift of the colour temperature). A step that
// would take the level beyond 2.5 steps from where it began goes back.
type camera struct {
	exposure, balance []step
}

// step is a level the controller settles on at a given time.
type step struct{ at, value float64 }

// settleS is how long a step takes to take effect, seconds (3 frames at
// 30 fps).
const settleS = 0.1

func newCamera(c Config, rng *rand.Rand) camera {
	if c.AutoExposure == 0 {
		return camera{}
	}
	return camera{
		exposure: drawSteps(rng, c.Seconds, 2, 7, c.AutoExposure),
		balance:  drawSteps(rng, c.Seconds, 5, 12, c.AutoExposure/3),
	}
}

// drawSteps draws the times and levels of a controller that moves by
// size times 0.5-1.5 at gaps of minGap to maxGap seconds.
func drawSteps(rng *rand.Rand, seconds, minGap, maxGap, size float64) []step {
	var ss []step
	v := 1.0
	for t := minGap * rng.Float64(); ; {
		t += minGap + (maxGap-minGap)*rng.Float64()
		if t >= seconds {
			return ss
		}
		d := size * (0.5 + rng.Float64())
		if rng.IntN(2) == 0 {
			d = -d
		}
		if math.Abs(v+d-1) > 2.5*size {
			d = -d
		}
		v += d
		ss = append(ss, step{t, v})
	}
}

// level is the controller's level at t: 1 before its first step, moving
// linearly to each step's value over settleS.
func level(ss []step, t float64) float64 {
	prev := 1.0
	for _, s := range ss {
		if t < s.at {
			break
		}
		if t < s.at+settleS {
			return prev + (s.value-prev)*(t-s.at)/settleS
		}
		prev = s.value
	}
	return prev
}

// gains returns the camera's exposure factor and its red and blue colour
// gains at t; all are exactly 1 without AutoExposure.
func (c camera) gains(t float64) (exposure, red, blue float64) {
	wb := level(c.balance, t)
	return level(c.exposure, t), wb, 1 / wb
}

// electronsPerLevel is how many photo-electrons make one 8-bit level at
// unit gain. A webcam's small pixels (1.1-2 µm) hold a few thousand
// electrons at full well; we take about 5,000 mapped onto 0-255, an
// assumption in that range rather than one sensor's figure.
const electronsPerLevel = 20.0

// noiseReduction is the factor by which the camera's image processor
// cuts the shot noise's variance before the encoder sees it: every webcam
// filters noise in space and time (raw sensor noise would take most of a
// 250 kbit/s stream), and a 3x3 spatial filter alone divides the variance
// of white noise by up to 9. We take 5, an assumption.
const noiseReduction = 5.0

// noiseSigma returns the camera noise's standard deviation, 8-bit levels,
// for each output level 0-255. Read noise (Noise) is amplified by the
// exposure gain G. Shot noise, with ShotNoise, follows the photon transfer
// law (Janesick, "Photon Transfer", SPIE Press 2007): its variance in
// electrons equals the electrons collected, so at output level L it is
// G·L/electronsPerLevel levels squared before the camera's noise reduction
// and that over noiseReduction after it. Dim scenes, where the gain makes
// up for fewer electrons, get relatively noisier. Without ShotNoise every
// level gets the read noise alone.
func noiseSigma(c Config) *[256]float32 {
	var s [256]float32
	g := exposureGain(c.Brightness)
	read := c.Noise * g
	for l := range s {
		if c.ShotNoise {
			s[l] = float32(math.Sqrt(read*read + g*float64(l)/electronsPerLevel/noiseReduction))
		} else {
			s[l] = float32(read)
		}
	}
	return &s
}

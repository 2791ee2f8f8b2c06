package clip

import (
	"math"
	"math/rand/v2"
)

// lighting is the picture's level at t relative to the photo, per
// channel: the light on the scene times the camera gain, with a slow 1%
// drift over 40 s (clouds, exposure hunting), the flicker and the
// camera's exposure and white balance steps.
func (c *Clip) lighting(t float64) [3]float32 {
	g := c.cfg.Brightness * exposureGain(c.cfg.Brightness) * (1 + 0.01*math.Sin(2*math.Pi*t/40))
	if c.cfg.FlickerDepth > 0 {
		g *= 1 + c.cfg.FlickerDepth*math.Sin(2*math.Pi*c.cfg.FlickerHz*t)
	}
	e, r, b := c.camera.gains(t)
	g *= e
	return [3]float32{float32(g * r), float32(g), float32(g * b)}
}

// screen is the screen in front of the face: a person reading or working
// at a computer is lit partly by it, and what it shows changes every 2-10
// s (a page scrolls or changes, a video cuts), between dark content and a
// white page, with its colour. Screens of one task look alike (pages of
// one document, scenes of one film), so each change moves the brightness
// by about 0.2 of its range and the tint by about 5%. The light falls off with the square of the
// distance, so it reaches the face (half a metre away) and not the wall
// behind (two metres and more): only the head takes it (scene.head).
type screen struct {
	share   float64
	content []shown
}

// shown is what the screen shows from a given time on: its brightness
// (0.3 dark content to 1 a white page) and the tint of each channel.
type shown struct {
	at         float64
	brightness float64
	tint       [3]float64
}

// meanScreen is the mean brightness of what the screen shows.
const meanScreen = 0.65

func newScreen(c Config, rng *rand.Rand) screen {
	if c.ScreenLight == 0 {
		return screen{}
	}
	s := screen{share: c.ScreenLight}
	brightness := 0.3 + 0.7*rng.Float64()
	for t := 0.0; t < c.Seconds; t += 2 + 8*rng.Float64() {
		sh := shown{at: t, brightness: brightness}
		for ch := range sh.tint {
			sh.tint[ch] = min(1.15, max(0.85, 1+0.05*rng.NormFloat64()))
		}
		s.content = append(s.content, sh)
		brightness = min(1, max(0.3, brightness+0.2*rng.NormFloat64()))
	}
	return s
}

// at is what the screen shows at t.
func (s screen) at(t float64) shown {
	sh := s.content[0]
	for _, c := range s.content[1:] {
		if c.at > t {
			break
		}
		sh = c
	}
	return sh
}

// face returns the factor on the head's light at t per channel, 1 - share
// + share·screen/meanScreen, and the brightness of the screen relative to
// its mean (for its reflection in glasses); all 1 without a screen.
func (s screen) face(t float64) (light [3]float32, brightness float32) {
	if s.share == 0 {
		return [3]float32{1, 1, 1}, 1
	}
	sh := s.at(t)
	rel := sh.brightness / meanScreen
	for ch := range light {
		light[ch] = float32(1 - s.share + s.share*rel*sh.tint[ch])
	}
	return light, float32(rel)
}

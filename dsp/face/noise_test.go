package face_test

import (
	"math"
	"testing"

	"github.com/pulsewire/pulsewire/dsp/face"
	"github.com/pulsewire/pulsewire/scripts/synth/clip"
)

// TestTrackerColourNoise checks the tracker's own noise floor: on a swaying
// face with no pulse, the frame-to-frame wobble of the skin mean must stay
// near what the camera noise alone gives (1.5 levels over about 1200 skin
// pixels: 0.045 levels) and far below a pulse (0.5% of green, about 0.7
// levels peak to peak): 0.05 here. Whole-pixel regions, a hard skin mask
// and a box that followed every detection gave 0.12-0.25 levels, as much as
// the pulse.
func TestTrackerColourNoise(t *testing.T) {
	c, err := face.LoadCascade()
	if err != nil {
		t.Fatal(err)
	}
	for _, motion := range []float64{0, 0.03} {
		cl, err := clip.New(clip.Config{Width: 320, Height: 240, Seconds: 4, Seed: 19, Motion: motion,
			PulseAmplitude: 1e-9, RMSSD: 1})
		if err != nil {
			t.Fatal(err)
		}
		tr := face.NewTracker(c)
		var g []float64
		for _, img := range cl.Frames() {
			o := tr.Observe(img)
			if !o.Face {
				t.Fatal("face lost")
			}
			g = append(g, o.G)
		}
		// The wobble: each value against the mean of its 15 neighbours,
		// which removes breathing and light drift; after the first second,
		// while the box settles on the detections.
		var sum float64
		n := 0
		for i := 30; i < len(g)-7; i++ {
			var m float64
			for _, v := range g[i-7 : i+8] {
				m += v
			}
			d := g[i] - m/15
			sum += d * d
			n++
		}
		if rms := math.Sqrt(sum / float64(n)); rms > 0.07 {
			t.Errorf("motion %.2f: skin green wobbles by %.3f levels RMS, want under 0.07", motion, rms)
		}
	}
}

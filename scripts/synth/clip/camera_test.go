package clip

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestCameraSteps(t *testing.T) {
	const seconds, size = 120.0, 0.03
	c := newCamera(Config{Seconds: seconds, AutoExposure: size}, rand.New(rand.NewPCG(3, 4)))
	if n := float64(len(c.exposure)); n < seconds/7 || n > seconds/2 {
		t.Errorf("%.0f exposure steps in %.0f s, want one every 2-7 s", n, seconds)
	}
	if n := float64(len(c.balance)); n < seconds/12 || n > seconds/5 {
		t.Errorf("%.0f white balance steps in %.0f s, want one every 5-12 s", n, seconds)
	}
	prev := 1.0
	for _, s := range c.exposure {
		if d := math.Abs(s.value - prev); d < 0.5*size-1e-12 || d > 1.5*size+1e-12 {
			t.Errorf("step at %.1f s of %.4f, want %.3f-%.3f", s.at, d, 0.5*size, 1.5*size)
		}
		if math.Abs(s.value-1) > 2.5*size+1.5*size {
			t.Errorf("exposure wandered to %.3f", s.value)
		}
		// Sudden: settled within settleS, halfway at half of it.
		if got := level(c.exposure, s.at+settleS); math.Abs(got-s.value) > 1e-12 {
			t.Errorf("at %.2f s level %.4f, want %.4f", s.at+settleS, got, s.value)
		}
		if got := level(c.exposure, s.at+settleS/2); math.Abs(got-(prev+s.value)/2) > 1e-9 {
			t.Errorf("halfway through the step at %.2f s: %.4f, want %.4f", s.at, got, (prev+s.value)/2)
		}
		prev = s.value
	}
	e, r, b := c.gains(seconds - 1)
	if math.Abs(r*b-1) > 1e-12 || e == 1 {
		t.Errorf("gains %v %v %v: want red and blue opposite, exposure moved", e, r, b)
	}
	if e, r, b := (camera{}).gains(5); e != 1 || r != 1 || b != 1 {
		t.Errorf("without auto-exposure gains %v %v %v, want exactly 1", e, r, b)
	}
}

func TestNoiseSigma(t *testing.T) {
	plain := noiseSigma(Config{Noise: 1.5, Brightness: 1})
	if plain[0] != 1.5 || plain[255] != 1.5 {
		t.Errorf("read noise alone: %v at 0, %v at 255, want 1.5", plain[0], plain[255])
	}
	bright := noiseSigma(Config{Noise: 1.5, Brightness: 1, ShotNoise: true})
	dim := noiseSigma(Config{Noise: 1.5, Brightness: 0.4, ShotNoise: true})
	// Photon transfer: variance = read² + gain·level/electronsPerLevel,
	// the latter cut by the camera's noise reduction.
	if want := math.Sqrt(1.5*1.5 + 200/electronsPerLevel/noiseReduction); math.Abs(float64(bright[200])-want) > 1e-4 {
		t.Errorf("sigma at 200: %v, want %v", bright[200], want)
	}
	for _, l := range []int{30, 100, 200} {
		if !(bright[l] > plain[l] && dim[l] > bright[l]) {
			t.Errorf("level %d: sigma %.2f read only, %.2f bright, %.2f dim: want growing", l, plain[l], bright[l], dim[l])
		}
	}
	if !(bright[200] > bright[50]) {
		t.Error("shot noise does not grow with the light")
	}
}

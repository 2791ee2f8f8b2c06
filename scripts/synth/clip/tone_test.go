package clip

import (
	"math"
	"testing"
)

func TestSkinTone(t *testing.T) {
	level, pulse := skinTone(photoMelanin)
	for ch := range 3 {
		if math.Abs(level[ch]-1) > 1e-12 || math.Abs(pulse[ch]-1) > 1e-12 {
			t.Fatalf("the photo's own tone changes channel %d: level %v, pulse %v", ch, level[ch], pulse[ch])
		}
	}
	prevL, prevP := level, pulse
	for _, f := range []float64{0.13, 0.22, 0.35} {
		level, pulse := skinTone(f)
		for ch := range 3 {
			if level[ch] >= prevL[ch] || pulse[ch] >= prevP[ch] {
				t.Errorf("melanin %.2f channel %d: level %.3f pulse %.3f, want below %.3f and %.3f", f, ch, level[ch], pulse[ch], prevL[ch], prevP[ch])
			}
		}
		// Melanin absorbs blue most and red least.
		if !(level[2] < level[1] && level[1] < level[0]) || !(pulse[2] < pulse[1] && pulse[1] < pulse[0]) {
			t.Errorf("melanin %.2f: levels %.3f and pulses %.3f not ordered red > green > blue", f, level, pulse)
		}
		prevL, prevP = level, pulse
	}
	// The darkest tone's green reflectance: published spectra of darkly
	// pigmented skin give about 0.08-0.12 at 540 nm; its pulse keeps
	// about half its strength on green.
	level, pulse = skinTone(0.35)
	if r := level[1] * (surfaceReflectance + bodyReflectance[1]); r < 0.07 || r > 0.13 {
		t.Errorf("dark skin's green reflectance %.3f, want 0.07-0.13", r)
	}
	if pulse[1] < 0.4 || pulse[1] > 0.7 {
		t.Errorf("dark skin keeps %.2f of the green pulse, want 0.4-0.7", pulse[1])
	}
}

// TestToneRenders checks that a darker skin reaches the frames: the mean
// green of the skin falls by about the tone's factor and the rest of the
// frame does not change.
func TestToneRenders(t *testing.T) {
	light, err := New(Config{Width: 160, Height: 120, Seconds: 0.1, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	dark, err := New(Config{Width: 160, Height: 120, Seconds: 0.1, Seed: 2, Melanin: 0.22})
	if err != nil {
		t.Fatal(err)
	}
	s, d := light.scene, dark.scene
	var skinL, skinD, wallL, wallD float64
	for i, m := range s.skin {
		switch {
		case m > 0.99:
			skinL += float64(s.g[i])
			skinD += float64(d.g[i])
		case s.alpha[i] > 0.99 && m == 0 && math.Abs(float64(s.g[i]-s.bg[1])) < 5:
			wallL += float64(s.g[i])
			wallD += float64(d.g[i])
		}
	}
	level, _ := skinTone(0.22)
	if got := skinD / skinL; math.Abs(got-level[1]) > 0.03 {
		t.Errorf("skin green scaled by %.3f, want %.3f", got, level[1])
	}
	if wallD != wallL {
		t.Errorf("the wall changed with the skin tone: %.0f, was %.0f", wallD, wallL)
	}
}

package clip

import (
	"image"
	"math"
	"testing"
)

// TestScreenLight checks that the screen lights the head and not the wall:
// between two frames that show different screen content, a cheek changes
// by about the screen's share and the wall does not.
func TestScreenLight(t *testing.T) {
	c, err := New(Config{Width: 320, Height: 240, Seconds: 30, Seed: 4, ScreenLight: 0.3, Noise: 1e-9, RMSSD: 1})
	if err != nil {
		t.Fatal(err)
	}
	s := c.screen
	if len(s.content) < 30/10 || len(s.content) > 30/2+1 {
		t.Fatalf("%d screen changes in 30 s, want one every 2-10 s", len(s.content))
	}
	// Two frames whose screens differ most.
	lo, hi := 0, 0
	for i := range c.Len() {
		if s.at(c.times[i]).brightness < s.at(c.times[lo]).brightness {
			lo = i
		}
		if s.at(c.times[i]).brightness > s.at(c.times[hi]).brightness {
			hi = i
		}
	}
	a := image.NewRGBA(image.Rect(0, 0, 320, 240))
	b := image.NewRGBA(image.Rect(0, 0, 320, 240))
	c.Render(lo, a)
	c.Render(hi, b)
	ratio := func(x, y int) float64 {
		return float64(b.RGBAAt(x, y).G) / float64(a.RGBAAt(x, y).G)
	}
	want := (1 - 0.3 + 0.3*s.at(c.times[hi]).brightness/meanScreen) / (1 - 0.3 + 0.3*s.at(c.times[lo]).brightness/meanScreen)
	if want < 1.03 {
		t.Fatalf("the screen's light changes by %.3f times at most: too little to test", want)
	}
	// The cheek: below the left eye, the wall: the top-left corner.
	cheekX := int(float64(c.scene.x0) + 0.38*float64(c.scene.pw))
	cheekY := int(float64(c.scene.y0) + 0.6*float64(c.scene.ph))
	if got := ratio(cheekX, cheekY); math.Abs(got-want) > 0.15*(want-1)+0.02 {
		t.Errorf("cheek brightened %.3f times, want %.3f", got, want)
	}
	if got := ratio(5, 5); math.Abs(got-1) > 0.01 {
		t.Errorf("wall brightened %.3f times, want 1", got)
	}
	if l, br := (screen{}).face(3); l != [3]float32{1, 1, 1} || br != 1 {
		t.Errorf("no screen: face light %v, brightness %v, want 1", l, br)
	}
}

package clip

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"image"
	"math"
	"runtime"
	"testing"
)

// goldenDigest hashes what a preset gives: the truth's numbers and two of
// its rendered frames (the first and the middle one).
func goldenDigest(t *testing.T, p Preset) string {
	c, err := New(p.Config)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	tr := c.Truth()
	put := func(v float64) { binary.Write(h, binary.LittleEndian, math.Float64bits(v)) }
	put(tr.HeartRate)
	put(tr.BreathingRate)
	put(tr.RMSSD)
	put(float64(tr.Frames))
	for _, b := range tr.BeatTimes {
		put(b)
	}
	img := image.NewRGBA(image.Rect(0, 0, p.Config.withDefaults().Width, p.Config.withDefaults().Height))
	for _, i := range []int{0, c.Len() / 2} {
		c.Render(i, img)
		h.Write(img.Pix)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// TestPresetsUnchanged pins the benchmark set: the accuracy figures of the
// service are measured on it, so the webcam effects (and any later change)
// must leave its clips as they were, bit for bit. The digests were taken
// before the webcam effects existed; a change that moves them must be a
// deliberate new benchmark, with its figures measured again. Floating
// point may round differently on other architectures (fused
// multiply-adds), so the check runs on amd64.
func TestPresetsUnchanged(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("digests taken on amd64")
	}
	ps := Presets()
	for _, tc := range []struct {
		preset int
		digest string
	}{
		{0, "beceda76e8439b77"},
		{5, "6835e22d619a91c5"},  // dropped frames
		{7, "1e0b16aff68ad54f"},  // jitter
		{9, "9eaaab9c5f6b383b"},  // flicker
		{19, "10121c6e2b605993"}, // moving
		{22, "b54149418fb7bbd2"}, // dark
		{33, "600fac454d92e7d8"},
		{47, "8ede12a2b46cfa66"},
	} {
		if got := goldenDigest(t, ps[tc.preset]); got != tc.digest {
			t.Errorf("%s: digest %s, want %s", ps[tc.preset].Name, got, tc.digest)
		}
	}
}

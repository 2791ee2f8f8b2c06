package clip

import (
	"strings"
	"testing"
)

// TestWebcamPresets checks that the webcam set and its fresh half span the
// conditions they are for, in every value, and that their clips are valid.
func TestWebcamPresets(t *testing.T) {
	t.Run("webcam", func(t *testing.T) { checkWebcamSet(t, WebcamPresets()) })
	t.Run("fresh", func(t *testing.T) { checkWebcamSet(t, FreshWebcamPresets()) })
}

// TestFreshWebcamPresets: the fresh set has the webcam set's conditions but
// other people: no seed, name or heart rate in common.
func TestFreshWebcamPresets(t *testing.T) {
	old, fresh := WebcamPresets(), FreshWebcamPresets()
	if len(fresh) != len(old) {
		t.Fatalf("%d fresh presets, want %d", len(fresh), len(old))
	}
	seen := map[any]bool{}
	for _, p := range old {
		seen[p.Config.Seed], seen[p.Name], seen[p.Config.HeartRate] = true, true, true
	}
	for i, p := range fresh {
		o := old[i]
		if seen[p.Config.Seed] || seen[p.Name] || seen[p.Config.HeartRate] {
			t.Errorf("%s: seed %d, name or heart rate %.1f of the webcam set", p.Name, p.Config.Seed, p.Config.HeartRate)
		}
		oc, c := o.Config, p.Config
		if p.Encoding != o.Encoding || c.Pitch != oc.Pitch || c.Glasses != oc.Glasses || c.Melanin != oc.Melanin ||
			c.Brightness != oc.Brightness || c.ScreenLight != oc.ScreenLight || c.AutoExposure != oc.AutoExposure ||
			(c.Fringe > 0) != (oc.Fringe > 0) || (c.HeartRateEnd > c.HeartRate) != (oc.HeartRateEnd > oc.HeartRate) {
			t.Errorf("%s: conditions differ from %s's", p.Name, o.Name)
		}
	}
}

// TestTranscoded: the transcoded sets are the webcam sets, every clip H.264
// at its own bit rate, transcoded, under a name of its own.
func TestTranscoded(t *testing.T) {
	for _, makeSet := range []func() []Preset{WebcamPresets, FreshWebcamPresets} {
		old := makeSet()
		ps := Transcoded(old)
		if len(ps) != len(old) {
			t.Fatalf("%d transcoded presets, want %d", len(ps), len(old))
		}
		for i, p := range ps {
			o := old[i]
			want := Encoding{Format: "mp4", BitrateKbps: o.Encoding.BitrateKbps, Transcoded: true}
			if p.Config != o.Config || p.Encoding != want || p.Name != o.Name+"-transcoded" {
				t.Errorf("%s (%+v): not %s transcoded", p.Name, p.Encoding, o.Name)
			}
			if o.Encoding.Transcoded || strings.HasSuffix(o.Name, "-transcoded") {
				t.Errorf("%s: transcoding changed the set it was given", o.Name)
			}
		}
	}
}

func checkWebcamSet(t *testing.T, ps []Preset) {
	t.Helper()
	if len(ps) < 24 {
		t.Fatalf("%d presets, want at least 24", len(ps))
	}
	names := map[string]bool{}
	count := map[string]int{}
	lo, hi := 1000.0, 0.0
	for _, p := range ps {
		c := p.Config
		checkPreset(t, names, p)
		if c.Seconds < 45 || c.Seconds > 65 || p.Encoding.BitrateKbps < 100 || p.Encoding.BitrateKbps > 500 {
			t.Errorf("%s: %.0f s at %d kbit/s, want 45-65 s at 100-500", p.Name, c.Seconds, p.Encoding.BitrateKbps)
		}
		if c.PulseAmplitude < 0.002 || c.PulseAmplitude > 0.005 {
			t.Errorf("%s: pulse %.4f, want 0.002-0.005", p.Name, c.PulseAmplitude)
		}
		lo, hi = min(lo, c.HeartRate), max(hi, c.HeartRate)
		for cond, in := range map[string]bool{
			"100 kbit/s": p.Encoding.BitrateKbps == 100, "500 kbit/s": p.Encoding.BitrateKbps == 500,
			"vp9":    p.Encoding.Format == "webm",
			"rising": c.HeartRateEnd >= c.HeartRate+10, "falling": c.HeartRateEnd != 0 && c.HeartRateEnd < c.HeartRate,
			"upright": c.Pitch == 0, "bowed": c.Pitch >= 18,
			"glasses": c.Glasses, "fringe": c.Fringe > 0,
			"light skin": c.Melanin == 0, "dark skin": c.Melanin >= 0.3,
			"dim": c.Brightness <= 0.5, "office": c.Brightness >= 1,
			"exposure steps": c.AutoExposure > 0, "fixed exposure": c.AutoExposure == 0,
		} {
			if in {
				count[cond]++
			}
		}
		if !c.ShotNoise || c.Drift == 0 || c.ScreenLight == 0 {
			t.Errorf("%s: want shot noise, drift and screen light in every clip", p.Name)
		}
	}
	if lo > 66 || hi < 118 {
		t.Errorf("starting heart rates %.0f-%.0f, want about 62-122", lo, hi)
	}
	for _, cond := range []string{"100 kbit/s", "500 kbit/s", "vp9", "rising", "falling", "upright", "bowed",
		"glasses", "fringe", "light skin", "dark skin", "dim", "office", "exposure steps", "fixed exposure"} {
		if count[cond] < 3 {
			t.Errorf("%d clips %s, want at least 3", count[cond], cond)
		}
	}
}

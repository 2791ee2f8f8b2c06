package clip

import (
	"fmt"
	"math"
	"slices"
)

// SkinTone names a melanosome volume fraction of the epidermis (tone.go).
type SkinTone struct {
	Name    string
	Melanin float64
}

// SkinTones are the tones of the webcam set, across Jacques's ranges:
// light (the photo's own, 0.04), moderately pigmented (0.13) and two
// darkly pigmented ones (0.22 and 0.35).
var SkinTones = []SkinTone{{"light", 0}, {"medium", 0.13}, {"brown", 0.22}, {"dark", 0.35}}

// WebcamPresets is the set that looks like what a webcam records of a
// person at a computer, for measuring the service where it is hard rather
// than where it is exact: 24 clips of 45-65 s at 640x480 and 30 fps,
// encoded at 100-500 kbit/s by real-time encoders (H.264, and VP9 for a
// few, as browsers record), of heart rates 62-122 bpm that rise by 10-30
// bpm during half of the clips (a stress task) and fall in a few (the
// recovery after it), a head bowed 0-25° towards a laptop screen, glasses
// on a third of the faces and a fringe on another third, four skin tones
// from light to dark, a weak pulse (0.2-0.5% peak to peak on green for
// light skin, less on darker skin), office to dark rooms with the screen
// lighting the face, the camera's exposure and white balance steps (off
// in a few clips, to tell their effect), shot noise, and a head that
// drifts and sways a little. As in Presets, each condition steps through
// its values on its own cycle and the rates follow low-discrepancy
// sequences, so the conditions mix. Seeds are 1001 on: the set is the
// same every run.
func WebcamPresets() []Preset { return webcamPresets("w", 0, 1001) }

// FreshWebcamPresets is the webcam set's mix of conditions (bit rates,
// codecs, head pitch, glasses, fringes, skin tones, light, exposure steps)
// with new people: other seeds (2001 on) and other points of the sequences
// that set the heart and breathing rates, the pulse's strength, the face's
// size, the sway and drift, the fringe's length and a rise's size. No clip
// of it was looked at while the method was built, which makes it the
// webcam set's held-out half.
func FreshWebcamPresets() []Preset { return webcamPresets("v", 100, 2001) }

// webcamPresets makes the webcam set's 24 clips, named prefix and their
// number, with seeds from seed on, reading the sequences from point offset
// on; the conditions' cycles are the same whatever the offset.
func webcamPresets(prefix string, offset int, seed uint64) []Preset {
	const n = 24
	bitrates := []int{100, 150, 250, 400, 500}
	pitches := []float64{0, 10, 18, 25}
	lights := []struct {
		name   string
		value  float64
		screen float64 // the screen's share of the face's light
	}{{"office", 1, 0.05}, {"normal", 0.8, 0.08}, {"dim", 0.5, 0.15}, {"dark", 0.35, 0.25}}
	round := func(x, step float64) float64 { return math.Round(x/step) * step }
	var ps []Preset
	for i := range n {
		fi := float64(i + offset)
		hr := round(62+60*frac(0.5+fi*0.6180339887), 0.1)
		br := round(10+10*frac(0.3+fi*0.4142135624), 0.1)
		rmssd := min(60, max(8, math.Round(60*math.Exp(-(hr-60)/40)*(0.6+0.8*frac(0.7+fi*0.7548776662)))))
		c := Config{
			Seconds: round(45+20*frac(0.15+fi*0.5698402910), 1), Seed: seed + uint64(i),
			HeartRate: hr, BreathingRate: br, RMSSD: rmssd,
			PulseAmplitude: round(0.002+0.003*frac(0.2+fi*0.3819660113), 0.0001),
			Melanin:        SkinTones[(i/2)%len(SkinTones)].Melanin,
			Pitch:          pitches[(i/3)%len(pitches)],
			Glasses:        i%3 == 0,
			Motion:         round(0.01*frac(0.4+fi*0.6180339887), 0.001),
			Drift:          round(0.01+0.02*frac(0.9+fi*0.4142135624), 0.001),
			FaceScale:      round(0.5+0.3*frac(0.6+fi*0.7548776662), 0.01),
			AutoExposure:   0.03,
			ShotNoise:      true,
		}
		if (i/2)%3 == 1 {
			c.Fringe = round(0.4+0.3*frac(fi*0.6180339887), 0.05)
		}
		l := lights[(i+i/4)%len(lights)]
		c.Brightness, c.ScreenLight = l.value, l.screen
		change := ""
		switch {
		case i%4 == 1 || i%4 == 3: // a stress task: 10-30 bpm up
			c.HeartRateEnd = hr + round(10+20*frac(0.1+fi*0.2360679775), 1)
			change = fmt.Sprintf("up%02.0f", c.HeartRateEnd-hr)
		case i%4 == 2 && (i/4)%3 != 0: // the recovery after one
			c.HeartRateEnd = hr - 12
			change = "down12"
		}
		if i%6 == 5 {
			c.AutoExposure = 0
		}
		e := Encoding{Format: "mp4", BitrateKbps: bitrates[i%len(bitrates)]}
		if i%6 == 2 {
			e.Format = "webm"
		}
		name := fmt.Sprintf("%s%02d-hr%03.0f%s-%dk-%s-%s-pitch%02.0f", prefix, i, hr, change, e.BitrateKbps,
			SkinTones[(i/2)%len(SkinTones)].Name, l.name, c.Pitch)
		if c.Glasses {
			name += "-glasses"
		}
		if c.Fringe > 0 {
			name += "-fringe"
		}
		if c.AutoExposure == 0 {
			name += "-fixedexposure"
		}
		ps = append(ps, Preset{Name: name, Config: c, Encoding: e})
	}
	return ps
}

// Transcoded returns rate-controlled presets as files transcoded after the
// recording: the same clips, every one H.264 (.mp4) at its own bit rate as
// ffmpeg's x264 reaches it by default (Encoding.Transcoded), named with
// "-transcoded". Such an encoder spends bits where a real-time one cannot
// (B-frames, look-ahead, seconds of slack), and more of the pulse
// survives the same bit rate. The presets given are left as they are.
func Transcoded(presets []Preset) []Preset {
	ps := slices.Clone(presets)
	for i := range ps {
		ps[i].Encoding = Encoding{Format: "mp4", BitrateKbps: ps[i].Encoding.BitrateKbps, Transcoded: true}
		ps[i].Name += "-transcoded"
	}
	return ps
}

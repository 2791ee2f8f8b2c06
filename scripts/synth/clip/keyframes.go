package clip

import (
	"fmt"
	"math"
)

// KeyFrameIntervals are the key-frame intervals of the key-frame set, in
// frames at 30 fps: the encoder's own choice (0), a second (many phones and
// hardware encoders) and 12 frames (OpenCV's video writer, with which many
// research recordings are made).
var KeyFrameIntervals = []int{0, 30, 12}

// KeyFramePresets is the set that shows what fixed key-frame intervals do:
// 8 people of 62-122 bpm, each clip encoded once per interval of
// KeyFrameIntervals by the real-time H.264 encoder at 300 kbit/s. The
// people are still, lit evenly and light-skinned, with a 0.4% pulse, the
// camera's exposure steps and shot noise: a capture the service reads when
// the encoder chooses its key frames, so that what the intervals change is
// what the table shows. Seeds are 2001 on.
func KeyFramePresets() []Preset {
	const people = 8
	var ps []Preset
	for i := range people {
		hr := math.Round(10*(62+60*frac(0.5+float64(i)*0.6180339887))) / 10
		c := Config{
			Seconds: 40, Seed: uint64(2001 + i), HeartRate: hr, BreathingRate: 15, RMSSD: 30,
			PulseAmplitude: 0.004, AutoExposure: 0.03, ShotNoise: true,
		}
		for _, every := range KeyFrameIntervals {
			e := Encoding{Format: "mp4", BitrateKbps: 300, KeyFrameEvery: every}
			name := fmt.Sprintf("k%d-hr%03.0f-300k-keys-", i, hr)
			if every == 0 {
				name += "encoder"
			} else {
				name += fmt.Sprintf("every%02d", every)
			}
			ps = append(ps, Preset{Name: name, Config: c, Encoding: e})
		}
	}
	return ps
}

// frac is the fractional part of x: the step of a low-discrepancy sequence.
func frac(x float64) float64 { return x - math.Floor(x) }

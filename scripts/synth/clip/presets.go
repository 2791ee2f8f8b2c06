package clip

import (
	"fmt"
	"math"
)

// Presets is the benchmark set: 48 clips of 30 s at 640x480 and 30 fps that
// together span heart rates 45-160 bpm, breathing 6-30 /min, RMSSD 5-80 ms,
// a still to a moving head, bright to dim light, CRF 18-28, and mp4, webm,
// mov and avi. Each condition steps through its values on its own cycle, and
// the rates follow low-discrepancy sequences (golden ratio and silver ratio
// steps), so every range is covered evenly and conditions mix rather than
// move in lockstep. A few clips add light flicker, uneven frame times or
// dropped frames. Seeds are the clip numbers: the set is the same every run.
func Presets() []Preset {
	motions := []struct {
		name  string
		value float64
	}{{"still", 0}, {"small", 0.01}, {"moderate", 0.03}, {"moving", 0.08}}
	lights := []struct {
		name  string
		value float64
	}{{"bright", 1}, {"normal", 0.8}, {"dim", 0.5}, {"dark", 0.3}}
	crfs := []int{18, 20, 22, 24, 26, 28}
	formats := []string{"mp4", "webm", "mov", "avi", "mp4", "mov"}
	amplitudes := []float64{0.006, 0.004, 0.008}

	var ps []Preset
	for i := 0; i < 48; i++ {
		hr := 45 + 115*frac(0.5+float64(i)*0.6180339887)
		br := 6 + 24*frac(0.3+float64(i)*0.4142135624)
		// Variability falls steeply as the heart speeds up. Our model:
		// 60 ms at 60 bpm, halving every 28 bpm (22 ms at 100, 8 at 140),
		// times 0.6-1.4 per clip. 40 ms at 117 bpm, as an earlier set had,
		// is an 8% beat-to-beat swing no resting adult shows.
		rmssd := 60 * math.Exp(-(hr-60)/40) * (0.6 + 0.8*frac(0.7+float64(i)*0.7548776662))
		rmssd = min(80, max(5, rmssd))
		m, l := motions[i%len(motions)], lights[(i/2)%len(lights)]
		c := Config{
			Seconds: 30, Seed: uint64(i + 1),
			HeartRate: math.Round(hr*10) / 10, BreathingRate: math.Round(br*10) / 10, RMSSD: math.Round(rmssd),
			PulseAmplitude: amplitudes[i%len(amplitudes)],
			Motion:         m.value, Brightness: l.value,
		}
		e := Encoding{Format: formats[i%len(formats)], CRF: crfs[(i/3)%len(crfs)]}
		var extra string
		switch {
		case i%12 == 9:
			c.FlickerHz, c.FlickerDepth = 0.9+0.2*float64(i%5), 0.02
			extra = "-flicker"
		case i%10 == 7 && e.Format != "avi":
			c.Jitter = 0.3
			extra = "-jitter"
		case i%16 == 5 && e.Format != "avi":
			c.DropEvery = 10
			extra = "-drops"
		}
		ps = append(ps, Preset{
			Name:     fmt.Sprintf("s%02d-hr%03.0f-br%02.0f-%s-%s-crf%d%s", i, hr, br, m.name, l.name, e.CRF, extra),
			Config:   c,
			Encoding: e,
		})
	}
	return ps
}

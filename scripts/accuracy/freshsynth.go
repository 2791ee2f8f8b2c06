package main

import (
	"fmt"
	"math"

	"github.com/pulsewire/pulsewire/dsp"
	"github.com/pulsewire/pulsewire/scripts/synth/clip"
)

// syntheticFresh scores clips made like the benchmark presets but from
// other seeds and other points of the rate sequences: every noise draw, face
// position and sway phase is new, and so are the heart and breathing rates.
// A method tuned until the 48 presets read well can still fail here; the
// gap between the two tables is what that tuning is worth.
func syntheticFresh(dir string, n int, verbose bool) (*table, error) {
	presets := freshPresets(n)
	t := newTable(fmt.Sprintf("Synthetic clips, fresh seeds: %d generated videos like the presets, decoded and analysed by the batch path", len(presets)),
		dsp.HR, dsp.BR, dsp.HRV)
	t.notes = append(t.notes,
		"Clips: the presets' conditions (motion, light, CRF, format, flicker, jitter, drops) with seeds 1001 on and heart and",
		"breathing rates from other points of their low-discrepancy sequences; same ground truth as above.")
	return scoreEncoded(t, dir, presets, verbose)
}

// freshPresets returns n clips with the conditions of the first n presets
// and new seeds and rates (hr 45-160, br 6-30, RMSSD after the presets'
// model of its fall with the heart rate).
func freshPresets(n int) []clip.Preset {
	base := clip.Presets()
	frac := func(x float64) float64 { return x - math.Floor(x) }
	var ps []clip.Preset
	for i, p := range base[:min(n, len(base))] {
		k := float64(i + 100)
		hr := 45 + 115*frac(0.5+k*0.6180339887)
		br := 6 + 24*frac(0.3+k*0.4142135624)
		rmssd := min(80, max(5, 60*math.Exp(-(hr-60)/40)*(0.6+0.8*frac(0.7+k*0.7548776662))))
		c := p.Config
		c.Seed = uint64(1001 + i)
		c.HeartRate, c.BreathingRate, c.RMSSD = math.Round(hr*10)/10, math.Round(br*10)/10, math.Round(rmssd)
		p.Config = c
		p.Name = fmt.Sprintf("f%02d-hr%03.0f-br%02.0f-crf%d", i, hr, br, p.Encoding.CRF)
		ps = append(ps, p)
	}
	return ps
}

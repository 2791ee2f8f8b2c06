package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/pulsewire/pulsewire/dsp"
	"github.com/pulsewire/pulsewire/scripts/synth/clip"
)

func TestByCondition(t *testing.T) {
	answered := func(hr float64) dsp.Result {
		return dsp.Result{Variables: map[string]dsp.Variable{dsp.HR: {Value: dsp.Mean{Mean: hr}}}}
	}
	refused := dsp.Result{Variables: map[string]dsp.Variable{dsp.HR: {Error: dsp.ConformityMissingSignal}}}
	truth := func(hr float64, glasses bool) clip.Truth {
		return clip.Truth{HeartRate: hr, HRCourse: []float64{hr}, Codec: "h264", BitrateKbps: 150,
			Conditions: clip.Conditions{Glasses: glasses, Brightness: 1, SkinPulse: 0.002}}
	}
	clips := []analysedClip{
		{truth(80, true), answered(83), 80},
		{truth(90, true), answered(78), 100},
		{truth(70, false), refused, 70},
	}
	var out strings.Builder
	byCondition(clips, append(slices.Clone(webcamConditions), pulseHalves(clips)...)).print(&out)
	for _, want := range []string{
		"| all clips | 3 | 2 (67%) | 7.50 | 8.75 | 50% | 50% | CONFORMITY_MISSING_SIGNAL 1 | 3.3, 67% |",
		"| glasses | 2 | 2 (100%) | 7.50 | 8.75 | 50% | 50% |  | 5.0, 50% |",
		"| no glasses | 1 | 0 | - | - | - | - | CONFORMITY_MISSING_SIGNAL 1 | 0.0, 100% |",
		"| VP9 | 0 | 0 | - | - | - | - |  | - |",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no row %q in\n%s", want, out.String())
		}
	}
}

func TestStrongerPulse(t *testing.T) {
	presets := clip.WebcamPresets()
	if got := strongerPulse(presets, 1); &got[0] != &presets[0] {
		t.Error("strength 1 copied the set")
	}
	strong := strongerPulse(presets, 3)
	for i, p := range strong {
		if want := 3 * presets[i].Config.PulseAmplitude; p.Config.PulseAmplitude != want {
			t.Errorf("%s: pulse %g, want %g", p.Name, p.Config.PulseAmplitude, want)
		}
		if p.Name != presets[i].Name+"-pulse3x" || p.Config.Seed != presets[i].Config.Seed {
			t.Errorf("%s: not the preset %s with a stronger pulse", p.Name, presets[i].Name)
		}
	}
	if presets[0].Name == strong[0].Name {
		t.Error("the stronger set changed the presets it was made from")
	}
}

func TestWithSignature(t *testing.T) {
	presets := clip.WebcamPresets()
	if got := withSignature(presets, nil); &got[0] != &presets[0] {
		t.Error("no signature copied the set")
	}
	sig := [3]float64{0.7, 1, 0.8}
	other := withSignature(presets, &sig)
	for i, p := range other {
		if p.Config.PulseRed != 0.7 || p.Config.PulseBlue != 0.8 {
			t.Errorf("%s: signature %g, %g; want 0.7, 0.8", p.Name, p.Config.PulseRed, p.Config.PulseBlue)
		}
		if p.Name != presets[i].Name+"-red0.7-blue0.8" || p.Config.Seed != presets[i].Config.Seed || p.Config.PulseAmplitude != presets[i].Config.PulseAmplitude {
			t.Errorf("%s: not the preset %s with another signature", p.Name, presets[i].Name)
		}
	}
	if presets[0].Config.PulseRed != 0 || presets[0].Name == other[0].Name {
		t.Error("the set with another signature changed the presets it was made from")
	}
}

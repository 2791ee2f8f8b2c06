package main

import (
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
	byCondition(clips).print(&out)
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

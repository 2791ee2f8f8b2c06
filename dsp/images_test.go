package dsp

import (
	"image"
	"testing"

	"github.com/pulsewire/pulsewire/dsp/face"
)

func TestAnalyzeImages(t *testing.T) {
	c, err := face.LoadCascade()
	if err != nil {
		t.Fatal(err)
	}
	photo, err := photoOnce()
	if err != nil {
		t.Fatal(err)
	}
	blank := image.NewRGBA(image.Rect(0, 0, 320, 240))
	person := Person{AgeYears: 30, Sex: Female, WeightKg: 60, HeightCm: 170, Smoking: NonSmoker}
	for _, tc := range []struct {
		name   string
		imgs   []image.Image
		want   Code
		wantOK bool
	}{
		{"the face photo", []image.Image{photo}, "", true},
		{"photo and a blank image", []image.Image{blank, photo}, "", true},
		{"no face anywhere", []image.Image{blank}, ConformityFacePresence, false},
		{"no images", nil, MissingImage, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := AnalyzeImages(c, tc.imgs, Inputs{Person: person})
			fb := r.Variables[FaceBMI]
			if tc.wantOK {
				if v, isNum := fb.Value.(float64); !isNum || v < 12 || v > 60 {
					t.Errorf("faceBmi %+v", fb)
				}
			} else if fb.Error != tc.want {
				t.Errorf("faceBmi %+v, want %s", fb, tc.want)
			}
			if r.Signal != nil {
				t.Errorf("signal %+v, want null", r.Signal)
			}
			for _, name := range []string{HR, BR, HRV, Stress, PhysicalAge, BP, BPClass, HealthScore} {
				if code(r, name) != MissingCaptures {
					t.Errorf("%s: %+v", name, r.Variables[name])
				}
			}
			if r.Variables[BMI].Value != 20.8 {
				t.Errorf("bmi %+v", r.Variables[BMI])
			}
		})
	}
}

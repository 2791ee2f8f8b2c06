package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pulsewire/pulsewire/scripts/synth/clip"
)

func TestRun(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name    string
		args    []string
		wantErr bool
		check   func(t *testing.T, stdout string)
	}{
		{"list", []string{"-list"}, false, func(t *testing.T, out string) {
			if n := strings.Count(out, "\n"); n != len(clip.Presets()) {
				t.Errorf("%d lines, want %d", n, len(clip.Presets()))
			}
		}},
		{"one clip", []string{"-o", filepath.Join(dir, "a.webm"), "-seconds", "0.5", "-size", "128x96", "-hr", "90"}, false, func(t *testing.T, out string) {
			var tr clip.Truth
			if err := json.Unmarshal([]byte(out), &tr); err != nil || tr.Format != "webm" || tr.Frames != 15 {
				t.Errorf("summary %q: %+v %v", out, tr, err)
			}
			if _, err := os.Stat(filepath.Join(dir, "a.json")); err != nil {
				t.Error(err)
			}
		}},
		{"list webcam", []string{"-list", "-set", "webcam"}, false, func(t *testing.T, out string) {
			if n := strings.Count(out, "\n"); n != len(clip.WebcamPresets()) {
				t.Errorf("%d lines, want %d", n, len(clip.WebcamPresets()))
			}
		}},
		{"list webcam-fresh", []string{"-list", "-set", "webcam-fresh"}, false, func(t *testing.T, out string) {
			if n := strings.Count(out, "\n"); n != len(clip.FreshWebcamPresets()) || !strings.HasPrefix(out, "v00-") {
				t.Errorf("%d lines, want %d named v..:\n%s", n, len(clip.FreshWebcamPresets()), out)
			}
		}},
		{"webcam clip", []string{"-o", filepath.Join(dir, "w.mp4"), "-seconds", "1", "-size", "128x96", "-hr", "80", "-hr-end", "95",
			"-pitch", "15", "-glasses", "-fringe", "0.5", "-skin", "dark", "-bitrate", "120", "-shot-noise", "-auto-exposure", "0.03",
			"-screen-light", "0.2", "-drift", "0.02"}, false, func(t *testing.T, out string) {
			var tr clip.Truth
			if err := json.Unmarshal([]byte(out), &tr); err != nil {
				t.Fatalf("summary %q: %v", out, err)
			}
			c := tr.Conditions
			if tr.BitrateKbps != 120 || c.HeartRateEnd != 95 || c.Pitch != 15 || !c.Glasses || c.Fringe != 0.5 ||
				c.Melanin != clip.SkinTones[3].Melanin || !c.ShotNoise || c.AutoExposure != 0.03 || c.ScreenLight != 0.2 || c.Drift != 0.02 {
				t.Errorf("summary %q: the flags did not all reach the clip", out)
			}
		}},
		{"unknown set", []string{"-list", "-set", "phone"}, true, nil},
		{"unknown preset", []string{"-o", filepath.Join(dir, "p.y4m"), "-preset", "w99-nothing"}, true, nil},
		{"unknown skin tone", []string{"-o", filepath.Join(dir, "s.mp4"), "-seconds", "0.2", "-size", "128x96", "-skin", "green"}, true, nil},
		{"bit rate for raw video", []string{"-o", filepath.Join(dir, "r.y4m"), "-seconds", "0.2", "-size", "128x96", "-bitrate", "200"}, true, nil},
		{"no output named", nil, true, nil},
		{"bad size", []string{"-o", filepath.Join(dir, "b.mp4"), "-size", "big"}, true, nil},
		{"unknown format", []string{"-o", filepath.Join(dir, "c.gif"), "-seconds", "0.2", "-size", "128x96"}, true, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), tc.args, &stdout, &stderr)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want error %v (stderr %s)", err, tc.wantErr, stderr.String())
			}
			if tc.check != nil {
				tc.check(t, stdout.String())
			}
		})
	}
}

func TestFindPreset(t *testing.T) {
	sets := map[string]func() []clip.Preset{"benchmark": clip.Presets, "webcam": clip.WebcamPresets}
	for _, want := range []clip.Preset{clip.Presets()[3], clip.WebcamPresets()[5]} {
		for _, name := range []string{want.Name, want.File()} {
			got, err := findPreset(name, sets)
			if err != nil || got.Name != want.Name {
				t.Errorf("%s: %s, %v", name, got.Name, err)
			}
		}
	}
	if _, err := findPreset("s99", sets); err == nil {
		t.Error("found a preset that does not exist")
	}
}

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

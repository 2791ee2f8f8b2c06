package main

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/pulsewire/pulsewire/dsp"
	"github.com/pulsewire/pulsewire/dsp/face"
	"github.com/pulsewire/pulsewire/dsp/media"
	"github.com/pulsewire/pulsewire/scripts/synth/clip"
)

// clip720p is a 30 s 1280x720 H.264 clip (CRF 20) made once per run.
var clip720p = sync.OnceValues(func() (string, error) {
	dir, err := tempDir()
	if err != nil {
		return "", err
	}
	c, err := clip.New(clip.Config{Width: 1280, Height: 720, Seconds: 30, Seed: 7, Motion: 0.01})
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "batch-720p.mp4")
	_, err = c.Encode(context.Background(), path, clip.Encoding{Format: "mp4", CRF: 20})
	return path, err
})

var (
	tempOnce sync.Once
	tempPath string
	tempErr  error
)

// tempDir is a folder for the benchmark's clip, removed by TestMain.
func tempDir() (string, error) {
	tempOnce.Do(func() { tempPath, tempErr = mkTemp() })
	return tempPath, tempErr
}

// BenchmarkBatch720p measures the batch path of a video upload end to end
// on a 30 s 1280x720 H.264 clip: ffmpeg decoding (scaled down by dsp/media,
// to its default 480x360 and to 320x240), face tracking and the analysis,
// against ffmpeg's decode-only time on the same clip in the same run.
// Metrics: decode-s and batch-s per clip, dsp-% (what the DSP adds to
// decoding) and x-realtime (30 s of video over the batch time).
func BenchmarkBatch720p(b *testing.B) {
	for _, tc := range []struct {
		name string
		opt  media.VideoOptions
	}{
		{"480x360", media.VideoOptions{}},
		{"320x240", media.VideoOptions{MaxWidth: 320, MaxHeight: 240}},
	} {
		b.Run(tc.name, func(b *testing.B) { benchmarkBatch(b, tc.opt) })
	}
}

func benchmarkBatch(b *testing.B, batchOptions media.VideoOptions) {
	path, err := clip720p()
	if err != nil {
		b.Fatal(err)
	}
	cascade, err := face.LoadCascade()
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var decode, batch time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		if _, err := media.DecodeVideoFile(ctx, path, batchOptions, func(media.Frame) error { return nil }); err != nil {
			b.Fatal(err)
		}
		decode += time.Since(start)

		start = time.Now()
		s := dsp.NewStream(cascade, dsp.Inputs{})
		if _, err := media.DecodeVideoFile(ctx, path, batchOptions, func(f media.Frame) error {
			s.Push(f.Image, f.Time)
			return nil
		}); err != nil {
			b.Fatal(err)
		}
		if r := s.Result(); r.Variables[dsp.HR].Error != "" {
			b.Logf("hr: %s", r.Variables[dsp.HR].Error)
		}
		batch += time.Since(start)
	}
	n := float64(b.N)
	b.ReportMetric(decode.Seconds()/n, "decode-s")
	b.ReportMetric(batch.Seconds()/n, "batch-s")
	b.ReportMetric(100*(batch.Seconds()-decode.Seconds())/decode.Seconds(), "dsp-%")
	b.ReportMetric(30*n/batch.Seconds(), "x-realtime")
}

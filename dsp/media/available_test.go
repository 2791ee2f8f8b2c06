package media

import (
	"path/filepath"
	"testing"
)

func TestFFmpegAvailable(t *testing.T) {
	if err := FFmpegAvailable(VideoOptions{}); err != nil {
		t.Fatalf("ffmpeg on PATH: %v", err)
	}
	if err := FFmpegAvailable(VideoOptions{FFmpeg: filepath.Join(t.TempDir(), "ffmpeg")}); err == nil {
		t.Fatal("a missing ffmpeg is available")
	}
}

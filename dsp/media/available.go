package media

import (
	"fmt"
	"os/exec"
)

// FFmpegAvailable reports whether the ffmpeg executable of opt (ffmpeg on
// PATH when opt names none) can be found, without running it: for a
// readiness probe, which runs often.
func FFmpegAvailable(opt VideoOptions) error {
	name := opt.withDefaults().FFmpeg
	if _, err := exec.LookPath(name); err != nil {
		return fmt.Errorf("ffmpeg %q: %w", name, err)
	}
	return nil
}

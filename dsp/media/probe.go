package media

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// maxPixelsMessage is what ffmpeg's decoders log when a picture is over
// their -max_pixels.
const maxPixelsMessage = "exceeds specified max pixel count"

// probeTimeout bounds a probe: it reads the headers and at most a few
// frames.
const probeTimeout = 30 * time.Second

// probePixels reads the size of the first video stream of input with
// ffprobe, before anything is decoded for the analysis, and refuses a
// picture over opt.MaxPixels with ErrTooManyPixels. ffprobe decodes a frame
// or two to learn a stream's parameters, so it is held to -max_pixels
// itself: a picture too large fails its decoder before any is allocated.
// A probe that fails for another reason refuses nothing: the decode that
// follows finds the problem and names it.
func probePixels(ctx context.Context, c Container, input string, opt VideoOptions) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, opt.FFprobe, "-v", "error", "-hide_banner",
		"-protocol_whitelist", "file,pipe", "-max_pixels", strconv.FormatInt(opt.MaxPixels, 10),
		"-f", c.demuxer(), "-select_streams", "v:0", "-show_entries", "stream=width,height", "-of", "csv=p=0:s=x", input)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	switch {
	case errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w: %v", ErrDecoderMissing, err)
	case strings.Contains(stderr.String(), maxPixelsMessage):
		return fmt.Errorf("%w: over %d pixels a frame", ErrTooManyPixels, opt.MaxPixels)
	case err != nil:
		return nil
	}
	w, h, ok := strings.Cut(strings.TrimSpace(stdout.String()), "x")
	width, werr := strconv.ParseInt(w, 10, 64)
	height, herr := strconv.ParseInt(h, 10, 64)
	if !ok || werr != nil || herr != nil {
		return nil
	}
	if width*height > opt.MaxPixels {
		return fmt.Errorf("%w: %dx%d frames, limit %d pixels", ErrTooManyPixels, width, height, opt.MaxPixels)
	}
	return nil
}

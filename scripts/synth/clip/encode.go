package clip

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// Encoding says how a clip is stored.
type Encoding struct {
	// Format is the container: mp4, mov or avi (H.264), webm (VP9) or y4m
	// (raw 4:2:0, what Chromium's fake camera plays).
	Format string
	// CRF is the H.264 constant rate factor (18 visually lossless, 28 low
	// quality; 20 when 0). VP9 gets CRF+4, which lost a 0.6% pulse at the
	// same point as H.264 in our checks on 640x480 clips. y4m ignores it.
	CRF int
	// BitrateKbps, when set, encodes at a target bit rate instead of a
	// constant quality, as a webcam's or a browser's real-time encoder
	// does (kbit/s; 100-500 is what a 640x480 call or recording gets).
	// CRF is then unused; y4m refuses it.
	BitrateKbps int
	// KeyFrameEvery, when set, puts a key frame every so many frames
	// whatever the picture, as OpenCV's video writer (12), many phones and
	// hardware encoders (a second or two) do; 0 leaves the choice to the
	// encoder, which puts one at a change of scene and otherwise seldom
	// (every 250 frames for x264). y4m refuses it.
	KeyFrameEvery int
	// Transcoded reaches BitrateKbps the way a file made from a recording
	// afterwards does, not the way a camera or a call encodes as it films:
	// x264 at its default preset and an average bit rate (ffmpeg -b:v),
	// free to look ahead, to use B-frames and to spend bits unevenly over
	// the seconds. H.264 formats only.
	Transcoded bool
}

// Formats lists the formats Encode writes.
var Formats = []string{"mp4", "mov", "avi", "webm", "y4m"}

// codecArgs returns ffmpeg's output options for the encoding.
func (e Encoding) codecArgs() ([]string, string, error) {
	args, codec, err := e.encoderArgs()
	if err != nil || e.KeyFrameEvery == 0 {
		return args, codec, err
	}
	switch {
	case e.KeyFrameEvery < 1 || e.KeyFrameEvery > 1000:
		return nil, "", fmt.Errorf("key frame every %d frames: want 1 to 1000", e.KeyFrameEvery)
	case e.Format == "y4m":
		return nil, "", errors.New("y4m is raw video: no key frames")
	}
	n := strconv.Itoa(e.KeyFrameEvery)
	args = append(args, "-g", n, "-keyint_min", n)
	if codec == "h264" {
		// x264 would add one at every change of scene too.
		args = append(args, "-sc_threshold", "0")
	}
	return args, codec, nil
}

// encoderArgs returns ffmpeg's output options for the codec and its rate.
func (e Encoding) encoderArgs() ([]string, string, error) {
	crf := cmp.Or(e.CRF, 20)
	if crf < 0 || crf > 51 {
		return nil, "", fmt.Errorf("crf %d: want 0 to 51", crf)
	}
	if e.BitrateKbps != 0 {
		return e.rateArgs()
	}
	if e.Transcoded {
		return nil, "", errors.New("transcoded: needs a bit rate")
	}
	// x264's default preset, medium: the faster presets skip so many
	// blocks of a near-static face that a 0.6% pulse is gone already at
	// CRF 20, which no camera's encoder at its usual bit rate does.
	h264 := []string{"-c:v", "libx264", "-preset", "medium", "-crf", strconv.Itoa(crf), "-pix_fmt", "yuv420p"}
	switch e.Format {
	case "mp4", "mov":
		return append(h264, "-movflags", "+faststart"), "h264", nil
	case "avi":
		return h264, "h264", nil
	case "webm":
		return []string{"-c:v", "libvpx-vp9", "-crf", strconv.Itoa(min(63, crf+4)), "-b:v", "0",
			"-deadline", "realtime", "-cpu-used", "8", "-row-mt", "1", "-pix_fmt", "yuv420p"}, "vp9", nil
	case "y4m":
		return []string{"-pix_fmt", "yuv420p", "-f", "yuv4mpegpipe"}, "rawvideo", nil
	}
	return nil, "", fmt.Errorf("format %q: want one of %v", e.Format, Formats)
}

// rateArgs are ffmpeg's output options for a rate-controlled encoding.
// A real-time encoder cannot look ahead or buffer seconds of video: it
// keeps each second near the target (a rate buffer of one second, the
// maxrate/bufsize pair), encodes every frame as it comes (x264's
// zerolatency: no B-frames, no frame threads, no look-ahead) with a fast
// search (preset veryfast), and uses the constrained baseline profile of
// WebRTC and of most hardware encoders. It runs on one thread: x264's
// zerolatency threads cut each frame into one slice per thread and share
// the rate buffer among them in whatever order they finish, so the same
// clip came out different from run to run and from machine to machine
// (the webcam set answered 11 clips of 24 from one encoding and 8 from
// another); libvpx's threads did the same. One slice a frame is also what
// WebRTC's encoders send at 640x480. VP9 gets libvpx's real-time mode at
// the same rate, in its constant bit rate mode as WebRTC runs it.
// Keyframes come at the encoders' own defaults unless KeyFrameEvery says.
func (e Encoding) rateArgs() ([]string, string, error) {
	if e.BitrateKbps < 50 || e.BitrateKbps > 50000 {
		return nil, "", fmt.Errorf("bit rate %d kbit/s: want 50 to 50000", e.BitrateKbps)
	}
	rate := strconv.Itoa(e.BitrateKbps) + "k"
	budget := []string{"-b:v", rate, "-maxrate", rate, "-bufsize", rate}
	switch e.Format {
	case "mp4", "mov", "avi":
		args := append([]string{"-c:v", "libx264", "-threads", "1", "-preset", "veryfast", "-tune", "zerolatency",
			"-profile:v", "baseline", "-pix_fmt", "yuv420p"}, budget...)
		if e.Transcoded {
			// On one thread too: x264's frame threads would make each
			// run's file differ as its slices did.
			args = []string{"-c:v", "libx264", "-threads", "1", "-preset", "medium", "-pix_fmt", "yuv420p", "-b:v", rate}
		}
		if e.Format != "avi" {
			args = append(args, "-movflags", "+faststart")
		}
		return args, "h264", nil
	case "webm":
		if e.Transcoded {
			return nil, "", errors.New("transcoded: H.264 formats only")
		}
		// Without a floor (minrate) libvpx leaves its constant bit rate
		// mode and overshoots twofold on noisy video.
		return append([]string{"-c:v", "libvpx-vp9", "-threads", "1", "-deadline", "realtime", "-cpu-used", "8",
			"-pix_fmt", "yuv420p", "-minrate", rate}, budget...), "vp9", nil
	case "y4m":
		return nil, "", errors.New("y4m is raw video: no bit rate")
	}
	return nil, "", fmt.Errorf("format %q: want one of %v", e.Format, Formats)
}

// Encode renders the clip through ffmpeg into path and writes the ground
// truth beside it (the same name with .json). Frames go to ffmpeg over a
// pipe as they are drawn, so a long clip never sits in memory. Uneven frame
// times (Jitter, DropEvery) are kept in mp4, mov and webm; avi and y4m store
// a constant rate and refuse them.
func (c *Clip) Encode(ctx context.Context, path string, e Encoding) (Truth, error) {
	codec, codecName, err := e.codecArgs()
	if err != nil {
		return Truth{}, err
	}
	vfr := c.cfg.Jitter > 0 || c.cfg.DropEvery > 0
	if vfr && (e.Format == "avi" || e.Format == "y4m") {
		return Truth{}, fmt.Errorf("%s stores a constant frame rate: no jitter or dropped frames", e.Format)
	}
	args := []string{"-nostdin", "-hide_banner", "-loglevel", "error",
		"-f", "rawvideo", "-pix_fmt", "rgba", "-s", fmt.Sprintf("%dx%d", c.cfg.Width, c.cfg.Height),
		"-framerate", strconv.FormatFloat(c.cfg.FPS, 'f', -1, 64), "-i", "pipe:0"}
	if vfr {
		// The same times as frameTimes, computed by ffmpeg from the index
		// of each frame it receives.
		n := "N"
		if k := c.cfg.DropEvery; k > 0 {
			n = fmt.Sprintf("(N+floor(N/%d))", k-1)
		}
		expr := fmt.Sprintf("round((%s+%g*sin(2.3*%s))/%g*1000)/1000/TB", n, c.cfg.Jitter, n, c.cfg.FPS)
		args = append(args, "-vf", "settb=1/1000,setpts='"+expr+"'", "-fps_mode", "passthrough", "-enc_time_base", "1:1000")
		if e.Format != "webm" {
			args = append(args, "-video_track_timescale", "1000")
		}
	}
	args = append(args, codec...)
	// bitexact: no random identifiers and no encoder version in the
	// container, so the same clip is the same file.
	args = append(args, "-fflags", "+bitexact", "-y", path)

	cmd := exec.CommandContext(ctx, "ffmpeg", args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return Truth{}, err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return Truth{}, err
	}
	img := image.NewRGBA(image.Rect(0, 0, c.cfg.Width, c.cfg.Height))
	var werr error
	for i := range c.times {
		c.Render(i, img)
		if _, werr = stdin.Write(img.Pix); werr != nil {
			break
		}
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		os.Remove(path)
		return Truth{}, fmt.Errorf("ffmpeg: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	if werr != nil {
		os.Remove(path)
		return Truth{}, werr
	}
	t := c.Truth()
	t.File, t.Format, t.Codec = filepath.Base(path), e.Format, codecName
	t.KeyFrameEvery, t.Transcoded = e.KeyFrameEvery, e.Transcoded
	switch {
	case e.BitrateKbps > 0:
		t.BitrateKbps = e.BitrateKbps
	case e.Format != "y4m":
		t.CRF = cmp.Or(e.CRF, 20)
	}
	b, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return Truth{}, err
	}
	return t, os.WriteFile(TruthPath(path), append(b, '\n'), 0o644)
}

// TruthPath is where the ground truth of the clip at path is written.
func TruthPath(path string) string {
	return strings.TrimSuffix(path, filepath.Ext(path)) + ".json"
}

// ReadTruth reads the ground truth written beside a clip.
func ReadTruth(path string) (Truth, error) {
	var t Truth
	b, err := os.ReadFile(path)
	if err != nil {
		return t, err
	}
	return t, json.Unmarshal(b, &t)
}

// Preset is one clip of the benchmark set.
type Preset struct {
	Name     string
	Config   Config
	Encoding Encoding
}

// File is the preset's file name.
func (p Preset) File() string { return p.Name + "." + p.Encoding.Format }

// Generate encodes the presets into dir with the given number of parallel
// workers (each runs one ffmpeg) and returns their ground truths in preset
// order. progress, if not nil, is called as each clip is written.
func Generate(ctx context.Context, dir string, presets []Preset, workers int, progress func(Truth)) ([]Truth, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	truths := make([]Truth, len(presets))
	errs := make([]error, len(presets))
	jobs := make(chan int)
	var mu sync.Mutex // protects progress calls
	var wg sync.WaitGroup
	for range max(1, workers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				c, err := New(presets[i].Config)
				if err == nil {
					truths[i], err = c.Encode(ctx, filepath.Join(dir, presets[i].File()), presets[i].Encoding)
				}
				if err != nil {
					errs[i] = fmt.Errorf("%s: %w", presets[i].Name, err)
					continue
				}
				if progress != nil {
					mu.Lock()
					progress(truths[i])
					mu.Unlock()
				}
			}
		}()
	}
	for i := range presets {
		if ctx.Err() != nil {
			break
		}
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	if err := errors.Join(append(errs, ctx.Err())...); err != nil {
		return nil, err
	}
	return truths, nil
}

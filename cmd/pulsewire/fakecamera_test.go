package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// Chromium's fake camera plays a y4m file one frame per tick of its own
// timer and stamps each frame with the time of the tick. On a loaded
// machine the timer fires late and the lost ticks are not made up: the
// file then plays slower than the clock, and a face with a pulse of
// 71 bpm in the file beats at, say, 66 bpm by the frames' capture times,
// which is what the server measures. A real camera films a real pulse in
// real time and has no such error. So each frame of the test's y4m carries
// its index, the page reads it back from every frame the camera gives, and
// the truth a measurement is held to is the file's heart rate times the
// speed at which the file actually played.
//
// Late ticks, each a few ms, stretch every beat: the pulse's rate drops
// by the speed. A pause of the camera longer than half a beat does not: the
// beats before and after it keep their rate, and the pause only shifts
// their phase (one run at a load of 8 had a 1.7 s pause, which took the
// file's mean speed to 0.917x, and its scan read 71.6 bpm from a 71.0 bpm
// file). So the speed is measured over the time the camera played, pauses
// longer than pauseLimit left out.
const pauseLimit = 400 * time.Millisecond

// stampBits and the size of one bit's block, in pixels: 12 bits count
// 4096 frames (over four minutes at 15 frames a second), in a strip of
// 96x4 pixels in the bottom left corner, far from the face.
const (
	stampBits   = 12
	stampWidth  = 8
	stampHeight = 4
)

// fakeCamera writes a 320x240 y4m at cameraFPS of a synthetic face with a
// known heart rate, seconds long, its frames stamped with their index, and returns its
// path and the true mean heart rate. The clip comes from scripts/synth: the
// binary PULSEWIRE_SYNTH names (make test builds it before the tests enter
// their network namespace), or else go run, without the race detector,
// which would make drawing the frames ten times slower.
func fakeCamera(t *testing.T, seconds, hr float64) (string, float64) {
	t.Helper()
	dir := t.TempDir()
	clip := filepath.Join(dir, "clip.y4m")
	args := []string{"-o", clip, "-size", "320x240", "-fps", fmt.Sprint(cameraFPS), "-seconds", fmt.Sprint(seconds),
		"-hr", fmt.Sprint(hr), "-seed", "7"}
	cmd := exec.Command("go", append([]string{"run", "./scripts/synth"}, args...)...)
	if synth := os.Getenv("PULSEWIRE_SYNTH"); synth != "" {
		cmd = exec.Command(synth, args...)
	}
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("synth: %v\n%s", err, stderr)
	}
	var truth struct {
		HR float64 `json:"hrBpm"`
	}
	if err := json.Unmarshal(out, &truth); err != nil || truth.HR == 0 {
		t.Fatalf("synth printed %q", out)
	}
	path := filepath.Join(dir, "face.y4m")
	if err := stampY4M(clip, path); err != nil {
		t.Fatal(err)
	}
	os.Remove(clip)
	return path, truth.HR
}

// stampY4M copies a 4:2:0 y4m from src to dst, drawing each frame's index
// into its luma plane: bit i (lowest first) is block i of the strip, white
// (235) for 1 and black (16) for 0, at the levels of limited-range video.
func stampY4M(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	r := bufio.NewReaderSize(in, 1<<20)
	header, err := r.ReadBytes('\n')
	if err != nil {
		return fmt.Errorf("y4m header: %w", err)
	}
	var w, h int
	for _, f := range bytes.Fields(header[len("YUV4MPEG2"):]) {
		switch f[0] {
		case 'W':
			fmt.Sscan(string(f[1:]), &w)
		case 'H':
			fmt.Sscan(string(f[1:]), &h)
		case 'C':
			if !bytes.HasPrefix(f, []byte("C420")) {
				return fmt.Errorf("y4m: colour space %s, want 4:2:0", f)
			}
		}
	}
	if w < stampBits*stampWidth || h < stampHeight {
		return fmt.Errorf("y4m: %dx%d is too small for the stamp", w, h)
	}
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(out, 1<<20)
	bw.Write(header)
	frame := make([]byte, w*h*3/2)
	for i := 0; ; i++ {
		line, err := r.ReadBytes('\n')
		if err == io.EOF && len(line) == 0 {
			break
		}
		if err != nil || !bytes.HasPrefix(line, []byte("FRAME")) {
			out.Close()
			return fmt.Errorf("y4m frame %d: bad frame header", i)
		}
		if _, err := io.ReadFull(r, frame); err != nil {
			out.Close()
			return fmt.Errorf("y4m frame %d: %w", i, err)
		}
		for bit := range stampBits {
			level := byte(16)
			if i>>bit&1 == 1 {
				level = 235
			}
			for y := h - stampHeight; y < h; y++ {
				row := frame[y*w+bit*stampWidth:][:stampWidth]
				for x := range row {
					row[x] = level
				}
			}
		}
		bw.Write(line)
		bw.Write(frame)
	}
	if err := bw.Flush(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// cameraTap, run in the page before its own scripts, wraps getUserMedia:
// a clone of each camera track goes through a MediaStreamTrackProcessor
// that reads the stamp of every frame it gets. Between two frames it saw,
// the file played (their indexes apart) / fps over (their capture times
// apart); window.cameraTap sums both, but for pauses (capture time beyond
// what the indexes account for) over pauseLimit, which it counts apart,
// and keeps the longest pause. Frames it misses do not matter: the indexes
// say how far the file played.
var cameraTap = fmt.Sprintf(`(() => {
	const bits = %d, bw = %d, bh = %d, frameUs = 1e6 / %d, pauseLimitUs = %d;
	window.cameraTap = { frames: 0, last: null, fileUs: 0, clockUs: 0, pausedUs: 0, longestPauseUs: 0 };
	const media = navigator.mediaDevices;
	const open = media.getUserMedia.bind(media);
	media.getUserMedia = async (constraints) => {
		const stream = await open(constraints);
		const track = stream.getVideoTracks()[0];
		if (!track || typeof MediaStreamTrackProcessor !== 'function') return stream;
		const reader = new MediaStreamTrackProcessor({ track: track.clone() }).readable.getReader();
		const canvas = new OffscreenCanvas(bits * bw, bh);
		const ctx = canvas.getContext('2d', { willReadFrequently: true });
		(async () => {
			for (;;) {
				const { value: frame, done } = await reader.read().catch(() => ({ done: true }));
				if (done) return;
				ctx.drawImage(frame, 0, frame.displayHeight - bh, bits * bw, bh, 0, 0, bits * bw, bh);
				const px = ctx.getImageData(0, 0, bits * bw, bh).data;
				let index = 0;
				for (let i = 0; i < bits; i++) {
					if (px[4 * ((bh >> 1) * bits * bw + i * bw + (bw >> 1))] > 128) index |= 1 << i;
				}
				const seen = [frame.timestamp, index];
				frame.close();
				const tap = window.cameraTap;
				if (tap.frozen) continue;
				tap.frames++;
				if (tap.last) {
					const clockUs = seen[0] - tap.last[0], fileUs = (seen[1] - tap.last[1]) * frameUs;
					const pauseUs = clockUs - fileUs;
					tap.longestPauseUs = Math.max(tap.longestPauseUs, pauseUs);
					if (pauseUs > pauseLimitUs) {
						tap.pausedUs += clockUs;
					} else {
						tap.clockUs += clockUs;
						tap.fileUs += fileUs;
					}
				}
				tap.last = seen;
			}
		})();
		return stream;
	};
})()`, stampBits, stampWidth, stampHeight, cameraFPS, pauseLimit.Microseconds())

// tapCamera installs cameraTap in every page the browser loads.
func tapCamera(t *testing.T, b *browser) {
	t.Helper()
	if err := chromedp.Do(b.ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: cameraTap})
		return err
	})); err != nil {
		t.Fatal(err)
	}
}

// playback is how the camera's file played in the page, from the first
// frame the tap saw to the last before it froze.
type playback struct {
	speed   float64       // file seconds per capture-time second, pauses left out: 1 on an idle machine
	frames  int           // frames the tap saw
	paused  time.Duration // time in pauses over pauseLimit
	longest time.Duration // the longest pause, of any length
}

func (p playback) String() string {
	return fmt.Sprintf("played at %.3fx, %d frames seen, longest pause %v, %v in pauses over %v",
		p.speed, p.frames, p.longest.Round(time.Millisecond), p.paused.Round(time.Millisecond), pauseLimit)
}

func cameraPlayback(t *testing.T, b *browser) playback {
	t.Helper()
	tap := eval[struct {
		Frames                                    int
		FileUs, ClockUs, PausedUs, LongestPauseUs float64
	}](t, b, `window.cameraTap`)
	if tap.Frames < 2 || tap.ClockUs <= 0 || tap.FileUs <= 0 {
		t.Fatalf("the camera tap saw %d frames, the file played %.0f µs in %.0f µs", tap.Frames, tap.FileUs, tap.ClockUs)
	}
	return playback{
		speed:   tap.FileUs / tap.ClockUs,
		frames:  tap.Frames,
		paused:  time.Duration(tap.PausedUs) * time.Microsecond,
		longest: time.Duration(tap.LongestPauseUs) * time.Microsecond,
	}
}

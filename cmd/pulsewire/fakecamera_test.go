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
// that reads the stamp of every frame it gets, and records the first and
// the last (capture time in µs, index) in window.cameraTap, and the
// longest stall: the most capture time that passed between two frames it
// saw beyond what their indexes account for. Frames it misses do not
// matter: the indexes say how far the file played.
var cameraTap = fmt.Sprintf(`(() => {
	const bits = %d, bw = %d, bh = %d, frameUs = 1e6 / %d;
	window.cameraTap = { frames: 0, first: null, last: null, stallUs: 0 };
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
				if (!tap.first) tap.first = seen;
				if (tap.last) tap.stallUs = Math.max(tap.stallUs, seen[0] - tap.last[0] - (seen[1] - tap.last[1]) * frameUs);
				tap.last = seen;
			}
		})();
		return stream;
	};
})()`, stampBits, stampWidth, stampHeight, cameraFPS)

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
	speed  float64       // file seconds per capture-time second: 1 on an idle machine
	frames int           // frames the tap saw
	stall  time.Duration // the longest stall
}

func (p playback) String() string {
	return fmt.Sprintf("played at %.3fx, %d frames seen, longest stall %v", p.speed, p.frames, p.stall.Round(time.Millisecond))
}

func cameraPlayback(t *testing.T, b *browser) playback {
	t.Helper()
	tap := eval[struct {
		Frames      int
		First, Last [2]float64
		StallUs     float64
	}](t, b, `window.cameraTap`)
	span := (tap.Last[0] - tap.First[0]) / 1e6
	if tap.Frames < 2 || span <= 0 || tap.Last[1] <= tap.First[1] {
		t.Fatalf("the camera tap saw %d frames: first %v, last %v", tap.Frames, tap.First, tap.Last)
	}
	return playback{
		speed:  (tap.Last[1] - tap.First[1]) / cameraFPS / span,
		frames: tap.Frames,
		stall:  time.Duration(tap.StallUs) * time.Microsecond,
	}
}

// Command synth makes synthetic face videos with a known heart rate,
// breathing rate and RMSSD (package clip explains the model), each with its
// ground truth in a JSON file beside it.
//
// One clip:
//
//	go run ./scripts/synth -o face.mp4 [-hr 72] [-br 15] [-rmssd 40] [-seconds 20] [-crf 20] ...
//
// The benchmark set (48 clips of 30 s, several minutes on two cores):
//
//	go run ./scripts/synth -presets [-out scripts/out/synth] [-workers 2]
//	go run ./scripts/synth -list
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/pulsewire/pulsewire/scripts/synth/clip"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "synth:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("synth", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		out     = fs.String("o", "", "write one clip to this file; its extension picks the format (mp4, mov, avi, webm, y4m)")
		presets = fs.Bool("presets", false, "write the benchmark set")
		list    = fs.Bool("list", false, "list the benchmark set")
		dir     = fs.String("out", filepath.Join("scripts", "out", "synth"), "folder for -presets")
		workers = fs.Int("workers", runtime.NumCPU(), "clips encoded at once with -presets")
		size    = fs.String("size", "640x480", "frame size WxH")
		crf     = fs.Int("crf", 20, "H.264 constant rate factor (VP9 gets crf+4)")
		c       clip.Config
	)
	fs.Float64Var(&c.FPS, "fps", clip.DefaultFPS, "frame rate")
	fs.Float64Var(&c.Seconds, "seconds", clip.DefaultSeconds, "length")
	fs.Uint64Var(&c.Seed, "seed", 1, "random seed")
	fs.Float64Var(&c.HeartRate, "hr", clip.DefaultHeartRate, "mean heart rate, bpm")
	fs.Float64Var(&c.BreathingRate, "br", clip.DefaultBreathingRate, "mean breathing rate, per minute")
	fs.Float64Var(&c.RMSSD, "rmssd", clip.DefaultRMSSD, "RMSSD of the RR intervals, ms")
	fs.Float64Var(&c.PulseAmplitude, "amplitude", clip.DefaultPulseAmplitude, "peak-to-peak pulse on green skin, fraction")
	fs.Float64Var(&c.Motion, "motion", 0, "head sway, face heights (0.01 small, 0.08 moving)")
	fs.Float64Var(&c.Brightness, "brightness", 1, "light level (0.3 dark, 1.1 bright)")
	fs.Float64Var(&c.FlickerHz, "flicker-hz", 0, "light flicker frequency, Hz")
	fs.Float64Var(&c.FlickerDepth, "flicker-depth", 0, "light flicker depth, fraction")
	fs.Float64Var(&c.Noise, "noise", clip.DefaultNoise, "camera noise, 8-bit levels (standard deviation)")
	fs.Float64Var(&c.FaceScale, "face-scale", clip.DefaultFaceScale, "photo height over frame height")
	fs.Float64Var(&c.Jitter, "jitter", 0, "frame time jitter, fraction of a frame interval (0-0.45)")
	fs.IntVar(&c.DropEvery, "drop-every", 0, "drop every n-th frame (0: none)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case *list:
		for _, p := range clip.Presets() {
			fmt.Fprintln(stdout, p.File())
		}
		return nil
	case *presets:
		fmt.Fprintf(stderr, "writing %d clips to %s\n", len(clip.Presets()), *dir)
		n := 0
		_, err := clip.Generate(ctx, *dir, clip.Presets(), *workers, func(t clip.Truth) {
			n++
			fmt.Fprintf(stderr, "[%2d/%d] %s\n", n, len(clip.Presets()), t.File)
		})
		return err
	case *out == "":
		fs.Usage()
		return fmt.Errorf("give -o FILE, -presets or -list")
	}
	if _, err := fmt.Sscanf(*size, "%dx%d", &c.Width, &c.Height); err != nil {
		return fmt.Errorf("-size %q: want WxH", *size)
	}
	cl, err := clip.New(c)
	if err != nil {
		return err
	}
	format := strings.TrimPrefix(filepath.Ext(*out), ".")
	t, err := cl.Encode(ctx, *out, clip.Encoding{Format: format, CRF: *crf})
	if err != nil {
		return err
	}
	t.BeatTimes = nil // the summary, not the whole truth
	b, _ := json.Marshal(t)
	fmt.Fprintf(stdout, "%s\n", b)
	return nil
}

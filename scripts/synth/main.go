// Command synth makes synthetic face videos with a known heart rate,
// breathing rate and RMSSD (package clip explains the model), each with its
// ground truth in a JSON file beside it.
//
// One clip:
//
//	go run ./scripts/synth -o face.mp4 [-hr 72] [-br 15] [-rmssd 40] [-seconds 20] [-crf 20] ...
//	go run ./scripts/synth -o desk.mp4 -hr 80 -hr-end 100 -pitch 18 -glasses -skin dark -bitrate 150 ...
//
// A clip of a preset, in any format (y4m for Chromium's fake camera; the
// preset's own encoding when the format is its own):
//
//	go run ./scripts/synth -preset w03-hr083up26-400k-light-dark-pitch10-glasses-fringe -o w03.y4m
//
// The sets (the benchmark set: 48 clips of 30 s; the webcam set: 24 clips
// of 45-65 s that look like webcam recordings of a person at a computer;
// the key-frame set: 8 people of 40 s, each with three key-frame
// intervals; several minutes each on two cores):
//
//	go run ./scripts/synth -presets [-set benchmark|webcam|webcam-transcoded|keyframes] [-out scripts/out/synth] [-workers 2]
//	go run ./scripts/synth -list [-set webcam]
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
	"slices"
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
		presets = fs.Bool("presets", false, "write a set of presets (-set) into -out")
		list    = fs.Bool("list", false, "list a set of presets (-set)")
		set     = fs.String("set", "benchmark", "preset set: benchmark (48 clips of 30 s), webcam (24 webcam-like clips of 45-65 s), webcam-fresh (the webcam set's conditions with new people), webcam-transcoded and webcam-fresh-transcoded (those as files transcoded after recording) or keyframes (8 people, 3 key-frame intervals)")
		preset  = fs.String("preset", "", "with -o: write this preset (a name from -list) instead of a clip made of the flags")
		dir     = fs.String("out", filepath.Join("scripts", "out", "synth"), "folder for -presets")
		workers = fs.Int("workers", runtime.NumCPU(), "clips encoded at once with -presets")
		size    = fs.String("size", "640x480", "frame size WxH")
		crf     = fs.Int("crf", 20, "H.264 constant rate factor (VP9 gets crf+4)")
		bitrate = fs.Int("bitrate", 0, "encode at this bit rate, kbit/s, as a webcam's real-time encoder does (instead of -crf)")
		keys    = fs.Int("keyframe-every", 0, "a key frame every n frames whatever the picture (12: OpenCV's video writer; 0: the encoder chooses)")
		transc  = fs.Bool("transcoded", false, "with -bitrate: reach it as a file transcoded after recording does (x264's default preset at an average rate; H.264 only) instead of a real-time encoder")
		skin    = fs.String("skin", "", "skin tone: light (the photo's own), medium, brown or dark (sets -melanin)")
		c       clip.Config
	)
	fs.Float64Var(&c.FPS, "fps", clip.DefaultFPS, "frame rate")
	fs.Float64Var(&c.Seconds, "seconds", clip.DefaultSeconds, "length")
	fs.Uint64Var(&c.Seed, "seed", 1, "random seed")
	fs.Float64Var(&c.HeartRate, "hr", clip.DefaultHeartRate, "mean heart rate, bpm (with -hr-end: the rate at the start)")
	fs.Float64Var(&c.HeartRateEnd, "hr-end", 0, "heart rate at the end, bpm: the rate moves there from -hr between 20% and 60% of the clip (0: steady)")
	fs.Float64Var(&c.BreathingRate, "br", clip.DefaultBreathingRate, "mean breathing rate, per minute")
	fs.Float64Var(&c.RMSSD, "rmssd", clip.DefaultRMSSD, "RMSSD of the RR intervals, ms")
	fs.Float64Var(&c.PulseAmplitude, "amplitude", clip.DefaultPulseAmplitude, "peak-to-peak pulse on green skin, fraction (webcams: 0.002-0.005)")
	fs.Float64Var(&c.PulseRed, "pulse-red", 0, "the pulse's change in red as a share of green's (0: the skin's blood-volume signature, 0.43)")
	fs.Float64Var(&c.PulseBlue, "pulse-blue", 0, "the pulse's change in blue as a share of green's (0: the skin's blood-volume signature, 0.69)")
	fs.Float64Var(&c.Motion, "motion", 0, "head sway, face heights (0.01 small, 0.08 moving)")
	fs.Float64Var(&c.Drift, "drift", 0, "slow random drift of the head, face heights (0.02 a person at a desk)")
	fs.Float64Var(&c.Pitch, "pitch", 0, "head bowed, degrees (15-25 looking down at a laptop)")
	fs.BoolVar(&c.Glasses, "glasses", false, "dark-rimmed glasses reflecting the room and the screen")
	fs.Float64Var(&c.Fringe, "fringe", 0, "hair over the forehead, share of its height (0-1)")
	fs.Float64Var(&c.Melanin, "melanin", 0, "epidermal melanosome volume fraction: the skin tone (0 the photo's own; 0.13, 0.22, 0.35 darker)")
	fs.Float64Var(&c.Brightness, "brightness", 1, "light level (0.3 dark, 1.1 bright)")
	fs.Float64Var(&c.ScreenLight, "screen-light", 0, "share of the face's light from a screen whose content changes (0.2 a laptop in a dim room)")
	fs.Float64Var(&c.AutoExposure, "auto-exposure", 0, "camera exposure steps, fraction (0.03 webcam-like; white balance steps a third of it)")
	fs.Float64Var(&c.FlickerHz, "flicker-hz", 0, "light flicker frequency, Hz")
	fs.Float64Var(&c.FlickerDepth, "flicker-depth", 0, "light flicker depth, fraction")
	fs.Float64Var(&c.Noise, "noise", clip.DefaultNoise, "camera read noise, 8-bit levels (standard deviation)")
	fs.BoolVar(&c.ShotNoise, "shot-noise", false, "add photon shot noise, which grows with the light a pixel gets")
	fs.Float64Var(&c.FaceScale, "face-scale", clip.DefaultFaceScale, "photo height over frame height")
	fs.Float64Var(&c.Jitter, "jitter", 0, "frame time jitter, fraction of a frame interval (0-0.45)")
	fs.IntVar(&c.DropEvery, "drop-every", 0, "drop every n-th frame (0: none)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	sets := map[string]func() []clip.Preset{"benchmark": clip.Presets, "webcam": clip.WebcamPresets,
		"webcam-fresh": clip.FreshWebcamPresets, "keyframes": clip.KeyFramePresets,
		"webcam-transcoded":       func() []clip.Preset { return clip.Transcoded(clip.WebcamPresets()) },
		"webcam-fresh-transcoded": func() []clip.Preset { return clip.Transcoded(clip.FreshWebcamPresets()) }}
	makeSet, ok := sets[*set]
	if !ok {
		return fmt.Errorf("-set %q: want benchmark, webcam, webcam-fresh, webcam-transcoded, webcam-fresh-transcoded or keyframes", *set)
	}
	switch {
	case *list:
		for _, p := range makeSet() {
			fmt.Fprintln(stdout, p.File())
		}
		return nil
	case *presets:
		ps := makeSet()
		fmt.Fprintf(stderr, "writing %d clips to %s\n", len(ps), *dir)
		n := 0
		_, err := clip.Generate(ctx, *dir, ps, *workers, func(t clip.Truth) {
			n++
			fmt.Fprintf(stderr, "[%2d/%d] %s\n", n, len(ps), t.File)
		})
		return err
	case *out == "":
		fs.Usage()
		return fmt.Errorf("give -o FILE, -presets or -list")
	}
	format := strings.TrimPrefix(filepath.Ext(*out), ".")
	enc := clip.Encoding{Format: format, CRF: *crf, BitrateKbps: *bitrate, KeyFrameEvery: *keys, Transcoded: *transc}
	if *preset != "" {
		p, err := findPreset(*preset, sets)
		if err != nil {
			return err
		}
		c, enc = p.Config, clip.Encoding{Format: format}
		if format == p.Encoding.Format {
			enc = p.Encoding
		}
	} else {
		if _, err := fmt.Sscanf(*size, "%dx%d", &c.Width, &c.Height); err != nil {
			return fmt.Errorf("-size %q: want WxH", *size)
		}
		if *skin != "" {
			i := slices.IndexFunc(clip.SkinTones, func(t clip.SkinTone) bool { return t.Name == *skin })
			if i < 0 {
				return fmt.Errorf("-skin %q: want light, medium, brown or dark", *skin)
			}
			c.Melanin = clip.SkinTones[i].Melanin
		}
	}
	cl, err := clip.New(c)
	if err != nil {
		return err
	}
	t, err := cl.Encode(ctx, *out, enc)
	if err != nil {
		return err
	}
	t.BeatTimes, t.HRCourse = nil, nil // the summary, not the whole truth
	b, _ := json.Marshal(t)
	fmt.Fprintf(stdout, "%s\n", b)
	return nil
}

// findPreset looks a preset up by name, with or without its extension, in
// every set.
func findPreset(name string, sets map[string]func() []clip.Preset) (clip.Preset, error) {
	name = strings.TrimSuffix(name, filepath.Ext(name))
	for _, makeSet := range sets {
		for _, p := range makeSet() {
			if p.Name == name {
				return p, nil
			}
		}
	}
	return clip.Preset{}, fmt.Errorf("-preset %q: no such preset (see -list and -list -set webcam)", name)
}

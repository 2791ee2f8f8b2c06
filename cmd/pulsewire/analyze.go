package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/pulsewire/pulsewire/control"
	"github.com/pulsewire/pulsewire/dsp"
	"github.com/pulsewire/pulsewire/dsp/face"
	"github.com/pulsewire/pulsewire/dsp/media"
)

const analyzeUsage = `Usage: pulsewire analyze FILE... [flags]

Measures a capture offline, exactly as the server would, and prints the
measure's "variables" and "signal" as JSON on stdout. FILE is recognised by
its content:

  a video (mp4, mov, webm, mkv, avi, y4m)  every variable but faceBmi
  one to three images (jpeg, png, bmp, webp, heic)  faceBmi and bmi
  a signal file (JSON)  the rppg or cppg signal body of the API:
      {"signal":{"timestamps":[ms,...],"r":[...],"g":[...],"b":[...]}}  (mean skin colour per frame)
      {"signal":{"timestamps":[ms,...],"values":[...]}}                 (contact PPG)

Progress of a long video goes to stderr, and so does why a heart rate was
not answered: its code, how sure the analysis was against what an answer
needs, and what to try. Blood pressure needs the person's externalId and a
calibration from an earlier measure of that person, which only the server
keeps: here bp answers MISSING_USER_DATA_EXTERNAL_ID, or NOT_CALIBRATED when
an externalId is given.

Flags:
`

func runAnalyze(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("analyze", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), analyzeUsage)
		fs.PrintDefaults()
	}
	userData := userDataFlag{}
	fs.Var(userData, "user-data", "person data as key=value, repeatable: age, sex (M|F), weight (kg), height (cm),\n"+
		"smokingStatus (smoker|non-smoker), dateOfBirth (YYYY-MM-DD), externalId")
	variables := fs.String("variables", "", "comma-separated variables to compute (default: all)")
	scale := fs.Int("bp-class-scale", 3, "levels of bpClass: 3, or 2 for normal or not")
	quiet := fs.Bool("quiet", false, "nothing on stderr but errors: no progress, no explanation of a refusal")
	timeout := fs.Duration("timeout", media.DefaultTimeout, "give up on a video after this long")

	// Flags may come before or after the files.
	var files []string
	for {
		if err := parseArgs(fs, args, stdout); err != nil {
			return helpIsDone(err)
		}
		if fs.NArg() == 0 {
			break
		}
		files = append(files, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(files) == 0 {
		fs.Usage()
		return errUsage
	}
	in, err := measureInputs(userData, *variables, *scale)
	if err != nil {
		return err
	}
	progress := stderr
	if *quiet {
		progress = io.Discard
	}
	res, err := analyzeFiles(ctx, files, in, *timeout, progress)
	if err != nil {
		return err
	}
	explainHR(progress, res)
	out, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s\n", out)
	return err
}

// analyzeFiles recognises what the files hold and runs the matching
// analysis.
func analyzeFiles(ctx context.Context, files []string, in dsp.Inputs, timeout time.Duration, progress io.Writer) (dsp.Result, error) {
	head, err := readHead(files[0])
	if err != nil {
		return dsp.Result{}, err
	}
	if _, ok := media.SniffContainer(head); ok {
		if len(files) > 1 {
			return dsp.Result{}, errors.New("give one video at a time")
		}
		return analyzeVideo(ctx, files[0], in, timeout, progress)
	}
	if _, ok := media.SniffImage(head); ok {
		return analyzeImages(ctx, files, in)
	}
	if t := bytes.TrimLeft(head, " \t\r\n"); len(t) > 0 && t[0] == '{' {
		if len(files) > 1 {
			return dsp.Result{}, errors.New("give one signal file at a time")
		}
		return analyzeSignal(files[0], in)
	}
	return dsp.Result{}, fmt.Errorf("%s: not a video, image or signal file this service reads", files[0])
}

func readHead(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	head := make([]byte, media.SniffLen)
	n, err := io.ReadFull(f, head)
	if n == 0 && err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: empty file", path)
		}
		return nil, err
	}
	return head[:n], nil
}

// analyzeVideo measures the video as an upload is measured
// (control.AnalyzeVideoFile), reporting progress every five seconds of
// video.
func analyzeVideo(ctx context.Context, path string, in dsp.Inputs, timeout time.Duration, progress io.Writer) (dsp.Result, error) {
	c, err := face.LoadCascade()
	if err != nil {
		return dsp.Result{}, err
	}
	const every = 5 * time.Second
	next := every
	start := time.Now()
	res, info, err := control.AnalyzeVideoFile(ctx, c, path, media.VideoOptions{Timeout: timeout}, in, func(f media.Frame) {
		if f.Time >= next {
			next += every
			if f.Duration > 0 {
				fmt.Fprintf(progress, "analyzed %.0f s of %.0f s (%.0f%%)\n", f.Time.Seconds(), f.Duration.Seconds(), 100*f.Time.Seconds()/f.Duration.Seconds())
			} else {
				fmt.Fprintf(progress, "analyzed %.0f s\n", f.Time.Seconds())
			}
		}
	})
	if err != nil {
		return dsp.Result{}, fmt.Errorf("%s: %w", path, err)
	}
	el := time.Since(start)
	fmt.Fprintf(progress, "%s: %d frames of %dx%d over %.1f s, analyzed in %.1f s (%.0fx real time); pulse %s, SNR %.1f dB\n",
		info.Container, info.Frames, info.Width, info.Height, info.LastTime.Seconds(), el.Seconds(),
		info.LastTime.Seconds()/el.Seconds(), orNone(res.Summary.Method), res.Summary.SNRdB)
	return res, nil
}

// explainHR says on w why the heart rate was not answered and what would
// help: the code, for a pulse too faint how sure the analysis was against
// what an answer needs, and what the live guidance advises, so that
// someone trying their own recordings sees how near each one came.
func explainHR(w io.Writer, res dsp.Result) {
	v, ok := res.Variables[dsp.HR]
	if !ok || v.Error == "" {
		return
	}
	s := res.Summary
	msg := "hr not answered (" + string(v.Error) + ")"
	advice := dsp.Advice(v.Error)
	switch v.Error {
	case dsp.ConformityInitialisation:
		msg += fmt.Sprintf(": it needs %.0f s of capture, this one spans %.1f s", dsp.MinSeconds, s.Seconds)
	case dsp.ConformityLowFPS:
		if mean := float64(s.Samples-1) / s.Seconds; mean < dsp.MinFrameRateHz || s.FrameRateHz < dsp.MinFrameRateHz {
			msg += fmt.Sprintf(": %.1f frames a second on average, %.1f at the median interval; it needs %.0f", mean, s.FrameRateHz, dsp.MinFrameRateHz)
		} else {
			msg += fmt.Sprintf(": %.1f s of its %.1f s lie in holes of %.2g s or more without a frame, more than a fifth", s.GapSeconds, s.Seconds, dsp.GapS)
		}
	case dsp.ConformityPoorLight:
		if s.ClippedShare > dsp.MaxClippedShare {
			msg += fmt.Sprintf(": %.0f%% of its samples sit at one limit of the sensor, the pulse cut off", 100*s.ClippedShare)
			advice = "Send a channel that the light neither saturates nor leaves at zero"
		}
	case dsp.ConformityMissingSignal:
		if s.QualityScore == 0 {
			break // too few samples to track a rate
		}
		conf, corr := dsp.AnswerLevel(s.Seconds)
		switch {
		case s.QualityScore < conf:
			msg += fmt.Sprintf(": confidence %.2f, under the %.2f a capture of %.0f s needs", s.QualityScore, conf, s.Seconds)
		case s.PeriodCorrelation < corr:
			msg += fmt.Sprintf(": the wave repeats at the rate found with a correlation of %.2f, under the %.2f a capture of %.0f s needs", s.PeriodCorrelation, corr, s.Seconds)
		case s.KeyFrameHz > 0:
			msg += fmt.Sprintf(": the video redraws the face only at its key frames, %.1f a second, which also shows a pulse at a false, slower rate", s.KeyFrameHz)
			advice = "Record with at most one key frame a second, or with more bits"
		}
	}
	msg += "."
	if advice != "" {
		msg += " " + advice + "."
	}
	fmt.Fprintln(w, msg)
}

// analyzeImages measures one to three still images as the images route
// does (control.AnalyzeStills): an image that breaks the route's limits or
// cannot be decoded gives faceBmi the code that says so.
func analyzeImages(ctx context.Context, files []string, in dsp.Inputs) (dsp.Result, error) {
	c, err := face.LoadCascade()
	if err != nil {
		return dsp.Result{}, err
	}
	open := make([]func() (io.ReadCloser, error), len(files))
	for i, path := range files {
		open[i] = func() (io.ReadCloser, error) { return os.Open(path) }
	}
	return control.AnalyzeStills(ctx, c, open, in)
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// analyzeSignal reads a signal body of the API (control.DecodeSignal) and
// measures it; the body's other members are ignored here, the flags give
// them.
func analyzeSignal(path string, in dsp.Inputs) (dsp.Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return dsp.Result{}, err
	}
	defer f.Close()
	body, err := control.DecodeSignal(f)
	if err == nil {
		err = body.Validate()
	}
	if err != nil {
		return dsp.Result{}, fmt.Errorf("%s: %w", path, err)
	}
	return body.Analyze(in), nil
}

// userDataFlag collects --user-data key=value pairs as the members of a
// measure's userData, for the API's own rules (measureInputs) to check: the
// numeric members as numbers when they read as one, the rest as strings (an
// externalId of digits is still a string).
type userDataFlag map[string]any

func (f userDataFlag) String() string { return "" }

func (f userDataFlag) Set(kv string) error {
	k, v, ok := strings.Cut(kv, "=")
	if !ok || k == "" {
		return fmt.Errorf("%q: want key=value", kv)
	}
	f[k] = v
	if n, err := strconv.ParseFloat(v, 64); err == nil && (k == "age" || k == "weight" || k == "height") {
		f[k] = n
	}
	return nil
}

var (
	flagWords = strings.NewReplacer("userData.property ", "-user-data: property ", "userData: ", "-user-data: ",
		"userData.", "-user-data ", "computeOptions.bpClass.scale", "-bp-class-scale")
	variableItem = regexp.MustCompile(`desiredVariables\.\d+`)
)

// measureInputs checks the flags as the API checks a new measure's inputs
// (the same bounds, enums and date-of-birth rule, on this machine's date)
// and gives what the analysis reads of them.
func measureInputs(userData userDataFlag, variables string, scale int) (dsp.Inputs, error) {
	in := map[string]any{"computeOptions": map[string]any{"bpClass": map[string]any{"scale": scale}}}
	if len(userData) > 0 {
		in["userData"] = userData
	}
	if variables != "" {
		names := strings.Split(variables, ",")
		for i := range names {
			names[i] = strings.TrimSpace(names[i])
		}
		in["desiredVariables"] = names
	}
	raw, err := json.Marshal(in)
	if err != nil {
		return dsp.Inputs{}, err
	}
	n, err := control.ParseMeasureInput(raw, time.Now())
	if e := (*control.Error)(nil); errors.As(err, &e) {
		// Said in the flags' words: "-user-data age must be ...".
		msg := flagWords.Replace(strings.Join(e.Messages, "; "))
		return dsp.Inputs{}, errors.New(variableItem.ReplaceAllString(msg, "-variables"))
	} else if err != nil {
		return dsp.Inputs{}, err
	}
	return dsp.Inputs{Variables: n.DesiredVariables, Person: control.PersonOf(n.UserData), BPClassScale: int(n.ComputeOptions.BPClass.Scale)}, nil
}

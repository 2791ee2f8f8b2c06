// Command accuracy measures how close the dsp package comes to reference
// values, on synthetic clips with known ground truth and on real recordings
// made by others (-data; docs/accuracy.md lists them). It prints one table
// per data set: for hr, br and hrv the mean absolute error, the root mean
// square error and Pearson's r against the reference, and how often each
// error code came back; it closes with one summary of the heart rate on
// every data set scored (summary.go).
//
//	go run ./scripts/accuracy [-data ../shared/data] [-synth DIR] [-fresh N] [-fresh-dir DIR] [-webcam DIR] [-webcam-pulse 1,3] [-noise-every S] [-pulse-signature R,B] [-keyframes DIR] [-recordings DIR] [-phones DIR] [-only real|skin|drops|synth|fresh|raw|webcam|webcam-fresh|webcam-transcoded|webcam-fresh-transcoded|keyframes|faces|recordings|phones] [-v]
//
// With -recordings it also scores a folder of one's own videos and signals
// against the reference values its reference.csv lists (referencesFile),
// and with -phones the fingertip recordings of a data set that is not
// shipped (phones.go).
//
// Every number comes from running the same public entry points the server
// uses (dsp.AnalyzePPG for contact traces, the batch frame path for clips).
package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

func main() {
	data := flag.String("data", "../shared/data", "folder of the real recordings: uw-phone-oximetry, neurokit-resting and bias-eval-rppg, each as its repository lays it out (docs/accuracy.md)")
	synthDir := flag.String("synth", "", "folder of the generated benchmark clips (default: generate into a temporary folder)")
	webcamDir := flag.String("webcam", "", "folder of the generated webcam-like clips, all four sets (default: generate into a temporary folder)")
	keyFrameDir := flag.String("keyframes", "", "folder of the generated key-frame clips (default: generate into a temporary folder)")
	recordingsDir := flag.String("recordings", "", "folder of your own videos and signals (.json files as the signal routes take them), listed with their reference values in its "+referencesFile+" (columns file, hr in bpm, and optionally br per minute, rmssd in ms, group)")
	phonesDir := flag.String("phones", "", "folder of the Welltory PPG data set (subject_NN/PPG.csv and RR.txt, as its GitHub repository holds them; not shipped): fingertips on people's own phones against a chest strap")
	only := flag.String("only", "", "run only one part: real (contact recordings), skin (real face-skin video, semi-synthetic, the decision), drops (the real recordings with frames dropped), synth (encoded clips), fresh (encoded clips from new seeds), raw (clips without encoding), webcam (webcam-like clips), webcam-fresh (the same conditions, other people), webcam-transcoded and webcam-fresh-transcoded (those two as files transcoded after recording), keyframes (key frames at fixed intervals), faces (face detection on labelled photos), recordings (your own videos and signals, -recordings) or phones (fingertips on people's own phones, -phones)")
	webcamPulse := flag.String("webcam-pulse", "1,3", "strengths of the webcam set's pulse, comma-separated multiples of its own (1: as weak as the real face-skin clips; 3: transcoded, about as readable as real webcam video of whole faces at those bit rates)")
	freshDir := flag.String("fresh-dir", "", "folder of the fresh-seed clips (default: generate into a temporary folder)")
	fresh := flag.Int("fresh", 24, "how many fresh-seed clips to score (0: none)")
	verbose := flag.Bool("v", false, "print every window or clip")
	decisionPicture := flag.String("decision-picture", "", "with the skin part, also draw the share of real face-skin pieces answered at each confidence level, with and without a real pulse, into this SVG file (docs/figures/decision.svg)")
	noiseEvery := flag.Float64("noise-every", 0, "with the skin part, start a piece of real noise for the decision's table every so many seconds, the pieces overlapping (0: end to end): a denser sample for comparing false answers")
	signature := flag.String("pulse-signature", "", "the pulse's red and blue change as shares of its green, comma-separated, for the skin part's added pulse and the webcam parts' generated faces (default: the skin's blood-volume signature, 0.43,0.69)")
	regionsPicture := flag.String("regions-picture", "", "with the faces part, also draw where the regions of interest fall on six faces into this JPEG file (docs/figures/regions.jpg)")
	flag.Parse()
	if *only == "recordings" && *recordingsDir == "" {
		fmt.Fprintln(os.Stderr, "accuracy:", errNoRecordings)
		os.Exit(2)
	}
	if *only == "phones" && *phonesDir == "" {
		fmt.Fprintln(os.Stderr, "accuracy: -only phones needs -phones DIR, a copy of the Welltory PPG data set")
		os.Exit(2)
	}
	sig, err := parseSignature(*signature)
	if err != nil {
		fmt.Fprintf(os.Stderr, "accuracy: -pulse-signature %q: %v\n", *signature, err)
		os.Exit(2)
	}
	if !(*noiseEvery >= 0) {
		fmt.Fprintf(os.Stderr, "accuracy: -noise-every %g: want 0 or more seconds\n", *noiseEvery)
		os.Exit(2)
	}
	var failed bool
	sum := &summary{}
	// report prints the tables of a part, or its error, and keeps each
	// data set's heart-rate decisions for the closing summary.
	report := func(err error, tables ...interface{ print(io.Writer) }) {
		if err != nil {
			fmt.Fprintln(os.Stderr, "accuracy:", err)
			failed = true
			return
		}
		for _, t := range tables {
			t.print(os.Stdout)
			if t, ok := t.(*table); ok {
				sum.add(t.title, t.outcomes)
			}
		}
	}
	if *only == "" || *only == "real" {
		for _, run := range []func(string, bool) (*table, error){contactOximetry, phoneRed, restingPPG, restingMinutes} {
			t, err := run(*data, *verbose)
			report(err, t)
		}
	}
	if *only == "" || *only == "skin" {
		report(realSkin(os.Stdout, *data, skinOptions{verbose: *verbose, picture: *decisionPicture, noiseEvery: *noiseEvery, signature: sig, summary: sum}))
	}
	if (*only == "" || *only == "phones") && *phonesDir != "" {
		ts, err := phoneRecordings(*phonesDir, *verbose)
		for _, t := range ts {
			report(nil, t)
		}
		report(err)
	}
	if *only == "" || *only == "drops" {
		report(droppedFrames(os.Stdout, *data))
	}
	if *only == "" || *only == "synth" {
		t, err := syntheticEncoded(*synthDir, *verbose)
		report(err, t)
	}
	if (*only == "" || *only == "fresh") && *fresh > 0 {
		t, err := syntheticFresh(*freshDir, *fresh, *verbose)
		report(err, t)
	}
	if *only == "" || *only == "raw" {
		t, err := syntheticRaw(*verbose)
		report(err, t)
	}
	var webcamSig *[3]float64 // the webcam set's own signatures unless one is given
	if *signature != "" {
		webcamSig = &sig
	}
	for _, part := range []string{"webcam", "webcam-fresh", "webcam-transcoded", "webcam-fresh-transcoded"} {
		if *only != "" && *only != part {
			continue
		}
		for _, k := range strings.Split(*webcamPulse, ",") {
			strength, err := strconv.ParseFloat(strings.TrimSpace(k), 64)
			if err != nil || strength <= 0 {
				fmt.Fprintf(os.Stderr, "accuracy: -webcam-pulse %q: want positive numbers\n", *webcamPulse)
				os.Exit(2)
			}
			t, ct, err := webcamClips(*webcamDir, webcamSets[part], strength, webcamSig, *verbose)
			report(err, t, ct)
		}
	}
	if *only == "" || *only == "keyframes" {
		t, ct, err := keyFrameClips(*keyFrameDir, *verbose)
		report(err, t, ct)
	}
	if *only == "" || *only == "faces" {
		t, err := faceDetection(*verbose)
		if err == nil {
			fmt.Println(t)
		}
		report(err)
		if *regionsPicture != "" {
			report(regionsFigure(*regionsPicture))
		}
	}
	if (*only == "" || *only == "recordings") && *recordingsDir != "" {
		t, ct, err := ownRecordings(*recordingsDir, *verbose)
		report(err, t, ct)
	}
	sum.print(os.Stdout)
	if failed {
		os.Exit(1)
	}
}

// parseSignature reads -pulse-signature: "R,B", the red and blue change of
// the added pulse as shares of its green; "" is defaultSignature.
func parseSignature(v string) ([3]float64, error) {
	if v == "" {
		return defaultSignature, nil
	}
	parts := strings.Split(v, ",")
	if len(parts) != 2 {
		return [3]float64{}, fmt.Errorf("want two numbers, red and blue")
	}
	sig := [3]float64{0, 1, 0}
	for i, k := range []int{0, 2} {
		x, err := strconv.ParseFloat(strings.TrimSpace(parts[i]), 64)
		if err != nil || !(x > 0) || math.IsInf(x, 0) {
			return [3]float64{}, fmt.Errorf("%q is not a positive number", parts[i])
		}
		sig[k] = x
	}
	return sig, nil
}

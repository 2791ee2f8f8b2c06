// Command accuracy measures how close the dsp package comes to reference
// values, on synthetic clips with known ground truth and on real recordings
// made by others (../shared/data beside the repository). It prints one table
// per data set: for hr, br and hrv the mean absolute error, the root mean
// square error and Pearson's r against the reference, and how often each
// error code came back.
//
//	go run ./scripts/accuracy [-data ../shared/data] [-synth DIR] [-webcam DIR] [-only real|synth|raw|webcam] [-v]
//
// Every number comes from running the same public entry points the server
// uses (dsp.AnalyzePPG for contact traces, the batch frame path for clips).
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	data := flag.String("data", "../shared/data", "folder of the real recordings")
	synthDir := flag.String("synth", "", "folder of the generated benchmark clips (default: generate into a temporary folder)")
	webcamDir := flag.String("webcam", "", "folder of the generated webcam-like clips (default: generate into a temporary folder)")
	only := flag.String("only", "", "run only one part: real (recordings), synth (encoded clips), raw (clips without encoding) or webcam (webcam-like clips)")
	verbose := flag.Bool("v", false, "print every window or clip")
	flag.Parse()
	var failed bool
	if *only == "" || *only == "real" {
		for _, run := range []func(string, bool) (*table, error){contactOximetry, restingPPG} {
			t, err := run(*data, *verbose)
			if err != nil {
				fmt.Fprintln(os.Stderr, "accuracy:", err)
				failed = true
				continue
			}
			t.print(os.Stdout)
		}
	}
	if *only == "" || *only == "synth" {
		t, err := syntheticEncoded(*synthDir, *verbose)
		if err != nil {
			fmt.Fprintln(os.Stderr, "accuracy:", err)
			failed = true
		} else {
			t.print(os.Stdout)
		}
	}
	if *only == "" || *only == "raw" {
		t, err := syntheticRaw(*verbose)
		if err != nil {
			fmt.Fprintln(os.Stderr, "accuracy:", err)
			failed = true
		} else {
			t.print(os.Stdout)
		}
	}
	if *only == "" || *only == "webcam" {
		t, ct, err := webcamClips(*webcamDir, *verbose)
		if err != nil {
			fmt.Fprintln(os.Stderr, "accuracy:", err)
			failed = true
		} else {
			t.print(os.Stdout)
			ct.print(os.Stdout)
		}
	}
	if failed {
		os.Exit(1)
	}
}

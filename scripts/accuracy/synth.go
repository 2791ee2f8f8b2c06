package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/pulsewire/pulsewire/dsp"
	"github.com/pulsewire/pulsewire/dsp/face"
	"github.com/pulsewire/pulsewire/dsp/media"
	"github.com/pulsewire/pulsewire/scripts/synth/clip"
)

// syntheticEncoded scores the benchmark set of generated clips (scripts/synth,
// clip.Presets: 48 clips of 30 s spanning hr 45-160, br 6-30, still to
// moving, bright to dark, CRF 18-28, mp4/webm/mov/avi). Each clip is
// encoded by ffmpeg, decoded by dsp/media and analysed by dsp.AnalyzeFrames,
// the batch path of video uploads. Clips already in dir (with their truth
// JSON) are reused; without dir they are generated into a temporary folder
// that is removed afterwards.
func syntheticEncoded(dir string, verbose bool) (*table, error) {
	presets := clip.Presets()
	t := newTable(fmt.Sprintf("Synthetic clips: %d generated videos, decoded and analysed by the batch path", len(presets)), dsp.HR, dsp.BR, dsp.HRV)
	t.notes = append(t.notes,
		"Clips: scripts/synth presets (30 s, 640x480, 30 fps; hr 45-160, br 6-30, RMSSD 15-70 ms; still to moving;",
		"bright to dark; CRF 18-28; mp4, webm, mov, avi; some with flicker, jittered or dropped frames).",
		"Reference: the generator's ground truth (hr from the mean RR interval, br from the breathing phase, RMSSD of the RR series).")
	return scoreEncoded(t, dir, presets, verbose)
}

// scoreEncoded scores the presets' encoded clips (encodedClips) into t.
func scoreEncoded(t *table, dir string, presets []clip.Preset, verbose bool) (*table, error) {
	clips, err := encodedClips(dir, presets, false)
	if err != nil {
		return nil, err
	}
	for i, p := range presets {
		truth, res := clips[i].truth, clips[i].result
		t.units++
		t.label = p.Name
		hr, _ := t.add(res, dsp.HR, truth.HeartRate)
		br, _ := t.add(res, dsp.BR, truth.BreathingRate)
		hrv, _ := t.add(res, dsp.HRV, truth.RMSSD)
		if verbose {
			fmt.Printf("%-48s hr %5.1f/%5.1f br %4.1f/%4.1f rmssd %5.1f/%5.1f %s quality %.2f %s\n", p.Name,
				hr, truth.HeartRate, br, truth.BreathingRate, hrv, truth.RMSSD, res.Summary.Method, res.Summary.QualityScore, res.Summary.Conformity)
		}
	}
	return t, nil
}

// analysedClip is a generated clip's ground truth, what the batch path
// made of it and, when asked for, the plain pipeline's reading (bpm).
type analysedClip struct {
	truth    clip.Truth
	result   dsp.Result
	plainPOS float64
}

// encodedClips generates the presets' clips into dir (keeping those
// already there with their truth; a temporary folder, removed afterwards,
// when dir is ""), then decodes each with dsp/media and analyses it as
// dsp.AnalyzeFrames does, one clip per CPU at once, and with baseline
// reads it with the plain pipeline too. Results are in preset order.
func encodedClips(dir string, presets []clip.Preset, baseline bool) ([]analysedClip, error) {
	ctx := context.Background()
	if dir == "" {
		tmp, err := os.MkdirTemp("", "pulsewire-synth-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	var missing []clip.Preset
	for _, p := range presets {
		if _, err := clip.ReadTruth(clip.TruthPath(filepath.Join(dir, p.File()))); err != nil {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		start := time.Now()
		fmt.Fprintf(os.Stderr, "accuracy: generating %d synthetic clips into %s\n", len(missing), dir)
		generated := progress(os.Stderr, "generated", len(missing))
		if _, err := clip.Generate(ctx, dir, missing, runtime.NumCPU(), func(t clip.Truth) { generated(t.File) }); err != nil {
			return nil, err
		}
		fmt.Fprintf(os.Stderr, "accuracy: generated in %s\n", time.Since(start).Round(time.Second))
	}
	cascade, err := face.LoadCascade()
	if err != nil {
		return nil, err
	}
	clips := make([]analysedClip, len(presets))
	analysed := progress(os.Stderr, "analysed", len(presets))
	err = parallel(len(presets), func(i int) error {
		path := filepath.Join(dir, presets[i].File())
		truth, err := clip.ReadTruth(clip.TruthPath(path))
		if err != nil {
			return err
		}
		clips[i], err = analyseVideo(ctx, cascade, path, baseline)
		clips[i].truth = truth
		analysed(presets[i].File())
		return err
	})
	return clips, err
}

// analyseVideo decodes the video at path with dsp/media and analyses it as
// dsp.AnalyzeFrames does (hr, br and hrv), and with baseline reads it with
// the plain pipeline too. The clip it returns has no truth.
func analyseVideo(ctx context.Context, cascade *face.Cascade, path string, baseline bool) (analysedClip, error) {
	s := dsp.NewStream(cascade, dsp.Inputs{Variables: []string{dsp.HR, dsp.BR, dsp.HRV}})
	plain := newPlainPOS(cascade)
	if _, err := media.DecodeVideoFile(ctx, path, media.VideoOptions{}, func(f media.Frame) error {
		s.Push(f.Image, f.Time)
		if baseline {
			plain.push(f.Image, f.Time)
		}
		return nil
	}); err != nil {
		return analysedClip{}, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	c := analysedClip{result: s.Result()}
	if baseline {
		c.plainPOS = plain.bpm()
	}
	return c, nil
}

// progress returns a function that says on w (stderr: the tables go to
// stdout) that one more of n items is done: "accuracy: what [k/n] name".
// Workers may call it at once.
func progress(w io.Writer, what string, n int) func(name string) {
	var mu sync.Mutex
	done := 0
	return func(name string) {
		mu.Lock()
		defer mu.Unlock()
		done++
		fmt.Fprintf(w, "accuracy: %s [%d/%d] %s\n", what, done, n, name)
	}
}

// parallel calls work(0) to work(n-1), one call per CPU at once, and
// joins their errors.
func parallel(n int, work func(i int) error) error {
	errs := make([]error, n)
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range max(1, runtime.NumCPU()) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				errs[i] = work(i)
			}
		}()
	}
	for i := range n {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	return errors.Join(errs...)
}

// syntheticRaw scores the same presets with the frames taken straight from
// the renderer, without encoding: what the analysis reaches when video
// compression has not removed the pulse. Clips are rendered two at a time.
func syntheticRaw(verbose bool) (*table, error) {
	presets := clip.Presets()
	cascade, err := face.LoadCascade()
	if err != nil {
		return nil, err
	}
	results := make([]dsp.Result, len(presets))
	truths := make([]clip.Truth, len(presets))
	analysed := progress(os.Stderr, "analysed without encoding", len(presets))
	if err := parallel(len(presets), func(i int) error {
		c, err := clip.New(presets[i].Config)
		if err != nil {
			return err
		}
		truths[i] = c.Truth()
		results[i] = dsp.AnalyzeFrames(cascade, c.Frames(), dsp.Inputs{Variables: []string{dsp.HR, dsp.BR, dsp.HRV}})
		analysed(presets[i].Name)
		return nil
	}); err != nil {
		return nil, err
	}
	t := newTable(fmt.Sprintf("Synthetic clips without encoding: the same %d presets, frames straight from the renderer", len(presets)), dsp.HR, dsp.BR, dsp.HRV)
	t.notes = append(t.notes, "Same clips and ground truth as above, analysed by dsp.AnalyzeFrames without ffmpeg: isolates what compression takes away.")
	for i, res := range results {
		t.units++
		hr, _ := t.add(res, dsp.HR, truths[i].HeartRate)
		br, _ := t.add(res, dsp.BR, truths[i].BreathingRate)
		hrv, _ := t.add(res, dsp.HRV, truths[i].RMSSD)
		if verbose {
			fmt.Printf("raw %-44s hr %5.1f/%5.1f br %4.1f/%4.1f rmssd %5.1f/%5.1f %s snr %.1f %s\n", presets[i].Name,
				hr, truths[i].HeartRate, br, truths[i].BreathingRate, hrv, truths[i].RMSSD, res.Summary.Method, res.Summary.SNRdB, res.Summary.Conformity)
		}
	}
	return t, nil
}

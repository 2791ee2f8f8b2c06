package main

import (
	"fmt"

	"github.com/pulsewire/pulsewire/dsp"
	"github.com/pulsewire/pulsewire/scripts/synth/clip"
)

// keyFrameClips scores the key-frame set (clip.KeyFramePresets: 8 people,
// each encoded with a key frame where the encoder chooses, every 30 frames
// and every 12) through the batch path, and breaks heart rate down by the
// interval. Clips already in dir are reused; without dir they go to a
// temporary folder.
func keyFrameClips(dir string, verbose bool) (*table, *conditionTable, error) {
	presets := clip.KeyFramePresets()
	clips, err := encodedClips(dir, presets, true)
	if err != nil {
		return nil, nil, err
	}
	title := "Key frames at a fixed interval"
	t := newTable(fmt.Sprintf("%s: %d generated videos, decoded and analysed by the batch path", title, len(presets)), dsp.HR)
	t.notes = append(t.notes,
		"Clips: scripts/synth key-frame set (8 still, evenly lit people of 62-122 bpm, 40 s, 640x480, 30 fps, a 0.4% pulse,",
		"exposure steps, shot noise), each encoded by real-time H.264 at 300 kbit/s three times: key frames where the encoder",
		"chooses, every 30 frames (many phones and hardware encoders) and every 12 (OpenCV's video writer).",
		"Reference: the generator's ground truth. docs/accuracy.md explains what a short interval does to the pulse.")
	for i, c := range clips {
		t.units++
		hr, _ := t.add(c.result, dsp.HR, c.truth.HeartRate)
		if verbose {
			s := c.result.Summary
			fmt.Printf("%-36s hr %5.1f/%5.1f tracked %5.1f confidence %.2f key frames %.2f Hz plain POS %5.1f %s %s\n", presets[i].Name,
				hr, c.truth.HeartRate, s.TrackedBpm, s.QualityScore, s.KeyFrameHz, c.plainPOS, s.Method, s.Conformity)
		}
	}
	var conds []condition
	for _, every := range clip.KeyFrameIntervals {
		name := fmt.Sprintf("a key frame every %d frames", every)
		if every == 0 {
			name = "key frames where the encoder chooses"
		}
		conds = append(conds, condition{name, func(t clip.Truth) bool { return t.KeyFrameEvery == every }})
	}
	ct := byCondition(clips, conds)
	ct.title = title
	return t, ct, nil
}

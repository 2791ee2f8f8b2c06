package dsp

import (
	"math"
	"slices"

	"github.com/pulsewire/pulsewire/dsp/internal/stats"
)

// Video encoders at low bit rates hold the picture of a still face between
// key frames: the small change of skin colour each beat makes is below what
// a predicted frame spends bits on, so the skin keeps its colour until the
// next key frame redraws it. A video with a key frame every n frames then
// samples the skin at the key-frame rate fk = frame rate / n, and a pulse
// at T shows, as any sampled signal does, at its images |T - k·fk| too.
// The one nearest zero is the strongest (a hold passes low frequencies
// best), so a pulse above fk/2 is read at fk - T, below it: x264 at about
// 150 kbit/s with a key frame every 12 frames at 30 fps (what OpenCV's
// video writer uses) turned 97 bpm into 52 bpm: in the green of 7
// generated clips of 80-114 bpm the image had 3 to 12 times the power left
// at the pulse's own rate. Under such a hold a rate below fk/2 cannot be
// told from its mirror fk - f.
//
// The hold shows in the trace: the key frames carry the colour's jumps,
// and the predicted frames between them hardly move it. keyFrameGroup looks
// for the number of frames n whose phase holds, in three groups of four or
// more, jumps at least holdJumps times the trace's typical jump. Held, the
// key frame shows at once what the frames of its group would have shown one
// by one, camera noise included, while the predicted frames change by the
// decoder's rounding only.
//
// Only groups short enough to fold the heart-rate band are searched (fk/2
// above its lowest rate: up to 22 frames at 30 fps). Longer ones could
// not change an answer, and a weak pattern's multiples can pass where the
// pattern itself does not: the pulse beats against the key frames, and
// every other or every third of them then picks the larger jumps.
const (
	// maxKeyFrameGroup bounds the search: 45 frames at 60 fps.
	maxKeyFrameGroup = 64
	// minKeyFrames: a phase needs 20 groups before its jumps count.
	minKeyFrames = 20
	// holdJumps: on 8 generated clips (71-114 bpm, 40 s), x264 at about
	// 150 kbit/s with a key frame every 12 frames held the picture: in
	// three of four groups its key frames' jumps were 3.8-8.0 times the
	// typical one or more, and every rate above 75 bpm was read as its
	// image. MPEG-4 at 300 kbit/s with the same groups jumped 2.0-2.7 times
	// and its rates were read right; on the real face-skin clips (MPEG-4,
	// groups of 12 at 15 fps) no phase reached 1.
	holdJumps = 3.0
)

// keyFrameGroup returns the frames per group, up to maxGroup, of a video
// whose key frames hold the picture, as the colour trace x (times t in
// seconds) shows it, or 0 when it shows none.
func keyFrameGroup(t, x []float64, maxGroup int) int {
	if len(t) < 2*minKeyFrames {
		return 0
	}
	step := medianStep(t)
	if step <= 0 {
		return 0
	}
	// The jump into each frame, and the frame's index: a frame without a
	// face leaves a gap, and the jump across it is not one frame's. The
	// index counts the frames each interval holds rather than dividing
	// the time since the start, which times rounded to the millisecond
	// (33, 33, 34 ms) would shift by a frame every hundred.
	var jumps []float64
	var index []int
	k := 0
	for i := 1; i < len(t); i++ {
		frames := int(math.Round((t[i] - t[i-1]) / step))
		k += frames
		if frames == 1 && x[i-1] > 0 {
			jumps = append(jumps, math.Abs(x[i]/x[i-1]-1))
			index = append(index, k)
		}
	}
	typical := stats.Median(slices.Clone(jumps))
	if typical == 0 {
		return 0
	}
	// The shortest group that passes is the video's: its multiples hold its
	// key frames too. But a shorter pattern that just misses can pass at a
	// multiple of its own, where the pulse's beat against it picks the
	// larger jumps (a real-time VP9 encoder redrew a still face every 4
	// frames, in 73% of them on one clip and in 85% of every other one).
	// So a group of n frames that passes is a group of d frames, d a divisor
	// of n, when the phases d apart from the passing one have large jumps
	// in half their groups or more: key frames every n frames leave them
	// as quiet as any other phase.
	var groups, big [maxKeyFrameGroup]int
	for n := 2; n <= min(maxGroup, maxKeyFrameGroup) && len(jumps) >= n*minKeyFrames; n++ {
		clear(groups[:n])
		clear(big[:n])
		for i, k := range index {
			groups[k%n]++
			if jumps[i] >= holdJumps*typical {
				big[k%n]++
			}
		}
		for p := range n {
			if groups[p] < minKeyFrames || 4*big[p] < 3*groups[p] {
				continue
			}
			for d := 2; d < n; d++ {
				if n%d != 0 {
					continue
				}
				var g, b int
				for q := p % d; q < n; q += d {
					if q != p {
						g, b = g+groups[q], b+big[q]
					}
				}
				if 2*b >= g {
					return d
				}
			}
			return n
		}
	}
	return 0
}

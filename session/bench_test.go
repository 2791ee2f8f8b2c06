package session

import (
	"encoding/json"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/pulsewire/pulsewire/dsp"
	"github.com/pulsewire/pulsewire/dsp/media"
)

// benchCapture is 30 s of a synthetic face as 320x240 JPEG frames and an
// empty capture to add them to.
func benchCapture(b *testing.B) (*frames, *dsp.Stream) {
	f := syntheticFrames(b, faceClip(72, 30))
	cascade, err := cascadeOnce()
	if err != nil {
		b.Fatal(err)
	}
	return f, dsp.NewStream(cascade, dsp.Inputs{})
}

// cpuTime is the CPU time the process has used, all threads (the garbage
// collector's included). On a machine other work shares, CPU time per
// operation (cpu-ns/op) says what an operation costs; wall time says how
// busy the machine was.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU adds cpu-ns/op to a benchmark whose loop began at cpu start.
func reportCPU(b *testing.B, start time.Duration, n int) {
	b.ReportMetric(float64(cpuTime()-start)/float64(n), "cpu-ns/op")
}

// BenchmarkFramePath is the per-frame cost of a WebSocket session: a
// 320x240 JPEG of a synthetic face decoded (at 160x120, by one
// FrameDecoder) and added to the capture (face tracking, skin means), as
// the session's loop does.
func BenchmarkFramePath(b *testing.B) {
	f, st := benchCapture(b)
	var d media.FrameDecoder
	b.ReportAllocs()
	start, n := cpuTime(), 0
	for ; b.Loop(); n++ {
		img, err := d.Decode(f.jpegs[n%len(f.jpegs)], maxFramePixels)
		if err != nil {
			b.Fatal(err)
		}
		st.Push(img, time.Duration(n)*time.Second/30)
	}
	reportCPU(b, start, n)
}

// BenchmarkSessionVitals is one vitals message of a session whose capture
// holds 10 to 60 s of a synthetic face (the 30 s clip looped): the
// analysis and the JSON. The analysis looks back dsp.VitalsWindow, so its
// cost grows with the capture up to that window, then stays.
func BenchmarkSessionVitals(b *testing.B) {
	for _, seconds := range []int{10, 20, 30, 60} {
		b.Run(fmt.Sprintf("capture=%ds", seconds), func(b *testing.B) {
			f, st := benchCapture(b)
			for i := range seconds * 30 {
				img, err := media.DecodeJPEGFrame(f.jpegs[i%len(f.jpegs)], maxFramePixels)
				if err != nil {
					b.Fatal(err)
				}
				st.Push(img, time.Duration(i)*time.Second/30)
			}
			b.ReportAllocs()
			start, n := cpuTime(), 0
			for ; b.Loop(); n++ {
				v := st.Vitals()
				if _, err := json.Marshal(newVitals(v, share(v.Elapsed, warmUp), 900, 0, 0)); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, start, n)
		})
	}
}

package session

import (
	"encoding/json"
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

// BenchmarkFramePath is the per-frame cost of a WebSocket session: a
// 320x240 JPEG of a synthetic face decoded (at 160x120) and added to the
// capture (face tracking, skin means), as the session's loop does.
func BenchmarkFramePath(b *testing.B) {
	f, st := benchCapture(b)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		img, err := media.DecodeJPEGFrame(f.jpegs[i%len(f.jpegs)], maxFramePixels)
		if err != nil {
			b.Fatal(err)
		}
		st.Push(img, time.Duration(i)*time.Second/30)
	}
}

// BenchmarkSessionVitals is one vitals message of a session whose capture
// holds 30 s of a synthetic face: the analysis and the JSON.
func BenchmarkSessionVitals(b *testing.B) {
	f, st := benchCapture(b)
	for i, j := range f.jpegs {
		img, err := media.DecodeJPEGFrame(j, maxFramePixels)
		if err != nil {
			b.Fatal(err)
		}
		st.Push(img, f.times[i])
	}
	b.ReportAllocs()
	for b.Loop() {
		v := st.Vitals()
		if _, err := json.Marshal(newVitals(v, progress(Realtime, v.Elapsed, 0), 900, 0, 0)); err != nil {
			b.Fatal(err)
		}
	}
}

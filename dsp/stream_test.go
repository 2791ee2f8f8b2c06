package dsp

import (
	"bytes"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pulsewire/pulsewire/dsp/face"
	"github.com/pulsewire/pulsewire/dsp/internal/testsignal"
)

// observations turns a synthetic trace into tracker observations, with f
// adjusting each one (index i of n) to stage a capture problem.
func observations(s testsignal.Signal, f func(i, n int, o *face.Observation)) []face.Observation {
	obs := make([]face.Observation, len(s.T))
	for i := range s.T {
		o := face.Observation{
			Face: true, FaceFraction: 0.4, R: s.R[i], G: s.G[i], B: s.B[i], SkinPixels: 5000,
			Luma: 0.299*s.R[i] + 0.587*s.G[i] + 0.114*s.B[i], SceneLuma: 100, Motion: 0.001,
		}
		if f != nil {
			f(i, len(s.T), &o)
		}
		obs[i] = o
	}
	return obs
}

// bothHalves gives an observation its three regions, as a tracker does:
// the Stream then times the beats on the forehead and the cheeks too, the
// work a real capture costs.
func bothHalves(_, _ int, o *face.Observation) {
	c := face.Colour{R: o.R, G: o.G, B: o.B, Pixels: o.SkinPixels / 3}
	o.Regions = [face.NumRegions]face.Colour{c, c, c}
}

func streamOf(s testsignal.Signal, obs []face.Observation, in Inputs) *Stream {
	st := NewStream(nil, in)
	for i, o := range obs {
		st.Observe(o, time.Duration(s.T[i]*float64(time.Millisecond)))
	}
	return st
}

// TestCaptureCodes stages each capture problem at its threshold and past it.
func TestCaptureCodes(t *testing.T) {
	s := testsignal.Make(testsignal.Config{Seed: 11, Seconds: 20, Noise: 0.02})
	const fps = 30.0
	for _, tc := range []struct {
		name string
		f    func(i, n int, o *face.Observation)
		want Code
	}{
		{"clean", nil, ""},
		{"face in 82% of frames", func(i, n int, o *face.Observation) { o.Face = i%50 >= 9 }, ""},
		{"face in 76% of frames", func(i, n int, o *face.Observation) { o.Face = i%25 >= 6 }, ConformityFacePresence},
		{"face gone", func(i, n int, o *face.Observation) { o.Face = false }, ConformityFacePresence},
		{"face 16% of the frame", func(i, n int, o *face.Observation) { o.FaceFraction = 0.16 }, ""},
		{"face 14% of the frame", func(i, n int, o *face.Observation) { o.FaceFraction = 0.14 }, ConformityFaceSize},
		{"skin luma 36", func(i, n int, o *face.Observation) { o.Luma = 36 }, ""},
		{"skin luma 34, a clear pulse", func(i, n int, o *face.Observation) { o.Luma = 34 }, ""},
		{"skin luma 34, face 14% of the frame", func(i, n int, o *face.Observation) { o.Luma, o.FaceFraction = 34, 0.14 }, ConformityFaceSize},
		{"skin luma 241, clipping", func(i, n int, o *face.Observation) { o.Luma = 241 }, ConformityPoorLight},
		{"face speed 0.24 heights/s", func(i, n int, o *face.Observation) { o.Motion = 0.24 / fps }, ""},
		{"face speed 0.26 heights/s", func(i, n int, o *face.Observation) { o.Motion = 0.26 / fps }, ConformityMuchVariations},
		{"flicker 0.4% at 2 Hz", func(i, n int, o *face.Observation) {
			o.SceneLuma = 100 * (1 + 0.004*math.Sqrt2*math.Sin(2*math.Pi*2*s.T[i]/1000))
		}, ""},
		{"flicker 0.6% at 2 Hz", func(i, n int, o *face.Observation) {
			o.SceneLuma = 100 * (1 + 0.006*math.Sqrt2*math.Sin(2*math.Pi*2*s.T[i]/1000))
		}, ConformityOndulations},
		{"skin flicker 0.9% at 1.5 Hz", func(i, n int, o *face.Observation) {
			o.Luma *= 1 + 0.009*math.Sqrt2*math.Sin(2*math.Pi*1.5*s.T[i]/1000)
		}, ""},
		{"skin flicker 1.1% at 1.5 Hz, background clipped", func(i, n int, o *face.Observation) {
			o.Luma *= 1 + 0.011*math.Sqrt2*math.Sin(2*math.Pi*1.5*s.T[i]/1000)
			o.SceneLuma = 255
		}, ConformityOndulations},
		{"slow light change is no flicker", func(i, n int, o *face.Observation) {
			o.SceneLuma = 100 * (1 + 0.2*math.Sin(2*math.Pi*0.05*s.T[i]/1000))
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := streamOf(s, observations(s, tc.f), Inputs{Variables: []string{HR, HRV}})
			r := st.Result()
			if got := code(r, HR); got != tc.want {
				t.Errorf("hr code %q, want %q (summary %+v)", got, tc.want, r.Summary)
			}
			if got := code(r, HRV); tc.want != "" && got != tc.want {
				t.Errorf("hrv code %q, want %q", got, tc.want)
			}
			if tc.want == "" {
				if hr := mean(t, r, HR); math.Abs(hr-s.HR) > 1 {
					t.Errorf("hr %.1f, truth %.1f", hr, s.HR)
				}
			}
		})
	}
}

// TestDarkFaceWithoutPulse: a face too dark to show its pulse is told why,
// not only that the pulse is missing.
func TestDarkFaceWithoutPulse(t *testing.T) {
	s := testsignal.Make(testsignal.Config{Seed: 14, Seconds: 30, PulseAmp: 1e-9, Noise: 0.5})
	for _, luma := range []float64{34, 241} {
		r := streamOf(s, observations(s, func(i, n int, o *face.Observation) { o.Luma = luma }), Inputs{}).Result()
		if got := code(r, HR); got != ConformityPoorLight {
			t.Errorf("skin luma %.0f, no pulse: hr %q, want CONFORMITY_POOR_LIGHT", luma, got)
		}
	}
}

func TestStreamWithoutFrames(t *testing.T) {
	r := NewStream(nil, Inputs{}).Result()
	for _, name := range []string{HR, BR, HRV, Stress, PhysicalAge} {
		if code(r, name) != MissingCaptures {
			t.Errorf("%s: %+v, want MISSING_CAPTURES", name, r.Variables[name])
		}
	}
	if code(r, FaceBMI) != MissingImage {
		t.Errorf("faceBmi of frames: %+v", r.Variables[FaceBMI])
	}
}

func TestStreamShortCapture(t *testing.T) {
	s := testsignal.Make(testsignal.Config{Seed: 12, Seconds: 8, Noise: 0.02})
	if got := code(streamOf(s, observations(s, nil), Inputs{}).Result(), HR); got != ConformityInitialisation {
		t.Errorf("8 s capture: hr %q", got)
	}
}

// TestStreamMatchesTrace: the frame path and the trace path are one analysis.
func TestStreamMatchesTrace(t *testing.T) {
	s := testsignal.Make(testsignal.Config{Seed: 13, Seconds: 25, HR: 66, RMSSDms: 30, BR: 14,
		AmplitudeDepth: 0.2, BaselineDepth: 0.002, Noise: 0.02, Jitter: 0.3})
	a := streamOf(s, observations(s, nil), Inputs{}).Result()
	b := AnalyzeTrace(trace(s), Inputs{})
	for _, name := range []string{HR, BR, HRV} {
		if a.Variables[name] != b.Variables[name] {
			t.Errorf("%s: stream %+v, trace %+v", name, a.Variables[name], b.Variables[name])
		}
	}
}

func TestStreamIgnoresOutOfOrderFrames(t *testing.T) {
	s := testsignal.Make(testsignal.Config{Seed: 14, Seconds: 12, Noise: 0.02})
	obs := observations(s, nil)
	st := NewStream(nil, Inputs{})
	for i, o := range obs {
		at := time.Duration(s.T[i] * float64(time.Millisecond))
		st.Observe(o, at)
		st.Observe(o, at)             // duplicate
		st.Observe(o, at-time.Second) // late
	}
	if st.Frames() != len(obs) {
		t.Errorf("%d frames kept of %d", st.Frames(), len(obs))
	}
}

// TestPushIgnoresOutOfOrderFrames: Push drops nil, duplicate and late
// frames as Observe does. The frames are too small for a face, so the
// tracker needs no cascade.
func TestPushIgnoresOutOfOrderFrames(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 16, 16))
	st := NewStream(nil, Inputs{})
	for i := range 10 {
		at := time.Duration(i) * 33 * time.Millisecond
		st.Push(img, at)
		st.Push(img, at)                     // duplicate
		st.Push(img, at-50*time.Millisecond) // late
		st.Push(nil, at+time.Millisecond)    // nil
	}
	if st.Frames() != 10 {
		t.Errorf("%d frames kept of 10", st.Frames())
	}
}

// TestVitalsGuidance: interim vitals start as INITIALISATION, become a
// heart rate, and the guidance follows the latest seconds.
func TestVitalsGuidance(t *testing.T) {
	s := testsignal.Make(testsignal.Config{Seed: 15, Seconds: 24, HR: 80, Noise: 0.02})
	obs := observations(s, func(i, n int, o *face.Observation) {
		if s.T[i] > 20000 {
			o.FaceFraction = 0.1 // stepped back at 20 s
		}
	})
	st := NewStream(nil, Inputs{})
	if v := st.Vitals(); v.HR.Error != ConformityInitialisation || len(v.Guidance) == 0 {
		t.Errorf("before any frame: %+v", v)
	}
	for i, o := range obs {
		st.Observe(o, time.Duration(s.T[i]*float64(time.Millisecond)))
		switch s.T[i] {
		case 5000:
			v := st.Vitals()
			if v.HR.Error != ConformityInitialisation || len(v.Guidance) != 1 || v.Guidance[0].Code != ConformityInitialisation {
				t.Errorf("at 5 s: %+v", v)
			}
		case 15000:
			v := st.Vitals()
			if v.HR.Error != "" || math.Abs(v.HR.Value.(Mean).Mean-80) > 1.5 || len(v.Guidance) != 0 || v.ElapsedMs != 15000 {
				t.Errorf("at 15 s: %+v", v)
			}
		}
	}
	v := st.Vitals()
	if len(v.Guidance) == 0 || v.Guidance[0].Code != ConformityFaceSize || v.Guidance[0].Message == "" {
		t.Errorf("after stepping back: %+v", v)
	}
}

// TestVitalsGuidanceOnADarkFace: a face too dark for the usual light is
// told so while its pulse is unclear, and left alone once it reads.
func TestVitalsGuidanceOnADarkFace(t *testing.T) {
	for _, tc := range []struct {
		name   string
		amp    float64
		advice bool
	}{{"a clear pulse", 0.005, false}, {"no pulse", 1e-9, true}} {
		s := testsignal.Make(testsignal.Config{Seed: 16, Seconds: 32, HR: 70, PulseAmp: tc.amp, Noise: 0.02})
		st := streamOf(s, observations(s, func(i, n int, o *face.Observation) { o.Luma = 30 }), Inputs{})
		v := st.Vitals()
		got := slices.ContainsFunc(v.Guidance, func(g Guidance) bool { return g.Code == ConformityPoorLight })
		if got != tc.advice || tc.advice == (v.HR.Error == "") {
			t.Errorf("%s: hr %+v, guidance %+v; want light advice %v", tc.name, v.HR, v.Guidance, tc.advice)
		}
	}
}

// TestVitalsGuidanceInTheDark: a face not found in a picture darker than a
// face needs is told to find more light first; in a lit picture, only to
// face the camera. The measure's own codes stay what they were.
func TestVitalsGuidanceInTheDark(t *testing.T) {
	for _, tc := range []struct {
		name  string
		scene float64
		first Code
	}{{"a dark room", 12, ConformityPoorLight}, {"a lit room", 100, ConformityFacePresence}} {
		s := testsignal.Make(testsignal.Config{Seed: 17, Seconds: 12, HR: 70, Noise: 0.02})
		st := streamOf(s, observations(s, func(i, n int, o *face.Observation) {
			*o = face.Observation{SceneLuma: tc.scene} // no face found
		}), Inputs{})
		v := st.Vitals()
		if len(v.Guidance) < 1 || v.Guidance[0].Code != tc.first || !slices.ContainsFunc(v.Guidance, func(g Guidance) bool { return g.Code == ConformityFacePresence }) {
			t.Errorf("%s: guidance %+v, want %s first", tc.name, v.Guidance, tc.first)
		}
		if c := code(st.Result(), HR); c != ConformityFacePresence {
			t.Errorf("%s: hr %q, want %s", tc.name, c, ConformityFacePresence)
		}
	}
}

var photoOnce = sync.OnceValues(func() (image.Image, error) {
	f, err := os.Open("../scripts/synth/clip/photo/face.jpg")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return jpeg.Decode(f)
})

// pulsingFrames renders the 320x400 face photo scaled by zoom (a power of
// two) on a w x h backdrop with the colour of its skin modulated by the
// synthetic pulse (the skin signature of testsignal). Skin is what has the
// chroma of skin (Cb 77-127, Cr 133-173; Chai & Ngan 1999): the backdrop and
// the rest of the photo stay as they are, as a room does.
func pulsingFrames(t testing.TB, s testsignal.Signal, w, h int, zoom float64) []*image.RGBA {
	t.Helper()
	photo, err := photoOnce()
	if err != nil {
		t.Fatal(err)
	}
	base := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(base, base.Rect, image.NewUniform(color.RGBA{60, 80, 100, 255}), image.Point{}, draw.Src)
	pb := photo.Bounds()
	pw, ph := int(float64(pb.Dx())*zoom), int(float64(pb.Dy())*zoom)
	for y := 0; y < ph; y++ {
		for x := 0; x < pw; x++ {
			r, g, b, _ := photo.At(pb.Min.X+int(float64(x)/zoom), pb.Min.Y+int(float64(y)/zoom)).RGBA()
			base.SetRGBA((w-pw)/2+x, (h-ph)/2+y, color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), 255})
		}
	}
	skin := make([]bool, len(base.Pix)/4)
	for p := range skin {
		_, cb, cr := color.RGBToYCbCr(base.Pix[4*p], base.Pix[4*p+1], base.Pix[4*p+2])
		skin[p] = cb >= 77 && cb <= 127 && cr >= 133 && cr <= 173
	}
	frames := make([]*image.RGBA, len(s.T))
	for i := range frames {
		f := image.NewRGBA(base.Rect)
		copy(f.Pix, base.Pix)
		gain := [3]float64{s.R[i] / (1.35 * 120), s.G[i] / 120, s.B[i] / (0.8 * 120)}
		for p, isSkin := range skin {
			if !isSkin {
				continue
			}
			for ch := 0; ch < 3; ch++ {
				f.Pix[4*p+ch] = uint8(math.Min(255, math.Round(float64(base.Pix[4*p+ch])*gain[ch])))
			}
		}
		frames[i] = f
	}
	return frames
}

// TestAnalyzeFramesOnRealFace runs real frames through the face tracker:
// the batch path end to end except for decoding.
func TestAnalyzeFramesOnRealFace(t *testing.T) {
	c, err := face.LoadCascade()
	if err != nil {
		t.Fatal(err)
	}
	s := testsignal.Make(testsignal.Config{Seed: 16, Seconds: 12, FPS: 15, HR: 75, PulseAmp: 0.02})
	frames := pulsingFrames(t, s, 320, 240, 0.5)
	r := AnalyzeFrames(c, func(yield func(time.Duration, image.Image) bool) {
		for i, f := range frames {
			if !yield(time.Duration(s.T[i]*float64(time.Millisecond)), f) {
				return
			}
		}
	}, Inputs{Variables: []string{HR, FaceBMI}})
	if hr := mean(t, r, HR); math.Abs(hr-s.HR) > 1.5 {
		t.Errorf("hr %.1f, truth %.1f (summary %+v)", hr, s.HR, r.Summary)
	}
	if code(r, FaceBMI) != MissingImage {
		t.Errorf("faceBmi %+v", r.Variables[FaceBMI])
	}
}

// BenchmarkStreamPush is the per-frame cost of a live capture at 640x480:
// face tracking (detection amortised over the frames) and the bookkeeping of
// the Stream. Frames cycle through 2 s of a pulsing face, in each form a
// frame reaches Push: JPEG frames of a WebSocket session decode to
// full-range YCbCr 4:2:0, video files and WebRTC streams to limited-range
// 4:4:4 (dsp/media), and RGBA is what other images are drawn into.
func BenchmarkStreamPush640x480(b *testing.B) {
	c, err := face.LoadCascade()
	if err != nil {
		b.Fatal(err)
	}
	s := testsignal.Make(testsignal.Config{Seed: 1, Seconds: 2, PulseAmp: 0.02})
	rgba := pulsingFrames(b, s, 640, 480, 1)
	forms := []struct {
		name   string
		frames []image.Image
	}{{"jpeg", nil}, {"video", nil}, {"rgba", nil}}
	for _, f := range rgba {
		var buf bytes.Buffer
		if err := jpeg.Encode(&buf, f, &jpeg.Options{Quality: 90}); err != nil {
			b.Fatal(err)
		}
		j, err := jpeg.Decode(&buf)
		if err != nil {
			b.Fatal(err)
		}
		forms[0].frames = append(forms[0].frames, j)
		forms[1].frames = append(forms[1].frames, limitedOf(f))
		forms[2].frames = append(forms[2].frames, f)
	}
	for _, form := range forms {
		b.Run(form.name, func(b *testing.B) { benchmarkPush(b, c, form.frames) })
	}
}

func benchmarkPush(b *testing.B, c *face.Cascade, frames []image.Image) {
	st := NewStream(c, Inputs{})
	// Warm up: acquire the face and grow the buffers once.
	for i := range 2 * streamCapacity {
		st.Push(frames[i%len(frames)], time.Duration(i)*time.Second/30)
	}
	n := 2 * streamCapacity
	b.ReportAllocs()
	b.ResetTimer()
	// CPU time, as BenchmarkObserve in dsp/face reports it: on a shared
	// machine wall time grows with the other processes' load.
	var ru0, ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	for i := 0; i < b.N; i++ {
		if len(st.recs) == cap(st.recs) {
			b.StopTimer()
			st = NewStream(c, Inputs{})
			n = 0
			b.StartTimer()
		}
		st.Push(frames[n%len(frames)], time.Duration(n)*time.Second/30)
		n++
	}
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	b.ReportMetric(float64(ru1.Utime.Nano()+ru1.Stime.Nano()-ru0.Utime.Nano()-ru0.Stime.Nano())/float64(b.N), "cpu-ns/op")
}

// limitedFrame is a decoded video frame as dsp/media hands it over:
// limited-range BT.601 YCbCr 4:4:4 (face.LimitedRange).
type limitedFrame struct{ *image.YCbCr }

func (m limitedFrame) LimitedRangeYCbCr() (*image.YCbCr, bool) { return m.YCbCr, false }

// limitedOf converts src as ffmpeg's scale filter does for a video's frames:
// Y = 16 + 219/255 Y', C = 128 + 224/255 (C' - 128).
func limitedOf(src *image.RGBA) limitedFrame {
	dst := image.NewYCbCr(src.Rect, image.YCbCrSubsampleRatio444)
	for i := range dst.Y {
		p := src.Pix[4*i : 4*i+3]
		y, cb, cr := color.RGBToYCbCr(p[0], p[1], p[2])
		dst.Y[i] = uint8(16 + (219*int(y)+127)/255)
		dst.Cb[i] = uint8(128 + 224.0/255*(float64(cb)-128) + 0.5)
		dst.Cr[i] = uint8(128 + 224.0/255*(float64(cr)-128) + 0.5)
	}
	return limitedFrame{dst}
}

// BenchmarkResult30s is the final analysis of a 30 s capture at 30 fps.
func BenchmarkResult30s(b *testing.B) {
	s := testsignal.Make(testsignal.Config{Seed: 2, RMSSDms: 40, BR: 15, AmplitudeDepth: 0.2, Noise: 0.05})
	st := streamOf(s, observations(s, bothHalves), Inputs{})
	b.ReportAllocs()
	for b.Loop() {
		st.Result()
	}
}

// BenchmarkVitals is one interim update over the last 30 s.
func BenchmarkVitals(b *testing.B) {
	s := testsignal.Make(testsignal.Config{Seed: 3, Seconds: 60, Noise: 0.05})
	st := streamOf(s, observations(s, bothHalves), Inputs{})
	b.ReportAllocs()
	for b.Loop() {
		st.Vitals()
	}
}

// TestStreamHRVTimingNoise gives the forehead and the cheeks the same pulse
// with independent camera noise. The beat-timing noise this leaves inflates
// RMSSD; hrv, corrected by the difference of the two halves' beat times,
// reads closer to the generated beats. One 30 s capture's estimate spreads
// (its noise and its beats' own differences are both samples), so the
// check is on the mean error over several captures.
func TestStreamHRVTimingNoise(t *testing.T) {
	const noise = 0.12 // levels per frame and channel, each half
	var rawErr, hrvErr float64
	n := 0
	for seed := range uint64(8) {
		s := testsignal.Make(testsignal.Config{Seed: seed, HR: 72, RMSSDms: 30})
		rng := rand.New(rand.NewPCG(seed, 99))
		half := func(i int) face.Colour {
			n := func() float64 { return noise * rng.NormFloat64() }
			return face.Colour{R: s.R[i] + n(), G: s.G[i] + n(), B: s.B[i] + n(), Pixels: 2000}
		}
		obs := observations(s, func(i, _ int, o *face.Observation) {
			// The two cheeks are one half here, the forehead the other,
			// each with half the skin pixels.
			fh, cheek := half(i), half(i)
			o.Regions = [face.NumRegions]face.Colour{face.Forehead: fh, face.LeftCheek: cheek, face.RightCheek: cheek}
			o.R, o.G, o.B = (fh.R+cheek.R)/2, (fh.G+cheek.G)/2, (fh.B+cheek.B)/2
		})
		st := streamOf(s, obs, Inputs{Variables: []string{HRV}})
		pa := st.analyze(0, false)
		raw := 1000 * pa.nn.RMSSDs
		hrv := st.Result().Variables[HRV]
		if hrv.Error != "" {
			t.Logf("seed %d: hrv %s (SNR %.1f dB, raw %.1f ms, noise %.0f ms², %+v)", seed, hrv.Error, pa.summary.SNRdB, raw, 1e6*pa.timingNoise, pa.nn)
			continue
		}
		got := hrv.Value.(Mean).Mean
		t.Logf("seed %d: true %.1f ms, raw %.1f ms, hrv %.1f ms (SNR %.1f dB)", seed, s.RMSSDms, raw, got, pa.summary.SNRdB)
		rawErr += math.Abs(raw - s.RMSSDms)
		hrvErr += math.Abs(got - s.RMSSDms)
		n++
	}
	if n < 5 {
		t.Fatalf("hrv on %d of 8 captures", n)
	}
	rawErr /= float64(n)
	hrvErr /= float64(n)
	t.Logf("mean error: raw %.1f ms, hrv %.1f ms", rawErr, hrvErr)
	if hrvErr > rawErr/2 || hrvErr > 5 {
		t.Errorf("mean error of hrv %.1f ms against %.1f ms raw", hrvErr, rawErr)
	}
}

// TestStreamHiddenHalf: a window in which the forehead or the cheeks were
// hidden in a frame is not split (no timing-noise estimate), while one
// after that frame is.
func TestStreamHiddenHalf(t *testing.T) {
	s := testsignal.Make(testsignal.Config{Seed: 4, HR: 72, RMSSDms: 30, Seconds: 40})
	obs := observations(s, func(i, _ int, o *face.Observation) {
		c := face.Colour{R: o.R, G: o.G, B: o.B, Pixels: 2000}
		o.Regions = [face.NumRegions]face.Colour{face.Forehead: c, face.LeftCheek: c, face.RightCheek: c}
		if i == 150 { // at 5 s a hand covers the forehead
			o.Regions[face.Forehead] = face.Colour{}
		}
	})
	st := streamOf(s, obs, Inputs{})
	if pa := st.analyze(0, false); pa.err != "" || pa.noiseKnown {
		t.Errorf("whole capture: %s, noise known %v; want no split", pa.err, pa.noiseKnown)
	}
	if pa := st.analyze(6, false); pa.err != "" || !pa.noiseKnown {
		t.Errorf("from 6 s: %s, noise known %v; want a split", pa.err, pa.noiseKnown)
	}
}

// TestVitalsGuidanceOnAFaintPulse: while the capture is young a faint pulse
// is still being measured; once it has had its time, the person is told
// what to change.
func TestVitalsGuidanceOnAFaintPulse(t *testing.T) {
	s := testsignal.Make(testsignal.Config{Seed: 4, Seconds: 40, PulseAmp: 1e-12, Noise: 0.3})
	obs := observations(s, func(int, int, *face.Observation) {})
	st := NewStream(nil, Inputs{})
	for i, o := range obs {
		st.Observe(o, time.Duration(s.T[i]*float64(time.Millisecond)))
		var want Code
		switch s.T[i] {
		case 15000:
			want = ConformityInitialisation
		case 39000:
			want = ConformityMissingSignal
		default:
			continue
		}
		v := st.Vitals()
		if v.HR.Error != ConformityMissingSignal || len(v.Guidance) != 1 || v.Guidance[0].Code != want || v.Guidance[0].Message != guidanceText[want] {
			t.Errorf("at %.0f s: hr %+v, guidance %+v; want %q", s.T[i]/1000, v.HR, v.Guidance, want)
		}
	}
}

// TestFaceSpan: frames before the face is first found and after it is last
// seen are someone getting ready or leaving, and the capture is measured
// over the face's span; a face lost within the span still counts as
// missing, and a face seen too briefly is missing, unless a live capture
// still sees it: then its measure has only just begun.
func TestFaceSpan(t *testing.T) {
	s := testsignal.Make(testsignal.Config{Seed: 21, Seconds: 40, HR: 76, Noise: 0.02})
	faceWhen := func(in func(ms float64) bool) func(i, n int, o *face.Observation) {
		return func(i, n int, o *face.Observation) { o.Face = in(s.T[i]) }
	}
	if since, ok := streamOf(s, observations(s, faceWhen(func(float64) bool { return false })), Inputs{}).FaceSince(); ok {
		t.Errorf("no face ever: face since %v", since)
	}
	for _, tc := range []struct {
		name    string
		f       func(i, n int, o *face.Observation)
		want    Code
		seconds float64 // the span measured, when answered
		live    Code    // the interim hr's code at the end, live (over the last 30 s)
	}{
		{"found after 8 s", faceWhen(func(ms float64) bool { return ms >= 8000 }), "", 32, ""},
		{"gone for the last 8 s", faceWhen(func(ms float64) bool { return ms <= 32000 }), "", 32, ConformityFacePresence},
		{"found after 6 s, gone for the last 6 s", faceWhen(func(ms float64) bool { return ms >= 6000 && ms <= 34000 }), "", 28, ""},
		{"lost for 10 s in the middle", faceWhen(func(ms float64) bool { return ms < 15000 || ms > 25000 }), ConformityFacePresence, 0, ConformityFacePresence},
		{"found for the last 9 s only", faceWhen(func(ms float64) bool { return ms >= 31000 }), ConformityFacePresence, 0, ConformityInitialisation},
		{"seen for 9 s in the middle only", faceWhen(func(ms float64) bool { return ms >= 15000 && ms < 24000 }), ConformityFacePresence, 0, ConformityFacePresence},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obs := observations(s, tc.f)
			st := streamOf(s, obs, Inputs{Variables: []string{HR}})
			// A scan counts its duration from the face's arrival.
			first := slices.IndexFunc(obs, func(o face.Observation) bool { return o.Face })
			at := func(i int) time.Duration { return time.Duration(s.T[i] * float64(time.Millisecond)) }
			if since, ok := st.FaceSince(); !ok || since != at(first)-at(0) {
				t.Errorf("face since %v (%v), want %v", since, ok, at(first)-at(0))
			}
			r := st.Result()
			if got := code(r, HR); got != tc.want {
				t.Fatalf("hr code %q, want %q (summary %+v)", got, tc.want, r.Summary)
			}
			if tc.want == "" {
				if hr := mean(t, r, HR); math.Abs(hr-s.HR) > 1 {
					t.Errorf("hr %.1f, truth %.1f", hr, s.HR)
				}
				if math.Abs(r.Summary.Seconds-tc.seconds) > 0.1 {
					t.Errorf("measured over %.1f s, want the face's %.0f s", r.Summary.Seconds, tc.seconds)
				}
			}
			v := st.Vitals()
			if v.HR.Error != tc.live {
				t.Errorf("live at the end: hr %+v, want %q", v.HR, tc.live)
			}
			if tc.live == ConformityInitialisation && (len(v.Guidance) != 1 || v.Guidance[0].Code != ConformityInitialisation) {
				t.Errorf("live at the end, the face in view for 9 s: guidance %+v, want to keep measuring", v.Guidance)
			}
			if gone := !obs[len(obs)-1].Face; gone && (len(v.Guidance) == 0 || v.Guidance[0].Code != ConformityFacePresence) {
				t.Errorf("live at the end, the face gone: guidance %+v, want to face the camera", v.Guidance)
			}
		})
	}
}

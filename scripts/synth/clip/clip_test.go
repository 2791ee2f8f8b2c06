package clip

import (
	"context"
	"crypto/sha256"
	"fmt"
	"image"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pulsewire/pulsewire/dsp/face"
	"github.com/pulsewire/pulsewire/dsp/media"
)

func TestPhysiologyTruth(t *testing.T) {
	cases := []struct {
		name          string
		hr, br, rmssd float64
	}{
		{"resting", 62, 12, 45},
		{"slow", 45, 6, 70},
		{"fast", 160, 30, 15},
		{"almost regular", 90, 18, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := New(Config{Seconds: 60, HeartRate: tc.hr, BreathingRate: tc.br, RMSSD: tc.rmssd, Seed: 7, Width: 64, Height: 64})
			if err != nil {
				t.Fatal(err)
			}
			tr := c.Truth()
			// The whole beat series was scaled to the targets; the beats
			// inside the clip are a window of it, so they come close.
			if math.Abs(tr.HeartRate-tc.hr) > 0.02*tc.hr {
				t.Errorf("hr %.2f, want %.0f", tr.HeartRate, tc.hr)
			}
			if math.Abs(tr.RMSSD-tc.rmssd) > 0.15*tc.rmssd+0.5 {
				t.Errorf("RMSSD %.1f ms, want %.0f", tr.RMSSD, tc.rmssd)
			}
			if math.Abs(tr.BreathingRate-tc.br) > 0.05*tc.br {
				t.Errorf("br %.2f, want %.0f", tr.BreathingRate, tc.br)
			}
			// The truth must be its own beats' statistics.
			var sum, sq float64
			for i := 1; i < len(tr.BeatTimes); i++ {
				rr := tr.BeatTimes[i] - tr.BeatTimes[i-1]
				sum += rr
				if i > 1 {
					d := rr - (tr.BeatTimes[i-1] - tr.BeatTimes[i-2])
					sq += d * d
				}
			}
			n := float64(len(tr.BeatTimes) - 1)
			if hr := 60 / (sum / n); math.Abs(hr-tr.HeartRate) > 1e-9 {
				t.Errorf("hr %v is not the beats' %v", tr.HeartRate, hr)
			}
			if r := 1000 * math.Sqrt(sq/(n-1)); math.Abs(r-tr.RMSSD) > 1e-6 {
				t.Errorf("RMSSD %v is not the beats' %v", tr.RMSSD, r)
			}
		})
	}
}

func TestWaveform(t *testing.T) {
	// Zero mean over a beat, the systolic peak highest, and a notch: a
	// local minimum between the systolic and diastolic peaks.
	var sum float64
	const n = 1000
	peak, peakAt := -1.0, 0.0
	for i := range n {
		phi := float64(i) / n
		v := waveform(phi)
		sum += v
		if v > peak {
			peak, peakAt = v, phi
		}
	}
	if math.Abs(sum/n) > 0.002 {
		t.Errorf("mean %.4f, want 0", sum/n)
	}
	if math.Abs(peakAt-0.2) > 0.01 {
		t.Errorf("systolic peak at %.3f, want 0.2", peakAt)
	}
	notch, dia := waveform(0.33), waveform(0.42)
	if !(notch < dia && dia < peak) {
		t.Errorf("no dicrotic notch: notch %.3f, diastolic %.3f, systolic %.3f", notch, dia, peak)
	}
}

func TestDeterministic(t *testing.T) {
	cfg := Config{Width: 160, Height: 120, Seconds: 0.2, Seed: 3, Motion: 0.05, Noise: 2}
	a, _ := New(cfg)
	b, _ := New(cfg)
	ia := image.NewRGBA(image.Rect(0, 0, 160, 120))
	ib := image.NewRGBA(image.Rect(0, 0, 160, 120))
	for i := range a.Len() {
		a.Render(i, ia)
		b.Render(i, ib)
		if string(ia.Pix) != string(ib.Pix) {
			t.Fatalf("frame %d differs between two clips of the same config", i)
		}
	}
	cfg.Seed = 4
	c, _ := New(cfg)
	c.Render(0, ib)
	a.Render(0, ia)
	if string(ia.Pix) == string(ib.Pix) {
		t.Fatal("another seed gave the same frame")
	}
}

func TestFrameTimes(t *testing.T) {
	cases := []struct {
		name   string
		cfg    Config
		frames int
	}{
		{"30 fps", Config{FPS: 30, Seconds: 2}, 60},
		{"15 fps", Config{FPS: 15, Seconds: 2}, 30},
		// Frame 60 moves to 1.998 s, inside the clip.
		{"jitter", Config{FPS: 30, Seconds: 2, Jitter: 0.3}, 61},
		{"every 10th dropped", Config{FPS: 30, Seconds: 2, DropEvery: 10}, 54},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ts := frameTimes(tc.cfg.withDefaults())
			if len(ts) != tc.frames {
				t.Fatalf("%d frames, want %d", len(ts), tc.frames)
			}
			for i := 1; i < len(ts); i++ {
				d := ts[i] - ts[i-1]
				nominal := 1 / tc.cfg.FPS
				if d <= 0 || d > 2.01*nominal+0.001 {
					t.Fatalf("frame %d follows %d by %.4f s", i, i-1, d)
				}
				if tc.cfg.Jitter == 0 && tc.cfg.DropEvery == 0 && math.Abs(d-nominal) > 0.0011 {
					t.Fatalf("uneven spacing %.4f s without jitter", d)
				}
			}
		})
	}
}

// TestPulseVisible tracks the face in rendered frames and checks the skin's
// green mean swings at the configured heart rate: the spectrum's peak in the
// heart band sits at the truth's rate.
func TestPulseVisible(t *testing.T) {
	cascade, err := face.LoadCascade()
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(Config{Width: 240, Height: 180, Seconds: 8, HeartRate: 84, Seed: 11, Motion: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	tr := face.NewTracker(cascade)
	var green []float64
	var times []float64
	for at, img := range c.Frames() {
		o := tr.Observe(img)
		if !o.Face {
			t.Fatalf("no face at %v", at)
		}
		green = append(green, o.G)
		times = append(times, at.Seconds())
	}
	hr := c.Truth().HeartRate
	got := peakBPM(times, green, 40, 200)
	if math.Abs(got-hr) > 3 {
		t.Fatalf("skin green peaks at %.1f bpm, truth %.1f", got, hr)
	}
}

// TestPulseSignature renders one clip with the skin's signature and with
// another (red up, blue down): green is the same pixel for pixel, and the
// differences the signature makes in red and blue move against each
// other, as their shares moved; the truth says which signature it was.
func TestPulseSignature(t *testing.T) {
	cfg := Config{Width: 160, Height: 120, Seconds: 3, HeartRate: 90, Seed: 5, PulseAmplitude: 0.02}
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.PulseRed, cfg.PulseBlue = 0.9, 0.2
	b, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.Truth().Conditions; got.PulseRed != 0.9 || got.PulseBlue != 0.2 {
		t.Errorf("truth's signature %v, %v; want 0.9, 0.2", got.PulseRed, got.PulseBlue)
	}
	if got := a.Truth().Conditions; math.Abs(got.PulseRed-0.33/0.77) > 1e-12 || math.Abs(got.PulseBlue-0.53/0.77) > 1e-12 {
		t.Errorf("default truth's signature %v, %v; want the skin's, 0.43, 0.69", got.PulseRed, got.PulseBlue)
	}
	ia := image.NewRGBA(image.Rect(0, 0, 160, 120))
	ib := image.NewRGBA(image.Rect(0, 0, 160, 120))
	var dr, db []float64 // per frame: the sum of b's red and blue less a's
	for i := range a.Len() {
		a.Render(i, ia)
		b.Render(i, ib)
		var sr, sb float64
		for k := 0; k < len(ia.Pix); k += 4 {
			if ia.Pix[k+1] != ib.Pix[k+1] {
				t.Fatalf("frame %d: green differs at byte %d (%d, %d)", i, k+1, ia.Pix[k+1], ib.Pix[k+1])
			}
			sr += float64(ib.Pix[k]) - float64(ia.Pix[k])
			sb += float64(ib.Pix[k+2]) - float64(ia.Pix[k+2])
		}
		dr, db = append(dr, sr), append(db, sb)
	}
	var mr, mb float64
	for i := range dr {
		mr, mb = mr+dr[i], mb+db[i]
	}
	mr, mb = mr/float64(len(dr)), mb/float64(len(db))
	var cov, vr, vb float64
	for i := range dr {
		cov += (dr[i] - mr) * (db[i] - mb)
		vr += (dr[i] - mr) * (dr[i] - mr)
		vb += (db[i] - mb) * (db[i] - mb)
	}
	if vr == 0 || vb == 0 {
		t.Fatal("the signature changed nothing in red or blue")
	}
	if r := cov / math.Sqrt(vr*vb); r > -0.9 {
		t.Errorf("red's and blue's changes correlate %.2f over the frames, want about -1", r)
	}
}

// peakBPM is the frequency, in per minute, of the largest DFT magnitude of
// the detrended series between lo and hi per minute (0.25 bpm steps).
func peakBPM(ts, v []float64, lo, hi float64) float64 {
	var mean float64
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	best, bestF := 0.0, 0.0
	for f := lo; f <= hi; f += 0.25 {
		var s complex128
		for i, x := range v {
			s += complex(x-mean, 0) * cmplx.Exp(complex(0, -2*math.Pi*f/60*ts[i]))
		}
		if m := cmplx.Abs(s); m > best {
			best, bestF = m, f
		}
	}
	return bestF
}

// TestEncode writes a short clip in every format and decodes it back with
// dsp/media: the frame count, times and size must survive, and the truth
// file must sit beside the clip.
func TestEncode(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name string
		cfg  Config
		enc  Encoding
	}{
		{"mp4", Config{}, Encoding{Format: "mp4", CRF: 18}},
		{"mov", Config{}, Encoding{Format: "mov", CRF: 23}},
		{"avi", Config{}, Encoding{Format: "avi", CRF: 28}},
		{"webm", Config{}, Encoding{Format: "webm", CRF: 20}},
		{"y4m", Config{}, Encoding{Format: "y4m"}},
		{"mp4 jitter", Config{Jitter: 0.3}, Encoding{Format: "mp4"}},
		{"webm drops", Config{DropEvery: 4}, Encoding{Format: "webm"}},
		{"mov jitter and drops", Config{Jitter: 0.2, DropEvery: 5}, Encoding{Format: "mov"}},
		{"mp4 at 150 kbps", Config{}, Encoding{Format: "mp4", BitrateKbps: 150}},
		{"webm at 150 kbps", Config{}, Encoding{Format: "webm", BitrateKbps: 150}},
		{"avi at 150 kbps", Config{}, Encoding{Format: "avi", BitrateKbps: 150}},
		{"mp4 transcoded at 150 kbps", Config{}, Encoding{Format: "mp4", BitrateKbps: 150, Transcoded: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := tc.cfg
			cfg.Width, cfg.Height, cfg.Seconds, cfg.Seed = 160, 120, 1, 5
			c, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, tc.name+"."+tc.enc.Format)
			truth, err := c.Encode(context.Background(), path, tc.enc)
			if err != nil {
				t.Fatal(err)
			}
			saved, err := ReadTruth(TruthPath(path))
			if err != nil || saved.Frames != truth.Frames || saved.HeartRate != truth.HeartRate || saved.Format != tc.enc.Format {
				t.Fatalf("truth file %+v (%v), want %+v", saved, err, truth)
			}
			if saved.BitrateKbps != tc.enc.BitrateKbps || (saved.CRF == 0) != (tc.enc.BitrateKbps > 0 || tc.enc.Format == "y4m") ||
				saved.Transcoded != tc.enc.Transcoded {
				t.Fatalf("truth says crf %d, %d kbit/s for %+v", saved.CRF, saved.BitrateKbps, tc.enc)
			}
			var times []time.Duration
			info, err := media.DecodeVideoFile(context.Background(), path, media.VideoOptions{}, func(f media.Frame) error {
				times = append(times, f.Time)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if info.Frames != c.Len() || info.Width != 160 || info.Height != 120 {
				t.Fatalf("decoded %d frames %dx%d, want %d 160x120", info.Frames, info.Width, info.Height, c.Len())
			}
			for i, got := range times {
				want := c.Time(i) - c.Time(0)
				if d := got - want; d < -time.Millisecond || d > time.Millisecond {
					t.Fatalf("frame %d at %v, want %v", i, got, want)
				}
			}
		})
	}
}

func TestEncodeRefuses(t *testing.T) {
	c, err := New(Config{Width: 64, Height: 64, Seconds: 0.1, Jitter: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, e := range []Encoding{{Format: "avi"}, {Format: "y4m"}, {Format: "gif"}, {Format: "mp4", CRF: 60},
		{Format: "mp4", BitrateKbps: 49}, {Format: "mp4", BitrateKbps: 50001}, {Format: "gif", BitrateKbps: 200},
		{Format: "mp4", KeyFrameEvery: -1}, {Format: "mp4", KeyFrameEvery: 1001}, {Format: "y4m", KeyFrameEvery: 12},
		{Format: "mp4", Transcoded: true}, {Format: "webm", BitrateKbps: 200, Transcoded: true}} {
		path := filepath.Join(dir, "x."+e.Format)
		if _, err := c.Encode(context.Background(), path, e); err == nil {
			t.Errorf("%+v: no error", e)
		}
		if _, err := os.Stat(path); err == nil {
			t.Errorf("%+v: left %s behind", e, path)
		}
	}
}

// TestEncodeKeyFrames checks that a fixed key-frame interval is what the
// file holds, as ffprobe reads its packets, in every codec and rate mode,
// and that without one the encoders put a single key frame in two seconds.
func TestEncodeKeyFrames(t *testing.T) {
	for _, tc := range []struct {
		enc  Encoding
		want string
	}{
		{Encoding{Format: "mp4", BitrateKbps: 300, KeyFrameEvery: 12}, "0 12 24 36 48"},
		{Encoding{Format: "mp4", CRF: 20, KeyFrameEvery: 25}, "0 25 50"},
		{Encoding{Format: "webm", BitrateKbps: 300, KeyFrameEvery: 12}, "0 12 24 36 48"},
		{Encoding{Format: "mp4", BitrateKbps: 300}, "0"},
		{Encoding{Format: "webm", CRF: 20}, "0"},
	} {
		name := fmt.Sprintf("%s-%dk-crf%d-every%d", tc.enc.Format, tc.enc.BitrateKbps, tc.enc.CRF, tc.enc.KeyFrameEvery)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, err := New(Config{Width: 160, Height: 120, Seconds: 2, Seed: 4, Motion: 0.05, ShotNoise: true})
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), name+"."+tc.enc.Format)
			truth, err := c.Encode(context.Background(), path, tc.enc)
			if err != nil {
				t.Fatal(err)
			}
			if truth.KeyFrameEvery != tc.enc.KeyFrameEvery {
				t.Errorf("truth says a key frame every %d, want %d", truth.KeyFrameEvery, tc.enc.KeyFrameEvery)
			}
			out, err := exec.Command("ffprobe", "-v", "error", "-select_streams", "v", "-show_entries", "packet=flags",
				"-of", "csv=p=0", path).Output()
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for i, flags := range strings.Fields(string(out)) {
				if strings.HasPrefix(flags, "K") {
					keys = append(keys, strconv.Itoa(i))
				}
			}
			if got := strings.Join(keys, " "); got != tc.want {
				t.Errorf("key frames at %s, want %s", got, tc.want)
			}
		})
	}
}

// TestEncodeBitrate checks that a rate-controlled clip keeps to its bit
// rate, as a webcam's encoder does: a noisy, moving face at 640x480 would
// take many times more at constant quality.
func TestEncodeBitrate(t *testing.T) {
	for _, enc := range []Encoding{{Format: "mp4"}, {Format: "webm"}, {Format: "mp4", Transcoded: true}} {
		enc.BitrateKbps = 150
		name := enc.Format
		if enc.Transcoded {
			name += " transcoded"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, err := New(Config{Width: 640, Height: 480, Seconds: 8, Seed: 3, Drift: 0.02, ShotNoise: true, AutoExposure: 0.03})
			if err != nil {
				t.Fatal(err)
			}
			var sums [2][sha256.Size]byte
			for i := range sums {
				path := filepath.Join(t.TempDir(), "rate."+enc.Format)
				if _, err := c.Encode(context.Background(), path, enc); err != nil {
					t.Fatal(err)
				}
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if kbps := float64(len(b)) * 8 / 1000 / 8; kbps < 0.6*150 || kbps > 1.3*150 {
					t.Errorf("%.0f kbit/s, want about 150", kbps)
				}
				sums[i] = sha256.Sum256(b)
			}
			// The data sets are measured again and again: the same clip
			// must give the same file, whatever the machine's cores.
			if sums[0] != sums[1] {
				t.Error("two encodings of the same clip differ")
			}
		})
	}
}

func TestConfigRefuses(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
	}{
		{"odd width", Config{Width: 641}},
		{"tiny", Config{Width: 32, Height: 32}},
		{"heart rate too low", Config{HeartRate: 20}},
		{"breathing too fast", Config{BreathingRate: 80}},
		{"jitter too large", Config{Jitter: 0.5}},
		{"drop every frame", Config{DropEvery: 1}},
		{"ten minutes and more", Config{Seconds: 601}},
		{"end heart rate too high", Config{HeartRateEnd: 221}},
		{"melanin beyond the darkest skin", Config{Melanin: 0.5}},
		{"head bowed too far", Config{Pitch: 36}},
		{"head thrown back too far", Config{Pitch: -31}},
		{"fringe below the eyebrows", Config{Fringe: 1.1}},
		{"negative drift", Config{Drift: -0.01}},
		{"the screen lights more than the face", Config{ScreenLight: 0.9}},
		{"exposure steps of a quarter", Config{AutoExposure: 0.25}},
		{"negative red pulse", Config{PulseRed: -0.1}},
		{"blue pulse past twice green's", Config{PulseBlue: 2.1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := New(tc.cfg); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}

func TestPresets(t *testing.T) {
	ps := Presets()
	if len(ps) < 40 {
		t.Fatalf("%d presets, want at least 40", len(ps))
	}
	names := map[string]bool{}
	lo, hi := math.Inf(1), math.Inf(-1)
	blo, bhi := math.Inf(1), math.Inf(-1)
	rlo, rhi := math.Inf(1), math.Inf(-1)
	formats, crfs := map[string]bool{}, map[int]bool{}
	var still, moving, bright, dim bool
	for _, p := range ps {
		checkPreset(t, names, p)
		lo, hi = min(lo, p.Config.HeartRate), max(hi, p.Config.HeartRate)
		blo, bhi = min(blo, p.Config.BreathingRate), max(bhi, p.Config.BreathingRate)
		rlo, rhi = min(rlo, p.Config.RMSSD), max(rhi, p.Config.RMSSD)
		if p.Config.HeartRate > 110 && p.Config.RMSSD > 25 {
			t.Errorf("%s: RMSSD %.0f ms at %.0f bpm", p.Name, p.Config.RMSSD, p.Config.HeartRate)
		}
		formats[p.Encoding.Format] = true
		crfs[p.Encoding.CRF] = true
		still = still || p.Config.Motion == 0
		moving = moving || p.Config.Motion >= 0.05
		bright = bright || p.Config.Brightness >= 1
		dim = dim || p.Config.Brightness <= 0.5
	}
	if lo > 47 || hi < 155 || blo > 7 || bhi < 28 || rlo > 10 || rhi < 60 {
		t.Errorf("hr %.0f-%.0f, br %.0f-%.0f, RMSSD %.0f-%.0f: want about 45-160, 6-30 and 5-80", lo, hi, blo, bhi, rlo, rhi)
	}
	if len(formats) < 4 || !crfs[18] || !crfs[28] || !still || !moving || !bright || !dim {
		t.Errorf("formats %v, crfs %v, still %v moving %v bright %v dim %v", formats, crfs, still, moving, bright, dim)
	}
}

func BenchmarkRender(b *testing.B) {
	c, err := New(Config{Seconds: 1, Motion: 0.03})
	if err != nil {
		b.Fatal(err)
	}
	img := image.NewRGBA(image.Rect(0, 0, 640, 480))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		c.Render(i%c.Len(), img)
	}
}

// TestPulsePeaksFollowOnsets checks that every beat keeps its time course
// from its own onset: the systolic peaks are as far apart as the onsets, so
// the RMSSD of the peak-to-peak intervals is that of the RR series the truth
// reports (stretching each beat to its interval lost about 13%).
func TestPulsePeaksFollowOnsets(t *testing.T) {
	for _, tc := range []struct {
		name          string
		hr, br, rmssd float64
	}{
		{"slow and variable", 55, 12, 80},
		{"fast and steady", 140, 20, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPhysiology(rand.New(rand.NewPCG(7, 8)), 30, newHeartTrend(30, tc.hr, 0), tc.br, tc.rmssd)
			const step = 1e-4
			var peaks []float64
			for i := 1; i+1 < len(p.beats); i++ {
				best, at := math.Inf(-1), 0.0
				for s := p.beats[i]; s < p.beats[i]+0.5*p.period; s += step {
					if v := p.pulse(s); v > best {
						best, at = v, s
					}
				}
				peaks = append(peaks, at)
			}
			var rr, pp []float64
			for i := 1; i < len(peaks); i++ {
				pp = append(pp, peaks[i]-peaks[i-1])
				rr = append(rr, p.beats[i+1]-p.beats[i])
			}
			got, want := 1000*rmssd(pp), 1000*rmssd(rr)
			if math.Abs(got-want) > 0.05*want {
				t.Errorf("peak-to-peak RMSSD %.1f ms, RR RMSSD %.1f ms: want within 5%%", got, want)
			}
		})
	}
}

// checkPreset checks that a preset of a set has a name of its own among
// names (which it joins) and makes a valid clip and encoding.
func checkPreset(t *testing.T, names map[string]bool, p Preset) {
	t.Helper()
	if names[p.Name] {
		t.Errorf("duplicate name %s", p.Name)
	}
	names[p.Name] = true
	if err := p.Config.withDefaults().validate(); err != nil {
		t.Errorf("%s: %v", p.Name, err)
	}
	if _, _, err := p.Encoding.codecArgs(); err != nil {
		t.Errorf("%s: %v", p.Name, err)
	}
}

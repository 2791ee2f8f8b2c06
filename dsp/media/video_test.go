package media

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pulsewire/pulsewire/dsp/face"
)

// makeVideo runs ffmpeg to make a test clip and returns its path. The
// picture is a flat colour (so decoded colours can be checked) or, with
// pattern, ffmpeg's moving test pattern.
func makeVideo(t testing.TB, name string, args ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	full := append([]string{"-nostdin", "-hide_banner", "-loglevel", "error"}, args...)
	full = append(full, "-y", path)
	if out, err := exec.Command("ffmpeg", full...).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg %v: %v\n%s", args, err, out)
	}
	return path
}

// flat is a 1-second 30 fps clip of one colour, 0x8040c0 (R 128, G 64, B
// 192), at the given size.
func flat(size string) []string {
	return []string{"-f", "lavfi", "-i", "color=c=0x8040c0:size=" + size + ":rate=30:duration=1"}
}

func TestDecodeVideoFormats(t *testing.T) {
	cases := []struct {
		name       string
		file       string
		args       []string
		container  Container
		w, h       int
		colourSlop float64 // lossy codecs move a flat colour a little
	}{
		{"mp4 h264", "a.mp4", append(flat("160x120"), "-c:v", "libx264", "-crf", "18", "-pix_fmt", "yuv420p"), MP4, 160, 120, 4},
		{"mov h264", "a.mov", append(flat("160x120"), "-c:v", "libx264", "-crf", "18", "-pix_fmt", "yuv420p"), MOV, 160, 120, 4},
		{"webm vp8", "a.webm", append(flat("160x120"), "-c:v", "libvpx", "-b:v", "1M"), WebM, 160, 120, 6},
		{"webm vp9", "b.webm", append(flat("160x120"), "-c:v", "libvpx-vp9", "-crf", "20", "-b:v", "0", "-deadline", "realtime"), WebM, 160, 120, 6},
		{"avi mjpeg", "a.avi", append(flat("160x120"), "-c:v", "mjpeg", "-q:v", "2"), AVI, 160, 120, 6},
		{"y4m", "a.y4m", append(flat("160x120"), "-pix_fmt", "yuv444p"), Y4M, 160, 120, 2},
		// An odd size: every plane is 161x121.
		{"y4m odd size", "odd.y4m", append(flat("160x120"), "-vf", "scale=161:121", "-pix_fmt", "yuv444p"), Y4M, 161, 121, 2},
		{"mkv h264", "a.mkv", append(flat("160x120"), "-c:v", "libx264", "-crf", "18", "-pix_fmt", "yuv420p"), Matroska, 160, 120, 4},
		{"720p scaled to fit", "big.mp4", append(flat("1280x720"), "-c:v", "libx264", "-crf", "18", "-pix_fmt", "yuv420p"), MP4, 480, 270, 4},
		{"portrait scaled to fit", "tall.mp4", append(flat("480x640"), "-c:v", "libx264", "-crf", "18", "-pix_fmt", "yuv420p"), MP4, 270, 360, 4},
		{"vga scaled to fit", "vga.mp4", append(flat("640x480"), "-c:v", "libx264", "-crf", "18", "-pix_fmt", "yuv420p"), MP4, 480, 360, 4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := makeVideo(t, tc.file, tc.args...)
			var times []time.Duration
			var mean [3]float64
			info, err := DecodeVideoFile(context.Background(), path, VideoOptions{}, func(f Frame) error {
				times = append(times, f.Time)
				if f.Index != len(times)-1 {
					t.Errorf("frame index %d, want %d", f.Index, len(times)-1)
				}
				if f.Index == 15 {
					mean = meanRGB(f.Image)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if info.Container != tc.container || info.Width != tc.w || info.Height != tc.h {
				t.Errorf("got %s %dx%d, want %s %dx%d", info.Container, info.Width, info.Height, tc.container, tc.w, tc.h)
			}
			if info.Frames != 30 || len(times) != 30 {
				t.Fatalf("%d frames (%d delivered), want 30", info.Frames, len(times))
			}
			for i, ts := range times {
				want := time.Duration(i) * time.Second / 30
				if d := ts - want; d < -2*time.Millisecond || d > 2*time.Millisecond {
					t.Errorf("frame %d at %v, want %v", i, ts, want)
					break
				}
			}
			want := [3]float64{128, 64, 192}
			for c := range 3 {
				if math.Abs(mean[c]-want[c]) > tc.colourSlop {
					t.Errorf("mean colour %.1f, want %v", mean, want)
					break
				}
			}
		})
	}
}

// meanRGB is the frame's mean colour as the face tracker reads it.
func meanRGB(img *YCbCr) [3]float64 {
	var s [3]float64
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := rgbAt(img, x, y)
			for i := range s {
				s[i] += float64(c[i])
			}
		}
	}
	n := float64(b.Dx() * b.Dy())
	return [3]float64{s[0] / n, s[1] / n, s[2] / n}
}

// The tracker reads video frames in place only when they are
// face.LimitedRange; a renamed method would silently send every frame
// through At and an RGBA copy.
var _ face.LimitedRange = (*YCbCr)(nil)

// rgbAt is the pixel's colour after the face tracker's conversion.
func rgbAt(img *YCbCr, x, y int) [3]uint8 {
	p, bt709 := img.LimitedRangeYCbCr()
	c := p.COffset(x, y)
	r, g, b := face.LimitedRangeRGB(p.Y[p.YOffset(x, y)], p.Cb[c], p.Cr[c], bt709)
	return [3]uint8{r, g, b}
}

// TestDecodeVideoColours decodes colour bars stored in every range and
// matrix an upload may carry and checks, at the middle of each bar, the
// colour the face tracker reads (within 2 levels of what was encoded) and
// the colour At gives any other reader (within 1 level of the tracker's).
func TestDecodeVideoColours(t *testing.T) {
	// The top two thirds of SMPTE bars: 75% grey, yellow, cyan, green,
	// magenta, red, blue, each a seventh of the width.
	const hi = 191
	bars := [7][3]uint8{{hi, hi, hi}, {hi, hi, 0}, {0, hi, hi}, {0, hi, 0}, {hi, 0, hi}, {hi, 0, 0}, {0, 0, hi}}
	src := func(size string) []string {
		return []string{"-f", "lavfi", "-i", "smptebars=size=" + size + ":rate=30:duration=0.2"}
	}
	lossless := []string{"-c:v", "libx264", "-qp", "0"}
	// tagged stores the bars in a matrix and range and tags the video so,
	// encoded losslessly by x264 unless a codec's arguments are given.
	tagged := func(space, matrix, rng, pixFmt string, codec ...string) []string {
		if codec == nil {
			codec = lossless
		}
		return append(append(src("320x240"), "-vf", "scale=out_color_matrix="+matrix+":out_range="+rng+":flags=accurate_rnd+full_chroma_int+full_chroma_inp",
			"-colorspace", space, "-color_range", rng, "-pix_fmt", pixFmt), codec...)
	}
	// Two paths round in swscale beyond the 2 levels: full-range input,
	// whose chroma ffmpeg 5.1 narrows to limited range a level off on
	// saturated bars (cyan's Cb, so B by 2.1), and packed RGB input, whose
	// conversion puts green's Y a level low; both did so before frames
	// kept their matrix too.
	cases := []struct {
		name  string
		file  string
		args  []string
		bt709 bool // the frames' matrix
		tol   int  // levels
	}{
		{"4:2:0 limited bt601", "a.y4m", append(src("320x240"), "-pix_fmt", "yuv420p"), false, 2},
		{"4:4:4 limited bt601", "b.y4m", append(src("320x240"), "-pix_fmt", "yuv444p"), false, 2},
		{"4:2:0 full range (jpeg)", "c.y4m", append(src("320x240"), "-vf", "scale=out_range=full:flags=accurate_rnd", "-pix_fmt", "yuvj420p", "-strict", "-1"), false, 2},
		{"h264 bt709 tagged", "d.mp4", tagged("bt709", "bt709", "tv", "yuv420p"), true, 2},
		{"h264 720p scaled down", "e.mp4", append(append(src("1280x720"), "-pix_fmt", "yuv420p"), lossless...), false, 2},
		{"h264 bt709 full range", "f.mp4", tagged("bt709", "bt709", "pc", "yuvj420p"), true, 3},
		{"h264 bt2020 rewritten as bt601", "g.mp4", tagged("bt2020nc", "bt2020", "tv", "yuv420p"), false, 2},
		// A phone's HDR video: HEVC, 10 bits, BT.2020, HLG.
		{"hevc 10-bit bt2020 hlg", "p.mov", tagged("bt2020nc", "bt2020", "tv", "yuv420p10le", "-color_trc", "arib-std-b67",
			"-color_primaries", "bt2020", "-c:v", "libx265", "-x265-params", "lossless=1:log-level=error", "-tag:v", "hvc1"), false, 2},
		{"h264 smpte170m tagged", "h.mp4", tagged("smpte170m", "smpte170m", "tv", "yuv420p"), false, 2},
		{"rgb qtrle", "i.mov", append(src("320x240"), "-pix_fmt", "rgb24", "-c:v", "qtrle"), false, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := makeVideo(t, tc.file, tc.args...)
			frames := 0
			if _, err := DecodeVideoFile(context.Background(), path, VideoOptions{}, func(f Frame) error {
				frames++
				if _, bt709 := f.Image.LimitedRangeYCbCr(); bt709 != tc.bt709 {
					t.Fatalf("frame %d: bt709 %v, want %v", f.Index, bt709, tc.bt709)
				}
				b := f.Image.Bounds()
				for i, want := range bars {
					x, y := (2*i+1)*b.Dx()/14, b.Dy()/3
					got := rgbAt(f.Image, x, y)
					r, g, bl, _ := f.Image.At(x, y).RGBA()
					at := [3]uint8{uint8(r >> 8), uint8(g >> 8), uint8(bl >> 8)}
					for c := range 3 {
						if absDiff(got[c], want[c]) > tc.tol || absDiff(at[c], got[c]) > 1 {
							t.Fatalf("frame %d, bar %d at (%d, %d): tracker reads %v, At %v, want %v", f.Index, i, x, y, got, at, want)
						}
					}
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if frames != 6 {
				t.Errorf("%d frames, want 6", frames)
			}
		})
	}
}

func absDiff(a, b uint8) int {
	return int(max(a, b) - min(a, b))
}

// TestDecodeVideoVariableFrameRate checks that uneven frame spacing comes
// through as the container stores it, not as an assumed constant rate.
func TestDecodeVideoVariableFrameRate(t *testing.T) {
	// Frame n is shown at n/30 s, plus 50 ms from frame 10 on, plus
	// another 100 ms from frame 20 on: two gaps, like dropped frames.
	path := makeVideo(t, "vfr.mkv", "-f", "lavfi", "-i", "testsrc=size=96x64:rate=30:duration=1",
		"-vf", "settb=1/1000,setpts='(N/30+0.05*gte(N,10)+0.1*gte(N,20))/TB'", "-fps_mode", "passthrough", "-enc_time_base", "1:1000",
		"-c:v", "libx264", "-crf", "20", "-bf", "0")
	var times []time.Duration
	if _, err := DecodeVideoFile(context.Background(), path, VideoOptions{}, func(f Frame) error {
		times = append(times, f.Time)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(times) != 30 {
		t.Fatalf("%d frames, want 30", len(times))
	}
	for n, ts := range times {
		sec := float64(n) / 30
		if n >= 10 {
			sec += 0.05
		}
		if n >= 20 {
			sec += 0.1
		}
		// Matroska stores milliseconds.
		if d := ts.Seconds() - sec; math.Abs(d) > 0.0015 {
			t.Errorf("frame %d at %v, want %.4fs", n, ts, sec)
		}
	}
}

func TestDecodeVideoRefuses(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := makeVideo(t, "good.mp4", append(flat("64x48"), "-c:v", "libx264", "-pix_fmt", "yuv420p")...)
	goodBytes, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	webm := makeVideo(t, "good.webm", append(flat("64x48"), "-c:v", "libvpx")...)
	webmBytes, _ := os.ReadFile(webm)
	audioOnly := makeVideo(t, "audio.mp4", "-f", "lavfi", "-i", "sine=duration=0.5", "-c:a", "aac")
	size := int64(len(goodBytes))

	cases := []struct {
		name string
		path string
		opt  VideoOptions
		want error
	}{
		{"empty file", write("empty.mp4", nil), VideoOptions{}, ErrEmpty},
		{"random bytes", write("noise.mp4", bytes.Repeat([]byte{0x13, 0x37, 0xc0, 0xde}, 500)), VideoOptions{}, ErrUnsupported},
		{"png named mp4", write("image.mp4", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR\x00\x00\x00\x10\x00\x00\x00\x10\x08\x02\x00\x00\x00")), VideoOptions{}, ErrUnsupported},
		{"mp4 cut in half", write("half.mp4", goodBytes[:len(goodBytes)/2]), VideoOptions{}, ErrCorrupt},
		{"mp4 header only", write("head.mp4", goodBytes[:64]), VideoOptions{}, ErrCorrupt},
		{"webm cut short", write("short.webm", webmBytes[:len(webmBytes)/3]), VideoOptions{}, ErrCorrupt},
		{"audio only", audioOnly, VideoOptions{}, ErrNoVideo},
		{"one byte over the size limit", good, VideoOptions{MaxBytes: size - 1}, ErrTooLarge},
		{"one frame over the frame limit", good, VideoOptions{MaxFrames: 29}, ErrTooLong},
		{"ffmpeg missing", good, VideoOptions{FFmpeg: filepath.Join(dir, "no-ffmpeg")}, ErrDecoderMissing},
		{"ffprobe missing", good, VideoOptions{FFprobe: filepath.Join(dir, "no-ffprobe")}, ErrDecoderMissing},
		{"one pixel over the pixel limit", good, VideoOptions{MaxPixels: 64*48 - 1}, ErrTooManyPixels},
		{"webm one pixel over the pixel limit", webm, VideoOptions{MaxPixels: 64*48 - 1}, ErrTooManyPixels},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeVideoFile(context.Background(), tc.path, tc.opt, func(Frame) error { return nil })
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}
	// At the limits themselves the same file passes.
	t.Run("exactly at the size, frame and pixel limits", func(t *testing.T) {
		info, err := DecodeVideoFile(context.Background(), good, VideoOptions{MaxBytes: size, MaxFrames: 30, MaxPixels: 64 * 48}, func(Frame) error { return nil })
		if err != nil || info.Frames != 30 {
			t.Fatalf("got %d frames, %v", info.Frames, err)
		}
	})
}

// TestDecodeVideoPixelBomb: a 200 KB MP4 of 8192x8192 frames is refused by
// the probe, before a frame is decoded; read from a pipe, where nothing can
// be probed, ffmpeg's own pixel limit refuses it. Either way the decoder
// never holds such a picture (it takes about 730 MB without the limit).
func TestDecodeVideoPixelBomb(t *testing.T) {
	if testing.Short() {
		t.Skip("encodes an 8192x8192 clip")
	}
	path := makeVideo(t, "bomb.mp4", "-f", "lavfi", "-i", "color=c=black:size=8192x8192:rate=1:duration=1",
		"-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-movflags", "+faststart")
	called := false
	_, err := DecodeVideoFile(context.Background(), path, VideoOptions{}, func(Frame) error { called = true; return nil })
	if !errors.Is(err, ErrTooManyPixels) || called {
		t.Fatalf("file: %v (frames delivered: %v), want %v", err, called, ErrTooManyPixels)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, err = DecodeVideo(context.Background(), f, VideoOptions{}, func(Frame) error { called = true; return nil })
	if !errors.Is(err, ErrTooManyPixels) || called {
		t.Fatalf("pipe: %v (frames delivered: %v), want %v", err, called, ErrTooManyPixels)
	}
}

func TestDecodeVideoReader(t *testing.T) {
	path := makeVideo(t, "s.webm", append(flat("64x48"), "-c:v", "libvpx")...)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		opt    VideoOptions
		frames int
		want   error
	}{
		{"whole stream", VideoOptions{}, 30, nil},
		{"exactly at the size limit", VideoOptions{MaxBytes: int64(len(data))}, 30, nil},
		{"one byte over the size limit", VideoOptions{MaxBytes: int64(len(data)) - 1}, -1, ErrTooLarge},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			info, err := DecodeVideo(context.Background(), bytes.NewReader(data), tc.opt, func(Frame) error { return nil })
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if tc.frames >= 0 && info.Frames != tc.frames {
				t.Fatalf("%d frames, want %d", info.Frames, tc.frames)
			}
		})
	}
	// A live WebRTC session hands VP8 frames to ffmpeg as an IVF stream
	// (pion's ivfwriter) written while it is read.
	t.Run("ivf stream through a pipe", func(t *testing.T) {
		ivf, err := os.ReadFile(makeVideo(t, "s.ivf", append(flat("64x48"), "-c:v", "libvpx", "-f", "ivf")...))
		if err != nil {
			t.Fatal(err)
		}
		r, w := io.Pipe()
		go func() {
			for len(ivf) > 0 {
				n := min(len(ivf), 700)
				if _, err := w.Write(ivf[:n]); err != nil {
					return
				}
				ivf = ivf[n:]
			}
			w.Close()
		}()
		var last time.Duration
		info, err := DecodeVideo(context.Background(), r, VideoOptions{}, func(f Frame) error {
			last = f.Time
			return nil
		})
		if err != nil || info.Container != IVF || info.Frames != 30 {
			t.Fatalf("%s, %d frames, %v", info.Container, info.Frames, err)
		}
		if d := last - 29*time.Second/30; d < -2*time.Millisecond || d > 2*time.Millisecond {
			t.Errorf("last frame at %v, want %v", last, 29*time.Second/30)
		}
	})
	t.Run("empty stream", func(t *testing.T) {
		if _, err := DecodeVideo(context.Background(), bytes.NewReader(nil), VideoOptions{}, func(Frame) error { return nil }); !errors.Is(err, ErrEmpty) {
			t.Fatalf("got %v, want ErrEmpty", err)
		}
	})
}

// TestDecodeVideoStops checks every way a decode can end early: the caller's
// cancellation, the deadline and an error from the callback. Each must kill
// ffmpeg and leave no process behind.
func TestDecodeVideoStops(t *testing.T) {
	// Neither we nor ffmpeg may leave files behind: point the temporary
	// directory at one that must stay empty.
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	defer func() {
		if left, _ := os.ReadDir(tmp); len(left) > 0 {
			t.Errorf("temporary files left behind: %v", left)
		}
	}()
	long := makeVideo(t, "long.y4m", "-f", "lavfi", "-i", "testsrc=size=64x48:rate=30:duration=20", "-pix_fmt", "yuv420p")
	stop := errors.New("enough")
	cases := []struct {
		name string
		run  func() error
		want error
	}{
		{"cancelled by the caller", func() error {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			_, err := DecodeVideoFile(ctx, long, VideoOptions{}, func(f Frame) error {
				if f.Index == 3 {
					cancel()
				}
				return nil
			})
			return err
		}, context.Canceled},
		{"callback error", func() error {
			_, err := DecodeVideoFile(context.Background(), long, VideoOptions{}, func(f Frame) error {
				if f.Index == 3 {
					return stop
				}
				return nil
			})
			return err
		}, stop},
		{"deadline on a stalled stream", func() error {
			// A y4m header and then nothing: ffmpeg waits for data that
			// never comes until the deadline kills it.
			r, w := io.Pipe()
			defer w.Close()
			go func() {
				_, _ = w.Write([]byte("YUV4MPEG2 W64 H48 F30:1 Ip A1:1 C420jpeg\n" + strings.Repeat("x", 100)))
			}()
			_, err := DecodeVideo(context.Background(), r, VideoOptions{Timeout: 300 * time.Millisecond}, func(Frame) error { return nil })
			return err
		}, ErrTimeout},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			err := tc.run()
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if el := time.Since(start); el > 10*time.Second {
				t.Errorf("took %v to stop", el)
			}
			if kids := childProcesses(t, "ffmpeg"); len(kids) > 0 {
				t.Fatalf("ffmpeg still running: pids %v", kids)
			}
		})
	}
}

// childProcesses lists the pids of this test process's children named comm,
// read from /proc.
func childProcesses(t *testing.T, comm string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc to inspect processes")
	}
	me := os.Getpid()
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		s := string(stat)
		open, close := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || close < open {
			continue
		}
		fields := strings.Fields(s[close+1:])
		if len(fields) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(fields[1])
		// A zombie (state Z) has exited; Wait would have reaped it, so
		// even those count.
		if ppid == me && s[open+1:close] == comm {
			pids = append(pids, pid)
		}
	}
	return pids
}

func TestSniffContainer(t *testing.T) {
	ftyp := func(major string, compat ...string) []byte {
		b := []byte{0, 0, 0, byte(16 + 4*len(compat))}
		b = append(b, "ftyp"+major+"\x00\x00\x02\x00"...)
		for _, c := range compat {
			b = append(b, c...)
		}
		return b
	}
	checkSniff(t, SniffContainer, []sniffCase[Container]{
		{"mp4", ftyp("isom", "isom", "avc1"), MP4, true},
		{"mov", ftyp("qt  ", "qt  "), MOV, true},
		{"old quicktime", []byte("\x00\x00\x00\x08wide\x00\x00\x00\x00mdat"), MOV, true},
		{"webm", []byte("\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01\x42\xf7\x81\x01\x42\xf2\x81\x04\x42\xf3\x81\x08\x42\x82\x84webm"), WebM, true},
		{"matroska", []byte("\x1a\x45\xdf\xa3\xa3\x42\x86\x81\x01\x42\x82\x88matroska"), Matroska, true},
		{"avi", []byte("RIFF\x00\x10\x00\x00AVI LIST"), AVI, true},
		{"y4m", []byte("YUV4MPEG2 W64 H48 F30:1"), Y4M, true},
		{"ivf", []byte("DKIF\x00\x00\x20\x00VP80"), IVF, true},
		{"heic is an image", ftyp("heic", "mif1", "heic"), "", false},
		{"avif is not a video", ftyp("avif", "mif1", "avif"), "", false},
		{"wav", []byte("RIFF\x00\x10\x00\x00WAVEfmt "), "", false},
		{"jpeg", []byte("\xff\xd8\xff\xe0\x00\x10JFIF"), "", false},
		{"too short", []byte("\x00\x00"), "", false},
		{"empty", nil, "", false},
	})
}

// sniffCase is a named input of a sniffer and its expected answer.
type sniffCase[T ~string] struct {
	name string
	head []byte
	want T
	ok   bool
}

func checkSniff[T ~string](t *testing.T, sniff func([]byte) (T, bool), cases []sniffCase[T]) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := sniff(tc.head)
			if got != tc.want || ok != tc.ok {
				t.Fatalf("got %q %v, want %q %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

// documented reports whether err is nil or one of the package's errors a
// caller is told to expect.
func documented(err error) bool {
	if err == nil {
		return true
	}
	for _, k := range []error{ErrEmpty, ErrTooLarge, ErrTooManyPixels, ErrUnsupported, ErrCorrupt, ErrNoVideo, ErrNoFrames, ErrTooLong, ErrTimeout} {
		if errors.Is(err, k) {
			return true
		}
	}
	return false
}

func TestParseFFmpegLog(t *testing.T) {
	cases := []struct {
		name      string
		line      string
		component string
		level     string
		meta      frameMeta
		isFrame   bool
	}{
		{"showinfo frame", "[Parsed_showinfo_1 @ 0x55de5aaed940] [info] n:  12 pts:   6144 pts_time:0.4     pos: 4242 fmt:rgba sar:1/1 s:160x120 i:P iskey:0 type:P checksum:0 mean:[1]",
			"Parsed_showinfo_1", "info", frameMeta{pts: 0.4, w: 160, h: 120}, true},
		{"showinfo config", "[Parsed_showinfo_1 @ 0x1] [info] config in time_base: 1/15360, frame_rate: 30/1", "Parsed_showinfo_1", "info", frameMeta{}, false},
		{"demuxer error", "[mov,mp4,m4a,3gp,3g2,mj2 @ 0x55da888f78c0] [error] moov atom not found", "mov,mp4,m4a,3gp,3g2,mj2", "error", frameMeta{}, false},
		{"nested component", "[h264 @ 0x5653d7f8b100] [IMGUTILS @ 0x7ffd8aa7c6b0] [error] Picture size 8192x8192 exceeds specified max pixel count 1000", "h264", "error", frameMeta{}, false},
		{"plain error", "[error] /tmp/g.mp4: Invalid data found when processing input", "", "error", frameMeta{}, false},
		{"negative pts", "[Parsed_showinfo_1 @ 0x1] [info] n:0 pts:-512 pts_time:-0.0333 s:64x48", "Parsed_showinfo_1", "info", frameMeta{pts: -0.0333, w: 64, h: 48}, true},
		{"bad size", "[Parsed_showinfo_1 @ 0x1] [info] n:0 pts_time:0 s:64by48", "Parsed_showinfo_1", "info", frameMeta{}, false},
		{"nan pts", "[Parsed_showinfo_1 @ 0x1] [info] n:0 pts_time:NaN s:64x48", "Parsed_showinfo_1", "info", frameMeta{}, false},
		{"no tags", "frame=  10 fps=0.0", "", "", frameMeta{}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			comp, level, msg := splitLine([]byte(tc.line))
			if comp != tc.component || level != tc.level {
				t.Fatalf("tags %q %q, want %q %q", comp, level, tc.component, tc.level)
			}
			m, ok := parseShowinfo(msg)
			if ok != tc.isFrame || m != tc.meta {
				t.Fatalf("frame %+v %v, want %+v %v", m, ok, tc.meta, tc.isFrame)
			}
		})
	}
	durations := []struct {
		line string
		want time.Duration
		ok   bool
	}{
		{"  Duration: 00:00:30.03, start: 0.000000, bitrate: 75 kb/s", 30*time.Second + 30*time.Millisecond, true},
		{"  Duration: 01:02:03.50, start: 0", time.Hour + 2*time.Minute + 3500*time.Millisecond, true},
		{"  Duration: N/A, bitrate: N/A", 0, false},
		{"  Duration: 00:61:00.00, start: 0", 0, false},
	}
	for _, d := range durations {
		got, ok := parseDuration([]byte(d.line))
		if got != d.want || ok != d.ok {
			t.Errorf("parseDuration(%q) = %v %v, want %v %v", d.line, got, ok, d.want, d.ok)
		}
	}
}

// TestFFmpegLogColorSpace checks that the log reader gives each frame the
// matrix of the colour line showinfo logs after it, past side data lines,
// and leaves it empty when none comes.
func TestFFmpegLogColorSpace(t *testing.T) {
	const log = `[Parsed_showinfo_1 @ 0x1] [info] n:   0 pts:      0 pts_time:0       pos:       48 fmt:yuv444p sar:0/1 s:480x270 i:P iskey:1 type:I
[Parsed_showinfo_1 @ 0x1] [info]   side data - User Data Unregistered:
[Parsed_showinfo_1 @ 0x1] [info] UUID=dc45e9bd-e6d9-48b7-962c-d820d923eeef
[Parsed_showinfo_1 @ 0x1] [info] 
[Parsed_showinfo_1 @ 0x1] [info] color_range:tv color_space:bt709 color_primaries:bt709 color_trc:bt709
[Parsed_showinfo_1 @ 0x1] [info] n:   1 pts:    512 pts_time:0.0333333 pos:    19799 fmt:yuv444p sar:0/1 s:480x270 i:P iskey:0 type:B
[Parsed_showinfo_1 @ 0x1] [info] color_range:tv color_space:unknown color_primaries:unknown color_trc:unknown
[Parsed_showinfo_1 @ 0x1] [info] n:   2 pts:   1024 pts_time:0.0666667 pos:    18029 fmt:yuv444p sar:0/1 s:480x270 i:P iskey:0 type:B
[mov @ 0x2] [info] color_range:tv color_space:bt2020nc color_primaries:bt709 color_trc:bt709
[Parsed_showinfo_1 @ 0x1] [info] n:   3 pts:   1536 pts_time:0.1 pos:    18029 fmt:yuv444p sar:0/1 s:480x270 i:P iskey:0 type:B
`
	l := &ffmpegLog{frames: make(chan frameMeta, 8), done: make(chan struct{})}
	l.read(strings.NewReader(log))
	var got []string
	for m := range l.frames {
		got = append(got, m.space)
	}
	want := []string{"bt709", "unknown", "", ""}
	if !slices.Equal(got, want) {
		t.Errorf("matrices %q, want %q", got, want)
	}
	for _, tc := range []struct {
		name, msg, space string
		ok               bool
	}{
		{"bt709", "color_range:tv color_space:bt709 color_primaries:bt709 color_trc:bt709", "bt709", true},
		{"last field", "color_range:pc color_space:smpte170m", "smpte170m", true},
		{"no space", "color_range:tv color_primaries:bt709", "", false},
		{"not a colour line", "n: 0 pts: 0 color_space:bt709", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			space, ok := parseColorSpace([]byte(tc.msg))
			if space != tc.space || ok != tc.ok {
				t.Errorf("parseColorSpace(%q) = %q %v, want %q %v", tc.msg, space, ok, tc.space, tc.ok)
			}
		})
	}
}

// FuzzFFmpegLog feeds arbitrary stderr text through the log reader: it
// must never panic, and every frame it reports must have a sane size.
func FuzzFFmpegLog(f *testing.F) {
	f.Add([]byte("[Parsed_showinfo_1 @ 0x1] [info] n:0 pts:0 pts_time:0 s:64x48\n[error] broken\n  Duration: 00:00:01.00, start: 0\n"))
	f.Add([]byte("[[[]]] [x @ ] [\n\n"))
	f.Add([]byte("[Parsed_showinfo_1 @ 0x1] [info] n:0 pts_time:0 s:64x48\n[Parsed_showinfo_1 @ 0x1] [info] color_range:tv color_space:bt709 x\n"))
	f.Add(bytes.Repeat([]byte("a"), 3*maxLogLine))
	f.Fuzz(func(t *testing.T, data []byte) {
		l := &ffmpegLog{frames: make(chan frameMeta), done: make(chan struct{})}
		go l.read(bytes.NewReader(data))
		for range l.frames {
		}
		<-l.done
		if len(l.errs) > maxErrLines {
			t.Fatalf("kept %d error lines", len(l.errs))
		}
		_ = l.classify(nil)
	})
}

// FuzzDecodeVideo runs ffmpeg on arbitrary input through the whole decode
// path: any outcome but a panic, a hang or an undocumented error is a bug.
func FuzzDecodeVideo(f *testing.F) {
	f.Add([]byte("YUV4MPEG2 W4 H4 F30:1 Ip A1:1 C444\nFRAME\n" + strings.Repeat("\x80", 48)))
	f.Add([]byte("DKIF\x00\x00\x20\x00VP80\x40\x00\x30\x00"))
	f.Add([]byte("\x00\x00\x00\x18ftypisom\x00\x00\x02\x00isomavc1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := DecodeVideo(context.Background(), bytes.NewReader(data), VideoOptions{Timeout: 5 * time.Second, MaxFrames: 10}, func(Frame) error { return nil })
		if !documented(err) {
			t.Fatalf("undocumented error: %v", err)
		}
	})
}

// BenchmarkDecode720p measures ffmpeg's decode of a 30-second 1280x720 H.264
// clip to the default output size, the floor under any batch analysis of such
// a clip. It reports the speed as a multiple of real time.
func BenchmarkDecode720p(b *testing.B) {
	path := makeVideo(b, "720p.mp4", "-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=30:duration=30",
		"-c:v", "libx264", "-preset", "veryfast", "-crf", "20", "-pix_fmt", "yuv420p")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		info, err := DecodeVideoFile(context.Background(), path, VideoOptions{}, func(Frame) error { return nil })
		if err != nil || info.Frames != 900 {
			b.Fatalf("%d frames, %v", info.Frames, err)
		}
	}
	perClip := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(30/perClip, "x-realtime")
	b.ReportMetric(900/perClip, "frames/s")
}

// TestToBT601 checks the table conversion of the other matrices against
// the formulas in floating point: every pixel within half a level (plus
// the tables' rounding) of the exact BT.601 level, clipped, and a BT.601
// frame left as it is.
func TestToBT601(t *testing.T) {
	img := newYCbCr(64, 64)
	p := img.planes
	for i := range p.Y {
		p.Y[i], p.Cb[i], p.Cr[i] = uint8(16+i%220), uint8(16+(i*7)%225), uint8(16+(i*13)%225)
	}
	src := slices.Concat(p.Y, p.Cb, p.Cr)
	for _, name := range []string{"bt2020nc", "smpte240m", "fcc", "bt470bg"} {
		t.Run(name, func(t *testing.T) {
			mx := matrixOf(name)
			copy(p.Y, src[:len(p.Y)])
			copy(p.Cb, src[len(p.Y):2*len(p.Y)])
			copy(p.Cr, src[2*len(p.Y):])
			toBT601(p, mx)
			for i := range p.Y {
				r, g, b := mx.rgb(src[i], src[len(p.Y)+i], src[2*len(p.Y)+i])
				y := 0.299*r + 0.587*g + 0.114*b
				want := [3]float64{16 + 219.0/255*y, 128 + 224.0/255*(b-y)/1.772, 128 + 224.0/255*(r-y)/1.402}
				for c, got := range []uint8{p.Y[i], p.Cb[i], p.Cr[i]} {
					if w := min(max(want[c], 0), 255); math.Abs(float64(got)-w) > 0.5+1e-3 {
						t.Fatalf("pixel %d plane %d: %d, want %.3f", i, c, got, w)
					}
				}
				if name == "bt470bg" && (p.Y[i] != src[i] || p.Cb[i] != src[len(p.Y)+i] || p.Cr[i] != src[2*len(p.Y)+i]) {
					t.Fatalf("pixel %d of a BT.601 frame changed", i)
				}
			}
		})
	}
}

// TestDecodeVideoRotated: a phone films upright but often stores its
// frames sideways with a display matrix that turns them back (portrait
// video on most phones). Frames come out as the viewer sees them, so the
// face tracker gets an upright face: a clip stored 160x120 with a red left
// half and a blue right half, its matrix turning it a quarter, decodes as
// 120x160 with the half the matrix turns to the top there.
func TestDecodeVideoRotated(t *testing.T) {
	stored := makeVideo(t, "stored.mp4",
		"-f", "lavfi", "-i", "color=c=0xc04040:size=80x120:rate=30:duration=1",
		"-f", "lavfi", "-i", "color=c=0x4040c0:size=80x120:rate=30:duration=1",
		"-filter_complex", "hstack", "-c:v", "libx264", "-crf", "18", "-pix_fmt", "yuv420p")
	// The mp4 muxer writes the rotate tag as the stream's display matrix;
	// ffprobe reads the matrix back as an angle counter-clockwise.
	path := makeVideo(t, "rotated.mp4", "-i", stored, "-c", "copy", "-metadata:s:v:0", "rotate=90")
	out, err := exec.Command("ffprobe", "-v", "error", "-select_streams", "v:0",
		"-show_entries", "stream_side_data=rotation", "-of", "default=nw=1:nk=1", path).Output()
	if err != nil {
		t.Fatal(err)
	}
	red := func(c [3]uint8) bool { return c[0] > 150 && c[2] < 100 }
	blue := func(c [3]uint8) bool { return c[2] > 150 && c[0] < 100 }
	wantTop, wantBottom, turn := blue, red, "counter-clockwise: the right half on top"
	switch a := strings.TrimSpace(string(out)); a {
	case "90":
	case "-90":
		wantTop, wantBottom, turn = red, blue, "clockwise: the left half on top"
	default:
		t.Fatalf("display matrix angle %q, want a quarter turn", a)
	}
	var top, bottom [3]uint8
	info, err := DecodeVideoFile(context.Background(), path, VideoOptions{}, func(f Frame) error {
		if f.Index == 15 {
			b := f.Image.Bounds()
			top = rgbAt(f.Image, b.Dx()/2, b.Dy()/8)
			bottom = rgbAt(f.Image, b.Dx()/2, b.Dy()*7/8)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if info.Width != 120 || info.Height != 160 {
		t.Errorf("decoded %dx%d, want the upright 120x160", info.Width, info.Height)
	}
	if !wantTop(top) || !wantBottom(bottom) {
		t.Errorf("top %v, bottom %v: want the picture turned a quarter %s", top, bottom, turn)
	}
}

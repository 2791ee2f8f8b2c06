package media

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// stdTestdata reads one of the JPEGs Go's image package tests with: every
// sampling, restart markers, progressive and Adobe variants, from encoders
// other than ours.
func stdTestdata(t testing.TB, name string) []byte {
	t.Helper()
	root, err := goroot()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(root, "src", "image", "testdata", name))
	if err != nil {
		t.Fatalf("Go's image testdata: %v", err)
	}
	return b
}

var goroot = sync.OnceValues(func() (string, error) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	return strings.TrimSpace(string(out)), err
})

// halvedPlane is the mean of each 2x2 square of a plane of w x h samples
// (an odd edge averages what it has).
func halvedPlane(p []byte, stride, w, h int) (out []float64, ow, oh int) {
	ow, oh = (w+1)/2, (h+1)/2
	out = make([]float64, ow*oh)
	for y := range oh {
		for x := range ow {
			var s, n float64
			for dy := range 2 {
				for dx := range 2 {
					if sx, sy := 2*x+dx, 2*y+dy; sx < w && sy < h {
						s += float64(p[sy*stride+sx])
						n++
					}
				}
			}
			out[y*ow+x] = s / n
		}
	}
	return out, ow, oh
}

// checkHalf decodes data at half size and compares every plane with the
// standard library's full decode: each 4x4 block's mean with its 8x8
// block's (both are the DC coefficient, so they agree but for rounding and
// clamping), and every pixel with the mean of its 2x2 square, which the
// reduced DCT follows but for the highest frequencies (on sharp edges;
// TestReducedDCT checks the formula itself).
func checkHalf(t *testing.T, data []byte) {
	t.Helper()
	got, err := decodeHalf(data, 1<<24, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	full, err := jpeg.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	fb := full.Bounds()
	if want := image.Rect(0, 0, (fb.Dx()+1)/2, (fb.Dy()+1)/2); got.Bounds() != want {
		t.Fatalf("bounds %v, want %v", got.Bounds(), want)
	}
	type plane struct {
		name      string
		full, got []byte
		fs, gs    int // strides
		w, h      int // of the full plane
	}
	var planes []plane
	switch f := full.(type) {
	case *image.Gray:
		g, ok := got.(*image.Gray)
		if !ok {
			t.Fatalf("decoded to %T, want *image.Gray", got)
		}
		planes = append(planes, plane{"gray", f.Pix, g.Pix, f.Stride, g.Stride, fb.Dx(), fb.Dy()})
	case *image.YCbCr:
		g, ok := got.(*image.YCbCr)
		if !ok || g.SubsampleRatio != f.SubsampleRatio {
			t.Fatalf("decoded to %T, want *image.YCbCr %v", got, f.SubsampleRatio)
		}
		cw, ch := chromaSize(f)
		planes = append(planes, plane{"Y", f.Y, g.Y, f.YStride, g.YStride, fb.Dx(), fb.Dy()},
			plane{"Cb", f.Cb, g.Cb, f.CStride, g.CStride, cw, ch}, plane{"Cr", f.Cr, g.Cr, f.CStride, g.CStride, cw, ch})
	default:
		t.Fatalf("the standard decoder gave %T", full)
	}
	for _, p := range planes {
		var blocks, off int
		var sumOff, worstOff float64
		for by := 0; by+8 <= p.h; by += 8 {
			for bx := 0; bx+8 <= p.w; bx += 8 {
				var sf, sg float64
				for y := range 8 {
					for x := range 8 {
						sf += float64(p.full[(by+y)*p.fs+bx+x])
						sg += float64(p.got[(by/2+y/2)*p.gs+bx/2+x/2])
					}
				}
				blocks++
				d := math.Abs(sf-sg) / 64
				sumOff += d
				worstOff = math.Max(worstOff, d)
				if d > 1 {
					off++
				}
			}
		}
		// Clamping makes the exceptions: where a block's full decode
		// leaves 0-255 (saturated colours, sharp edges) its mean moves.
		if mean := sumOff / float64(blocks); mean > 0.3 {
			t.Errorf("%s plane: block means off by %.2f levels on average (%d of %d by more than one, %.1f at worst)",
				p.name, mean, off, blocks, worstOff)
		}
		want, w, h := halvedPlane(p.full, p.fs, p.w, p.h)
		var sum float64
		for y := range h {
			for x := range w {
				sum += math.Abs(float64(p.got[y*p.gs+x]) - want[y*w+x])
			}
		}
		if mean := sum / float64(w*h); mean > 3 {
			t.Errorf("%s plane: pixels off the 2x2 means by %.2f on average", p.name, mean)
		}
	}
}

// TestReducedDCT checks reduce against the formula computed directly: the
// forward DCT of a block's pixels, its 4x4 lowest frequencies, and the
// 2x2 means of their inverse.
func TestReducedDCT(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	c := func(u int) float64 {
		if u == 0 {
			return 1 / math.Sqrt2
		}
		return 1
	}
	for trial := range 50 {
		var px [8][8]float64 // [y][x], level-shifted
		for y := range 8 {
			for x := range 8 {
				px[y][x] = 40*math.Sin(float64(x)/3+float64(trial)) + 30*math.Cos(float64(y)/2) + rng.NormFloat64()*10
			}
		}
		var F [8][8]float64 // [v][u]
		for v := range 8 {
			for u := range 8 {
				var s float64
				for y := range 8 {
					for x := range 8 {
						s += px[y][x] * math.Cos(float64(2*x+1)*float64(u)*math.Pi/16) * math.Cos(float64(2*y+1)*float64(v)*math.Pi/16)
					}
				}
				F[v][u] = c(u) * c(v) / 4 * s
			}
		}
		var low [16]float32
		for v := range 4 {
			for u := range 4 {
				low[v*4+u] = float32(F[v][u])
			}
		}
		// The 2x2 means of the inverse DCT of the low frequencies alone.
		var want [4][4]float64
		for y := range 8 {
			for x := range 8 {
				var f float64
				for v := range 4 {
					for u := range 4 {
						f += c(u) * c(v) / 4 * F[v][u] * math.Cos(float64(2*x+1)*float64(u)*math.Pi/16) * math.Cos(float64(2*y+1)*float64(v)*math.Pi/16)
					}
				}
				want[y/2][x/2] += f / 4
			}
		}
		out := make([]byte, 16)
		reduce(&low, out, 4)
		for n := range 4 {
			for m := range 4 {
				w := math.Round(math.Min(255, math.Max(0, 128+want[n][m])))
				if math.Abs(float64(out[n*4+m])-w) > 1 {
					t.Fatalf("trial %d, pixel %d,%d: %d, want %.0f", trial, m, n, out[n*4+m], w)
				}
			}
		}
	}
}

// facelike is a 320x240 picture with smooth shading, edges and sensor
// noise, JPEG-encoded by the standard library (4:2:0).
func facelike(t testing.TB, quality int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 320, 240))
	rng := rand.New(rand.NewPCG(5, 6))
	for y := range 240 {
		for x := range 320 {
			dx, dy := float64(x-160)/70, float64(y-120)/95
			r, g, b := 60.0, 80.0, 100.0
			if dx*dx+dy*dy < 1 {
				r, g, b = 200-40*dy, 150-30*dy, 120-20*dy
			}
			n := rng.NormFloat64() * 2
			img.Set(x, y, color.RGBA{uint8(r + n), uint8(g + n), uint8(b + n), 255})
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: quality}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// ffmpegJPEG is ffmpeg's test picture of size (as "320x240") as a JPEG
// of pixFmt's sampling.
func ffmpegJPEG(t *testing.T, pixFmt, size string) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "f.jpg")
	out, err := exec.Command("ffmpeg", "-nostdin", "-loglevel", "error", "-f", "lavfi", "-i", "testsrc=size="+size,
		"-frames:v", "1", "-pix_fmt", pixFmt, "-q:v", "2", "-y", path).CombinedOutput()
	if err != nil {
		t.Fatalf("ffmpeg: %v\n%s", err, out)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecodeHalfMatchesTheFullDecode(t *testing.T) {
	ffmpeg := func(pixFmt, size string) func(t *testing.T) []byte {
		return func(t *testing.T) []byte { return ffmpegJPEG(t, pixFmt, size) }
	}
	file := func(name string) func(t *testing.T) []byte {
		return func(t *testing.T) []byte { return stdTestdata(t, name) }
	}
	for _, tc := range []struct {
		name string
		data func(t *testing.T) []byte
	}{
		{"our encoder, 4:2:0, quality 85", func(t *testing.T) []byte { return facelike(t, 85) }},
		{"our encoder, quality 100", func(t *testing.T) []byte { return facelike(t, 100) }},
		{"ffmpeg 4:4:4, odd size", ffmpeg("yuvj444p", "321x241")},
		{"ffmpeg 4:2:2", ffmpeg("yuvj422p", "320x240")},
		{"ffmpeg 4:2:0", ffmpeg("yuvj420p", "640x480")},
		{"Go testdata 4:4:4", file("video-001.q50.444.jpeg")},
		{"Go testdata 4:2:2", file("video-001.q50.422.jpeg")},
		{"Go testdata 4:4:0", file("video-001.q50.440.jpeg")},
		{"Go testdata 4:2:0", file("video-001.q50.420.jpeg")},
		{"Go testdata restart markers", file("video-001.restart2.jpeg")},
		{"Go testdata gray", file("video-005.gray.q50.jpeg")},
		{"Go testdata gray declared 2x2", file("video-005.gray.q50.2x2.jpeg")},
	} {
		t.Run(tc.name, func(t *testing.T) { checkHalf(t, tc.data(t)) })
	}
}

// TestDecodeHalfDeclines: what the reduced decoder does not handle is left
// to the full decode, as valid.
func TestDecodeHalfDeclines(t *testing.T) {
	for _, name := range []string{
		"video-001.progressive.jpeg", "video-001.q50.410.jpeg", "video-001.q50.411.jpeg",
		"video-001.rgb.jpeg", "video-001.cmyk.jpeg", "video-001.separate.dc.progression.jpeg",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := decodeHalf(stdTestdata(t, name), 1<<24, 0, 0); !errors.Is(err, errFullSize) {
				t.Fatalf("got %v, want errFullSize", err)
			}
		})
	}
}

func TestDecodeJPEGFrame(t *testing.T) {
	frame := facelike(t, 85)
	small := encoded(t, JPEG) // 96x64
	cases := []struct {
		name      string
		data      []byte
		maxPixels int64
		size      image.Point
		want      error
	}{
		{"320x240 arrives as 160x120", frame, 320 * 240, image.Pt(160, 120), nil},
		{"one pixel over the limit", frame, 320*240 - 1, image.Point{}, ErrTooManyPixels},
		{"too small to halve: full size", small, 1 << 20, image.Pt(96, 64), nil},
		{"progressive: full size", stdTestdata(t, "video-001.progressive.jpeg"), 1 << 20, image.Pt(150, 103), nil},
		{"empty", nil, 1 << 20, image.Point{}, ErrEmpty},
		{"not a JPEG", encoded(t, PNG), 1 << 20, image.Point{}, ErrUnsupported},
		{"truncated in the scan", frame[:len(frame)*2/3], 1 << 20, image.Point{}, ErrCorrupt},
		{"truncated in the headers", frame[:300], 1 << 20, image.Point{}, ErrCorrupt},
		{"no end of image", frame[:len(frame)-2], 1 << 20, image.Pt(160, 120), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			img, err := DecodeJPEGFrame(tc.data, tc.maxPixels)
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if err == nil && img.Bounds().Size() != tc.size {
				t.Fatalf("decoded %v, want %v", img.Bounds(), tc.size)
			}
		})
	}
}

// samePicture fails unless got has want's type, bounds, sampling and
// pixels.
func samePicture(t *testing.T, name string, got, want image.Image) {
	t.Helper()
	if reflect.TypeOf(got) != reflect.TypeOf(want) || got.Bounds() != want.Bounds() {
		t.Fatalf("%s: %T %v, want %T %v", name, got, got.Bounds(), want, want.Bounds())
	}
	r := want.Bounds()
	switch w := want.(type) {
	case *image.YCbCr:
		g := got.(*image.YCbCr)
		if g.SubsampleRatio != w.SubsampleRatio {
			t.Fatalf("%s: sampling %v, want %v", name, g.SubsampleRatio, w.SubsampleRatio)
		}
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				if g.YCbCrAt(x, y) != w.YCbCrAt(x, y) {
					t.Fatalf("%s: pixel %d,%d is %v, want %v", name, x, y, g.YCbCrAt(x, y), w.YCbCrAt(x, y))
				}
			}
		}
	case *image.Gray:
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				if g := got.(*image.Gray).GrayAt(x, y); g != w.GrayAt(x, y) {
					t.Fatalf("%s: pixel %d,%d is %v, want %v", name, x, y, g, w.GrayAt(x, y))
				}
			}
		}
	default:
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				if got.At(x, y) != want.At(x, y) {
					t.Fatalf("%s: pixel %d,%d is %v, want %v", name, x, y, got.At(x, y), want.At(x, y))
				}
			}
		}
	}
}

// TestFrameDecoderReuse: one FrameDecoder taken through frames of other
// sizes and samplings, larger and smaller in turn, grey ones, frames it
// leaves to the full decode and frames it refuses, gives every frame the
// pixels (or the error) a decoder of its own gives. So does one
// halfDecoder without a smallest size, which also halves Go's small test
// pictures (restart markers, 4:4:0, grey declared 2x2).
func TestFrameDecoderReuse(t *testing.T) {
	face := facelike(t, 85)
	type input struct {
		name      string
		data      []byte
		maxPixels int64
	}
	inputs := []input{
		{"320x240 4:2:0", face, 1 << 20},
		{"640x480 4:2:0", ffmpegJPEG(t, "yuvj420p", "640x480"), 1 << 20},
		{"321x241 4:4:4", ffmpegJPEG(t, "yuvj444p", "321x241"), 1 << 20},
		{"320x240 4:2:2", ffmpegJPEG(t, "yuvj422p", "320x240"), 1 << 20},
		{"gray declared 2x2", stdTestdata(t, "video-005.gray.q50.2x2.jpeg"), 1 << 20},
		{"restart markers", stdTestdata(t, "video-001.restart2.jpeg"), 1 << 20},
		{"truncated in the scan", face[:len(face)*2/3], 1 << 20},
		{"4:4:0", stdTestdata(t, "video-001.q50.440.jpeg"), 1 << 20},
		{"progressive: full size", stdTestdata(t, "video-001.progressive.jpeg"), 1 << 20},
		{"1280x720 4:2:0", ffmpegJPEG(t, "yuvj420p", "1280x720"), 1280 * 720},
		{"over the pixel limit", face, 320*240 - 1},
		{"quality 100", facelike(t, 100), 1 << 20},
		{"too small to halve: full size", encoded(t, JPEG), 1 << 20},
		{"gray", stdTestdata(t, "video-005.gray.q50.jpeg"), 1 << 20},
		{"not a JPEG", encoded(t, PNG), 1 << 20},
		{"640x480 gray", ffmpegJPEG(t, "gray", "640x480"), 1 << 20},
		{"4:2:0", stdTestdata(t, "video-001.q50.420.jpeg"), 1 << 20},
	}
	compare := func(name string, got image.Image, err error, want image.Image, wantErr error) {
		t.Helper()
		sameDecode(t, name, got, err, want, wantErr)
	}
	var d FrameDecoder
	var h halfDecoder
	for pass := range 2 {
		for _, in := range inputs {
			name := fmt.Sprintf("pass %d, %s", pass+1, in.name)
			want, wantErr := DecodeJPEGFrame(in.data, in.maxPixels)
			got, err := d.Decode(in.data, in.maxPixels)
			compare(name, got, err, want, wantErr)
			want, wantErr = decodeHalf(in.data, in.maxPixels, 0, 0)
			got, err = h.decode(in.data, in.maxPixels, 0, 0)
			compare(name+", any size", got, err, want, wantErr)
		}
	}
}

// sameDecode fails t unless a decode gave what another did: the same
// error, or the same picture.
func sameDecode(t *testing.T, name string, got image.Image, err error, want image.Image, wantErr error) {
	t.Helper()
	if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
		t.Fatalf("%s: error %v, want %v", name, err, wantErr)
	}
	if err == nil {
		samePicture(t, name, got, want)
	}
}

// TestFrameDecoderAllocs: once it has decoded the largest of them, a
// FrameDecoder decodes frames of any size and sampling without
// allocating.
func TestFrameDecoderAllocs(t *testing.T) {
	frames := [][]byte{
		ffmpegJPEG(t, "yuvj420p", "640x480"),
		facelike(t, 85),
		ffmpegJPEG(t, "yuvj444p", "321x241"),
		ffmpegJPEG(t, "gray", "640x480"),
		ffmpegJPEG(t, "yuvj422p", "320x240"),
	}
	var d FrameDecoder
	for _, f := range frames {
		if _, err := d.Decode(f, 1<<20); err != nil {
			t.Fatal(err)
		}
	}
	i := 0
	if n := testing.AllocsPerRun(20, func() {
		d.Decode(frames[i%len(frames)], 1<<20)
		i++
	}); n != 0 {
		t.Errorf("%.1f allocations per frame, want 0", n)
	}
}

// FuzzDecodeJPEGFrame: no input makes the reduced decoder panic, and what
// it decodes stays within the pixel limit.
func FuzzDecodeJPEGFrame(f *testing.F) {
	f.Add(facelike(f, 50))
	f.Add(stdTestdata(f, "video-001.restart2.jpeg"))
	f.Add(stdTestdata(f, "video-005.gray.q50.2x2.jpeg"))
	f.Fuzz(func(t *testing.T, data []byte) {
		const maxPixels = 1 << 18
		img, err := decodeHalf(data, maxPixels, 0, 0)
		if err == nil && img.Bounds().Dx()*img.Bounds().Dy() > maxPixels/4+1024 {
			t.Fatalf("decoded %v past the limit", img.Bounds())
		}
		if err != nil && !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrTooManyPixels) && !errors.Is(err, errFullSize) {
			t.Fatalf("undocumented error %v", err)
		}
	})
}

// FuzzFrameDecoderReuse: a decoder that serves a whole session decodes
// every input as a fresh one does, whatever it decoded before (a corrupt
// frame, a larger or differently sampled one), and the frame after it too.
func FuzzFrameDecoderReuse(f *testing.F) {
	f.Add(facelike(f, 50))
	f.Add(stdTestdata(f, "video-001.restart2.jpeg"))
	f.Add(stdTestdata(f, "video-005.gray.q50.2x2.jpeg"))
	f.Add(stdTestdata(f, "video-001.q50.440.jpeg"))
	next := facelike(f, 85)
	var d FrameDecoder
	f.Fuzz(func(t *testing.T, data []byte) {
		const maxPixels = 1 << 20
		got, err := d.Decode(data, maxPixels)
		want, wantErr := new(FrameDecoder).Decode(data, maxPixels)
		sameDecode(t, "the input", got, err, want, wantErr)
		got, err = d.Decode(next, maxPixels)
		want, wantErr = new(FrameDecoder).Decode(next, maxPixels)
		sameDecode(t, "the frame after it", got, err, want, wantErr)
	})
}

// BenchmarkDecodeJPEGFrame against BenchmarkDecodeJPEG320: one 320x240
// frame, reduced and in full.
func BenchmarkDecodeJPEGFrame(b *testing.B) {
	frame := facelike(b, 85)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeJPEGFrame(frame, 1<<20); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFrameDecoder: the same frame decoded again by one decoder, as a
// session decodes its frames.
func BenchmarkFrameDecoder(b *testing.B) {
	frame := facelike(b, 85)
	var d FrameDecoder
	b.ReportAllocs()
	for b.Loop() {
		if _, err := d.Decode(frame, 1<<20); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeJPEG320(b *testing.B) {
	frame := facelike(b, 85)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeJPEG(frame, 1<<20); err != nil {
			b.Fatal(err)
		}
	}
}

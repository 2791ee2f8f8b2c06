package media

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"golang.org/x/image/bmp"
)

// testPicture is a 96x64 image: a flat colour with a gradient, large enough
// to pass the API's 4 KB minimum once encoded losslessly.
func testPicture() *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, 96, 64))
	for y := 0; y < 64; y++ {
		for x := 0; x < 96; x++ {
			img.SetRGBA(x, y, color.RGBA{uint8(150 + x/2), uint8(80 + y), 60, 255})
		}
	}
	return img
}

func encoded(t testing.TB, f ImageFormat) []byte {
	t.Helper()
	img := testPicture()
	var buf bytes.Buffer
	switch f {
	case JPEG:
		if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 95}); err != nil {
			t.Fatal(err)
		}
	case PNG:
		if err := png.Encode(&buf, img); err != nil {
			t.Fatal(err)
		}
	case BMP:
		if err := bmp.Encode(&buf, img); err != nil {
			t.Fatal(err)
		}
	case WebP, HEIC:
		// Go has no encoder for these: Debian's tools make real files.
		dir := t.TempDir()
		src := filepath.Join(dir, "in.png")
		out := filepath.Join(dir, "out."+string(f))
		var pngBuf bytes.Buffer
		if err := png.Encode(&pngBuf, img); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(src, pngBuf.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("ffmpeg", "-nostdin", "-loglevel", "error", "-i", src, "-lossless", "1", "-y", out)
		if f == HEIC {
			cmd = exec.Command("heif-enc", "-q", "95", "-o", out, src)
		}
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", cmd.Args, err, msg)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	return buf.Bytes()
}

func TestDecodeImage(t *testing.T) {
	// HEIC goes through heif-convert and a temporary directory: point the
	// temporary directory at one the test can check is left empty.
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	for _, f := range []ImageFormat{JPEG, PNG, BMP, WebP, HEIC} {
		t.Run(string(f), func(t *testing.T) {
			data := encoded(t, f)
			img, got, err := DecodeImage(context.Background(), data, ImageOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got != f {
				t.Errorf("format %q, want %q", got, f)
			}
			if img.Bounds() != image.Rect(0, 0, 96, 64) {
				t.Fatalf("bounds %v", img.Bounds())
			}
			// Lossy formats move a colour by a few levels at most.
			r, g, b, _ := img.At(40, 30).RGBA()
			want := testPicture().RGBAAt(40, 30)
			if math.Abs(float64(r>>8)-float64(want.R)) > 6 || math.Abs(float64(g>>8)-float64(want.G)) > 6 || math.Abs(float64(b>>8)-float64(want.B)) > 6 {
				t.Errorf("pixel (%d,%d,%d), want %v", r>>8, g>>8, b>>8, want)
			}
		})
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
}

func TestDecodeImageRefuses(t *testing.T) {
	pngData := encoded(t, PNG)
	heic := encoded(t, HEIC)
	var gifBuf bytes.Buffer
	if err := gif.Encode(&gifBuf, testPicture(), nil); err != nil {
		t.Fatal(err)
	}
	const pixels = 96 * 64
	cases := []struct {
		name string
		data []byte
		opt  ImageOptions
		want error
	}{
		{"empty", nil, ImageOptions{}, ErrEmpty},
		{"gif is not accepted", gifBuf.Bytes(), ImageOptions{}, ErrUnsupported},
		{"text", []byte("hello, this is not an image at all"), ImageOptions{}, ErrUnsupported},
		{"mp4 is not an image", []byte("\x00\x00\x00\x18ftypisom\x00\x00\x02\x00isomavc1"), ImageOptions{}, ErrUnsupported},
		{"png cut short", pngData[:len(pngData)/2], ImageOptions{}, ErrCorrupt},
		{"png header only", pngData[:33], ImageOptions{}, ErrCorrupt},
		{"jpeg cut short", encoded(t, JPEG)[:200], ImageOptions{}, ErrCorrupt},
		{"heic cut short", heic[:len(heic)/2], ImageOptions{}, ErrCorrupt},
		{"one pixel over the limit", pngData, ImageOptions{MaxPixels: pixels - 1}, ErrTooManyPixels},
		{"heic one pixel over the limit", heic, ImageOptions{MaxPixels: pixels - 1}, ErrTooManyPixels},
		{"one byte over the size limit", pngData, ImageOptions{MaxBytes: int64(len(pngData)) - 1}, ErrTooLarge},
		{"heif-convert missing", heic, ImageOptions{HeifConvert: "/nonexistent/heif-convert"}, ErrDecoderMissing},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			img, _, err := DecodeImage(context.Background(), tc.data, tc.opt)
			if !errors.Is(err, tc.want) || img != nil {
				t.Fatalf("got %v, %v; want %v", img != nil, err, tc.want)
			}
		})
	}
	atLimit := []struct {
		name string
		data []byte
	}{{"png", pngData}, {"heic", heic}}
	for _, tc := range atLimit {
		t.Run(tc.name+" exactly at the pixel and size limits", func(t *testing.T) {
			if _, _, err := DecodeImage(context.Background(), tc.data, ImageOptions{MaxPixels: pixels, MaxBytes: int64(len(tc.data))}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestDecodeJPEG(t *testing.T) {
	data := encoded(t, JPEG)
	cases := []struct {
		name      string
		data      []byte
		maxPixels int64
		want      error
	}{
		{"frame", data, 96 * 64, nil},
		{"one pixel over", data, 96*64 - 1, ErrTooManyPixels},
		{"png is refused", encoded(t, PNG), 1 << 20, ErrUnsupported},
		{"empty", nil, 1 << 20, ErrEmpty},
		{"truncated", data[:len(data)-100], 1 << 20, ErrCorrupt},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			img, err := DecodeJPEG(tc.data, tc.maxPixels)
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if err == nil {
				if _, ok := img.(*image.YCbCr); !ok {
					t.Errorf("decoded to %T, want *image.YCbCr", img)
				}
			}
		})
	}
}

func TestSniffImage(t *testing.T) {
	checkSniff(t, SniffImage, []sniffCase[ImageFormat]{
		{"jpeg", []byte("\xff\xd8\xff\xe0\x00\x10JFIF\x00"), JPEG, true},
		{"png", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR"), PNG, true},
		{"bmp", []byte("BM\x36\x00\x0c\x00\x00\x00\x00\x00\x36\x00\x00\x00\x28\x00\x00\x00"), BMP, true},
		{"webp", []byte("RIFF\x00\x10\x00\x00WEBPVP8L"), WebP, true},
		{"heic", []byte("\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic"), HEIC, true},
		{"heic by compatible brand", []byte("\x00\x00\x00\x18ftypmif1\x00\x00\x00\x00mif1heic"), HEIC, true},
		{"avif", []byte("\x00\x00\x00\x18ftypavif\x00\x00\x00\x00mif1avif"), "", false},
		{"bm too short", []byte("BM"), "", false},
		{"gif", []byte("GIF89a"), "", false},
	})
}

// FuzzDecodeImage feeds arbitrary bytes to the pure-Go image entry (HEIC's
// external decoder is left to FuzzHEIFSize's parser): it must answer with an
// image within the pixel limit or a documented error, never panic.
func FuzzDecodeImage(f *testing.F) {
	for _, format := range []ImageFormat{JPEG, PNG, BMP} {
		f.Add(encoded(f, format))
	}
	f.Add([]byte("RIFF\x1a\x00\x00\x00WEBPVP8L\x0d\x00\x00\x00\x2f\x00\x00\x00\x00"))
	// A phone's JPEG, stored on its side with an EXIF orientation.
	f.Add(withSegments(encoded(f, JPEG), exifAPP1(binary.BigEndian, 0x0112, 3, 1, 6)))
	f.Fuzz(func(t *testing.T, data []byte) {
		if f, ok := SniffImage(data[:min(len(data), SniffLen)]); ok && f == HEIC {
			return
		}
		const maxPixels = 1 << 16
		img, _, err := DecodeImage(context.Background(), data, ImageOptions{MaxPixels: maxPixels})
		if !documented(err) {
			t.Fatalf("undocumented error: %v", err)
		}
		if err != nil {
			return
		}
		if b := img.Bounds(); int64(b.Dx())*int64(b.Dy()) > maxPixels {
			t.Fatalf("decoded %v past the limit", b)
		}
	})
}

// FuzzDecodeJPEG covers the live session's frame decoder.
func FuzzDecodeJPEG(f *testing.F) {
	f.Add(encoded(f, JPEG))
	f.Add([]byte("\xff\xd8\xff\xdb"))
	f.Fuzz(func(t *testing.T, data []byte) {
		img, err := DecodeJPEG(data, 1<<16)
		if err == nil && int64(img.Bounds().Dx())*int64(img.Bounds().Dy()) > 1<<16 {
			t.Fatalf("decoded %v past the limit", img.Bounds())
		}
	})
}

// FuzzHEIFSize checks the HEIF box walker that bounds a HEIC before it is
// handed to heif-convert.
func FuzzHEIFSize(f *testing.F) {
	f.Add(encoded(f, HEIC))
	f.Add([]byte("\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic\x00\x00\x00\x01meta"))
	f.Fuzz(func(t *testing.T, data []byte) {
		w, h, err := heifSize(data)
		if err == nil && (w < 0 || h < 0) {
			t.Fatalf("negative size %dx%d", w, h)
		}
		if err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("got %v, want ErrCorrupt", err)
		}
	})
}

// BenchmarkDecodeJPEG measures the live session's frame decoder on a
// 640x480 camera-like frame at quality 85.
func BenchmarkDecodeJPEG(b *testing.B) {
	img := image.NewRGBA(image.Rect(0, 0, 640, 480))
	for y := 0; y < 480; y++ {
		for x := 0; x < 640; x++ {
			img.SetRGBA(x, y, color.RGBA{uint8(x/3 + y/5), uint8(100 + (x*y)%50), uint8(200 - y/3), 255})
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 85}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(buf.Len()))
	for i := 0; i < b.N; i++ {
		if _, err := DecodeJPEG(buf.Bytes(), 640*480); err != nil {
			b.Fatal(err)
		}
	}
}

// TestImageMemoryLimit: an image's decoded memory (imageMemory) is checked
// from its header, at the limit and one byte under it.
func TestImageMemoryLimit(t *testing.T) {
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewNRGBA(image.Rect(0, 0, 100, 80))); err != nil {
		t.Fatal(err)
	}
	const need = 100 * 80 * (4 + 4) // NRGBA, and the detector's RGBA copy
	if _, _, err := DecodeImage(context.Background(), b.Bytes(), ImageOptions{MaxMemory: need}); err != nil {
		t.Fatalf("at the limit: %v", err)
	}
	if _, _, err := DecodeImage(context.Background(), b.Bytes(), ImageOptions{MaxMemory: need - 1}); !errors.Is(err, ErrTooManyPixels) {
		t.Fatalf("one byte past it: %v, want %v", err, ErrTooManyPixels)
	}
}

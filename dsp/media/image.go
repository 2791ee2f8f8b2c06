package media

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"time"

	"golang.org/x/image/bmp"
	"golang.org/x/image/webp"
)

// Defaults of ImageOptions.
const (
	// DefaultMaxImageBytes is the API's per-image upload limit.
	DefaultMaxImageBytes = 30 << 20
	// DefaultMaxPixels admits a 48-megapixel phone photo (8000x6000) and
	// bounds a decoded image to about 200 MB of RGBA.
	DefaultMaxPixels = 50_000_000
	// DefaultMaxImageMemory bounds the memory one image takes to decode
	// and analyse: its pixels as decoded, and the RGBA copy the face
	// detector makes of a picture that is neither YCbCr nor RGBA (see
	// imageMemory). A 50-megapixel JPEG fits, as does a 40-megapixel RGBA
	// PNG, a 20-megapixel NRGBA one, a 32-megapixel grey one or a
	// 13-megapixel 16-bit one.
	DefaultMaxImageMemory = 160 << 20
	// DefaultImageTimeout bounds an external decode (HEIC).
	DefaultImageTimeout = time.Minute
)

// ImageOptions bounds an image decode. Zero fields take the defaults.
type ImageOptions struct {
	MaxBytes  int64
	MaxPixels int64
	// MaxMemory bounds the memory the image takes decoded (imageMemory),
	// checked with the pixel limit before any pixel is decoded.
	MaxMemory int64
	Timeout   time.Duration
	// HeifConvert is libheif's heif-convert executable; empty means
	// "heif-convert" on PATH.
	HeifConvert string
}

func (o ImageOptions) withDefaults() ImageOptions {
	o.MaxBytes = orDefault(o.MaxBytes, DefaultMaxImageBytes)
	o.MaxPixels = orDefault(o.MaxPixels, DefaultMaxPixels)
	o.MaxMemory = orDefault(o.MaxMemory, DefaultMaxImageMemory)
	o.Timeout = orDefault(o.Timeout, DefaultImageTimeout)
	o.HeifConvert = cmp.Or(o.HeifConvert, "heif-convert")
	return o
}

// codec is one pure-Go image decoder.
type codec struct {
	config func(io.Reader) (image.Config, error)
	decode func(io.Reader) (image.Image, error)
}

var codecs = map[ImageFormat]codec{
	JPEG: {jpeg.DecodeConfig, jpeg.Decode},
	PNG:  {png.DecodeConfig, png.Decode},
	BMP:  {bmp.DecodeConfig, bmp.Decode},
	WebP: {webp.DecodeConfig, webp.Decode},
}

// DecodeImage decodes a JPEG, PNG, BMP, WebP or HEIC image, recognised from
// its content. The header's dimensions are checked against the pixel limit
// before any pixel is decoded. A JPEG comes out turned upright as its EXIF
// orientation says (orient.go); heif-convert turns a HEIC image itself.
func DecodeImage(ctx context.Context, data []byte, opt ImageOptions) (image.Image, ImageFormat, error) {
	opt = opt.withDefaults()
	switch {
	case len(data) == 0:
		return nil, "", ErrEmpty
	case int64(len(data)) > opt.MaxBytes:
		return nil, "", fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, len(data), opt.MaxBytes)
	}
	f, ok := SniffImage(data[:min(len(data), SniffLen)])
	if !ok {
		return nil, "", ErrUnsupported
	}
	if f == HEIC {
		img, err := decodeHEIC(ctx, data, opt)
		return img, f, err
	}
	turn := 1
	if f == JPEG {
		turn = jpegOrientation(data)
	}
	if err := checkMemory(codecs[f], data, opt.MaxMemory, turn != 1); err != nil {
		return nil, f, err
	}
	img, err := decodeWith(codecs[f], data, opt.MaxPixels)
	if err != nil {
		return nil, f, err
	}
	return orient(img, turn), f, nil
}

// checkMemory refuses an image whose decoding would take more than
// maxMemory bytes, from its header alone; one to be turned upright holds
// its pixels twice while it is turned.
func checkMemory(c codec, data []byte, maxMemory int64, turned bool) error {
	cfg, err := c.config(bytes.NewReader(data))
	if err != nil {
		return nil // decodeWith reports it
	}
	m := imageMemory(cfg)
	if turned {
		m += pixelMemory(cfg)
	}
	if m > maxMemory {
		return fmt.Errorf("%w: %dx%d pixels take %d bytes decoded, limit %d", ErrTooManyPixels, cfg.Width, cfg.Height, m, maxMemory)
	}
	return nil
}

// imageMemory is what an image takes decoded, from its header: its pixels
// in their decoded form, plus 4 bytes a pixel for the RGBA copy the face
// detector makes of any other form than YCbCr and RGBA.
func imageMemory(cfg image.Config) int64 {
	m := pixelMemory(cfg)
	if cfg.ColorModel != color.YCbCrModel && cfg.ColorModel != color.RGBAModel {
		m += 4 * int64(cfg.Width) * int64(cfg.Height)
	}
	return m
}

// pixelMemory is what an image's pixels take in their decoded form, from
// its header (YCbCr counted at 4:4:4, the header does not say its
// subsampling).
func pixelMemory(cfg image.Config) int64 {
	px := int64(cfg.Width) * int64(cfg.Height)
	switch cfg.ColorModel {
	case color.YCbCrModel:
		return 3 * px
	case color.RGBAModel:
		return 4 * px
	case color.GrayModel, color.AlphaModel:
		return px
	case color.Gray16Model, color.Alpha16Model:
		return 2 * px
	case color.RGBA64Model, color.NRGBA64Model:
		return 8 * px
	}
	if _, ok := cfg.ColorModel.(color.Palette); ok {
		return px
	}
	return 4 * px // NRGBA, CMYK and the rest
}

// DecodeJPEG decodes one JPEG video frame, as the live session receives
// them, after checking its dimensions against maxPixels. A colour JPEG
// decodes to *image.YCbCr, which face.Tracker reads without conversion.
func DecodeJPEG(data []byte, maxPixels int64) (image.Image, error) {
	if len(data) == 0 {
		return nil, ErrEmpty
	}
	if f, ok := SniffImage(data[:min(len(data), SniffLen)]); !ok || f != JPEG {
		return nil, ErrUnsupported
	}
	return decodeWith(codecs[JPEG], data, maxPixels)
}

// decodeWith reads the header, enforces the pixel limit, then decodes. A
// decoder that panics on crafted data is reported as corrupt data rather
// than taking the process down.
func decodeWith(c codec, data []byte, maxPixels int64) (img image.Image, err error) {
	defer func() {
		if p := recover(); p != nil {
			img, err = nil, fmt.Errorf("%w: decoder failed: %v", ErrCorrupt, p)
		}
	}()
	cfg, err := c.config(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if err := checkPixels(int64(cfg.Width), int64(cfg.Height), maxPixels); err != nil {
		return nil, err
	}
	img, err = c.decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return img, nil
}

// checkPixels refuses empty images and images over the pixel limit.
func checkPixels(w, h, maxPixels int64) error {
	if w <= 0 || h <= 0 {
		return fmt.Errorf("%w: %dx%d image", ErrCorrupt, w, h)
	}
	if w > maxPixels || h > maxPixels || w*h > maxPixels {
		return fmt.Errorf("%w: %dx%d pixels, limit %d", ErrTooManyPixels, w, h, maxPixels)
	}
	return nil
}

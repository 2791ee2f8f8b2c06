package control

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"image"
	"io"
	"mime/multipart"
	"net/http"
	"slices"

	"github.com/pulsewire/pulsewire/dsp"
	"github.com/pulsewire/pulsewire/dsp/face"
	"github.com/pulsewire/pulsewire/dsp/media"
	"github.com/pulsewire/pulsewire/storage"
)

// Limits of the images route.
const (
	MaxImages     = 3                          // image parts one measure may hold
	minImageBytes = 4 << 10                    // 4 KB (4,096 bytes)
	maxImageBytes = media.DefaultMaxImageBytes // 30 MB (31,457,280 bytes)
	// maxImagesBody bounds the whole body: room for three of the largest
	// images and the input parts; a fourth image or more counts in it.
	maxImagesBody = 100 << 20
)

// imageTypes are the types an image part may declare, each with
// the format its content must be.
var imageTypes = map[string]media.ImageFormat{
	"image/jpeg":     media.JPEG,
	"image/jpg":      media.JPEG,
	"image/png":      media.PNG,
	"image/bmp":      media.BMP,
	"image/x-ms-bmp": media.BMP,
	"image/webp":     media.WebP,
	"image/heic":     media.HEIC,
}

// imageFormats are the formats an image part that declares no type may hold:
// those of the listed types.
var imageFormats = []media.ImageFormat{media.JPEG, media.PNG, media.BMP, media.WebP, media.HEIC}

// imagesSource: POST /measures/rppg/images and /measures/{id}/rppg/images.
// faceBmi comes from the images and bmi from the person's
// weight and height; every other variable is MISSING_CAPTURES and signal
// is null.
//
// Images that break the route's rules do not fail the request: faceBmi
// carries the error code that names the rule, and the other
// variables are computed as usual. More than three images is
// EXCEEDING_MAX_IMAGE; an image whose declared type is not one of
// imageTypes or does not match its content, or that cannot be decoded, is
// INVALID_IMAGE_TYPE; one under 4 KB or over 30 MB, or over dsp/media's
// pixel limit (a decompression bomb), is INVALID_IMAGE_SIZE. With several
// problems the first of that order is reported. No image at all is 400.
type imagesSource struct {
	formSource
	count   int      // image parts received
	stored  []string // media names of the images kept, in order
	problem dsp.Code // the rule the images broke, "" when none
}

func (*imagesSource) kind() storage.Kind { return storage.KindRPPG }

func (*imagesSource) maxBody() int64 { return maxImagesBody }

func (s *imagesSource) receive(ctx context.Context, r *http.Request, store mediaStore) error {
	form, err := readForm(r, map[string]partFunc{"images": func(p *multipart.Part) error {
		s.count++
		if s.count > MaxImages {
			s.note(dsp.ExceedingMaxImage) // the rest of the part is skipped
			return nil
		}
		return s.receiveImage(ctx, p, store)
	}})
	if err != nil {
		return err
	}
	if s.count == 0 {
		return invalidf("images are required: one to %d file parts named images", MaxImages)
	}
	s.form = form
	return nil
}

// receiveImage checks one image's type and size while it streams to the
// media file image-<n>; an image that breaks a rule is noted, not stored.
func (s *imagesSource) receiveImage(ctx context.Context, p *multipart.Part, store mediaStore) error {
	declared := declaredType(p)
	br := bufio.NewReaderSize(p, minImageBytes)
	head, err := br.Peek(minImageBytes)
	if err != nil && !isEOF(err) {
		return bodyError(err, "the images could not be read")
	}
	format, ok := media.SniffImage(head[:min(len(head), media.SniffLen)])
	want, known := imageTypes[declared]
	if undeclared(declared) {
		want, known = format, slices.Contains(imageFormats, format)
	}
	switch {
	case !known || !ok || format != want:
		s.note(dsp.InvalidImageType)
		return nil
	case len(head) < minImageBytes:
		s.note(dsp.InvalidImageSize)
		return nil
	}
	name := fmt.Sprintf("image-%d", s.count)
	err = store.put(ctx, name, &cappedReader{r: br, left: maxImageBytes})
	if errors.Is(err, errCapped) {
		s.note(dsp.InvalidImageSize)
		return nil
	}
	if err != nil {
		return bodyError(err, "the images could not be read")
	}
	s.stored = append(s.stored, name)
	return nil
}

// imageProblems orders the image codes, first reported first.
var imageProblems = []dsp.Code{dsp.ExceedingMaxImage, dsp.InvalidImageType, dsp.InvalidImageSize}

// note records that the images broke a rule.
func (s *imagesSource) note(c dsp.Code) {
	if s.problem == "" || slices.Index(imageProblems, c) < slices.Index(imageProblems, s.problem) {
		s.problem = c
	}
}

func (s *imagesSource) analyze(ctx context.Context, t tools, store mediaStore, in dsp.Inputs) (dsp.Result, error) {
	if s.problem != "" {
		return imagesRefused(t.cascade, in, s.problem), nil
	}
	open := make([]func() (io.ReadCloser, error), len(s.stored))
	for i, name := range s.stored {
		open[i] = func() (io.ReadCloser, error) { return store.open(ctx, name) }
	}
	return AnalyzeStills(ctx, t.cascade, open, in)
}

// AnalyzeStills measures one to three still images, each read whole by its
// open function and decoded by dsp/media (type from the content, pixel limit
// checked before decoding): faceBmi from the face geometry
// (dsp.AnalyzeImages), bmi from the person's weight and height, and every
// other variable MISSING_CAPTURES. An image that cannot be decoded is no
// error: faceBmi carries INVALID_IMAGE_TYPE, or INVALID_IMAGE_SIZE for one
// over the byte or pixel limit, and more than three images
// EXCEEDING_MAX_IMAGE. It is the path of the images route and of
// pulsewire analyze.
func AnalyzeStills(ctx context.Context, c *face.Cascade, open []func() (io.ReadCloser, error), in dsp.Inputs) (dsp.Result, error) {
	if len(open) > MaxImages {
		return imagesRefused(c, in, dsp.ExceedingMaxImage), nil
	}
	// Each image is read, decoded and measured in turn, and let go before
	// the next: one decoded picture at a time is in memory.
	var refused dsp.Code
	var failed error
	imgs := func(yield func(image.Image) bool) {
		for _, o := range open {
			img, code, err := decodeStill(ctx, o)
			refused, failed = code, err
			if code != "" || err != nil || !yield(img) {
				return
			}
		}
	}
	res := dsp.AnalyzeImageSeq(c, imgs, in)
	switch {
	case failed != nil:
		return dsp.Result{}, failed
	case refused != "":
		return imagesRefused(c, in, refused), nil
	}
	return res, nil
}

// decodeStill reads and decodes one still image. An image that breaks a
// rule is a code for faceBmi; an error is one of the server (a missing
// decoder) or of the request (cancelled).
func decodeStill(ctx context.Context, open func() (io.ReadCloser, error)) (image.Image, dsp.Code, error) {
	data, err := readAll(open, maxImageBytes)
	if errors.Is(err, errCapped) {
		return nil, dsp.InvalidImageSize, nil
	}
	if err != nil {
		return nil, "", err
	}
	img, _, err := media.DecodeImage(ctx, data, media.ImageOptions{MaxBytes: maxImageBytes})
	switch {
	case errors.Is(err, media.ErrTooManyPixels), errors.Is(err, media.ErrTooLarge):
		return nil, dsp.InvalidImageSize, nil
	case errors.Is(err, media.ErrUnsupported), errors.Is(err, media.ErrCorrupt), errors.Is(err, media.ErrEmpty):
		return nil, dsp.InvalidImageType, nil
	case err != nil:
		return nil, "", err // a missing decoder, a cancelled request
	}
	return img, "", nil
}

// readAll reads what open gives, at most limit bytes (errCapped beyond).
func readAll(open func() (io.ReadCloser, error), limit int64) ([]byte, error) {
	rc, err := open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(&cappedReader{r: rc, left: limit})
}

// imagesRefused is the result of images that broke a rule: faceBmi carries
// code, bmi is computed as usual.
func imagesRefused(c *face.Cascade, in dsp.Inputs, code dsp.Code) dsp.Result {
	res := dsp.AnalyzeImages(c, nil, in)
	if _, wanted := res.Variables[dsp.FaceBMI]; wanted {
		res.Variables[dsp.FaceBMI] = dsp.Variable{Error: code}
	}
	return res
}

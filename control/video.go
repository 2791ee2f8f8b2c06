package control

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"slices"

	"github.com/pulsewire/pulsewire/dsp"
	"github.com/pulsewire/pulsewire/dsp/face"
	"github.com/pulsewire/pulsewire/dsp/media"
	"github.com/pulsewire/pulsewire/storage"
)

// maxVideoBytes is the API's video upload limit, 100 MB (MiB: 104,857,600
// bytes), dsp/media's own limit.
const maxVideoBytes = media.DefaultMaxBytes

// multipartSlack is room in a multipart body beyond its files and input
// parts: boundaries and part headers.
const multipartSlack = 64 << 10

// videoTypes are the types a video part may declare, each with
// the containers its content may be. MP4 and QuickTime are one file format
// (ISO base media) and phones label them loosely, so either declaration
// admits either; WebM must be WebM, not any Matroska file.
var videoTypes = map[string][]media.Container{
	"video/mp4":       {media.MP4, media.MOV},
	"video/quicktime": {media.MP4, media.MOV},
	"video/mov":       {media.MP4, media.MOV},
	"video/webm":      {media.WebM},
	"video/x-msvideo": {media.AVI},
	"video/vnd.avi":   {media.AVI},
}

// videoContainers are the containers a video part that declares no type may
// hold: those of the listed types.
var videoContainers = []media.Container{media.MP4, media.MOV, media.WebM, media.AVI}

// videoTypeList names the accepted types in messages.
const videoTypeList = "video/mp4, video/webm, video/x-msvideo, video/vnd.avi, video/quicktime, video/mov"

// videoSource: POST /measures/rppg/video and /measures/{id}/rppg/video.
// The video streams to the measure's media folder as it
// arrives; every variable but faceBmi (MISSING_IMAGE) is computed from it.
type videoSource struct {
	formSource
	got bool
}

func (*videoSource) kind() storage.Kind { return storage.KindRPPG }

func (*videoSource) maxBody() int64 { return maxVideoBytes + maxFormFields + multipartSlack }

func (v *videoSource) receive(ctx context.Context, r *http.Request, store mediaStore) error {
	form, err := readForm(r, map[string]partFunc{"video": func(p *multipart.Part) error {
		if v.got {
			return invalidf("video is given twice: send one video")
		}
		v.got = true
		return receiveVideo(ctx, p, store)
	}})
	if err != nil {
		return err
	}
	if !v.got {
		return invalidf("video is required: a file part named video")
	}
	v.form = form
	return nil
}

// receiveVideo checks the declared type against the content's first bytes,
// then streams the part to the media file "video", refusing it (TooLarge)
// as soon as it passes maxVideoBytes.
func receiveVideo(ctx context.Context, p *multipart.Part, store mediaStore) error {
	declared := declaredType(p)
	allowed, ok := videoTypes[declared]
	if undeclared(declared) {
		declared, allowed, ok = "without a type", videoContainers, true
	}
	if !ok {
		return invalidf("video must be declared as one of %s (Content-Type of the part), not %q", videoTypeList, declared)
	}
	br := bufio.NewReaderSize(p, media.SniffLen)
	head, err := br.Peek(media.SniffLen)
	switch {
	case len(head) == 0 && err != nil && !isEOF(err):
		return bodyError(err, "the video could not be read")
	case len(head) == 0:
		return invalidf("video is empty")
	}
	container, ok := media.SniffContainer(head)
	switch {
	case !ok:
		return invalidf("video is declared %s but its content is not a video in a format this service reads", declared)
	case !slices.Contains(allowed, container):
		return invalidf("video is declared %s but its content is %s", declared, container)
	}
	err = store.put(ctx, "video", &cappedReader{r: br, left: maxVideoBytes})
	if errors.Is(err, errCapped) {
		return &Error{Code: TooLarge, Err: fmt.Errorf("video over %d bytes", maxVideoBytes)}
	}
	if err != nil {
		return bodyError(err, "the video could not be read")
	}
	return nil
}

func (*videoSource) analyze(ctx context.Context, t tools, store mediaStore, in dsp.Inputs) (dsp.Result, error) {
	path, done, err := store.file(ctx, "video")
	if err != nil {
		return dsp.Result{}, err
	}
	defer done()
	res, _, err := AnalyzeVideoFile(ctx, t.cascade, path, t.video, in, nil)
	return res, videoError(err)
}

// AnalyzeVideoFile measures the video file at path: dsp/media decodes it
// frame by frame into a dsp.Stream, the one batch path of the video route
// and of pulsewire analyze. progress, when not nil, sees each frame after
// its analysis. A video without a face is no error: its variables carry the
// capture-quality codes.
func AnalyzeVideoFile(ctx context.Context, c *face.Cascade, path string, opt media.VideoOptions, in dsp.Inputs, progress func(media.Frame)) (dsp.Result, media.VideoInfo, error) {
	s := dsp.NewStream(c, in)
	info, err := media.DecodeVideoFile(ctx, path, opt, func(f media.Frame) error {
		s.Push(f.Image, f.Time)
		if progress != nil {
			progress(f)
		}
		return nil
	})
	if err != nil {
		return dsp.Result{}, info, err
	}
	return s.Result(), info, nil
}

// videoError turns a decoding failure into the answer that names the
// problem; a missing ffmpeg, a cancelled request and the like pass through.
func videoError(err error) error {
	var msg string
	switch {
	case err == nil:
		return nil
	case errors.Is(err, media.ErrEmpty):
		msg = "video is empty"
	case errors.Is(err, media.ErrUnsupported):
		msg = "video is not in a format this service reads (mp4, mov, webm, avi)"
	case errors.Is(err, media.ErrNoVideo):
		msg = "video holds no video stream"
	case errors.Is(err, media.ErrNoFrames):
		msg = "video has no frame that can be decoded"
	case errors.Is(err, media.ErrCorrupt):
		msg = "video is corrupt or truncated"
	case errors.Is(err, media.ErrTooLong):
		msg = fmt.Sprintf("video has more than %d frames", media.DefaultMaxFrames)
	case errors.Is(err, media.ErrTooManyPixels):
		msg = fmt.Sprintf("video frames are larger than %d pixels (3840x2160)", media.DefaultMaxVideoPixels)
	case errors.Is(err, media.ErrTimeout):
		msg = "video took too long to decode"
	case errors.Is(err, media.ErrTooLarge):
		return &Error{Code: TooLarge, Err: err}
	default:
		return err
	}
	return &Error{Code: Invalid, Messages: []string{msg}, Err: err}
}

// isEOF reports whether err is the end of the input, whole or cut short.
func isEOF(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"strings"

	"github.com/pulsewire/pulsewire/dsp"
	"github.com/pulsewire/pulsewire/dsp/face"
	"github.com/pulsewire/pulsewire/dsp/media"
	"github.com/pulsewire/pulsewire/storage"
)

// A source is what a run route measures from: a video, still
// images, face crops or a signal. A run receives the capture from the
// request and stores it as the measure's media, then, on a worker of the
// Analyzer, analyses what it stored. A source holds the state of one
// request.
type source interface {
	// kind is the sensor the capture comes from.
	kind() storage.Kind
	// maxBody bounds the whole request body (413 beyond).
	maxBody() int64
	// receive reads the request body and stores the capture in store. A
	// multipart source gathers the input parts beside it.
	receive(ctx context.Context, r *http.Request, store mediaStore) error
	// inputs returns the measure inputs sent with the capture, the JSON
	// object ParseMeasureInput checks, or nil when none were sent. It runs
	// on a worker, after receive: it may parse what receive stored.
	inputs(ctx context.Context, store mediaStore) (json.RawMessage, error)
	// analyze measures the stored capture.
	analyze(ctx context.Context, t tools, store mediaStore, in dsp.Inputs) (dsp.Result, error)
}

// tools are what an analysis works with.
type tools struct {
	cascade *face.Cascade      // the face detector, shared
	video   media.VideoOptions // the bounds of a video decode
}

// formSource is the part of a multipart source that holds the input parts.
type formSource struct {
	form json.RawMessage
}

func (f *formSource) inputs(context.Context, mediaStore) (json.RawMessage, error) { return f.form, nil }

// mediaStore is the media of the measure a run measures.
type mediaStore struct {
	media storage.Media
	id    string
	wrote *bool // a file was stored: the measure has media to keep
}

// newMediaStore is where a run stores the capture of measure id.
func newMediaStore(media storage.Media, id string) mediaStore {
	return mediaStore{media: media, id: id, wrote: new(bool)}
}

func (s mediaStore) open(ctx context.Context, name string) (io.ReadCloser, error) {
	return s.media.Open(ctx, s.id, name)
}

// file gives a stored file as a path on the local disk, for ffmpeg, which
// needs to seek in an MP4 whose index comes last: the file itself when the
// media are on this disk, otherwise a temporary copy that done removes.
func (s mediaStore) file(ctx context.Context, name string) (path string, done func(), err error) {
	rc, err := s.open(ctx, name)
	if err != nil {
		return "", nil, err
	}
	if f, ok := rc.(*os.File); ok {
		return f.Name(), func() { f.Close() }, nil
	}
	defer rc.Close()
	// Media elsewhere than on this disk (an object store) are copied.
	tmp, err := os.CreateTemp("", "pulsewire-media-*")
	if err != nil {
		return "", nil, err
	}
	done = func() {
		tmp.Close()
		os.Remove(tmp.Name())
	}
	if _, err := io.Copy(tmp, rc); err != nil {
		done()
		return "", nil, fmt.Errorf("copy media %s: %w", name, err)
	}
	return tmp.Name(), done, nil
}

// errCapped: a part went over its size limit while it streamed.
var errCapped = errors.New("over its size limit")

// cappedReader reads r and fails with errCapped as soon as more than left
// bytes have come, so that an oversized part is refused while it streams,
// never after it has all been read.
type cappedReader struct {
	r    io.Reader
	left int64
}

func (c *cappedReader) Read(p []byte) (int, error) {
	if int64(len(p)) > c.left+1 {
		p = p[:c.left+1]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	if c.left < 0 {
		return 0, errCapped
	}
	return n, err
}

// undeclared reports whether a part's declared type says nothing about its
// content: no Content-Type, or the generic application/octet-stream that
// curl -F and most HTTP libraries send for a file whose extension they do not
// know. Such a part is judged by its content alone; a part that declares a
// specific type must declare a listed one that matches its content.
func undeclared(t string) bool {
	return t == "" || t == "application/octet-stream"
}

// declaredType is the media type a part declares in its Content-Type,
// lower case and without parameters; "" when it declares none.
func declaredType(p *multipart.Part) string {
	t, _, err := mime.ParseMediaType(p.Header.Get("Content-Type"))
	if err != nil {
		return ""
	}
	return strings.ToLower(t)
}

package control

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/pulsewire/pulsewire/dsp"
	"github.com/pulsewire/pulsewire/dsp/media"
	"github.com/pulsewire/pulsewire/storage"
)

// Limits of the captures route.
const (
	// maxCaptures is two minutes at 30 frames per second.
	maxCaptures = 3600
	// maxCaptureBytes bounds one face crop; a crop is typically 10-50 KB.
	maxCaptureBytes = 2 << 20
	// maxCapturePixels admits a whole 1080p frame (2,073,600 pixels).
	maxCapturePixels = 2_100_000
	// maxCaptureSpan bounds the time the captures cover: what the
	// analysis takes.
	maxCaptureSpan = dsp.MaxSpan
	// maxCapturesBody bounds the whole body, as for a video.
	maxCapturesBody = maxVideoBytes + maxFormFields + multipartSlack
	// capturesFile is the media file of the captures: a tar of the crops in
	// order (00000, 00001, ...) and their capture times (timestamps.json),
	// so that a thousand crops cost one file and one sync, not a thousand.
	capturesFile = "captures.tar"
)

// capturesSource: POST /measures/rppg/captures and
// /measures/{id}/rppg/captures. The client cut the face out of each frame
// itself and sends the crops in order as file parts named captures, with a
// part named timestamps: the capture time of each crop in milliseconds,
// comma-separated. The crops go through the same analysis
// as a video's frames, so every variable but faceBmi is computed.
type capturesSource struct {
	formSource
	count int
	times []float64 // ms, from the timestamps part; nil until it arrives
}

func (*capturesSource) kind() storage.Kind { return storage.KindRPPG }

func (*capturesSource) maxBody() int64 { return maxCapturesBody }

// receive streams the crops into the tar file as they arrive; only one crop
// is in memory at a time (a tar header needs the size first).
func (s *capturesSource) receive(ctx context.Context, r *http.Request, store mediaStore) error {
	pr, pw := io.Pipe()
	stored := make(chan error, 1)
	go func() {
		err := store.put(ctx, capturesFile, pr)
		pr.CloseWithError(err) // unblocks a writer when put stopped early
		stored <- err
	}()
	tw := tar.NewWriter(pw)
	err := s.receiveParts(r, tw)
	if err == nil {
		err = s.finish(tw)
	}
	if err != nil {
		pw.CloseWithError(err)
		if serr := <-stored; storeFailed(serr) {
			return serr // the parts failed because the store did
		}
		return err
	}
	pw.Close()
	if err := <-stored; err != nil {
		return bodyError(err, "the captures could not be stored")
	}
	return nil
}

func (s *capturesSource) receiveParts(r *http.Request, tw *tar.Writer) error {
	form, err := readForm(r, map[string]partFunc{
		"captures": func(p *multipart.Part) error {
			if s.count == maxCaptures {
				return invalidf("captures: at most %d", maxCaptures)
			}
			data, err := readCapture(p, s.count)
			if err != nil {
				return err
			}
			s.count++
			return writeTarFile(tw, fmt.Sprintf("%05d", s.count-1), data)
		},
		"timestamps": func(p *multipart.Part) error {
			if s.times != nil {
				return invalidf("timestamps is given twice")
			}
			text, err := readField(p, maxCaptures*24)
			if err != nil {
				return err
			}
			s.times, err = ParseTimestamps(string(text))
			return err
		},
	})
	s.form = form
	return err
}

// readCapture reads capture i whole, after checking its declared type
// against its content.
func readCapture(p *multipart.Part, i int) ([]byte, error) {
	// The types of the images route but HEIC: a HEIC image is decoded by
	// an external program, a process per frame.
	declared := declaredType(p)
	want, known := imageTypes[declared]
	if !known || want == media.HEIC {
		return nil, invalidf("captures.%d must be declared as image/jpeg, image/png, image/bmp or image/webp, not %q", i, declared)
	}
	data, err := io.ReadAll(&cappedReader{r: p, left: maxCaptureBytes})
	switch {
	case errors.Is(err, errCapped):
		return nil, &Error{Code: TooLarge, Err: fmt.Errorf("capture %d over %d bytes", i, maxCaptureBytes)}
	case err != nil:
		return nil, bodyError(err, "the captures could not be read")
	case len(data) == 0:
		return nil, invalidf("captures.%d is empty", i)
	}
	if format, ok := media.SniffImage(data[:min(len(data), media.SniffLen)]); !ok || format != want {
		return nil, invalidf("captures.%d is declared %s but its content is not a %s image", i, declared, want)
	}
	return data, nil
}

// finish checks the captures against their timestamps and closes the tar
// with the timestamps in it.
func (s *capturesSource) finish(tw *tar.Writer) error {
	switch {
	case s.count == 0:
		return invalidf("captures are required: one file part named captures per face crop, in order")
	case s.times == nil:
		return invalidf("timestamps is required: the capture time of each crop in ms, comma-separated")
	case len(s.times) != s.count:
		return invalidf("timestamps has %d values for %d captures", len(s.times), s.count)
	}
	times, _ := json.Marshal(s.times)
	if err := writeTarFile(tw, "timestamps.json", times); err != nil {
		return err
	}
	return tw.Close()
}

func writeTarFile(tw *tar.Writer, name string, data []byte) error {
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o600, Size: int64(len(data))}); err != nil {
		return err
	}
	_, err := tw.Write(data)
	return err
}

// ParseTimestamps reads the timestamps part of the captures route:
// capture times in milliseconds, comma-separated (spaces allowed), finite,
// strictly increasing and spanning at most maxCaptureSpan. The problem found first
// is an Invalid error that names the value.
func ParseTimestamps(text string) ([]float64, error) {
	times := []float64{}
	if strings.TrimSpace(text) == "" {
		return times, nil
	}
	for i, item := range strings.Split(text, ",") {
		t, err := strconv.ParseFloat(strings.TrimSpace(item), 64)
		switch {
		case err != nil || math.IsNaN(t) || math.IsInf(t, 0):
			return nil, invalidf("timestamps.%d must be a finite number of milliseconds", i)
		case i > 0 && t <= times[i-1]:
			return nil, invalidf("timestamps.%d (%g ms) does not follow %g ms: capture times must increase", i, t, times[i-1])
		case i > 0 && t-times[0] > float64(maxCaptureSpan/time.Millisecond):
			return nil, invalidf("timestamps.%d: the captures span more than %v", i, maxCaptureSpan)
		}
		times = append(times, t)
	}
	if n := len(times); n > 1 && times[n-1]-times[0] < float64(n-1)*1000/dsp.MaxSampleRateHz {
		return nil, invalidf("timestamps: %d captures span %g ms, more than %d a second: capture times are milliseconds", n, times[n-1]-times[0], dsp.MaxSampleRateHz)
	}
	return times, nil
}

// analyze decodes the crops one at a time into a dsp.Stream.
func (s *capturesSource) analyze(ctx context.Context, t tools, store mediaStore, in dsp.Inputs) (dsp.Result, error) {
	rc, err := store.open(ctx, capturesFile)
	if err != nil {
		return dsp.Result{}, err
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	stream := dsp.NewStream(t.cascade, in)
	var data bytes.Buffer
	for i := range s.count {
		if err := ctx.Err(); err != nil {
			return dsp.Result{}, err
		}
		if _, err := tr.Next(); err != nil {
			return dsp.Result{}, fmt.Errorf("captures file: %w", err)
		}
		data.Reset()
		if _, err := data.ReadFrom(io.LimitReader(tr, maxCaptureBytes)); err != nil {
			return dsp.Result{}, fmt.Errorf("captures file: %w", err)
		}
		img, _, err := media.DecodeImage(ctx, data.Bytes(), media.ImageOptions{MaxBytes: maxCaptureBytes, MaxPixels: maxCapturePixels})
		switch {
		case errors.Is(err, media.ErrTooManyPixels):
			return dsp.Result{}, invalidf("captures.%d has more than %d pixels", i, maxCapturePixels)
		case errors.Is(err, media.ErrCorrupt), errors.Is(err, media.ErrUnsupported), errors.Is(err, media.ErrEmpty):
			return dsp.Result{}, &Error{Code: Invalid, Messages: []string{fmt.Sprintf("captures.%d cannot be decoded", i)}, Err: err}
		case err != nil:
			return dsp.Result{}, err
		}
		at := time.Duration((s.times[i] - s.times[0]) * float64(time.Millisecond))
		stream.Push(img, at)
	}
	return stream.Result(), nil
}

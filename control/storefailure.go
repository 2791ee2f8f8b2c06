package control

import (
	"context"
	"errors"
	"io"
	"syscall"
)

// put stores what r reads as the file name of the run's measure. A failure
// of r is the request's, and is returned as it is for the source to name
// (bodyError); so is a request that ended. Any other failure is the
// store's, the server's fault whatever the request held: storeFailure.
func (s mediaStore) put(ctx context.Context, name string, r io.Reader) error {
	rr := &readRecorder{r: r}
	err := s.media.Put(ctx, s.id, name, rr)
	if err == nil {
		*s.wrote = true
	}
	if err == nil || rr.err != nil || ctx.Err() != nil {
		return err
	}
	return storeFailure(err)
}

// storeFailure answers a write to the media store that failed through no
// fault of the request: 507 when the disk (or the quota) is full, 500
// otherwise. Both are logged at ERROR with their cause.
func storeFailure(err error) error {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return &Error{Code: NoSpace, Err: err}
	}
	return &Error{Code: Internal, Err: err}
}

// storeFailed reports whether err is a storeFailure.
func storeFailed(err error) bool {
	var e *Error
	return errors.As(err, &e) && (e.Code == NoSpace || e.Code == Internal)
}

// readRecorder keeps the first error of its reader other than its end.
type readRecorder struct {
	r   io.Reader
	err error
}

func (rr *readRecorder) Read(p []byte) (int, error) {
	n, err := rr.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) && rr.err == nil {
		rr.err = err
	}
	return n, err
}

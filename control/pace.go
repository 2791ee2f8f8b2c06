package control

import (
	"errors"
	"io"
	"net/http"
	"os"
	"time"
)

// The pace a run's body must keep. A body may start slowly (paceGrace),
// then must average at least minBodyRate from its first byte on, and must
// be whole within uploadTimeout: a body that stalls is cut off (408) in
// seconds, not held open for as long as the largest upload may take.
const (
	// minBodyRate is 16 KiB/s, 128 kbit/s: a phone on a poor mobile link
	// still sends a 30 s video of a few MB in a few minutes.
	minBodyRate = 16 << 10
	paceGrace   = 10 * time.Second
	// uploadTimeout bounds a whole body: 100 MB at 1.4 Mbit/s.
	uploadTimeout = 10 * time.Minute
)

// bodyPace is the pace a body must keep: grace, then rate bytes per second
// on average.
type bodyPace struct {
	grace time.Duration
	rate  float64
}

var defaultPace = bodyPace{grace: paceGrace, rate: minBodyRate}

// pacedBody reads a request body under a read deadline that moves with
// the bytes received: grace plus one second per rate bytes, never past
// limit. It remembers the first error of the body itself, so that a failed
// store can be told apart from a failed upload.
type pacedBody struct {
	body   io.ReadCloser
	rc     *http.ResponseController
	start  time.Time
	pace   bodyPace
	limit  time.Time
	got    int64
	failed error // the body's first error other than its end
}

func newPacedBody(w http.ResponseWriter, body io.ReadCloser, pace bodyPace) *pacedBody {
	now := time.Now()
	return &pacedBody{body: body, rc: http.NewResponseController(w), start: now, pace: pace, limit: now.Add(uploadTimeout)}
}

// errTooSlow is a body that fell below its pace.
var errTooSlow = &Error{Code: TooSlow, Err: errors.New("the body arrived below its minimum pace")}

func (p *pacedBody) Read(b []byte) (int, error) {
	deadline := p.start.Add(p.pace.grace + time.Duration(float64(p.got)/p.pace.rate*float64(time.Second)))
	if deadline.After(p.limit) {
		deadline = p.limit
	}
	// Not every writer supports deadlines (httptest's recorder does
	// not); then the server's own timeouts apply.
	_ = p.rc.SetReadDeadline(deadline)
	n, err := p.body.Read(b)
	p.got += int64(n)
	if err != nil && !errors.Is(err, io.EOF) && p.failed == nil {
		p.failed = err
		if errors.Is(err, os.ErrDeadlineExceeded) {
			p.failed = errTooSlow
		}
	}
	if p.failed != nil {
		return n, p.failed
	}
	return n, err
}

func (p *pacedBody) Close() error { return p.body.Close() }

// done lifts the deadline once the body is in: the server then watches the
// idle connection for a client that goes away during the analysis, and a
// deadline would look like one.
func (p *pacedBody) done() { _ = p.rc.SetReadDeadline(time.Time{}) }

package control

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pulsewire/pulsewire/control/metrics"
	"github.com/pulsewire/pulsewire/dsp/face"
	"github.com/pulsewire/pulsewire/dsp/media"
)

// Defaults of NewAnalyzer.
const (
	// DefaultQueue is how many received runs may wait for a worker.
	DefaultQueue = 8
	// DefaultUploads is how many run bodies may be received at once.
	DefaultUploads = 16
)

// Analyzer measures the captures the run routes receive, on bounded pools
// of one environment (environments share none: neither can starve the
// other). A run first takes an upload place while its body streams to the
// media store; then, with the capture stored, a place in the pool: at most
// workers analyses at once and queue more waiting for a worker. A run that
// finds no place of either kind is refused at once, 503 with Retry-After,
// and stores nothing. An upload holds no place of the pool: a body that
// trickles in blocks no analysis, and is cut off when it falls below the
// minimum pace (pace.go). The memory and disk a run holds are bounded by
// what it may upload, so the server's are bounded too.
type Analyzer struct {
	video    media.VideoOptions
	uploads  chan struct{} // one token per body being received
	workers  chan struct{} // one token per running analysis
	admitted chan struct{} // one token per received run, analysing or waiting
	pace     bodyPace      // the pace a body must keep while it is received
	waiting  atomic.Int64  // runs whose capture is in, waiting for a worker
	metrics  *metrics.Metrics
	env      string // the environment the metrics count the pool in

	mu   sync.Mutex    // protects hold
	hold time.Duration // moving average of how long an analysed run stays admitted
}

// NewAnalyzer returns a pool of workers analyses (runtime.NumCPU() when 0
// or less) with room for queue more runs (none when negative), and room
// for uploads bodies received at once (DefaultUploads when 0 or less).
// video bounds each video decode (zero fields: dsp/media's defaults). The
// face cascade is dsp/face's, loaded once for the whole process.
func NewAnalyzer(workers, queue, uploads int, video media.VideoOptions) *Analyzer {
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	if uploads <= 0 {
		uploads = DefaultUploads
	}
	queue = max(queue, 0)
	return &Analyzer{
		video:    video,
		uploads:  make(chan struct{}, uploads),
		workers:  make(chan struct{}, workers),
		admitted: make(chan struct{}, workers+queue),
		hold:     initialHold,
		pace:     defaultPace,
	}
}

// initialHold is the guess of a run's length before any has been measured:
// a 30 s video takes a few seconds.
const initialHold = 5 * time.Second

// tools gives an analysis the face detector every analysis shares (loaded
// once for the process) and the bounds of a video decode.
func (a *Analyzer) tools() (tools, error) {
	c, err := face.LoadCascade()
	return tools{cascade: c, video: a.video}, err
}

// Why a run finds no place, for the metrics: the client sees 503 either way.
var (
	errUploadsFull = errors.New("every upload place is taken")
	errPoolFull    = errors.New("every analysis place is taken")
)

// busy is the refusal of a run that finds no place (why): Retry-After is
// the time a run has recently stayed admitted, when a place is likely to
// free.
func (a *Analyzer) busy(why error) error {
	a.mu.Lock()
	wait := a.hold
	a.mu.Unlock()
	return &Error{Code: Unavailable, RetryAfter: min(max(wait, time.Second), time.Minute), Err: why}
}

// upload is a run's place while its body is received.
type upload struct {
	a    *Analyzer
	once sync.Once
}

// startUpload gives a run an upload place, or refuses it with Unavailable.
func (a *Analyzer) startUpload() (*upload, error) {
	select {
	case a.uploads <- struct{}{}:
		return &upload{a: a}, nil
	default:
		return nil, a.busy(errUploadsFull)
	}
}

// done frees the upload place; later calls do nothing.
func (u *upload) done() { u.once.Do(func() { <-u.a.uploads }) }

// ticket is a received run's place in the pool.
type ticket struct {
	a      *Analyzer
	start  time.Time
	worked bool
}

// admit gives a received run its place in the pool, or refuses it with
// Unavailable when every place is taken.
func (a *Analyzer) admit() (*ticket, error) {
	select {
	case a.admitted <- struct{}{}:
		return &ticket{a: a, start: time.Now()}, nil
	default:
		return nil, a.busy(errPoolFull)
	}
}

// work runs fn on a worker, waiting for one to be free; it gives up when
// ctx ends first.
func (t *ticket) work(ctx context.Context, fn func() error) error {
	t.a.waiting.Add(1)
	start := time.Now()
	select {
	case t.a.workers <- struct{}{}:
		t.a.waiting.Add(-1)
	case <-ctx.Done():
		t.a.waiting.Add(-1)
		return ctx.Err()
	}
	t.a.metrics.AnalysisWaited(t.a.env, time.Since(start))
	defer func() { <-t.a.workers }()
	t.worked = true
	return fn()
}

// release frees the run's place. Runs that reached a worker update the
// moving average behind Retry-After (weight 1/5 for the newest).
func (t *ticket) release() {
	<-t.a.admitted
	if !t.worked {
		return
	}
	held := time.Since(t.start)
	t.a.mu.Lock()
	t.a.hold += (held - t.a.hold) / 5
	t.a.mu.Unlock()
}

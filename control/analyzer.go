package control

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pulsewire/pulsewire/control/metrics"
	"github.com/pulsewire/pulsewire/dsp/face"
	"github.com/pulsewire/pulsewire/dsp/media"
)

// DefaultQueue is how many runs may wait for a worker by default.
const DefaultQueue = 8

// Analyzer measures the captures the run routes receive, on a bounded pool:
// at most workers analyses at once, and at most queue more runs admitted
// (uploading or waiting for a worker). A run beyond that is refused at once,
// 503 with Retry-After, before its upload is read, rather than piling up:
// the memory and disk a run can hold is bounded by what it may upload, so
// the whole server's is bounded too. One Analyzer serves both environments,
// which share the CPU.
type Analyzer struct {
	video    media.VideoOptions
	workers  chan struct{} // one token per running analysis
	admitted chan struct{} // one token per admitted run
	waiting  atomic.Int64  // runs whose capture is in, waiting for a worker
	metrics  *metrics.Metrics

	mu   sync.Mutex    // protects hold
	hold time.Duration // moving average of how long an analysed run stays admitted
}

// NewAnalyzer returns a pool of workers analyses (runtime.NumCPU() when 0
// or less) with room for queue more runs (none when negative). video bounds
// each video decode (zero fields: dsp/media's defaults). The face cascade is
// dsp/face's, loaded once for the whole process.
func NewAnalyzer(workers, queue int, video media.VideoOptions) *Analyzer {
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	queue = max(queue, 0)
	return &Analyzer{
		video:    video,
		workers:  make(chan struct{}, workers),
		admitted: make(chan struct{}, workers+queue),
		hold:     initialHold,
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

// ticket is an admitted run's place in the pool.
type ticket struct {
	a      *Analyzer
	start  time.Time
	worked bool
}

// admit gives a run its place, or refuses it with Unavailable when every
// place is taken; Retry-After is then the time a run has recently stayed
// admitted, when the next place is likely to free.
func (a *Analyzer) admit() (*ticket, error) {
	select {
	case a.admitted <- struct{}{}:
		return &ticket{a: a, start: time.Now()}, nil
	default:
		a.mu.Lock()
		wait := a.hold
		a.mu.Unlock()
		return nil, &Error{Code: Unavailable, RetryAfter: min(max(wait, time.Second), time.Minute)}
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
	t.a.metrics.AnalysisWaited(time.Since(start))
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

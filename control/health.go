package control

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/pulsewire/pulsewire/dsp/media"
)

// Check is one condition an environment needs to take work: Err says why
// it does not hold now (its message is shown to anyone who asks, so it
// names no path or secret), nil when it holds.
type Check struct {
	Name string
	Err  func(ctx context.Context) error
}

// checkTimeout bounds one readiness probe: a check that takes longer
// fails.
const checkTimeout = 2 * time.Second

// writeCheckEvery bounds how often the database check writes: probes in
// between reuse its latest answer, so that a flood of unauthenticated
// probes costs at most one write a second.
const writeCheckEvery = time.Second

// Why a check fails, as anyone may read it; the causes go to the log.
var (
	errNoFFmpeg    = errors.New("ffmpeg not found")
	errNotWritable = errors.New("the database does not take writes")
)

// checks are the environment's readiness conditions: its database takes
// writes, ffmpeg is there, an upload and the analysis pool have a place,
// and those the server added (Options.Checks).
func (a *API) checks() []Check {
	return append([]Check{
		{"database", a.writable.check},
		{"ffmpeg", func(context.Context) error {
			if err := media.FFmpegAvailable(a.analyzer.video); err != nil {
				a.log.Error("readiness", "err", err)
				return errNoFFmpeg
			}
			return nil
		}},
		{"analysis", func(context.Context) error {
			// A new upload would get 503: at once, or once its body is in.
			switch az := a.analyzer; {
			case len(az.uploads) == cap(az.uploads):
				return errUploadsFull
			case len(az.admitted) == cap(az.admitted):
				return errPoolFull
			}
			return nil
		}},
	}, a.extraChecks...)
}

// writeCheck is the database check, answered from its latest write for
// writeCheckEvery.
type writeCheck struct {
	svc *Service
	log *slog.Logger

	mu  sync.Mutex // protects the fields below, and serialises the writes
	at  time.Time
	err error
}

func (w *writeCheck) check(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if time.Since(w.at) < writeCheckEvery {
		return w.err
	}
	w.err = nil
	if err := w.svc.db.CheckWritable(ctx); err != nil {
		w.log.Error("readiness", "err", err)
		w.err = errNotWritable // the cause is for the log only
	}
	w.at = time.Now()
	return w.err
}

// Healthz is GET /healthz: 200 while the process serves requests. It
// checks nothing else, so that a supervisor restarts only a process that
// no longer answers.
func Healthz(w http.ResponseWriter, _ *http.Request) {
	writeStatus(w, http.StatusOK, statusView{Status: "ok"})
}

// Readyz serves GET /readyz for apis together: 200 when every check of
// every API holds, 503 otherwise, with each check's answer ("ok" or why
// not). Checks are named by environment when there are several APIs
// (production.database). It needs no key: it tells nothing of any client.
func Readyz(apis ...*API) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), checkTimeout)
		defer cancel()
		v := statusView{Status: "ready", Checks: map[string]string{}}
		for _, a := range apis {
			for _, c := range a.checks() {
				name := c.Name
				if len(apis) > 1 {
					name = string(a.svc.env) + "." + name
				}
				v.Checks[name] = "ok"
				if err := c.Err(ctx); err != nil {
					v.Status, v.Checks[name] = "not ready", err.Error()
				}
			}
		}
		status := http.StatusOK
		if v.Status != "ready" {
			status = http.StatusServiceUnavailable
		}
		writeStatus(w, status, v)
	}
}

type statusView struct {
	Status string            `json:"status"`
	Checks map[string]string `json:"checks,omitempty"`
}

func writeStatus(w http.ResponseWriter, status int, v statusView) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v) // the map's keys come out sorted
}

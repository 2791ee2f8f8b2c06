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

// checkEvery bounds how often the database and the media are checked:
// probes in between reuse the latest answer, so that a flood of
// unauthenticated probes costs at most one write (or one request to an
// object store) a second.
const checkEvery = time.Second

// Why a check fails, as anyone may read it; the causes go to the log.
var (
	errNoFFmpeg    = errors.New("ffmpeg not found")
	errNotWritable = errors.New("the database does not take writes")
	errNoMedia     = errors.New("the media cannot be reached")
)

// checks are the environment's readiness conditions: its database takes
// writes, its media store answers, ffmpeg is there, an upload and the
// analysis pool have a place, and those the server added (Options.Checks).
func (a *API) checks() []Check {
	return append([]Check{
		{"database", a.writable},
		{"media", a.mediaReady},
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

// cachedCheck answers check from its latest answer for checkEvery; a
// failure is logged with its cause and answered as shown, whose message
// is for anyone to read.
func cachedCheck(log *slog.Logger, shown error, check func(context.Context) error) func(context.Context) error {
	var (
		mu   sync.Mutex // protects the two below, and serialises the checks
		at   time.Time
		last error
	)
	return func(ctx context.Context) error {
		mu.Lock()
		defer mu.Unlock()
		if time.Since(at) < checkEvery {
			return last
		}
		last = nil
		if err := check(ctx); err != nil {
			log.Error("readiness", "err", err)
			last = shown
		}
		at = time.Now()
		return last
	}
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

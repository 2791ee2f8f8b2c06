package control

import (
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/pulsewire/pulsewire/control/metrics"
	"github.com/pulsewire/pulsewire/dsp"
	"github.com/pulsewire/pulsewire/storage"
)

// This file reports the control plane to its metrics (WithMetrics): every
// request, every run of the upload routes, the analysis pool, and the
// credits refused. Refusals by a limit are counted where the limit refuses.

// countRequests counts every request of the listener, mounted routes
// included, by its route pattern (never its path) and final status.
func (a *API) countRequests(c *gin.Context) {
	start := time.Now()
	c.Next()
	route := c.FullPath()
	if route == "" {
		route = metrics.NoRoute
	}
	a.svc.metrics.Request(string(a.svc.env), c.Request.Method, route, c.Writer.Status(), time.Since(start))
}

// countRuns counts the runs of an upload route h by their outcome. A run
// the Analyzer did not admit is no run: it counts as a refusal.
func (a *API) countRuns(source metrics.Source, h func(*gin.Context, storage.Client) error) func(*gin.Context, storage.Client) error {
	return func(c *gin.Context, client storage.Client) error {
		err := h(c, client)
		env := string(a.svc.env)
		switch code := ErrorCode(err); {
		case err == nil && c.Writer.Status() == statusClientClosed:
			a.svc.metrics.Run(env, source, metrics.OutcomeAbandoned)
		case err == nil:
			a.svc.metrics.Run(env, source, metrics.OutcomeEnded)
		case code == Unavailable && errors.Is(err, errUploadsFull):
			a.svc.metrics.Refused(env, metrics.CauseUploadsFull)
		case code == Unavailable:
			a.svc.metrics.Refused(env, metrics.CauseQueueFull)
		case errorStatus[code] < http.StatusInternalServerError:
			a.svc.metrics.Run(env, source, metrics.OutcomeRefused)
		default:
			a.svc.metrics.Run(env, source, metrics.OutcomeFailed)
		}
		return err
	}
}

// Instrument reports the pools of env to m: their places, the bodies
// being received, the queue depth and busy workers at every scrape, and
// how long each run waits for a worker. Call it once, before the pools
// are used.
func (az *Analyzer) Instrument(m *metrics.Metrics, env Env) {
	az.metrics, az.env = m, string(env)
	m.AnalysisPool(string(env), func() metrics.Analysis {
		return metrics.Analysis{
			UploadPlaces: cap(az.uploads),
			Uploading:    len(az.uploads),
			Workers:      cap(az.workers),
			Places:       cap(az.admitted),
			Admitted:     len(az.admitted),
			Waiting:      int(az.waiting.Load()),
			Busy:         len(az.workers),
		}
	})
}

// creditRefused says whether an ended measure was refused its outcome for
// want of credit: CREDIT_EXCEEDED is never an analysis's own error, so a
// measure that shows it anywhere was stored as storage.MeasureEnd.NoCredit.
func creditRefused(m storage.Measure) bool {
	var variables map[string]dsp.Variable
	if json.Unmarshal(m.Variables, &variables) == nil {
		for _, v := range variables {
			if v.Error == dsp.CreditExceeded {
				return true
			}
		}
	}
	var signal dsp.Signal
	return m.Signal != nil && json.Unmarshal(m.Signal, &signal) == nil && signal.QualityScore.Error == dsp.CreditExceeded
}

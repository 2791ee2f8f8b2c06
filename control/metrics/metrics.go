// Package metrics counts what an operator watches a running server by, in
// Prometheus's form: requests by route and status with their latency,
// measurement runs by source and outcome, the analysis queue, open live
// sessions, dropped frames, refusals by cause, refused credits and webhook
// deliveries by outcome.
//
// No label ever holds an id, a key, a token or a person's data: a label
// value is an environment name, an HTTP method from a fixed list, a route
// pattern (never the path itself), a status code, or one of the constants
// of this package. The typed label values (Source, Outcome, Cause, Chain,
// Transport, WebhookOutcome) make that visible at every call site: a string
// read from a request cannot become one without a conversion a reviewer
// sees.
//
// A nil *Metrics counts nothing, so the server's code calls it the same
// whether metrics are served or not.
package metrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics holds every series the server reports, in a registry of its own
// (never the process-wide default one, so that two servers in one test
// process do not collide).
type Metrics struct {
	reg            *prometheus.Registry
	requests       *prometheus.HistogramVec
	runs           *prometheus.CounterVec
	analysisWait   *prometheus.HistogramVec
	sessions       *prometheus.GaugeVec
	framesDropped  *prometheus.CounterVec
	framesLost     *prometheus.CounterVec
	refusals       *prometheus.CounterVec
	creditsRefused *prometheus.CounterVec
	webhooks       *prometheus.CounterVec
}

// latencyBuckets are the request latencies told apart, in seconds: from a
// cached read (a few milliseconds) to the upload and analysis of a long
// video (tens of seconds). A WebSocket session's request lasts as long as
// its connection and lands in the last buckets.
var latencyBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120}

// New returns the server's metrics, with the Go runtime's and the
// process's own (memory, goroutines, open files, CPU).
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "pulsewire_http_request_duration_seconds",
			Help:    "Time from a request's arrival to its answer, by environment, method, route pattern and status; _count counts the requests.",
			Buckets: latencyBuckets,
		}, []string{"env", "method", "route", "status"}),
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pulsewire_runs_total",
			Help: "Measurement runs admitted, by environment, source and outcome.",
		}, []string{"env", "source", "outcome"}),
		analysisWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "pulsewire_analysis_wait_seconds",
			Help:    "Time an uploaded capture waited for an analysis worker, by environment.",
			Buckets: []float64{.001, .01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"env"}),
		sessions: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "pulsewire_sessions_open",
			Help: "Live sessions open now, by environment, chain and transport.",
		}, []string{"env", "chain", "transport"}),
		framesDropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pulsewire_session_frames_dropped_total",
			Help: "Frames of live sessions dropped because the analysis lagged behind, by environment, chain and transport.",
		}, []string{"env", "chain", "transport"}),
		framesLost: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pulsewire_session_frames_lost_total",
			Help: "Video frames of live sessions that came incomplete over the network, or were skipped after one until the next key frame, by environment, chain and transport.",
		}, []string{"env", "chain", "transport"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pulsewire_refusals_total",
			Help: "Requests and session openings refused by a limit or a token's state, by environment and cause.",
		}, []string{"env", "cause"}),
		creditsRefused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pulsewire_credits_refused_total",
			Help: "Measures ended without their variables because the client had no credit left this month, by environment.",
		}, []string{"env"}),
		webhooks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pulsewire_webhook_deliveries_total",
			Help: "Attempts at delivering a webhook, by environment and outcome (delivered, retrying, failed: given up).",
		}, []string{"env", "outcome"}),
	}
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.requests, m.runs, m.analysisWait, m.sessions, m.framesDropped, m.framesLost, m.refusals, m.creditsRefused, m.webhooks,
	)
	return m
}

// Handler serves the metrics in the Prometheus text format (GET /metrics).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Gatherer gives the registry, for tests and for checks of the series.
func (m *Metrics) Gatherer() prometheus.Gatherer { return m.reg }

// methods are the HTTP methods a label may name; any other method is
// "other", so that a client cannot mint series by inventing methods.
var methods = map[string]bool{
	http.MethodGet: true, http.MethodHead: true, http.MethodPost: true, http.MethodPut: true,
	http.MethodPatch: true, http.MethodDelete: true, http.MethodOptions: true,
}

// NoRoute is the route label of a request no route matched: its path is
// never a label.
const NoRoute = "(no route)"

// Request counts a request of env answered with status after took. route
// is the pattern of the route that served it (/measures/:id), or NoRoute.
func (m *Metrics) Request(env, method, route string, status int, took time.Duration) {
	if m == nil {
		return
	}
	if !methods[method] {
		method = "other"
	}
	m.requests.WithLabelValues(env, method, route, strconv.Itoa(status)).Observe(took.Seconds())
}

// Source is what a run measured from: an upload route or a live session.
type Source string

// The sources of a run.
const (
	SourceVideo           Source = "rppg_video"
	SourceImages          Source = "rppg_images"
	SourceCaptures        Source = "rppg_captures"
	SourceRPPGSignal      Source = "rppg_signal"
	SourceCPPGSignal      Source = "cppg_signal"
	SourceScanSession     Source = "scan_session"
	SourceRealtimeSession Source = "realtime_session"
)

// Outcome is how a run ended.
type Outcome string

// The outcomes of a run.
const (
	// OutcomeEnded: the measure ended and was stored.
	OutcomeEnded Outcome = "ended"
	// OutcomeRefused: the capture or its inputs were refused (400, 404,
	// 413): the client's to fix.
	OutcomeRefused Outcome = "refused"
	// OutcomeAbandoned: the client went away, or a session ended before
	// its capture was complete; nothing was stored.
	OutcomeAbandoned Outcome = "abandoned"
	// OutcomeFailed: the server could not finish the run (500).
	OutcomeFailed Outcome = "failed"
)

// Run counts a run of env from source that ended with outcome.
func (m *Metrics) Run(env string, source Source, outcome Outcome) {
	if m == nil {
		return
	}
	m.runs.WithLabelValues(env, string(source), string(outcome)).Inc()
}

// Analysis is the state of an environment's pools that receive and
// analyse uploads, read when the metrics are scraped.
type Analysis struct {
	UploadPlaces int // run bodies that may be received at once (--uploads)
	Uploading    int // run bodies being received now
	Workers      int // analyses that may run at once
	Places       int // received runs that may be admitted at once (workers and queue)
	Admitted     int // received runs admitted now: waiting or analysed
	Waiting      int // runs whose capture is in, waiting for a worker
	Busy         int // analyses running now
}

// AnalysisPool reports the pools of env through state, which is called at
// every scrape and must be quick and safe for concurrent use. Each
// environment has pools of its own: call it once for each.
func (m *Metrics) AnalysisPool(env string, state func() Analysis) {
	if m == nil {
		return
	}
	gauge := func(name, help string, read func(Analysis) int) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help, ConstLabels: prometheus.Labels{"env": env}},
			func() float64 { return float64(read(state())) })
	}
	m.reg.MustRegister(
		gauge("pulsewire_analysis_upload_places", "Run bodies that may be received at once, by environment (--uploads); beyond, 503.", func(a Analysis) int { return a.UploadPlaces }),
		gauge("pulsewire_analysis_uploading", "Run bodies being received now, by environment.", func(a Analysis) int { return a.Uploading }),
		gauge("pulsewire_analysis_workers", "Analyses that may run at once, by environment (--workers).", func(a Analysis) int { return a.Workers }),
		gauge("pulsewire_analysis_places", "Received runs that may be admitted at once, by environment (--workers plus --queue); beyond, 503.", func(a Analysis) int { return a.Places }),
		gauge("pulsewire_analysis_runs_admitted", "Received runs admitted now, by environment: waiting for a worker or being analysed.", func(a Analysis) int { return a.Admitted }),
		gauge("pulsewire_analysis_queue_depth", "Runs whose capture is in, waiting for a worker, by environment.", func(a Analysis) int { return a.Waiting }),
		gauge("pulsewire_analysis_workers_busy", "Analyses running now, by environment.", func(a Analysis) int { return a.Busy }),
	)
}

// AnalysisWaited records how long a run's capture of env waited for a
// worker.
func (m *Metrics) AnalysisWaited(env string, d time.Duration) {
	if m == nil {
		return
	}
	m.analysisWait.WithLabelValues(env).Observe(d.Seconds())
}

// Chain is a live session's chain.
type Chain string

// The chains.
const (
	ChainScan     Chain = "scan"
	ChainRealtime Chain = "realtime"
)

// Transport carries a live session's frames.
type Transport string

// The transports.
const (
	TransportWebSocket Transport = "websocket"
	TransportWebRTC    Transport = "webrtc"
)

// Session is what one open live session reports. A nil *Session reports
// nothing.
type Session struct {
	open    prometheus.Gauge
	dropped prometheus.Counter
	lost    prometheus.Counter
}

// SessionOpened counts a session of env opened on chain over transport as
// open until its Closed.
func (m *Metrics) SessionOpened(env string, chain Chain, transport Transport) *Session {
	if m == nil {
		return nil
	}
	s := &Session{
		open:    m.sessions.WithLabelValues(env, string(chain), string(transport)),
		dropped: m.framesDropped.WithLabelValues(env, string(chain), string(transport)),
		lost:    m.framesLost.WithLabelValues(env, string(chain), string(transport)),
	}
	s.open.Inc()
	return s
}

// FrameDropped counts a frame the session dropped. It is safe to call from
// any goroutine and does not allocate.
func (s *Session) FrameDropped() {
	if s != nil {
		s.dropped.Inc()
	}
}

// FramesLost counts video frames that came incomplete over the network,
// or were skipped after one until the next key frame.
func (s *Session) FramesLost(n int) {
	if s != nil && n > 0 {
		s.lost.Add(float64(n))
	}
}

// Closed counts the session as no longer open. Call it once.
func (s *Session) Closed() {
	if s != nil {
		s.open.Dec()
	}
}

// Cause is why a request or a session opening was refused.
type Cause string

// The causes of a refusal.
const (
	// The API.
	CauseRequestRate Cause = "request_rate" // over the API key's requests per minute (429)
	CauseMintRate    Cause = "mint_rate"    // over the API key's token mints per minute (429)
	CauseUploadsFull Cause = "uploads_full" // every upload place taken (503)
	CauseQueueFull   Cause = "queue_full"   // every analysis place taken once the body was in (503)

	// Session openings.
	CauseOpeningRate  Cause = "opening_rate"  // over the account's openings per second or minute
	CauseCapacity     Cause = "capacity"      // the server holds --max-sessions sessions
	CauseHandshakes   Cause = "handshakes"    // too many handshakes in progress, or their first messages hold their memory
	CauseUnknownToken Cause = "unknown_token" // no such token value (an id sent instead, another environment's)
	CauseWrongChain   Cause = "wrong_chain"   // the token lacks the chain's permission
	CauseExpired      Cause = "expired"
	CauseRevoked      Cause = "revoked"
	CauseSpent        Cause = "spent"       // maxSessions reached
	CauseDeactivated  Cause = "deactivated" // the token's client is deactivated
	CauseBadRequest   Cause = "bad_request" // a malformed handshake, measure inputs or measure id
	CauseResume       Cause = "resume"      // a resume ticket that is invalid, expired or of an ended session
	CauseClosing      Cause = "closing"     // the server is shutting down
)

// Refused counts a refusal in env.
func (m *Metrics) Refused(env string, cause Cause) {
	if m == nil {
		return
	}
	m.refusals.WithLabelValues(env, string(cause)).Inc()
}

// CreditRefused counts a measure of env that ended without its variables
// because its client had no credit left this month.
func (m *Metrics) CreditRefused(env string) {
	if m == nil {
		return
	}
	m.creditsRefused.WithLabelValues(env).Inc()
}

// WebhookOutcome is how an attempt at delivering a webhook ended.
type WebhookOutcome string

// The outcomes of a webhook attempt.
const (
	WebhookDelivered WebhookOutcome = "delivered" // the endpoint answered 2xx
	WebhookRetrying  WebhookOutcome = "retrying"  // no 2xx: it is tried again later
	WebhookFailed    WebhookOutcome = "failed"    // no 2xx, and its retry window is over: given up
)

// WebhookAttempt counts an attempt at delivering a webhook of env.
func (m *Metrics) WebhookAttempt(env string, outcome WebhookOutcome) {
	if m == nil {
		return
	}
	m.webhooks.WithLabelValues(env, string(outcome)).Inc()
}

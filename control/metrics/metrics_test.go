package metrics

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// exercise reports one of everything.
func exercise(m *Metrics) {
	m.Request("production", "GET", "/measures/:id", 200, 3*time.Millisecond)
	m.Request("test", "BREW", NoRoute, 404, time.Millisecond)
	m.Run("test", SourceVideo, OutcomeEnded)
	m.Run("production", SourceScanSession, OutcomeAbandoned)
	m.AnalysisPool("production", func() Analysis { return Analysis{Workers: 2, Places: 10, Admitted: 3, Waiting: 1, Busy: 2} })
	m.AnalysisWaited("production", 40*time.Millisecond)
	s := m.SessionOpened("test", ChainRealtime, TransportWebRTC)
	s.FrameDropped()
	s.FrameDropped()
	s.FramesLost(14)
	s.FramesLost(0)
	m.SessionOpened("test", ChainRealtime, TransportWebRTC)
	s.Closed()
	m.Refused("production", CauseSpent)
	m.CreditRefused("test")
	m.WebhookAttempt("production", WebhookRetrying)
	m.WebhookAttempt("production", WebhookDelivered)
}

func TestSeries(t *testing.T) {
	m := New()
	exercise(m)
	want := `
# HELP pulsewire_sessions_open Live sessions open now, by environment, chain and transport.
# TYPE pulsewire_sessions_open gauge
pulsewire_sessions_open{chain="realtime",env="test",transport="webrtc"} 1
# HELP pulsewire_session_frames_dropped_total Frames of live sessions dropped because the analysis lagged behind, by environment, chain and transport.
# TYPE pulsewire_session_frames_dropped_total counter
pulsewire_session_frames_dropped_total{chain="realtime",env="test",transport="webrtc"} 2
# HELP pulsewire_session_frames_lost_total Video frames of live sessions that came incomplete over the network, or were skipped after one until the next key frame, by environment, chain and transport.
# TYPE pulsewire_session_frames_lost_total counter
pulsewire_session_frames_lost_total{chain="realtime",env="test",transport="webrtc"} 14
# HELP pulsewire_refusals_total Requests and session openings refused by a limit or a token's state, by environment and cause.
# TYPE pulsewire_refusals_total counter
pulsewire_refusals_total{cause="spent",env="production"} 1
# HELP pulsewire_analysis_queue_depth Runs whose capture is in, waiting for a worker, by environment.
# TYPE pulsewire_analysis_queue_depth gauge
pulsewire_analysis_queue_depth{env="production"} 1
# HELP pulsewire_runs_total Measurement runs admitted, by environment, source and outcome.
# TYPE pulsewire_runs_total counter
pulsewire_runs_total{env="production",outcome="abandoned",source="scan_session"} 1
pulsewire_runs_total{env="test",outcome="ended",source="rppg_video"} 1
# HELP pulsewire_credits_refused_total Measures ended without their variables because the client had no credit left this month, by environment.
# TYPE pulsewire_credits_refused_total counter
pulsewire_credits_refused_total{env="test"} 1
# HELP pulsewire_webhook_deliveries_total Attempts at delivering a webhook, by environment and outcome (delivered, retrying, failed: given up).
# TYPE pulsewire_webhook_deliveries_total counter
pulsewire_webhook_deliveries_total{env="production",outcome="delivered"} 1
pulsewire_webhook_deliveries_total{env="production",outcome="retrying"} 1
`
	names := []string{"pulsewire_sessions_open", "pulsewire_session_frames_dropped_total", "pulsewire_session_frames_lost_total", "pulsewire_refusals_total",
		"pulsewire_analysis_queue_depth", "pulsewire_runs_total", "pulsewire_credits_refused_total",
		"pulsewire_webhook_deliveries_total"}
	if err := testutil.GatherAndCompare(m.Gatherer(), strings.NewReader(want), names...); err != nil {
		t.Fatal(err)
	}
	// An invented method is "other": a client cannot mint series.
	if c, err := testutil.GatherAndCount(m.Gatherer(), "pulsewire_http_request_duration_seconds"); err != nil || c != 2 {
		t.Fatalf("%d request series (%v), want 2", c, err)
	}
	out := scrape(m)
	if strings.Contains(out, "BREW") || !strings.Contains(out, `method="other",route="(no route)"`) {
		t.Fatalf("an unknown method is not folded into other:\n%s", out)
	}
}

// scrape is what GET /metrics answers.
func scrape(m *Metrics) string {
	w := httptest.NewRecorder()
	m.Handler().ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(w.Body)
	return string(body)
}

// TestLint holds the series to Prometheus's naming rules (units in names,
// _total on counters, help on every metric).
func TestLint(t *testing.T) {
	m := New()
	exercise(m)
	problems, err := testutil.GatherAndLint(m.Gatherer())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		if strings.HasPrefix(p.Metric, "pulsewire_") {
			t.Errorf("%s: %s", p.Metric, p.Text)
		}
	}
}

func TestNilCountsNothing(t *testing.T) {
	var m *Metrics
	exercise(m) // must not panic
	var s *Session
	s.FrameDropped()
	s.Closed()
}

func TestHandler(t *testing.T) {
	m := New()
	exercise(m)
	body := scrape(m)
	for _, want := range []string{"pulsewire_runs_total", "go_goroutines", `pulsewire_analysis_workers{env="production"} 2`} {
		if !strings.Contains(body, want) {
			t.Errorf("no %s in\n%.2000s", want, body)
		}
	}
}

func BenchmarkFrameDropped(b *testing.B) {
	s := New().SessionOpened("test", ChainScan, TransportWebSocket)
	b.ReportAllocs()
	for b.Loop() {
		s.FrameDropped()
	}
}

func BenchmarkRequest(b *testing.B) {
	m := New()
	b.ReportAllocs()
	for b.Loop() {
		m.Request("production", "GET", "/measures/:id", 200, 3*time.Millisecond)
	}
}

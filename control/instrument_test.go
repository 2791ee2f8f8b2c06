package control

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pulsewire/pulsewire/control/metrics"
	"github.com/pulsewire/pulsewire/dsp/media"
	"github.com/pulsewire/pulsewire/storage"
)

// withMetrics counts the environment in m.
func withMetrics(m *metrics.Metrics) envOption {
	return func(e *testEnv, _ *storage.Options) { e.svcOpt = append(e.svcOpt, WithMetrics(m)) }
}

// scrape is what the metrics listener would answer.
func scrape(t *testing.T, m *metrics.Metrics) string {
	t.Helper()
	w := httptest.NewRecorder()
	m.Handler().ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	b, _ := io.ReadAll(w.Body)
	return string(b)
}

// wantSeries fails unless the scrape holds each line exactly.
func wantSeries(t *testing.T, scraped string, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if !strings.Contains(scraped, "\n"+l+"\n") {
			t.Errorf("no series %s in\n%s", l, grepPulsewire(scraped))
		}
	}
}

func grepPulsewire(scraped string) string {
	var out []string
	for _, l := range strings.Split(scraped, "\n") {
		if strings.HasPrefix(l, "pulsewire_") && !strings.Contains(l, "_bucket{") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestRequestsCountedByRoutePattern: a request is counted by the pattern
// of its route and its status, never by its path: the id, the externalId
// and the key it carried appear nowhere.
func TestRequestsCountedByRoutePattern(t *testing.T) {
	m := metrics.New()
	e := newTestEnv(t, Test, withMetrics(m))
	_, key := e.client("acme")
	const id = "0f8e0b52-3c8c-4f4e-9a67-8b7f3f1d2a10"
	wantStatus(t, e.do("GET", "/measures/"+id, key, nil), http.StatusNotFound)
	wantStatus(t, e.do("GET", "/external-users/jane.doe@example.com", key, nil), http.StatusNotFound)
	wantStatus(t, e.do("GET", "/no/such/"+id, key, nil), http.StatusNotFound)
	wantStatus(t, e.do("GET", "/measures", "pwk_test_wrong", nil), http.StatusUnauthorized)
	wantStatus(t, e.do("PROPFIND", "/measures", key, nil), http.StatusNotFound)
	got := scrape(t, m)
	wantSeries(t, got,
		`pulsewire_http_request_duration_seconds_count{env="test",method="GET",route="/measures/:id",status="404"} 1`,
		`pulsewire_http_request_duration_seconds_count{env="test",method="GET",route="/external-users/:externalId",status="404"} 1`,
		`pulsewire_http_request_duration_seconds_count{env="test",method="GET",route="(no route)",status="404"} 1`,
		`pulsewire_http_request_duration_seconds_count{env="test",method="GET",route="/measures",status="401"} 1`,
		`pulsewire_http_request_duration_seconds_count{env="test",method="other",route="(no route)",status="404"} 1`,
	)
	for _, secret := range []string{id, "jane.doe", key, "pwk_test_wrong", "PROPFIND", "/no/such"} {
		if strings.Contains(got, secret) {
			t.Errorf("the metrics hold %q", secret)
		}
	}
}

// TestRateRefusalsCounted: the 21st token mint of a minute is refused and
// counted as mint_rate.
func TestRateRefusalsCounted(t *testing.T) {
	m := metrics.New()
	e := newTestEnv(t, Production, withMetrics(m))
	_, key := e.client("acme")
	mint := `{"permissions":[{"name":"measurement.scan"}],"duration":"1h"}`
	for range tokensPerMinute {
		wantStatus(t, e.do("POST", "/access-tokens", key, mint), http.StatusCreated)
	}
	wantStatus(t, e.do("POST", "/access-tokens", key, mint), http.StatusTooManyRequests)
	wantSeries(t, scrape(t, m), `pulsewire_refusals_total{cause="mint_rate",env="production"} 1`)
}

// TestRunsCounted: runs by source and outcome, the wait for a worker, the
// pools' state, the credits refused, and full pools as refusals, each by
// its own cause.
func TestRunsCounted(t *testing.T) {
	m := metrics.New()
	az := NewAnalyzer(1, 0, 1, media.VideoOptions{})
	az.Instrument(m, Production)
	e := newTestEnv(t, Production, withMetrics(m), withAnalyzer(az))
	_, key := e.client("acme")
	_, broke, err := e.svc.CreateClient(context.Background(), NewClient{Name: "broke", MonthlyCredits: ptr(int64(0))})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(pulseSignal("cppg", 1.2, 12))
	wantStatus(t, e.send("/measures/cppg/signal", key, "application/json", bytes.NewReader(body)), http.StatusCreated)
	wantStatus(t, e.send("/measures/cppg/signal", key, "application/json", strings.NewReader(`{"signal":{}}`)), http.StatusBadRequest)
	r := e.send("/measures/cppg/signal", broke, "application/json", bytes.NewReader(body))
	if wantStatus(t, r, http.StatusCreated); !strings.Contains(string(r.body), "CREDIT_EXCEEDED") {
		t.Fatalf("a client without credit: %s", r.body)
	}

	// A slow upload holds the only upload place: the next run is refused.
	finish := e.holdPlace(az, key, body)
	wantSeries(t, scrape(t, m),
		`pulsewire_analysis_uploading{env="production"} 1`,
		`pulsewire_analysis_upload_places{env="production"} 1`,
		`pulsewire_analysis_runs_admitted{env="production"} 0`)
	wantStatus(t, e.send("/measures/rppg/signal", key, "application/json", bytes.NewReader(body)), http.StatusServiceUnavailable)
	wantStatus(t, finish(), http.StatusCreated)
	// The only worker busy and no queue: a received run is refused.
	busy, err := az.admit()
	if err != nil {
		t.Fatal(err)
	}
	wantSeries(t, scrape(t, m), `pulsewire_analysis_runs_admitted{env="production"} 1`, `pulsewire_analysis_places{env="production"} 1`)
	wantStatus(t, e.send("/measures/rppg/signal", key, "application/json", bytes.NewReader(body)), http.StatusServiceUnavailable)
	busy.release()

	got := scrape(t, m)
	wantSeries(t, got,
		`pulsewire_runs_total{env="production",outcome="ended",source="cppg_signal"} 3`,
		`pulsewire_runs_total{env="production",outcome="refused",source="cppg_signal"} 1`,
		`pulsewire_refusals_total{cause="uploads_full",env="production"} 1`,
		`pulsewire_refusals_total{cause="queue_full",env="production"} 1`,
		`pulsewire_credits_refused_total{env="production"} 1`,
		`pulsewire_analysis_wait_seconds_count{env="production"} 4`, // the refused run too: its body is decoded on a worker
		`pulsewire_analysis_uploading{env="production"} 0`,
		`pulsewire_analysis_runs_admitted{env="production"} 0`,
		`pulsewire_analysis_queue_depth{env="production"} 0`,
		`pulsewire_analysis_workers{env="production"} 1`,
	)
	if strings.Contains(got, `source="rppg_signal"`) {
		t.Errorf("a run the pools refused is counted as a run:\n%s", grepPulsewire(got))
	}
}

// TestServesWithoutMetrics: metrics are optional; without WithMetrics
// every counting path (requests, refusals, runs) serves as ever.
func TestServesWithoutMetrics(t *testing.T) {
	e := newTestEnv(t, Production)
	_, key := e.client("acme")
	wantStatus(t, e.do("GET", "/measures", key, nil), http.StatusOK)
	body, _ := json.Marshal(pulseSignal("cppg", 1.2, 12))
	wantStatus(t, e.send("/measures/cppg/signal", key, "application/json", bytes.NewReader(body)), http.StatusCreated)
	wantStatus(t, e.send("/measures/cppg/signal", key, "application/json", strings.NewReader(`{"signal":{}}`)), http.StatusBadRequest)
}

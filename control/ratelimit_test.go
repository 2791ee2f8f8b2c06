package control

import (
	"net/http"
	"testing"
	"time"
)

func TestGeneralRateLimit(t *testing.T) {
	e := newTestEnv(t, Production)
	_, key := e.client("acme")
	_, other := e.client("other")
	for i := range requestsPerMinute {
		if r := e.do("GET", "/measures?take=1", key, nil); r.status != http.StatusOK {
			t.Fatalf("request %d: status %d", i+1, r.status)
		}
	}
	r := e.do("GET", "/measures?take=1", key, nil)
	wantStatus(t, r, http.StatusTooManyRequests)
	wantBody(t, r, `{"statusCode":429,"message":"Too Many Requests"}`)
	if got := r.header.Get("Retry-After"); got != "1" { // one request back every 200 ms
		t.Fatalf("Retry-After %q, want 1", got)
	}
	wantStatus(t, e.do("GET", "/measures?take=1", other, nil), http.StatusOK) // per key
	e.clock.advance(time.Minute / requestsPerMinute)
	wantStatus(t, e.do("GET", "/measures?take=1", key, nil), http.StatusOK)
	wantStatus(t, e.do("GET", "/measures?take=1", key, nil), http.StatusTooManyRequests)
}

func TestTokenRateLimit(t *testing.T) {
	e := newTestEnv(t, Production)
	_, key := e.client("acme")
	_, other := e.client("other")
	body := `{"permissions":[{"name":"measurement.scan","maxSessions":1}],"duration":"5m"}`
	for i := range tokensPerMinute {
		if r := e.do("POST", "/access-tokens", key, body); r.status != http.StatusCreated {
			t.Fatalf("token %d: status %d %s", i+1, r.status, r.body)
		}
	}
	r := e.do("POST", "/access-tokens", key, body)
	wantStatus(t, r, http.StatusTooManyRequests)
	if got := r.header.Get("Retry-After"); got != "60" { // the burst fills the minute
		t.Fatalf("Retry-After %q, want 60", got)
	}
	wantStatus(t, e.do("GET", "/measures", key, nil), http.StatusOK)               // other routes still open
	wantStatus(t, e.do("POST", "/access-tokens", other, body), http.StatusCreated) // per key
	// 20 in any minute, not 20 at once and one more every 3 s.
	e.clock.advance(30 * time.Second)
	r = e.do("POST", "/access-tokens", key, body)
	wantStatus(t, r, http.StatusTooManyRequests)
	if got := r.header.Get("Retry-After"); got != "30" {
		t.Fatalf("Retry-After %q half a minute on, want 30", got)
	}
	e.clock.advance(30 * time.Second)
	wantStatus(t, e.do("POST", "/access-tokens", key, body), http.StatusCreated)
}

// TestRetryAfterRoundsUp: Retry-After is whole seconds, rounded up, so a
// client that waits as told is not refused again, and never 0, which a
// client reads as "now".
func TestRetryAfterRoundsUp(t *testing.T) {
	for _, tc := range []struct {
		wait time.Duration
		want string
	}{
		{0, "1"},
		{time.Millisecond, "1"},
		{999 * time.Millisecond, "1"},
		{time.Second, "1"},
		{time.Second + time.Millisecond, "2"},
		{29500 * time.Millisecond, "30"},
		{time.Minute, "60"},
	} {
		h := http.Header{}
		SetRetryAfter(h, tc.wait)
		if got := h.Get("Retry-After"); got != tc.want {
			t.Errorf("wait %v: Retry-After %q, want %q", tc.wait, got, tc.want)
		}
	}
}

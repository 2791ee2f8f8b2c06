package session

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/pulsewire/pulsewire/control"
	"github.com/pulsewire/pulsewire/dsp"
	"github.com/pulsewire/pulsewire/storage"
)

// TestHandshakeRefusals: every cause of refusal closes the WebSocket with
// 1008 and an empty reason before any message, and only the log tells the
// causes apart, never with a token value.
func TestHandshakeRefusals(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, Config{})
	ctx := context.Background()
	other := newTestEnvIn(t, control.Production, Config{}, &testClock{})
	scanValue, scanID := e.mint(scanOnce())
	rtValue, _ := e.mint(realtimeOnce())
	bad := e.badTokens(other)
	ran, err := e.svc.CreateMeasure(ctx, e.client, storage.NewMeasure{})
	if err != nil {
		t.Fatal(err)
	}
	// Ended through the run service, not a session: a session left open
	// would give its measure back (created again) once it went idle.
	run, err := e.svc.StartRun(ctx, e.client, control.RunOf{MeasureID: ran.ID}, storage.KindRPPG)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run.End(ctx, dsp.Result{}); err != nil {
		t.Fatal(err)
	}
	theirs, err := other.svc.CreateMeasure(ctx, other.client, storage.NewMeasure{})
	if err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name  string
		first any    // JSON message, or []byte for a binary one
		cause string // what the log says
	}{
		{"the token's id, not its value", openMessage(scanID, Scan, nil), "not an access token value"},
		{"an unknown value", openMessage("ivat-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", Scan, nil), "unknown token"},
		{"scan token for a realtime session", openMessage(scanValue, Realtime, nil), "lacks permission measurement.realtime"},
		{"realtime token for a scan session", openMessage(rtValue, Scan, nil), "lacks permission measurement.scan"},
		{"binary first message", []byte{0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xd8}, "the first message is binary"},
		{"not JSON", "hello", "not one JSON object"},
		{"unknown member", map[string]any{"type": "open", "token": scanValue, "chain": "scan", "id": 1}, "unknown member id"},
		{"unknown chain", openMessage(scanValue, "batch", nil), "unknown chain"},
		{"stop first", map[string]any{"type": "stop"}, "the first message is a stop message"},
		{"invalid measure inputs", openMessage(scanValue, Scan, map[string]any{"measure": map[string]any{"userData": map[string]any{"age": 17}}}), "measure inputs"},
		{"measure and measureId", openMessage(scanValue, Scan, map[string]any{"measure": map[string]any{}, "measureId": ran.ID}), "exclusive"},
		// The measure is looked up once the token has counted the
		// session, which a refused measure gives back: the one-session
		// token opens at the end.
		{"malformed measureId", openMessage(scanValue, Scan, map[string]any{"measureId": "42"}), "id must be a UUID"},
		{"measure already run", openMessage(scanValue, Scan, map[string]any{"measureId": ran.ID}), "already run"},
		{"another client's measure", openMessage(scanValue, Scan, map[string]any{"measureId": theirs.ID}), "not found"},
		{"a forged resume ticket", map[string]any{"type": "resume", "ticket": "eyJhbGciOiJIUzI1NiJ9.e30.x"}, "invalid resume ticket"},
	}
	for _, b := range bad {
		cases = append(cases, struct {
			name  string
			first any
			cause string
		}{b.name, openMessage(b.value, Scan, nil), b.cause})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Each case in its own seconds: the account's opening rate
			// (2 a second, 20 a minute) is not what is tested here.
			e.clock.advance(3 * time.Second)
			if tc.name == expiredToken {
				e.clock.advance(tokenLife)
				defer e.clock.advance(-tokenLife)
			}
			logged := len(e.logs.String())
			c := e.dial()
			switch m := tc.first.(type) {
			case []byte:
				if err := c.Write(ctx, websocket.MessageBinary, m); err != nil {
					t.Fatal(err)
				}
			case string:
				if err := c.Write(ctx, websocket.MessageText, []byte(m)); err != nil {
					t.Fatal(err)
				}
			default:
				send(t, c, m)
			}
			_, err := next(c, 10*time.Second)
			if code, reason := closeStatus(err); code != websocket.StatusPolicyViolation || reason != "" {
				t.Fatalf("got %v, want close 1008 with an empty reason", err)
			}
			// This case's refusal, not an earlier one, names the cause.
			since := func() string { return e.logs.String()[logged:] }
			waitFor(t, func() bool { return strings.Contains(since(), `"msg":"session refused"`) })
			if !strings.Contains(since(), tc.cause) {
				t.Errorf("the log does not name the cause %q", tc.cause)
			}
		})
	}
	var values []string
	for _, b := range bad {
		values = append(values, b.value)
	}
	for _, v := range append(values, scanValue, rtValue) {
		if strings.Contains(e.logs.String(), v) {
			t.Fatal("a token value is in the log")
		}
	}
	// The refused scan token was never spent by the refusals; its scan
	// lasts the default 30 s.
	if o := openSession(t, e.dial(), openMessage(scanValue, Scan, nil)); o.DurationMs != 30000 {
		t.Fatalf("a scan of %d ms, want the default 30000", o.DurationMs)
	}
}

// badToken is a token value the handshake refuses on every transport, with
// the cause the log gives.
type badToken struct{ name, value, cause string }

// expiredToken names the bad token that is good until the test moves the
// clock tokenLife on.
const expiredToken = "expired"

// badTokens mints a scan token of each kind the handshake refuses for the
// token itself: spent, revoked, of a deactivated client, of the other
// environment, and one that expires when the clock moves tokenLife on.
func (e *testEnv) badTokens(other *testEnv) []badToken {
	t := e.t
	t.Helper()
	ctx := context.Background()
	spent, _ := e.mint(scanOnce())
	// Counted without a server session: nothing holds a place.
	if _, err := e.svc.OpenSession(ctx, spent, control.PermissionScan, nil); err != nil {
		t.Fatal(err)
	}
	revoked, revokedID := e.mint(scanOnce())
	if err := e.svc.RevokeToken(ctx, e.client, revokedID); err != nil {
		t.Fatal(err)
	}
	gone, _, err := e.svc.CreateClient(ctx, control.NewClient{Name: "gone"})
	if err != nil {
		t.Fatal(err)
	}
	goneValue, _ := e.mintFor(gone, scanOnce())
	if _, err := e.svc.DeactivateClient(ctx, gone.ID); err != nil {
		t.Fatal(err)
	}
	otherValue, _ := other.mint(scanOnce())
	short, _ := e.mint(scanOnce())
	return []badToken{
		{"spent", spent, "is spent"},
		{"revoked", revoked, "is revoked"},
		{"deactivated client", goneValue, "is deactivated"},
		{"other environment", otherValue, "unknown token"},
		{expiredToken, short, "expired"},
	}
}

func closeStatus(err error) (websocket.StatusCode, string) {
	var ce websocket.CloseError
	if errors.As(err, &ce) {
		return ce.Code, ce.Reason
	}
	return -1, ""
}

// waitFor polls cond for up to 10 s.
func waitFor(t testing.TB, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestHandshakeTimeout: a connection that says nothing is refused like any
// other.
func TestHandshakeTimeout(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("waits for the handshake timeout")
	}
	e := newTestEnv(t, Config{})
	c := e.dial()
	start := time.Now()
	_, err := next(c, 2*handshakeTimeout)
	if code, reason := closeStatus(err); code != websocket.StatusPolicyViolation || reason != "" {
		t.Fatalf("got %v, want close 1008", err)
	}
	if waited := time.Since(start); waited < handshakeTimeout-time.Second {
		t.Fatalf("closed after %v, before the handshake timeout", waited)
	}
}

// TestOpenedMessage: the opened message of each form of opening.
func TestOpenedMessage(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, Config{ScanDuration: 12 * time.Second})
	m, err := e.svc.CreateMeasure(context.Background(), e.client, storage.NewMeasure{})
	if err != nil {
		t.Fatal(err)
	}
	scan, _ := e.mint(scanOnce())
	o := openSession(t, e.dial(), openMessage(scan, Scan, map[string]any{"measureId": m.ID}))
	if o.Chain != Scan || o.MeasureID != m.ID || o.DurationMs != 12000 || o.ResumeTicket == "" || o.Resumed ||
		o.MaxFrameBytes != DefaultMaxFrameBytes || o.SessionID == "" {
		t.Fatalf("two-step scan: %+v", o)
	}
	// The measure has started: a run of it over REST is refused.
	res, body := e.httpDo("GET", "/measures/"+m.ID, "")
	var view map[string]any
	json.Unmarshal(body, &view)
	if res.StatusCode != 200 || view["status"] != "started" {
		t.Fatalf("GET the measure: %d %s", res.StatusCode, body)
	}
	rt, _ := e.mint(realtimeOnce())
	o = openSession(t, e.dial(), openMessage(rt, Realtime, map[string]any{"measure": map[string]any{"tags": []string{"kiosk"}}}))
	if o.Chain != Realtime || o.MeasureID == "" || o.MeasureID == m.ID || o.DurationMs != DefaultMaxLength.Milliseconds() {
		t.Fatalf("realtime with inputs: %+v", o)
	}
}

// TestConcurrentOpenings: N concurrent openings of a maxSessions=1 token
// open exactly one session.
func TestConcurrentOpenings(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, Config{})
	value, _ := e.mint(scanOnce())
	const n = 10
	conns := make([]*websocket.Conn, n)
	for i := range conns {
		conns[i] = e.dial()
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	opened, refused := 0, 0
	for _, c := range conns {
		wg.Go(func() {
			send(t, c, openMessage(value, Scan, nil))
			r, err := next(c, 10*time.Second)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil && r.Type == "opened":
				opened++
			case websocket.CloseStatus(err) == websocket.StatusPolicyViolation:
				refused++
			default:
				t.Errorf("unexpected answer %s, %v", r.raw, err)
			}
		})
	}
	wg.Wait()
	if opened != 1 || refused != n-1 {
		t.Fatalf("%d opened, %d refused; want 1 and %d", opened, refused, n-1)
	}
	if spent := strings.Count(e.logs.String(), "is spent"); spent != n-1 {
		t.Errorf("%d refusals logged as spent, want %d", spent, n-1)
	}
}

// TestOpeningRate: at most 2 openings per second and 20 per minute per
// account, at the edge and one past it; a refusal over the rate does not
// spend the token, and another account is not affected.
func TestOpeningRate(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, Config{})
	open := func(value string) error {
		c := e.dial()
		defer c.CloseNow()
		send(t, c, openMessage(value, Realtime, nil))
		r, err := next(c, 10*time.Second)
		if err == nil && r.Type != "opened" {
			t.Fatalf("got %s", r.raw)
		}
		return err
	}
	unlimited, _ := e.mint(storage.Permission{Name: control.PermissionRealtime})
	once, _ := e.mint(realtimeOnce())
	// Only the test's jumps move time: a slow step on a busy machine must
	// not open a window early.
	e.clock.freeze()
	for i := range 2 {
		if err := open(unlimited); err != nil {
			t.Fatalf("opening %d in the first second: %v", i+1, err)
		}
	}
	if err := open(once); websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
		t.Fatalf("third opening within a second: %v, want 1008", err)
	}
	if !strings.Contains(e.logs.String(), "over the opening rate") {
		t.Error("the rate refusal is not logged")
	}
	other, _, err := e.svc.CreateClient(context.Background(), control.NewClient{Name: "other"})
	if err != nil {
		t.Fatal(err)
	}
	otherValue, _ := e.mintFor(other, realtimeOnce())
	if err := open(otherValue); err != nil {
		t.Fatalf("another account, same second: %v", err)
	}
	e.clock.advance(time.Second)
	if err := open(once); err != nil {
		t.Fatalf("the token refused over the rate, a second later: %v", err)
	}
	// 3 openings so far in this minute; 17 more, two per second.
	for i := 3; i < 20; i++ {
		if i%2 == 1 {
			e.clock.advance(time.Second)
		}
		if err := open(unlimited); err != nil {
			t.Fatalf("opening %d in the minute: %v", i+1, err)
		}
	}
	e.clock.advance(time.Second)
	if err := open(unlimited); websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
		t.Fatalf("21st opening within a minute: %v, want 1008", err)
	}
	e.clock.advance(time.Minute)
	if err := open(unlimited); err != nil {
		t.Fatalf("a minute later: %v", err)
	}
}

package session

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestFrameSizeLimit: a message of exactly MaxFrameBytes is taken (a
// picture that is no JPEG is rejected, counted and reported once); one
// byte more closes the connection with 1009.
func TestFrameSizeLimit(t *testing.T) {
	t.Parallel()
	const limit = 4096
	e := newTestEnv(t, Config{MaxFrameBytes: limit})
	value, _ := e.mint(realtimeOnce())
	c := e.dial()
	o := openSession(t, c, openMessage(value, Realtime, nil))
	if o.MaxFrameBytes != limit {
		t.Fatalf("opened: maxFrameBytes %d", o.MaxFrameBytes)
	}
	ctx := context.Background()
	garbage := func(at time.Duration) []byte {
		return frameMessage(0, at, []byte(strings.Repeat("x", limit-8)))
	}
	for _, at := range []time.Duration{0, 33 * time.Millisecond} {
		if err := c.Write(ctx, websocket.MessageBinary, garbage(at)); err != nil {
			t.Fatal(err)
		}
	}
	var bad errorMessage
	expect(t, c, "error", 10*time.Second).decode(t, &bad)
	if bad.Code != codeBadFrame {
		t.Fatalf("error %+v", bad)
	}
	var v vitalsMessage
	for v.FramesReceived < 2 {
		expect(t, c, "vitals", 10*time.Second).decode(t, &v)
	}
	if v.FramesRejected != 2 || v.FramesDropped != 0 {
		t.Fatalf("vitals after two bad frames: %+v", v)
	}
	if err := c.Write(ctx, websocket.MessageBinary, append(garbage(66*time.Millisecond), 'x')); err != nil {
		t.Fatal(err)
	}
	expectClose(t, c, websocket.StatusMessageTooBig, "read limited at 4097 bytes")
}

// TestIdleTimeout: a scan that receives no frame is given up (its new
// measure removed, a two-step one back to created) and closed with 4000.
func TestIdleTimeout(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, Config{IdleTimeout: 2 * time.Second})
	res, body := e.httpDo("POST", "/measures", `{}`)
	var created measureJSON
	if json.Unmarshal(body, &created); res.StatusCode != 201 {
		t.Fatal(res.StatusCode)
	}
	for _, extra := range []map[string]any{nil, {"measureId": created.ID}} {
		value, _ := e.mint(scanOnce())
		c := e.dial()
		start := time.Now() // before the session opens: the idle time counts from its opening
		o := openSession(t, c, openMessage(value, Scan, extra))
		expectClose(t, c, statusIdle, "idle")
		if waited := time.Since(start); waited < 2*time.Second {
			t.Fatalf("closed idle after %v", waited)
		}
		res, body := e.httpDo("GET", "/measures/"+o.MeasureID, "")
		switch {
		case extra == nil && res.StatusCode != 404:
			t.Errorf("the new measure of an idle scan: %d %s", res.StatusCode, body)
		case extra != nil && (res.StatusCode != 200 || !strings.Contains(string(body), `"status":"created"`)):
			t.Errorf("the two-step measure of an idle scan: %d %s", res.StatusCode, body)
		}
	}
}

// TestIdleRealtime: a realtime session whose connection drops keeps its
// capture until it is idle, then stores its measure.
func TestIdleRealtime(t *testing.T) {
	t.Parallel()
	f := syntheticFrames(t, faceClip(84, 13))
	e, c, o := realtimeSession(t, Config{IdleTimeout: 2 * time.Second})
	// The session's clock stands still until the test moves it, so that
	// the wait is not over before it is looked at, however busy the
	// machine.
	e.clock.freeze()
	e.stream(c, o.SessionID, f, 0, 30, 0, 4, nil)
	c.CloseNow() // the network drops: no stop, no close handshake
	if res, body := e.httpDo("GET", "/measures/"+o.MeasureID, ""); !strings.Contains(string(body), `"status":"started"`) {
		t.Fatalf("the measure while the session waits: %d %s", res.StatusCode, body)
	}
	e.clock.advance(2 * time.Second)
	waitFor(t, func() bool { return e.srv.session(o.SessionID) == nil })
	if res, body := e.httpDo("GET", "/measures/"+o.MeasureID, ""); res.StatusCode != 200 || !strings.Contains(string(body), `"status":"ended"`) {
		t.Fatalf("the measure of an idle realtime session: %d %s", res.StatusCode, body)
	}
}

// TestSessionLimit: with MaxSessions open, another opening closes with
// 1013 "busy" without spending its token, which opens once a place is
// free.
func TestSessionLimit(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, Config{MaxSessions: 1})
	c, o, second := fullHouse(t, e)
	send(t, c, map[string]any{"type": "stop"})
	expect(t, c, "result", 10*time.Second)
	c.Close(websocket.StatusNormalClosure, "")
	waitFor(t, func() bool { return e.srv.session(o.SessionID) == nil })
	e.clock.advance(time.Second) // past the opening rate
	openSession(t, e.dial(), openMessage(second, Realtime, nil))
}

// fullHouse opens a realtime session on e, whose MaxSessions is 1, and
// sees another opening refused as busy. It returns the open session and
// the refused opening's token, which the refusal did not spend.
func fullHouse(t *testing.T, e *testEnv) (*websocket.Conn, openedMessage, string) {
	t.Helper()
	first, _ := e.mint(realtimeOnce())
	second, _ := e.mint(realtimeOnce())
	c := e.dial()
	o := openSession(t, c, openMessage(first, Realtime, nil))
	c2 := e.dial()
	send(t, c2, openMessage(second, Realtime, nil))
	expectClose(t, c2, websocket.StatusTryAgainLater, "busy")
	return c, o, second
}

// TestCalibrationWindow: after its result a session waits two minutes for
// a calibration, holding its place among the open sessions, then closes
// normally and frees the place.
func TestCalibrationWindow(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, Config{MaxSessions: 1})
	c, o, second := fullHouse(t, e)
	send(t, c, map[string]any{"type": "stop"})
	expect(t, c, "result", 10*time.Second)
	// Still waiting: a calibration is answered, here refused for its
	// values, and the place is still taken.
	send(t, c, map[string]any{"type": "calibration", "systole": 300, "diastole": 80})
	var bad errorMessage
	if expect(t, c, "error", 10*time.Second).decode(t, &bad); bad.Code != codeInvalid {
		t.Fatalf("a calibration in the window: %+v", bad)
	}
	c2 := e.dial()
	send(t, c2, openMessage(second, Realtime, nil))
	expectClose(t, c2, websocket.StatusTryAgainLater, "busy")

	e.clock.advance(2 * time.Minute) // the window the protocol promises
	expectClose(t, c, websocket.StatusNormalClosure, "")
	waitFor(t, func() bool { return e.srv.session(o.SessionID) == nil })
	openSession(t, e.dial(), openMessage(second, Realtime, nil))
}

// TestDropsFrames: frames that arrive faster than they are analysed are
// dropped, counted, and every frame is either analysed or dropped.
func TestDropsFrames(t *testing.T) {
	t.Parallel()
	f := syntheticFrames(t, faceClip(84, 13))
	e, c, o := realtimeSession(t, Config{FrameQueue: 2})
	ctx := context.Background()
	const n = 200
	for i := range n {
		if err := c.Write(ctx, websocket.MessageBinary, frameMessage(0, f.times[i], f.jpegs[i])); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, func() bool { s := e.srv.session(o.SessionID); return s.received.Load() == n && len(s.frames) == 0 })
	var v vitalsMessage
	for v.FramesReceived < n {
		expect(t, c, "vitals", 10*time.Second).decode(t, &v)
	}
	if v.FramesDropped == 0 || v.FramesDropped >= n {
		t.Fatalf("%d of %d frames dropped", v.FramesDropped, n)
	}
	send(t, c, map[string]any{"type": "stop"})
	expect(t, c, "result", 10*time.Second)
}

// TestSlowReader: a client with more than outboundQueue messages waiting
// is closed with 4001 at once, not queued for.
func TestSlowReader(t *testing.T) {
	t.Parallel()
	accepted := make(chan *websocket.Conn, 1)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			t.Error(err)
			return
		}
		accepted <- c
		<-r.Context().Done()
	}))
	defer hs.Close()
	ctx := context.Background()
	client, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(hs.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer client.CloseNow()
	// A peer whose writer has not started: nothing leaves its queue.
	p := &wsPeer{conn: <-accepted, out: make(chan []byte, outboundQueue), done: make(chan struct{})}
	for i := range outboundQueue {
		if !p.send([]byte(`{"type":"vitals"}`)) {
			t.Fatalf("message %d refused", i+1)
		}
	}
	if p.send([]byte(`{"type":"vitals"}`)) {
		t.Fatal("a message past the queue was taken")
	}
	_, _, err = client.Read(ctx)
	if code, reason := closeStatus(err); code != statusTooSlow || reason != "too slow" {
		t.Fatalf("client: %v", err)
	}
	if p.send([]byte(`{}`)) {
		t.Fatal("a closed peer took a message")
	}
}

// TestSessionLength: a realtime session ends at its longest life with its
// result; a scan that has not covered its duration by then is closed with
// 4003 and nothing stored.
func TestSessionLength(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, Config{MaxLength: 3 * time.Second, ScanDuration: 2 * time.Second})
	f := syntheticFrames(t, faceClip(84, 13))
	rt, _ := e.mint(realtimeOnce())
	c := e.dial()
	o := openSession(t, c, openMessage(rt, Realtime, nil))
	done := make(chan struct{})
	go e.stream(c, o.SessionID, f, 0, len(f.times), 0, 1, done)
	var result struct{ Measure measureJSON }
	expect(t, c, "result", 20*time.Second).decode(t, &result)
	close(done)
	if result.Measure.Status != "ended" || result.Measure.ID != o.MeasureID {
		t.Fatalf("result %+v", result.Measure)
	}

	scan, _ := e.mint(scanOnce())
	c = e.dial()
	o = openSession(t, c, openMessage(scan, Scan, nil))
	done = make(chan struct{})
	defer close(done)
	// The capture clock runs at half speed: 3 s of session cover 1.5 s.
	go e.stream(c, o.SessionID, f, 0, len(f.times), 0, 0.5, done)
	expectClose(t, c, statusTimeLimit, "time limit")
	if res, _ := e.httpDo("GET", "/measures/"+o.MeasureID, ""); res.StatusCode != 404 {
		t.Fatalf("the measure of a scan over time: %d", res.StatusCode)
	}
}

// TestProtocolErrors: after the opening, a message that breaks the
// protocol closes the connection with 1002; as after a dropped
// connection, the session may be resumed, and ends when idle.
func TestProtocolErrors(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, Config{})
	for _, tc := range []struct {
		name string
		typ  websocket.MessageType
		data string
	}{
		{"not JSON", websocket.MessageText, "stop"},
		{"a second open", websocket.MessageText, `{"type":"open","token":"ivat-x","chain":"scan"}`},
		{"a frame without a picture", websocket.MessageBinary, "\x00\x00\x00\x00\x00\x00\x00\x01"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.clock.advance(time.Second) // past the opening rate
			value, _ := e.mint(scanOnce())
			c := e.dial()
			o := openSession(t, c, openMessage(value, Scan, nil))
			if err := c.Write(context.Background(), tc.typ, []byte(tc.data)); err != nil {
				t.Fatal(err)
			}
			_, err := next(c, 10*time.Second)
			if code := websocket.CloseStatus(err); code != websocket.StatusProtocolError {
				t.Fatalf("got %v, want 1002", err)
			}
			c2 := e.dial()
			defer c2.CloseNow()
			send(t, c2, map[string]any{"type": "resume", "ticket": o.ResumeTicket})
			var r openedMessage
			if expect(t, c2, "opened", 10*time.Second).decode(t, &r); !r.Resumed || r.SessionID != o.SessionID {
				t.Fatalf("resumed after 1002: %+v", r)
			}
		})
	}
}

// TestShutdown: stopping the server ends the hijacked connections too: a
// realtime session gets its result and 1001, a scan in progress is given
// up with 1001, and new handshakes are refused.
func TestShutdown(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, Config{})
	rt, _ := e.mint(realtimeOnce())
	scan, _ := e.mint(scanOnce())
	c1 := e.dial()
	o1 := openSession(t, c1, openMessage(rt, Realtime, nil))
	c2 := e.dial()
	o2 := openSession(t, c2, openMessage(scan, Scan, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	expect(t, c1, "result", 10*time.Second)
	expectClose(t, c1, websocket.StatusGoingAway, "shutting down")
	expectClose(t, c2, websocket.StatusGoingAway, "shutting down")
	if res, _ := e.httpDo("GET", "/measures/"+o1.MeasureID, ""); res.StatusCode != 200 {
		t.Errorf("realtime measure after shutdown: %d", res.StatusCode)
	}
	if res, _ := e.httpDo("GET", "/measures/"+o2.MeasureID, ""); res.StatusCode != 404 {
		t.Errorf("scan measure after shutdown: %d", res.StatusCode)
	}
	late, _ := e.mint(scanOnce())
	c3 := e.dial()
	send(t, c3, openMessage(late, Scan, nil))
	expectClose(t, c3, websocket.StatusGoingAway, "shutting down")
}

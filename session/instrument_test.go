package session

import (
	"bytes"
	"encoding/json"
	"image"
	"image/jpeg"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/pulsewire/pulsewire/storage"
)

// scraped is what the environment's metrics listener would answer.
func (e *testEnv) scraped() string {
	w := httptest.NewRecorder()
	e.counts.Handler().ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	b, _ := io.ReadAll(w.Body)
	return string(b)
}

// waitSeries waits until every line is in the scrape, which a session's
// loop updates as it ends.
func (e *testEnv) waitSeries(lines ...string) {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, missing := e.scraped(), ""
		for _, l := range lines {
			if !strings.Contains(got, "\n"+l+"\n") {
				missing = l
				break
			}
		}
		if missing == "" {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("no series %s in\n%s", missing, got)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSessionsCounted: open sessions by chain and transport, and each
// session's run by outcome once it ends.
func TestSessionsCounted(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, Config{IdleTimeout: 300 * time.Millisecond})

	// A realtime session over WebSocket, stopped: its result is stored.
	value, _ := e.mint(realtimeOnce())
	c := e.dial()
	openSession(t, c, openMessage(value, Realtime, nil))
	e.waitSeries(`pulsewire_sessions_open{chain="realtime",env="test",transport="websocket"} 1`)
	send(t, c, map[string]any{"type": "stop"})
	// A session keeps no frame, and its measure says so.
	if r := expect(t, c, "result", 10*time.Second); !strings.Contains(string(r.raw), `"mediaKept":false`) {
		t.Errorf("result %s", r.raw)
	}
	c.Close(websocket.StatusNormalClosure, "")

	// A scan whose client goes away: given up when it idles.
	value, _ = e.mint(scanOnce())
	c = e.dial()
	openSession(t, c, openMessage(value, Scan, nil))
	c.CloseNow()

	// A realtime session over WebRTC, hung up by its DELETE; a second
	// later, past the account's two openings a second.
	e.clock.advance(time.Second)
	value, _ = e.mint(realtimeOnce())
	res, _ := e.whipPost("?chain=realtime", "application/sdp", newWHIPClient(t).offer(t), value)
	if res.StatusCode != 201 {
		t.Fatalf("WHIP POST: %d", res.StatusCode)
	}
	e.waitSeries(`pulsewire_sessions_open{chain="realtime",env="test",transport="webrtc"} 1`)
	if status := e.whipDelete(res.Header.Get("Location"), value); status != 200 {
		t.Fatalf("WHIP DELETE: %d", status)
	}

	e.waitSeries(
		`pulsewire_sessions_open{chain="realtime",env="test",transport="websocket"} 0`,
		`pulsewire_sessions_open{chain="scan",env="test",transport="websocket"} 0`,
		`pulsewire_sessions_open{chain="realtime",env="test",transport="webrtc"} 0`,
		`pulsewire_runs_total{env="test",outcome="ended",source="realtime_session"} 2`,
		`pulsewire_runs_total{env="test",outcome="abandoned",source="scan_session"} 1`,
	)
}

// TestSessionRefusalsCounted: each refused handshake is counted by its
// cause, which the client never learns.
func TestSessionRefusalsCounted(t *testing.T) {
	t.Parallel()
	clock := &testClock{}
	clock.freeze()
	e := newTestEnvIn(t, "test", Config{}, clock)
	refuse := func(msg map[string]any) {
		t.Helper()
		c := e.dial()
		send(t, c, msg)
		expectClose(t, c, websocket.StatusPolicyViolation, "")
	}
	spent, _ := e.mint(scanOnce())
	c := e.dial()
	openSession(t, c, openMessage(spent, Scan, nil))
	defer c.CloseNow()
	refuse(openMessage(spent, Scan, nil))
	refuse(openMessage("ivat-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", Scan, nil))
	rt, _ := e.mint(realtimeOnce())
	refuse(openMessage(rt, Scan, nil))
	refuse(map[string]any{"type": "resume", "ticket": "eyJhbGciOiJIUzI1NiJ9.e30.x"})
	refuse(map[string]any{"type": "stop"})
	// The clock stands still: a second opening within the second is
	// the account's second, a third is over the rate.
	again, _ := e.mint(storage.Permission{Name: "measurement.scan"})
	second := e.dial()
	openSession(t, second, openMessage(again, Scan, nil))
	defer second.CloseNow()
	refuse(openMessage(again, Scan, nil))
	e.waitSeries(
		`pulsewire_refusals_total{cause="spent",env="test"} 1`,
		`pulsewire_refusals_total{cause="unknown_token",env="test"} 1`,
		`pulsewire_refusals_total{cause="wrong_chain",env="test"} 1`,
		`pulsewire_refusals_total{cause="resume",env="test"} 1`,
		`pulsewire_refusals_total{cause="bad_request",env="test"} 1`,
		`pulsewire_refusals_total{cause="opening_rate",env="test"} 1`,
	)
	if got := e.scraped(); strings.Contains(got, spent) || strings.Contains(got, rt) {
		t.Fatal("a token value in the metrics")
	}
}

// TestDroppedFramesCounted: the frames a session drops when its analysis
// lags are counted, exactly as the session counts them itself.
func TestDroppedFramesCounted(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, Config{FrameQueue: 1})
	value, _ := e.mint(scanOnce())
	c := e.dial()
	defer c.CloseNow()
	o := openSession(t, c, openMessage(value, Scan, nil))
	var picture bytes.Buffer
	if err := jpeg.Encode(&picture, image.NewGray(image.Rect(0, 0, 320, 240)), nil); err != nil {
		t.Fatal(err)
	}
	sess := e.srv.session(o.SessionID)
	// Frames as fast as the socket takes them, until some are dropped,
	// then until the session has received every frame sent.
	sent := int64(0)
	for ; sess.dropped.Load() == 0 && sent < 5000; sent++ {
		if err := c.Write(t.Context(), websocket.MessageBinary, frameMessage(0, time.Duration(sent)*33*time.Millisecond, picture.Bytes())); err != nil {
			t.Fatal(err)
		}
	}
	for deadline := time.Now().Add(10 * time.Second); sess.received.Load() < sent; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d frames received", sess.received.Load(), sent)
		}
	}
	dropped := sess.dropped.Load()
	if dropped == 0 {
		t.Fatal("no frame dropped with a queue of one")
	}
	e.waitSeries(`pulsewire_session_frames_dropped_total{chain="scan",env="test",transport="websocket"} ` + itoa(dropped))
}

func itoa(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

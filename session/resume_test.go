package session

import (
	"context"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestResume: a dropped connection resumes its session with the ticket,
// after the token is spent (a resume is not counted); the capture goes on
// where it was; a resume while the old connection lives replaces it; a
// ticket a later one replaced, or of a session that has ended, resumes
// nothing.
func TestResume(t *testing.T) {
	t.Parallel()
	f := syntheticFrames(t, faceClip(84, 13))
	e, c, o := realtimeSession(t, Config{})
	const origin = 5 * time.Hour
	e.stream(c, o.SessionID, f, 0, 60, origin, 4, nil)
	c.CloseNow() // the network drops: no close handshake

	c2 := e.dial()
	send(t, c2, map[string]any{"type": "resume", "ticket": o.ResumeTicket})
	var r openedMessage
	expect(t, c2, "opened", 10*time.Second).decode(t, &r)
	if r.SessionID != o.SessionID || !r.Resumed || r.ResumeTicket == "" || r.MeasureID != o.MeasureID || r.Chain != Realtime {
		t.Fatalf("resumed: %+v, opened %+v", r, o)
	}
	e.stream(c2, o.SessionID, f, 60, 120, origin, 4, nil)
	// Every frame is in before the takeover: a frame still in flight on
	// the connection replaced would be lost with it.
	for v := (vitalsMessage{}); v.FramesReceived < 120; {
		expect(t, c2, "vitals", 10*time.Second).decode(t, &v)
	}

	// A third connection takes over from a second that still lives.
	c3 := e.dial()
	send(t, c3, map[string]any{"type": "resume", "ticket": r.ResumeTicket})
	expect(t, c3, "opened", 10*time.Second)
	expectClose(t, c2, statusReplaced, "replaced")
	// The first ticket, two tickets ago, takes over nothing.
	old := e.dial()
	send(t, old, map[string]any{"type": "resume", "ticket": o.ResumeTicket})
	if _, err := next(old, 10*time.Second); !isRefusal(err) {
		t.Fatalf("a ticket two tickets old: %v", err)
	}

	var v vitalsMessage
	for v.FramesReceived < 120 || v.ElapsedMs < f.times[119].Milliseconds() {
		expect(t, c3, "vitals", 10*time.Second).decode(t, &v)
	}
	if v.FramesReceived != 120 || v.ElapsedMs != f.times[119].Milliseconds() || v.FramesDropped != 0 {
		t.Fatalf("after the resume: %+v, want 120 frames up to %v", v, f.times[119])
	}
	send(t, c3, map[string]any{"type": "stop"})
	expect(t, c3, "result", 10*time.Second)
	c3.Close(websocket.StatusNormalClosure, "")
	waitFor(t, func() bool { return e.srv.session(o.SessionID) == nil })

	c4 := e.dial()
	send(t, c4, map[string]any{"type": "resume", "ticket": r.ResumeTicket})
	_, err := next(c4, 10*time.Second)
	if code, reason := closeStatus(err); code != websocket.StatusPolicyViolation || reason != "" {
		t.Fatalf("resume of an ended session: %v", err)
	}
}

// TestResumeAfterDeactivation: a resume ticket stops working once its
// client is deactivated, as the client's tokens do; the session runs on
// to its end while its connection lives.
func TestResumeAfterDeactivation(t *testing.T) {
	t.Parallel()
	e, c, o := realtimeSession(t, Config{})
	c.CloseNow() // the network drops
	if _, err := e.svc.DeactivateClient(context.Background(), e.client.ID); err != nil {
		t.Fatal(err)
	}
	c2 := e.dial()
	send(t, c2, map[string]any{"type": "resume", "ticket": o.ResumeTicket})
	_, err := next(c2, 10*time.Second)
	if code, reason := closeStatus(err); code != websocket.StatusPolicyViolation || reason != "" {
		t.Fatalf("resume of a deactivated client's session: %v", err)
	}
}

// TestResumeAfterRevocation: a resume ticket stops working once the token
// that opened its session is revoked; the session ran on meanwhile.
func TestResumeAfterRevocation(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, Config{})
	value, id := e.mint(realtimeOnce())
	c := e.dial()
	o := openSession(t, c, openMessage(value, Realtime, nil))
	c.CloseNow() // the network drops
	if err := e.svc.RevokeToken(context.Background(), e.client, id); err != nil {
		t.Fatal(err)
	}
	if e.srv.session(o.SessionID) == nil {
		t.Fatal("the revocation ended the session")
	}
	c2 := e.dial()
	send(t, c2, map[string]any{"type": "resume", "ticket": o.ResumeTicket})
	if _, err := next(c2, 10*time.Second); !isRefusal(err) {
		t.Fatalf("resume of a revoked token's session: %v", err)
	}
}

// isRefusal reports whether err is how a refused handshake ends: close 1008
// without a reason.
func isRefusal(err error) bool {
	code, reason := closeStatus(err)
	return code == websocket.StatusPolicyViolation && reason == ""
}

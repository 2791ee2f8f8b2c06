package session

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestHandOn: two instances share a database behind a load balancer. A
// session opened on one is resumed through the other, which relays it both
// ways (frames in, vitals and the result out, the close status back); a
// DELETE of its WHIP resource through the other ends it; and once it has
// ended, neither instance resumes it.
func TestHandOn(t *testing.T) {
	t.Parallel()
	f := syntheticFrames(t, faceClip(84, 13))
	e, c, o := realtimeSession(t, Config{})
	other := e.otherInstance()
	const origin = 5 * time.Hour
	e.stream(c, o.SessionID, f, 0, 40, origin, 4, nil)
	c.CloseNow()

	c2 := other.dial()
	send(t, c2, map[string]any{"type": "resume", "ticket": o.ResumeTicket})
	var r openedMessage
	expect(t, c2, "opened", 10*time.Second).decode(t, &r)
	if r.SessionID != o.SessionID || !r.Resumed || r.MeasureID != o.MeasureID {
		t.Fatalf("resumed through the other instance: %+v, opened %+v", r, o)
	}
	if other.srv.session(o.SessionID) != nil {
		t.Fatal("the other instance holds a session it only relays")
	}
	e.stream(c2, o.SessionID, f, 40, 80, origin, 4, nil)
	var v vitalsMessage
	for v.FramesReceived < 80 {
		expect(t, c2, "vitals", 10*time.Second).decode(t, &v)
	}
	if v.FramesReceived != 80 || v.FramesDropped != 0 {
		t.Fatalf("vitals through the relay: %+v, want 80 frames", v)
	}
	// A ticket given through the relay is the holder's too: the session
	// resumes through the other instance again after another drop.
	c2.CloseNow()
	c3 := other.dial()
	send(t, c3, map[string]any{"type": "resume", "ticket": r.ResumeTicket})
	expect(t, c3, "opened", 10*time.Second)
	send(t, c3, map[string]any{"type": "stop"})
	expect(t, c3, "result", 10*time.Second)
	c3.Close(websocket.StatusNormalClosure, "")

	// A second session, ended by a WHIP DELETE sent to the other instance
	// with the token that opened it.
	value, _ := e.mint(realtimeOnce())
	c4 := e.dial()
	o4 := openSession(t, c4, openMessage(value, Realtime, nil))
	if code := other.whipDelete("/sessions/whip/"+o4.SessionID, "ivat-not-the-token"); code != http.StatusNotFound {
		t.Fatalf("DELETE with another token through the other instance: %d, want 404", code)
	}
	if code := other.whipDelete("/sessions/whip/"+o4.SessionID, value); code != http.StatusOK {
		t.Fatalf("DELETE through the other instance: %d, want 200", code)
	}
	if e.srv.session(o4.SessionID) != nil {
		t.Fatal("the session outlived its DELETE")
	}
	expect(t, c4, "result", 10*time.Second)

	// Ended: a resume through either instance is refused like any other.
	waitFor(t, func() bool { return e.srv.session(o.SessionID) == nil })
	for _, in := range []*testEnv{e, other} {
		c := in.dial()
		send(t, c, map[string]any{"type": "resume", "ticket": r.ResumeTicket})
		_, err := next(c, 10*time.Second)
		if code, reason := closeStatus(err); code != websocket.StatusPolicyViolation || reason != "" {
			t.Fatalf("resume of an ended session: %v", err)
		}
	}
	if !strings.Contains(other.logs.String(), "session handed on") {
		t.Error("the hand-on is not logged")
	}
}

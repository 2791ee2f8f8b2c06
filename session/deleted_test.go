package session

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestMeasureDeletedDuringSession: a realtime session whose measure the
// client deletes while it runs ends cleanly when it comes to store the
// result: an error message measure_deleted, close 4004, nothing stored,
// and no error in the server's log (the client had the right to delete).
func TestMeasureDeletedDuringSession(t *testing.T) {
	t.Parallel()
	f := syntheticFrames(t, faceClip(84, 13))
	e, c, o := realtimeSession(t, Config{})
	e.stream(c, o.SessionID, f, 0, 30, 0, 4, nil)
	if err := e.svc.DeleteMeasure(context.Background(), e.client, o.MeasureID); err != nil {
		t.Fatal(err)
	}
	send(t, c, map[string]any{"type": "stop"})
	r := expect(t, c, "error", 10*time.Second)
	if !strings.Contains(string(r.raw), `"code":"measure_deleted"`) {
		t.Fatalf("error message %s", r.raw)
	}
	_, err := next(c, 10*time.Second)
	if code := websocket.CloseStatus(err); code != statusDeleted {
		t.Fatalf("closed with %v, want %d", err, statusDeleted)
	}
	if res, _ := e.httpDo("GET", "/measures/"+o.MeasureID, ""); res.StatusCode != http.StatusNotFound {
		t.Fatalf("the deleted measure: %d", res.StatusCode)
	}
	waitFor(t, func() bool { return e.srv.session(o.SessionID) == nil })
	if logs := e.logs.String(); strings.Contains(logs, `"level":"ERROR"`) {
		t.Fatalf("a deletion is no error of the server:\n%s", logs)
	}
}

// TestWHIPDeleteDeletedMeasure: the WHIP DELETE of a realtime session
// whose measure was deleted answers 404, not a 200 that would promise a
// stored measure nor a 500 for a failure that is none.
func TestWHIPDeleteDeletedMeasure(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, Config{})
	token, location := e.whipRealtime(t)
	sess := e.srv.session(strings.TrimPrefix(location, "/sessions/whip/"))
	if err := e.svc.DeleteMeasure(context.Background(), e.client, sess.run.Measure().ID); err != nil {
		t.Fatal(err)
	}
	res, body := e.whipRequest("DELETE", location, "", "", bearerHeader(token)...)
	if res.StatusCode != http.StatusNotFound || !strings.Contains(body, `"statusCode":404`) {
		t.Fatalf("DELETE: %d %q, want the API's 404", res.StatusCode, body)
	}
	if logs := e.logs.String(); strings.Contains(logs, `"level":"ERROR"`) {
		t.Fatalf("a deletion is no error of the server:\n%s", logs)
	}
}

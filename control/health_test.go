package control

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pulsewire/pulsewire/dsp/media"
	"github.com/pulsewire/pulsewire/storage"
)

// withChecks adds readiness checks to the API.
func withChecks(cs ...Check) envOption {
	return func(e *testEnv, _ *storage.Options) { e.checks = append(e.checks, cs...) }
}

// readiness is a /readyz answer.
type readiness struct {
	Status string
	Checks map[string]string
}

func (e *testEnv) readyz() (int, readiness) {
	e.t.Helper()
	r := e.do("GET", "/readyz", "", nil)
	var v readiness
	if err := json.Unmarshal(r.body, &v); err != nil {
		e.t.Fatalf("%s: %v", r.body, err)
	}
	return r.status, v
}

func TestHealthz(t *testing.T) {
	e := newTestEnv(t, Production)
	r := e.do("GET", "/healthz", "", nil)
	wantStatus(t, r, http.StatusOK)
	wantBody(t, r, `{"status":"ok"}`)
}

func TestReadyz(t *testing.T) {
	e := newTestEnv(t, Production)
	status, v := e.readyz()
	want := map[string]string{"analysis": "ok", "database": "ok", "ffmpeg": "ok", "media": "ok"}
	if status != http.StatusOK || v.Status != "ready" || len(v.Checks) != len(want) {
		t.Fatalf("%d %+v", status, v)
	}
	for name, answer := range want {
		if v.Checks[name] != answer {
			t.Errorf("%s: %q", name, v.Checks[name])
		}
	}
}

func TestReadyzAddedCheck(t *testing.T) {
	var failing bool
	e := newTestEnv(t, Production, withChecks(Check{"sessions", func(context.Context) error {
		if failing {
			return errors.New("at the session limit")
		}
		return nil
	}}))
	if status, v := e.readyz(); status != http.StatusOK || v.Checks["sessions"] != "ok" {
		t.Fatalf("%d %+v", status, v)
	}
	failing = true
	if status, v := e.readyz(); status != http.StatusServiceUnavailable || v.Status != "not ready" || v.Checks["sessions"] != "at the session limit" || v.Checks["database"] != "ok" {
		t.Fatalf("%d %+v", status, v)
	}
}

// holdPlace starts a run whose body waits, so that it holds an upload
// place of az, and returns a function that sends the body and returns the
// run's answer.
func (e *testEnv) holdPlace(az *Analyzer, key string, body []byte) (finish func() response) {
	e.t.Helper()
	pr, pw := io.Pipe()
	done := make(chan response)
	held := len(az.uploads)
	go func() { done <- e.send("/measures/cppg/signal", key, "application/json", pr) }()
	for len(az.uploads) == held {
		time.Sleep(time.Millisecond)
	}
	return func() response {
		pw.Write(body)
		pw.Close()
		return <-done
	}
}

// TestReadyzSaturated: with every upload place taken, or every place of
// the pool, the environment is not ready; once one frees, it is again.
func TestReadyzSaturated(t *testing.T) {
	az := NewAnalyzer(1, 0, 1, media.VideoOptions{})
	e := newTestEnv(t, Production, withAnalyzer(az))
	_, key := e.client("acme")
	body, _ := json.Marshal(pulseSignal("cppg", 1.2, 12))
	busy, err := az.admit()
	if err != nil {
		t.Fatal(err)
	}
	if status, v := e.readyz(); status != http.StatusServiceUnavailable || v.Checks["analysis"] != errPoolFull.Error() {
		t.Fatalf("pool full: %d %+v", status, v)
	}
	busy.release()
	finish := e.holdPlace(az, key, body)
	if status, v := e.readyz(); status != http.StatusServiceUnavailable || v.Checks["analysis"] != errUploadsFull.Error() {
		t.Fatalf("uploads full: %d %+v", status, v)
	}
	wantStatus(t, finish(), http.StatusCreated)
	if status, v := e.readyz(); status != http.StatusOK {
		t.Fatalf("after the run: %d %+v", status, v)
	}
}

// TestReadyzWithoutFFmpeg: the answer says ffmpeg is missing; where it was
// looked for is in the log only.
func TestReadyzWithoutFFmpeg(t *testing.T) {
	missing := t.TempDir() + "/ffmpeg"
	e := newTestEnv(t, Production, withAnalyzer(NewAnalyzer(1, 0, 1, media.VideoOptions{FFmpeg: missing})))
	r := e.do("GET", "/readyz", "", nil)
	wantStatus(t, r, http.StatusServiceUnavailable)
	if !strings.Contains(string(r.body), `"ffmpeg":"ffmpeg not found"`) || strings.Contains(string(r.body), missing) {
		t.Fatalf("body %s", r.body)
	}
	if !strings.Contains(e.logs.String(), missing) {
		t.Fatalf("the cause is not logged:\n%s", e.logs)
	}
}

// TestReadyzDatabaseLocked: while another process holds the database's
// write lock past the probe's time limit, the database check fails; the
// next probe within a second reuses that answer instead of writing again;
// once the lock is gone, it is ready again.
func TestReadyzDatabaseLocked(t *testing.T) {
	e := newTestEnv(t, Production)
	other, err := sql.Open("sqlite", e.file)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	if status, v := e.readyz(); status != http.StatusServiceUnavailable || v.Checks["database"] != errNotWritable.Error() {
		t.Fatalf("locked: %d %+v", status, v)
	}
	start := time.Now()
	if status, _ := e.readyz(); status != http.StatusServiceUnavailable {
		t.Fatalf("the next probe: %d", status)
	}
	if took := time.Since(start); took > checkTimeout/2 {
		t.Fatalf("the next probe within a second waited %v for the lock: it wrote again", took)
	}
	if _, err := conn.ExecContext(context.Background(), "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(checkEvery)
	if status, v := e.readyz(); status != http.StatusOK {
		t.Fatalf("unlocked: %d %+v", status, v)
	}
}

// TestReadyzWithoutMedia: a media folder removed under the server (a disk
// unmounted) makes it not ready, the cause in the log only; back, ready.
func TestReadyzWithoutMedia(t *testing.T) {
	e := newTestEnv(t, Production)
	root := e.media.(*storage.MediaDir).Root
	moved := root + ".away"
	if err := os.Rename(root, moved); err != nil {
		t.Fatal(err)
	}
	if status, v := e.readyz(); status != http.StatusServiceUnavailable || v.Checks["media"] != errNoMedia.Error() {
		t.Fatalf("without the folder: %d %+v", status, v)
	}
	if !strings.Contains(e.logs.String(), root) {
		t.Fatalf("the cause is not logged:\n%s", e.logs)
	}
	if err := os.Rename(moved, root); err != nil {
		t.Fatal(err)
	}
	time.Sleep(checkEvery)
	if status, v := e.readyz(); status != http.StatusOK {
		t.Fatalf("back: %d %+v", status, v)
	}
}

// TestReadyzOfSeveralEnvironments names each check by its environment.
func TestReadyzOfSeveralEnvironments(t *testing.T) {
	prod, test := newTestEnv(t, Production), newTestEnv(t, Test)
	w := httptest.NewRecorder()
	Readyz(prod.api, test.api).ServeHTTP(w, httptest.NewRequest("GET", "/readyz", nil))
	var v readiness
	if err := json.NewDecoder(bytes.NewReader(w.Body.Bytes())).Decode(&v); err != nil || w.Code != http.StatusOK {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	for _, name := range []string{"production.database", "test.database", "production.ffmpeg", "test.analysis"} {
		if v.Checks[name] != "ok" {
			t.Errorf("%s: %q in %+v", name, v.Checks[name], v)
		}
	}
}

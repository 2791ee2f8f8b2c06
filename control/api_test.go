package control

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pulsewire/pulsewire/storage"
)

// testClock is a settable clock shared by the store (which counts the rate
// limits too) and the service of a test environment.
type testClock struct {
	mu sync.Mutex // protects t
	t  time.Time
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// testEnv is one environment served in memory: a real SQLite file and media
// folder in a temporary folder, its service and its API.
type testEnv struct {
	t      *testing.T
	file   string
	db     *storage.DB
	media  storage.Media
	svc    *Service
	api    *API
	clock  *testClock
	logs   *syncBuffer
	routes []Route
	az     *Analyzer
	svcOpt []ServiceOption
	checks []Check
}

type envOption func(*testEnv, *storage.Options)

// withLocation counts token days on loc's calendar.
func withLocation(loc *time.Location) envOption {
	return func(_ *testEnv, o *storage.Options) { o.Location = loc }
}

// withMedia puts a wrapper around the environment's media folder.
func withMedia(wrap func(storage.Media) storage.Media) envOption {
	return func(e *testEnv, _ *storage.Options) { e.media = wrap(e.media) }
}

// withAnalyzer runs the measurements on az.
func withAnalyzer(az *Analyzer) envOption {
	return func(e *testEnv, _ *storage.Options) { e.az = az }
}

// withRoutes mounts routes beside the API.
func withRoutes(rs ...Route) envOption {
	return func(e *testEnv, _ *storage.Options) { e.routes = append(e.routes, rs...) }
}

func newTestEnv(t *testing.T, env Env, opts ...envOption) *testEnv {
	t.Helper()
	dir := t.TempDir()
	e := &testEnv{t: t, file: filepath.Join(dir, "db.sqlite"), clock: &testClock{t: time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)}, logs: &syncBuffer{}}
	media, err := storage.NewMediaDir(filepath.Join(dir, "media"))
	if err != nil {
		t.Fatal(err)
	}
	e.media = media
	so := storage.Options{Now: e.clock.now}
	for _, o := range opts {
		o(e, &so)
	}
	e.db, err = storage.Open(context.Background(), e.file, so)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.db.Close() })
	e.svc = NewService(env, e.db, e.media, e.svcOpt...)
	logger := slog.New(slog.NewJSONHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e.api = NewAPI(e.svc, Options{Logger: logger, Routes: e.routes, Analyzer: e.az, Checks: e.checks})
	return e
}

// client creates a client and returns it with its API key.
func (e *testEnv) client(name string) (storage.Client, string) {
	e.t.Helper()
	c, key, err := e.svc.CreateClient(context.Background(), NewClient{Name: name})
	if err != nil {
		e.t.Fatal(err)
	}
	return c, key
}

// response is an answer of the API.
type response struct {
	status int
	header http.Header
	body   []byte
}

// decode reads the body as JSON into a generic value.
func (r response) json(t *testing.T) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatalf("body %q: %v", r.body, err)
	}
	return v
}

// do sends one request; key, when not empty, goes in a Bearer header.
func (e *testEnv) do(method, target, key string, body any) response {
	e.t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	case []byte:
		r = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		r = bytes.NewReader(j)
	}
	req := httptest.NewRequest(method, target, r)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	w := httptest.NewRecorder()
	e.api.ServeHTTP(w, req)
	return response{w.Code, w.Header(), w.Body.Bytes()}
}

// sqlExec changes the environment's database directly, for states no route
// can reach yet (a measure run by a later part of the server).
func (e *testEnv) sqlExec(query string, args ...any) {
	e.t.Helper()
	db, err := sql.Open("sqlite", e.file+"?_pragma=busy_timeout(5000)")
	if err != nil {
		e.t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(query, args...); err != nil {
		e.t.Fatal(err)
	}
}

// endMeasure marks measure id as run from kind and ended.
func (e *testEnv) endMeasure(id string, kind storage.Kind) {
	e.t.Helper()
	e.sqlExec(`UPDATE measures SET kind = ?, status = 'ended', started_at = created_at + 1000, ended_at = created_at + 31000,
		returned_variables = '["hr"]', signal = '{"qualityScore":{"value":0.9,"error":null}}',
		variables = '{"hr":{"value":{"mean":61},"error":null}}' WHERE id = ?`, kind, id)
}

// concurrently runs request n times at once and counts the statuses.
func concurrently(n int, request func() int) map[int]int {
	var wg sync.WaitGroup
	statuses := make(chan int, n)
	for range n {
		wg.Go(func() { statuses <- request() })
	}
	wg.Wait()
	close(statuses)
	count := map[int]int{}
	for s := range statuses {
		count[s]++
	}
	return count
}

// wantStatus fails the test unless r has the status.
func wantStatus(t *testing.T, r response, status int) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d; body %s", r.status, status, r.body)
	}
}

// wantBody fails the test unless r's body is exactly the JSON want.
func wantBody(t *testing.T, r response, want string) {
	t.Helper()
	if strings.TrimSpace(string(r.body)) != want {
		t.Fatalf("body %s, want %s", r.body, want)
	}
}

const notFoundJSON = `{"message":"Not Found","statusCode":404}`

// syncBuffer is a log sink that tests read while servers write.
type syncBuffer struct {
	mu sync.Mutex // protects b
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

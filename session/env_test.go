package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/pulsewire/pulsewire/control"
	"github.com/pulsewire/pulsewire/control/metrics"
	"github.com/pulsewire/pulsewire/dsp/face"
	"github.com/pulsewire/pulsewire/scripts/synth/clip"
	"github.com/pulsewire/pulsewire/storage"
)

// testClock is real time shifted by a settable offset: sessions run on it
// as on the wall clock, and a test can jump ahead (a token expires, a
// window of the opening rate passes). Frozen, it stands still but for the
// jumps, so that a busy machine's pauses do not move it.
type testClock struct {
	mu     sync.Mutex // protects the fields below
	offset time.Duration
	frozen time.Time // zero: running
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.frozen.IsZero() {
		return c.frozen.Add(c.offset)
	}
	return time.Now().Add(c.offset)
}

func (c *testClock) freeze() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.frozen = time.Now()
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
}

// syncBuffer collects the server log of a test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

var cascadeOnce = sync.OnceValues(face.LoadCascade)

// testEnv is one environment served over loopback: a real SQLite file, the
// control plane's API and the session server on one listener.
type testEnv struct {
	t        *testing.T
	env      control.Env
	db       *storage.DB
	svc      *control.Service
	srv      *Server
	http     *httptest.Server
	clock    *testClock
	logs     *syncBuffer
	client   storage.Client
	key      string // the client's API key
	dir      string // of the database file and the media
	cfg      Config
	listenIP net.IP
	counts   *metrics.Metrics // what the environment counted
}

func newTestEnv(t *testing.T, cfg Config) *testEnv {
	return newTestEnvIn(t, control.Test, cfg, &testClock{})
}

func newTestEnvIn(t *testing.T, env control.Env, cfg Config, clock *testClock) *testEnv {
	t.Helper()
	return newTestEnvOn(t, env, cfg, clock, nil)
}

// newTestEnvOn is a test server whose WebRTC takes listenIP for its
// listener's address (the HTTP server itself stays on loopback).
func newTestEnvOn(t *testing.T, env control.Env, cfg Config, clock *testClock, listenIP net.IP) *testEnv {
	t.Helper()
	e := &testEnv{t: t, env: env, clock: clock, logs: &syncBuffer{}, dir: t.TempDir(), cfg: cfg}
	media, err := storage.NewMediaDir(filepath.Join(e.dir, "media"))
	if err != nil {
		t.Fatal(err)
	}
	if e.db, err = storage.Open(context.Background(), filepath.Join(e.dir, "db.sqlite"), storage.Options{Now: clock.now}); err != nil {
		t.Fatal(err)
	}
	e.counts = metrics.New()
	e.svc = control.NewService(env, e.db, media, control.WithMetrics(e.counts))
	e.listenIP = listenIP
	if e.client, e.key, err = e.svc.CreateClient(context.Background(), control.NewClient{Name: "acme"}); err != nil {
		t.Fatal(err)
	}
	e.serve()
	return e
}

// otherInstance is a second instance of the server of e's environment, on
// the same database and media, with its own listener, as a load balancer
// would have in front of both; both are recorded with their addresses.
func (e *testEnv) otherInstance() *testEnv {
	e.t.Helper()
	o := &testEnv{t: e.t, env: e.env, clock: e.clock, logs: &syncBuffer{}, dir: e.dir, cfg: e.cfg, client: e.client, key: e.key}
	media, err := storage.NewMediaDir(filepath.Join(o.dir, "media"))
	if err != nil {
		e.t.Fatal(err)
	}
	if o.db, err = storage.Open(context.Background(), filepath.Join(o.dir, "db.sqlite"), storage.Options{Now: o.clock.now}); err != nil {
		e.t.Fatal(err)
	}
	o.counts = metrics.New()
	o.svc = control.NewService(o.env, o.db, media, control.WithMetrics(o.counts))
	o.serve()
	for _, in := range []*testEnv{e, o} {
		if err := in.db.Heartbeat(context.Background(), strings.TrimPrefix(in.http.URL, "http://")); err != nil {
			e.t.Fatal(err)
		}
	}
	return o
}

// serve starts e's session server and its listener, stopped at the end of
// the test.
func (e *testEnv) serve() {
	t := e.t
	cascade, err := cascadeOnce()
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewJSONHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if e.srv, err = NewServer(e.svc, Options{Config: e.cfg, Cascade: cascade, Logger: log, Now: e.clock.now, ListenIP: e.listenIP}); err != nil {
		t.Fatal(err)
	}
	e.http = httptest.NewServer(control.NewAPI(e.svc, control.Options{Logger: log, Routes: e.srv.Routes()}))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := e.srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		e.http.Close()
		e.db.Close()
		if t.Failed() {
			t.Logf("server log:\n%s", e.logs.String())
		}
	})
}

// tokenLife is how long the tokens mint makes are good for.
const tokenLife = 10 * time.Minute

// mint creates an access token of the client with the given permissions,
// good for tokenLife, and returns its value and id.
func (e *testEnv) mint(perms ...storage.Permission) (value, id string) {
	e.t.Helper()
	return e.mintFor(e.client, perms...)
}

func (e *testEnv) mintFor(c storage.Client, perms ...storage.Permission) (value, id string) {
	e.t.Helper()
	tok, err := e.svc.CreateToken(context.Background(), c, storage.NewToken{Permissions: perms, Duration: storage.TokenDuration{Seconds: int64(tokenLife / time.Second)}})
	if err != nil {
		e.t.Fatal(err)
	}
	return tok.Value, tok.ID
}

func scanOnce() storage.Permission {
	one := int64(1)
	return storage.Permission{Name: control.PermissionScan, MaxSessions: &one}
}

func realtimeOnce() storage.Permission {
	one := int64(1)
	return storage.Permission{Name: control.PermissionRealtime, MaxSessions: &one}
}

// dial opens a WebSocket on /sessions.
func (e *testEnv) dial() *websocket.Conn {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(e.http.URL, "http")+"/sessions", nil)
	if err != nil {
		e.t.Fatal(err)
	}
	c.SetReadLimit(1 << 20)
	e.t.Cleanup(func() { c.CloseNow() })
	return c
}

// openMessage is the open message for a token and chain; extra members
// are added (measure, measureId).
func openMessage(token string, chain Chain, extra map[string]any) map[string]any {
	m := map[string]any{"type": "open", "token": token, "chain": chain}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

func send(t testing.TB, c *websocket.Conn, msg any) {
	t.Helper()
	b, err := json.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Write(ctx, websocket.MessageText, b); err != nil {
		t.Fatalf("send: %v", err)
	}
}

// received is a server message, with its type and raw JSON.
type received struct {
	Type string `json:"type"`
	raw  []byte
}

func (r received) decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.raw, v); err != nil {
		t.Fatalf("decode %s: %v", r.raw, err)
	}
}

// next reads the next server message, or returns the close error.
func next(c *websocket.Conn, timeout time.Duration) (received, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	typ, data, err := c.Read(ctx)
	if err != nil {
		return received{}, err
	}
	if typ != websocket.MessageText {
		return received{}, errors.New("binary message from the server")
	}
	var r received
	if err := json.Unmarshal(data, &r); err != nil {
		return received{}, err
	}
	r.raw = data
	return r, nil
}

// expect reads messages until one of type typ, skipping vitals.
func expect(t testing.TB, c *websocket.Conn, typ string, timeout time.Duration) received {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		r, err := next(c, time.Until(deadline))
		if err != nil {
			t.Fatalf("waiting for %s: %v", typ, err)
		}
		if r.Type == typ {
			return r
		}
		if r.Type != "vitals" {
			t.Fatalf("waiting for %s, got %s", typ, r.raw)
		}
	}
}

// expectClose reads until the connection closes and checks its status and
// reason; any message but vitals on the way fails.
func expectClose(t testing.TB, c *websocket.Conn, code websocket.StatusCode, reason string) {
	t.Helper()
	for {
		r, err := next(c, 20*time.Second)
		if err == nil {
			if r.Type != "vitals" {
				t.Fatalf("want close %d, got message %s", code, r.raw)
			}
			continue
		}
		var ce websocket.CloseError
		if !errors.As(err, &ce) {
			t.Fatalf("want close %d, got %v", code, err)
		}
		if ce.Code != code || ce.Reason != reason {
			t.Fatalf("closed with %d %q, want %d %q", ce.Code, ce.Reason, code, reason)
		}
		return
	}
}

// openSession opens a session and returns its opened message.
func openSession(t testing.TB, c *websocket.Conn, msg map[string]any) openedMessage {
	t.Helper()
	send(t, c, msg)
	var o openedMessage
	expect(t, c, "opened", 10*time.Second).decode(t, &o)
	return o
}

// frames is a synthetic capture as the widget sends it: 320x240 JPEG
// frames with their capture times, and the truth they were made from.
type frames struct {
	jpegs [][]byte
	times []time.Duration
	truth clip.Truth
}

var framesCache sync.Map // clip.Config -> *frames

// realtimeSession opens a realtime session on a new test server with cfg
// and returns the server, the session's connection and its opened message.
func realtimeSession(t *testing.T, cfg Config) (*testEnv, *websocket.Conn, openedMessage) {
	t.Helper()
	e := newTestEnv(t, cfg)
	value, _ := e.mint(realtimeOnce())
	c := e.dial()
	return e, c, openSession(t, c, openMessage(value, Realtime, nil))
}

// synthClip writes a synthetic face clip (scripts/synth) as y4m and
// returns its path and truth. scripts/synth runs as its own process:
// drawing a clip in this test binary, built with the race detector, would
// be ten times slower.
func synthClip(t testing.TB, cfg clip.Config) (string, clip.Truth) {
	t.Helper()
	y4m := filepath.Join(t.TempDir(), "clip.y4m")
	synth := exec.Command("go", "run", "./scripts/synth", "-o", y4m,
		"-size", fmt.Sprintf("%dx%d", cfg.Width, cfg.Height), "-fps", fmt.Sprint(cfg.FPS), "-seconds", fmt.Sprint(cfg.Seconds),
		"-seed", fmt.Sprint(cfg.Seed), "-hr", fmt.Sprint(cfg.HeartRate), "-br", fmt.Sprint(cfg.BreathingRate))
	if cfg.PulseAmplitude > 0 {
		synth.Args = append(synth.Args, "-amplitude", fmt.Sprint(cfg.PulseAmplitude))
	}
	synth.Dir = ".."
	if out, err := synth.CombinedOutput(); err != nil {
		t.Fatalf("scripts/synth: %v\n%s", err, out)
	}
	truth, err := clip.ReadTruth(clip.TruthPath(y4m))
	if err != nil {
		t.Fatal(err)
	}
	return y4m, truth
}

// syntheticFrames turns a synthetic face clip into JPEG frames with
// ffmpeg, once per configuration per test binary.
func syntheticFrames(t testing.TB, cfg clip.Config) *frames {
	t.Helper()
	if f, ok := framesCache.Load(cfg); ok {
		return f.(*frames)
	}
	y4m, truth := synthClip(t, cfg)
	dir := filepath.Dir(y4m)
	if out, err := exec.Command("ffmpeg", "-nostdin", "-loglevel", "error", "-i", y4m,
		"-c:v", "mjpeg", "-q:v", "3", filepath.Join(dir, "%05d.jpg")).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v\n%s", err, out)
	}
	f := &frames{truth: truth}
	for i := range truth.Frames {
		b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("%05d.jpg", i+1)))
		if err != nil {
			t.Fatal(err)
		}
		f.jpegs = append(f.jpegs, b)
		f.times = append(f.times, time.Duration(float64(i)/truth.FPS*float64(time.Second)))
	}
	framesCache.Store(cfg, f)
	return f
}

// frameMessage is a binary frame: capture time (µs, from origin) and JPEG.
func frameMessage(origin, at time.Duration, picture []byte) []byte {
	us := uint64((origin + at) / time.Microsecond)
	b := make([]byte, 8, 8+len(picture))
	for i := range 8 {
		b[i] = byte(us >> (56 - 8*i))
	}
	return append(b, picture...)
}

// stream sends frames from..to at their capture pace (speed times real
// time), starting the capture clock at origin, until done closes. It never
// runs ahead of the analysis of the session id (when given): a test on a
// busy machine, or built with the race detector, checks what the server
// computes, not how fast; scripts/load measures that. It returns once
// every frame sent has arrived.
func (e *testEnv) stream(c *websocket.Conn, id string, f *frames, from, to int, origin time.Duration, speed float64, done <-chan struct{}) {
	start := time.Now()
	var sent int64
	if s := e.srv.session(id); s != nil {
		sent = s.received.Load()
	}
	for i := from; i < to; i++ {
		due := start.Add(time.Duration(float64(f.times[i]-f.times[from]) / speed))
		select {
		case <-done:
			return
		case <-time.After(time.Until(due)):
		}
		for id != "" {
			// Every frame sent has arrived, and none waits.
			s := e.srv.session(id)
			if s == nil || (s.received.Load() >= sent && len(s.frames) == 0) {
				break
			}
			time.Sleep(time.Millisecond)
		}
		sent++
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := c.Write(ctx, websocket.MessageBinary, frameMessage(origin, f.times[i], f.jpegs[i]))
		cancel()
		if err != nil {
			return // the server ended the session
		}
	}
	// The last frame has arrived too: a caller that drops the connection
	// next would lose a frame still in flight, as on a real network.
	for deadline := time.Now().Add(5 * time.Second); id != "" && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if s := e.srv.session(id); s == nil || s.received.Load() >= sent {
			break
		}
	}
}

// httpDo sends an API request with the client's key.
func (e *testEnv) httpDo(method, path string, body string) (*http.Response, []byte) {
	e.t.Helper()
	req, err := http.NewRequest(method, e.http.URL+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+e.key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(res.Body)
	return res, b.Bytes()
}

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// binary is the pulsewire binary the end-to-end tests run, built once.
var binary struct {
	once sync.Once
	dir  string
	path string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binary.dir != "" {
		os.RemoveAll(binary.dir)
	}
	os.Exit(code)
}

// buildBinary builds the pulsewire binary once per test run, or takes the
// one PULSEWIRE_BINARY names: make test builds it before the tests enter
// their network namespace.
func buildBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("PULSEWIRE_BINARY"); p != "" {
		return p
	}
	binary.once.Do(func() {
		if binary.dir, binary.err = os.MkdirTemp("", "pulsewire-e2e"); binary.err != nil {
			return
		}
		binary.path = filepath.Join(binary.dir, "pulsewire")
		out, err := exec.Command("go", "build", "-o", binary.path, ".").CombinedOutput()
		if err != nil {
			binary.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binary.err != nil {
		t.Fatal(binary.err)
	}
	return binary.path
}

// lockedBuffer collects a process's output while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex // protects b
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// serverProc is a running `pulsewire serve`.
type serverProc struct {
	cmd        *exec.Cmd
	out        *lockedBuffer // stderr: logs and banner
	prod, test string        // base URLs
	done       chan error
}

// startServer runs the binary's serve --dev, with more flags if given, on
// free loopback ports over dataDir and waits until both environments listen.
func startServer(t *testing.T, bin, dataDir string, flags ...string) *serverProc {
	t.Helper()
	args := append([]string{"serve", "--dev", "--log-format", "json", "--addr", "127.0.0.1:0", "--data-dir", dataDir}, flags...)
	cmd := exec.Command(bin, args...)
	// The Test address comes from the environment, as a deployment may set it.
	cmd.Env = append(os.Environ(), "PULSEWIRE_TEST_ADDR=127.0.0.1:0")
	p := &serverProc{cmd: cmd, out: &lockedBuffer{}, done: make(chan error, 1)}
	cmd.Stderr = p.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-p.done
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for p.prod == "" || p.test == "" {
		if time.Now().After(deadline) {
			t.Fatalf("the server did not listen in time:\n%s", p.out)
		}
		time.Sleep(20 * time.Millisecond)
		sc := bufio.NewScanner(strings.NewReader(p.out.String()))
		for sc.Scan() {
			var line struct{ Msg, Env, Addr string }
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "listening" {
				if line.Env == "production" {
					p.prod = "http://" + line.Addr
				} else {
					p.test = "http://" + line.Addr
				}
			}
		}
	}
	return p
}

// stop sends sig and waits for the process to end.
func (p *serverProc) stop(t *testing.T, sig syscall.Signal) error {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.done:
		return err
	case <-time.After(20 * time.Second):
		t.Fatalf("the server did not stop on %s", sig)
		return nil
	}
}

// cli runs the binary with args and returns its stdout.
func cli(t *testing.T, bin string, args ...string) string {
	t.Helper()
	var stderr bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pulsewire %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

// createClient creates a client with the command line and returns its id
// and API key. The data folder may be new: a test often creates its
// client before the server's first start.
func createClient(t *testing.T, bin, dataDir, env, name string) (id, key string) {
	t.Helper()
	var c struct{ ID, Name, Env, APIKey string }
	out := cli(t, bin, "client", "create", "--data-dir", dataDir, "--create-data-dir", "--env", env, "--name", name)
	if err := json.Unmarshal([]byte(out), &c); err != nil || c.APIKey == "" || c.Env != env {
		t.Fatalf("client create printed %q", out)
	}
	return c.ID, c.APIKey
}

var httpClient = &http.Client{Timeout: 10 * time.Second}

// call sends one request and returns the status and body.
func call(t *testing.T, method, target, key, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, target, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// field reads a string member of a JSON object.
func field(t *testing.T, body []byte, name string) string {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	s, _ := v[name].(string)
	return s
}

func TestEndToEnd(t *testing.T) {
	bin := buildBinary(t)
	data := t.TempDir()
	srv := startServer(t, bin, data)
	clientID, key := createClient(t, bin, data, "test", "e2e")
	_, prodKey := createClient(t, bin, data, "production", "e2e")

	status, body := call(t, "POST", srv.test+"/access-tokens", key, `{"permissions":[{"name":"measurement.scan","maxSessions":1}],"duration":"10m"}`)
	if status != 201 || !strings.HasPrefix(field(t, body, "value"), "ivat-") {
		t.Fatalf("mint: %d %s", status, body)
	}
	tokenValue := field(t, body, "value")

	status, body = call(t, "POST", srv.test+"/measures", key, `{"userData":{"externalId":"e2e-person","age":30},"tags":["a","b"]}`)
	if status != 201 {
		t.Fatalf("create measure: %d %s", status, body)
	}
	kept := field(t, body, "id")
	if status, _ := call(t, "GET", srv.test+"/measures/"+kept, key, ""); status != 200 {
		t.Fatalf("read measure: %d", status)
	}
	filter := url.QueryEscape(`{"operator":"contains","name":"tags","values":["b"]}`)
	if status, body := call(t, "GET", srv.test+"/measures?filters="+filter, key, ""); status != 200 || !strings.Contains(string(body), kept) {
		t.Fatalf("list: %d %s", status, body)
	}
	_, body = call(t, "POST", srv.test+"/measures", key, `{}`)
	gone := field(t, body, "id")
	if status, _ := call(t, "DELETE", srv.test+"/measures/"+gone, key, ""); status != 200 {
		t.Fatalf("delete: %d", status)
	}
	if status, _ := call(t, "GET", srv.test+"/external-users/e2e-person", key, ""); status != 200 {
		t.Fatalf("external user: %d", status)
	}
	if status, _ := call(t, "GET", srv.prod+"/measures/"+kept, prodKey, ""); status != 404 {
		t.Fatalf("production sees a test measure: %d", status)
	}
	if status, _ := call(t, "GET", srv.prod+"/measures", key, ""); status != 401 {
		t.Fatalf("a test key on production: %d", status)
	}
	// The OpenAPI document names this server's listeners, on both.
	for _, base := range []string{srv.prod, srv.test} {
		status, body := call(t, "GET", base+"/openapi.json", "", "")
		var doc struct{ Servers []struct{ URL string } }
		if err := json.Unmarshal(body, &doc); status != 200 || err != nil || len(doc.Servers) != 2 ||
			doc.Servers[0].URL != srv.prod || doc.Servers[1].URL != srv.test {
			t.Fatalf("openapi: %d %v %+v", status, err, doc.Servers)
		}
		if status, body := call(t, "GET", base+"/docs", "", ""); status != 200 || !strings.Contains(string(body), "redoc.standalone.js") {
			t.Fatalf("the API reference: %d %.100s", status, body)
		}
	}

	// The banner's next steps work as printed.
	var steps []string
	for _, line := range strings.Split(srv.out.String(), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "export KEY=") || strings.HasPrefix(line, "curl ") {
			steps = append(steps, line)
		}
	}
	if len(steps) != 2 {
		t.Fatalf("banner steps %q in\n%s", steps, srv.out)
	}
	out, err := exec.Command("bash", "-c", "set -e\n"+steps[0]+"\n"+steps[1]).Output()
	if err != nil || !strings.Contains(string(out), `"value":"ivat-`) {
		t.Fatalf("the banner's commands: %v\n%s", err, out)
	}

	// A deactivation by the command line counts on the server's next request.
	cli(t, bin, "client", "deactivate", clientID, "--data-dir", data, "--env", "test")
	if status, _ := call(t, "GET", srv.test+"/measures", key, ""); status != 401 {
		t.Fatalf("deactivated key: %d", status)
	}

	if err := srv.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, srv.out)
	}
	logs := srv.out.String()
	if !strings.Contains(logs, `"msg":"stopped"`) {
		t.Fatalf("no orderly stop:\n%s", logs)
	}
	for _, secret := range []string{key, prodKey, tokenValue, "e2e-person"} {
		if strings.Contains(logs, secret) {
			t.Errorf("the server log holds %q", secret)
		}
	}

	// The data survives a restart.
	srv = startServer(t, bin, data)
	_, key2 := createClient(t, bin, data, "test", "again")
	if status, _ := call(t, "GET", srv.test+"/measures/"+kept, key2, ""); status != 404 {
		t.Fatalf("another client reads the measure: %d", status)
	}
	if status, body := call(t, "GET", srv.prod+"/measures", prodKey, ""); status != 200 || !strings.Contains(string(body), `"total":0`) {
		t.Fatalf("production after restart: %d %s", status, body)
	}
	cli(t, bin, "client", "list", "--data-dir", data, "--env", "test")
	if err := srv.stop(t, syscall.SIGINT); err != nil {
		t.Fatalf("exit after SIGINT: %v", err)
	}
}

// TestKillLosesNoAnsweredWrite kills the server with SIGKILL in the middle
// of a burst of writes, restarts it, and reads back every write that had
// been answered 2xx.
func TestKillLosesNoAnsweredWrite(t *testing.T) {
	bin := buildBinary(t)
	data := t.TempDir()
	srv := startServer(t, bin, data)
	// A client for each writer, so that the burst and the reads that
	// check it stay under each key's rate limit (whose buckets outlive
	// the restart); a read the limit refuses all the same waits and
	// tries again.
	keys := make([]string, 8)
	for i := range keys {
		_, keys[i] = createClient(t, bin, data, "production", fmt.Sprint("burst", i))
	}
	type write struct{ key, kind, id string }
	var (
		mu       sync.Mutex // protects answered
		answered []write
		wg       sync.WaitGroup
	)
	ctx, cancel := context.WithCancel(context.Background())
	fast := &http.Client{Timeout: 5 * time.Second}
	for w := range 8 {
		wg.Go(func() {
			key := keys[w%len(keys)]
			for i := 0; ctx.Err() == nil; i++ {
				path, body, kind := "/measures", `{"tags":["burst"]}`, "measure"
				if i%10 == 0 {
					path, body, kind = "/access-tokens", `{"permissions":[{"name":"measurement.scan"}],"duration":"1h"}`, "token"
				}
				req, _ := http.NewRequestWithContext(ctx, "POST", srv.prod+path, strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+key)
				resp, err := fast.Do(req)
				if err != nil {
					continue // not answered: the server is gone or going
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode == 201 {
					var v struct{ ID string }
					if json.Unmarshal(b, &v) == nil {
						mu.Lock()
						answered = append(answered, write{key, kind, v.ID})
						mu.Unlock()
					}
				}
			}
		})
	}
	// Kill once enough writes were answered to make losing one likely,
	// however long a busy machine takes to answer them.
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		n := len(answered)
		mu.Unlock()
		if n >= 500 {
			break
		}
	}
	srv.stop(t, syscall.SIGKILL) // while the writers are still writing
	time.Sleep(100 * time.Millisecond)
	cancel()
	wg.Wait()
	if len(answered) < 500 {
		t.Fatalf("only %d writes answered before the kill", len(answered))
	}

	srv = startServer(t, bin, data)
	defer srv.stop(t, syscall.SIGTERM)
	lost := 0
	for _, w := range answered {
		method, path := "GET", "/measures/"+w.id
		if w.kind == "token" {
			method, path = "DELETE", "/access-tokens/"+w.id // 200 only if stored
		}
		status, _ := call(t, method, srv.prod+path, w.key, "")
		for tries := 0; status == http.StatusTooManyRequests && tries < 30; tries++ {
			time.Sleep(time.Second)
			status, _ = call(t, method, srv.prod+path, w.key, "")
		}
		if status != 200 {
			lost++
		}
	}
	if lost > 0 {
		t.Fatalf("%d of %d answered writes lost", lost, len(answered))
	}
	t.Logf("%d answered writes, all read back after SIGKILL", len(answered))
}

// TestServedRoutesAreDocumented checks the API as serve wires it, mounted
// routes included, against the OpenAPI document.
func TestServedRoutesAreDocumented(t *testing.T) {
	for _, dev := range []bool{false, true} {
		_, api := servedAPI(t, dev)
		diffs, err := api.Undocumented()
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range diffs {
			t.Errorf("dev=%v: %s", dev, d)
		}
	}
}

// TestServeRecoversThenRuns: the media folders a crash left behind are
// gone once the server has started, however recent: alone on its SQLite
// folder, no other instance can be uploading them (among instances of a
// PostgreSQL database only those older than the run limit go); and a
// measurement runs over HTTP.
func TestServeRecoversThenRuns(t *testing.T) {
	bin := buildBinary(t)
	data := t.TempDir()
	media := filepath.Join(data, "test", "media")
	orphan := filepath.Join(media, "0f8e0b52-3c8c-4f4e-9a67-8b7f3f1d2a10")
	young := filepath.Join(media, "1f8e0b52-3c8c-4f4e-9a67-8b7f3f1d2a10")
	for _, dir := range []string{orphan, young} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "video"), []byte("half an upload"), 0o600)
	}
	old := time.Now().Add(-2 * time.Hour)
	os.Chtimes(orphan, old, old)
	srv := startServer(t, bin, data, "--run-limit", "1h")
	if _, err := os.Stat(orphan); !os.IsNotExist(err) {
		t.Fatalf("orphan media after start-up: %v\n%s", err, srv.out)
	}
	if _, err := os.Stat(young); !os.IsNotExist(err) {
		t.Fatalf("recent orphan media after start-up: %v", err)
	}
	_, key := createClient(t, bin, data, "test", "acme")
	if !strings.Contains(srv.out.String(), `"measures":2`) {
		t.Errorf("the repair is not logged:\n%s", srv.out)
	}
	status, body := call(t, "POST", srv.test+"/measures/cppg/signal", key, contactSignal())
	if status != http.StatusCreated || !strings.Contains(string(body), `"hr":{"value":{"mean":75`) {
		t.Fatalf("run: %d %s", status, body)
	}
	if err := srv.stop(t, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
}

// contactSignal is the body of a contact signal run: 12 s of a 75 bpm
// pulse at 100 Hz.
func contactSignal() string {
	ts, values := make([]string, 1200), make([]string, 1200)
	for i := range ts {
		ts[i] = fmt.Sprint(i * 10)
		values[i] = fmt.Sprintf("%.3f", 100+math.Sin(2*math.Pi*1.25*float64(i)/100))
	}
	return `{"signal":{"timestamps":[` + strings.Join(ts, ",") + `],"values":[` + strings.Join(values, ",") + `]},"tags":["e2e"]}`
}

func TestServeRefusesBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--workers", "0"}, "--workers and --uploads must be 1 or more and --queue 0 or more"},
		{[]string{"--queue", "-1"}, "--workers and --uploads must be 1 or more and --queue 0 or more"},
		{[]string{"--uploads", "0"}, "--workers and --uploads must be 1 or more and --queue 0 or more"},
		{[]string{"--run-limit", "0s"}, "--run-limit must be more than 0"},
		{[]string{"--database-url", "mysql://x/y"}, "--database-url: want postgres://"},
		{[]string{"--media-url", "/srv/media"}, "--media-url: want s3://"},
		{[]string{"--media-url", "s3:///media?endpoint=http://127.0.0.1:9000"}, "--media-url: want s3://"},
		{[]string{"--media-url", "s3://media?endpoint=127.0.0.1:9000"}, "--media-url: endpoint"},
		{[]string{"--media-url", "s3://media?bucket=x"}, `--media-url: unknown parameter "bucket"`},
	} {
		var stderr bytes.Buffer
		err := run(context.Background(), append([]string{"serve"}, tc.args...), io.Discard, &stderr)
		if err == nil || !strings.Contains(stderr.String()+err.Error(), tc.msg) {
			t.Errorf("%v: %v %q", tc.args, err, stderr.String())
		}
	}
}

// TestClientRefusesABadMediaURL: the client commands never open the media,
// but a media URL they are given is held to the rule serve holds it to,
// so that one set of variables is checked once for both.
func TestClientRefusesABadMediaURL(t *testing.T) {
	var stderr bytes.Buffer
	err := run(context.Background(), []string{"client", "list", "--env", "test", "--data-dir", t.TempDir(), "--media-url", "s3:///media?endpoint=http://127.0.0.1:9000"}, io.Discard, &stderr)
	if err == nil || !strings.Contains(stderr.String()+err.Error(), "--media-url: want s3://") {
		t.Fatalf("%v %q", err, stderr.String())
	}
}

// TestSweepEndsARunAKillLeft: a run in progress when its server is killed
// is ended by the next server on the folder as it starts, with
// PROCESSOR_FAIL, well before the run limit: on SQLite the server is alone
// (it holds the folder), so every run left started is a crash's.
func TestSweepEndsARunAKillLeft(t *testing.T) {
	bin := buildBinary(t)
	data := t.TempDir()
	_, key := createClient(t, bin, data, "test", "acme")
	srv := startServer(t, bin, data, "--run-limit", "5s")
	status, body := call(t, "POST", srv.test+"/measures", key, `{}`)
	if status != http.StatusCreated {
		t.Fatalf("create: %d %s", status, body)
	}
	id := field(t, body, "id")
	// A video upload that never finishes: its run has started.
	pr, pw := io.Pipe()
	defer pw.Close()
	req, _ := http.NewRequest("POST", srv.test+"/measures/"+id+"/rppg/video", pr)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "multipart/form-data; boundary=b")
	go func() {
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	io.WriteString(pw, "--b\r\nContent-Disposition: form-data; name=\"video\"; filename=\"v.mp4\"\r\nContent-Type: video/mp4\r\n\r\n")
	started := func() string {
		_, body := call(t, "GET", srv.test+"/measures/"+id, key, "")
		return field(t, body, "status")
	}
	for deadline := time.Now().Add(10 * time.Second); started() != "started"; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the run did not start:\n%s", srv.out)
		}
	}
	srv.stop(t, syscall.SIGKILL)

	srv = startServer(t, bin, data, "--run-limit", "1h")
	defer srv.stop(t, syscall.SIGTERM)
	var m struct {
		Status    string
		Variables map[string]struct{ Error string }
		Signal    any
	}
	_, body = call(t, "GET", srv.test+"/measures/"+id, key, "")
	if json.Unmarshal(body, &m); m.Status != "ended" || len(m.Variables) == 0 || m.Signal != nil {
		t.Fatalf("swept measure: %+v", m)
	}
	for name, v := range m.Variables {
		if v.Error != "PROCESSOR_FAIL" {
			t.Errorf("%s: %q, want PROCESSOR_FAIL", name, v.Error)
		}
	}
	if !strings.Contains(srv.out.String(), "ended runs of an instance that is gone") {
		t.Errorf("the sweep is not logged:\n%s", srv.out)
	}
}

// TestOneServerPerDataFolder: a second server on the data folder of a
// running one is refused at start and says why; once the first stops, the
// folder serves again.
func TestOneServerPerDataFolder(t *testing.T) {
	bin := buildBinary(t)
	data := t.TempDir()
	first := startServer(t, bin, data)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a second server would serve on
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "serve", "--addr", "127.0.0.1:0", "--test-addr", "127.0.0.1:0", "--data-dir", data).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "another pulsewire serve is using") {
		t.Fatalf("a second server on the folder: %v\n%s", err, out)
	}
	if err := first.stop(t, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	second := startServer(t, bin, data)
	second.stop(t, syscall.SIGTERM)
}

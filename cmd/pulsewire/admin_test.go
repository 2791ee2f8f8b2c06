package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// adminURL waits for the admin listener's address in the server's log.
func adminURL(t *testing.T, srv *serverProc) string {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		sc := bufio.NewScanner(strings.NewReader(srv.out.String()))
		for sc.Scan() {
			var line struct{ Msg, Addr string }
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "admin listening" {
				return "http://" + line.Addr
			}
		}
	}
	t.Fatalf("no admin listener:\n%s", srv.out)
	return ""
}

// cppgSignal is the JSON body of a contact-sensor signal run: a 75 bpm
// pulse sampled at 100 Hz for 12 s, with extra members (inputs) after it.
func cppgSignal(extra string) string {
	ts, values := make([]string, 1200), make([]string, 1200)
	for i := range ts {
		ts[i] = fmt.Sprint(i * 10)
		values[i] = fmt.Sprintf("%.3f", 100+math.Sin(2*math.Pi*1.25*float64(i)/100))
	}
	return `{"signal":{"timestamps":[` + strings.Join(ts, ",") + `],"values":[` + strings.Join(values, ",") + `]}` + extra + `}`
}

// A label of a series must hold one of these, never anything a client
// sent: an id, a key, a token, a tag, a person's data.
var allowedLabel = map[string]*regexp.Regexp{
	"env":       regexp.MustCompile(`^(production|test)$`),
	"method":    regexp.MustCompile(`^(GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS|other)$`),
	"route":     regexp.MustCompile(`^((/[a-z-]+|/:[a-zA-Z]+|/openapi\.json)+|\(no route\))$`),
	"status":    regexp.MustCompile(`^[1-5][0-9][0-9]$`),
	"source":    regexp.MustCompile(`^[a-z_]+$`),
	"outcome":   regexp.MustCompile(`^[a-z_]+$`),
	"cause":     regexp.MustCompile(`^[a-z_]+$`),
	"chain":     regexp.MustCompile(`^(scan|realtime)$`),
	"transport": regexp.MustCompile(`^(websocket|webrtc)$`),
	"le":        regexp.MustCompile(`^([0-9.e+-]+|\+Inf)$`),
}

var (
	sampleLine = regexp.MustCompile(`^(pulsewire_[a-z_]+)(?:\{(.*)\})? [0-9.e+-]+$`)
	labelPair  = regexp.MustCompile(`([a-z_]+)="((?:[^"\\]|\\.)*)",?`)
)

// TestAdminListener: with --admin-addr the metrics and the health of both
// environments are served on a listener of their own; after a workload
// full of ids, keys, tokens, tags and person data, no label holds any of
// them, and every label is one of a fixed set of values.
func TestAdminListener(t *testing.T) {
	bin := buildBinary(t)
	data := t.TempDir()
	srv := startServer(t, bin, data, "--admin-addr", "127.0.0.1:0", "--session-idle-timeout", "1s")
	admin := adminURL(t, srv)
	clientID, key := createClient(t, bin, data, "test", "acme-admin-test")
	secrets := []string{clientID, key, "acme-admin-test"}

	for _, base := range []string{srv.prod, srv.test, admin} {
		if status, body := call(t, "GET", base+"/healthz", "", ""); status != 200 || string(body) != "{\"status\":\"ok\"}\n" {
			t.Errorf("%s/healthz: %d %s", base, status, body)
		}
		if status, body := call(t, "GET", base+"/readyz", "", ""); status != 200 || !strings.Contains(string(body), `"status":"ready"`) {
			t.Errorf("%s/readyz: %d %s", base, status, body)
		}
	}
	if _, body := call(t, "GET", admin+"/readyz", "", ""); !strings.Contains(string(body), `"production.sessions":"ok"`) {
		t.Errorf("admin readyz: %s", body)
	}
	if status, _ := call(t, "GET", srv.test+"/metrics", "", ""); status != 404 {
		t.Errorf("metrics on the API listener: %d", status)
	}

	// The workload.
	status, body := call(t, "POST", srv.test+"/access-tokens", key, `{"description":"kiosk of jane","permissions":[{"name":"measurement.scan","maxSessions":1}],"duration":"10m"}`)
	if status != 201 {
		t.Fatalf("mint: %d %s", status, body)
	}
	token, tokenID := field(t, body, "value"), field(t, body, "id")
	status, body = call(t, "POST", srv.test+"/measures/cppg/signal", key,
		cppgSignal(`,"userData":{"externalId":"jane.doe.4711","age":41,"weight":70,"height":170},"tags":["ward-7b","patient-jane"]`))
	if status != 201 {
		t.Fatalf("run: %d %s", status, body)
	}
	measure := field(t, body, "id")
	secrets = append(secrets, token, tokenID, measure, "jane", "4711", "ward-7b", "kiosk")
	call(t, "GET", srv.test+"/measures/"+measure, key, "")
	call(t, "GET", srv.test+"/external-users/jane.doe.4711", key, "")
	call(t, "GET", srv.test+"/measures/"+measure+"/no/such/route?tag=patient-jane", key, "")
	call(t, "GET", srv.test+"/measures", "pwk_test_jane-doe-guessed-key", "")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws := "ws" + strings.TrimPrefix(srv.test, "http") + "/sessions"
	for _, tok := range []string{tokenID, token, token} { // an id, then the value, then spent
		c, _, err := websocket.Dial(ctx, ws, nil)
		if err != nil {
			t.Fatal(err)
		}
		open, _ := json.Marshal(map[string]any{"type": "open", "token": tok, "chain": "scan", "measure": map[string]any{"tags": []string{"ward-7b"}}})
		c.Write(ctx, websocket.MessageText, open)
		c.Read(ctx)
		c.CloseNow()
	}

	var metrics string
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		resp, err := http.Get(admin + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		b := new(strings.Builder)
		bufio.NewReader(resp.Body).WriteTo(b)
		resp.Body.Close()
		metrics = b.String()
		// The scan whose connection went away is given up once idle.
		if strings.Contains(metrics, `pulsewire_runs_total{env="test",outcome="abandoned",source="scan_session"} 1`) || time.Now().After(deadline) {
			break
		}
	}
	for _, want := range []string{
		`pulsewire_runs_total{env="test",outcome="ended",source="cppg_signal"} 1`,
		`pulsewire_refusals_total{cause="unknown_token",env="test"} 1`,
		`pulsewire_refusals_total{cause="spent",env="test"} 1`,
		`pulsewire_http_request_duration_seconds_count{env="test",method="GET",route="/measures/:id",status="200"} 1`,
		// GET /metrics on the API listener, and the path of no route.
		`pulsewire_http_request_duration_seconds_count{env="test",method="GET",route="(no route)",status="404"} 2`,
		`pulsewire_runs_total{env="test",outcome="abandoned",source="scan_session"} 1`,
		`pulsewire_analysis_workers `,
		`go_goroutines `,
		`process_resident_memory_bytes `,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("no %s in\n%s", want, metrics)
		}
	}
	// Secrets are looked for in the names, labels and help texts, not in
	// the sample values: a number (a memory size, a sum of seconds) can
	// hold the digits of one by chance ("4711" failed a run so).
	var text strings.Builder
	for _, line := range strings.Split(metrics, "\n") {
		if i := strings.LastIndexByte(line, ' '); i > 0 && !strings.HasPrefix(line, "#") {
			line = line[:i]
		}
		text.WriteString(line + "\n")
	}
	for _, s := range secrets {
		if strings.Contains(text.String(), s) {
			t.Errorf("the metrics hold %q", s)
		}
	}
	series := 0
	for _, line := range strings.Split(metrics, "\n") {
		if !strings.HasPrefix(line, "pulsewire_") {
			continue
		}
		m := sampleLine.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("unreadable sample %q", line)
			continue
		}
		series++
		for _, p := range labelPair.FindAllStringSubmatch(m[2], -1) {
			if re := allowedLabel[p[1]]; re == nil || !re.MatchString(p[2]) {
				t.Errorf("label %s=%q of %s", p[1], p[2], m[1])
			}
		}
	}
	if series < 20 {
		t.Fatalf("only %d series read:\n%s", series, metrics)
	}
	if err := srv.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("stop: %v\n%s", err, srv.out)
	}
}

// TestAdminOffByDefault: no admin listener without --admin-addr.
func TestAdminOffByDefault(t *testing.T) {
	bin := buildBinary(t)
	srv := startServer(t, bin, t.TempDir())
	if strings.Contains(srv.out.String(), "admin listening") {
		t.Fatalf("an admin listener by default:\n%s", srv.out)
	}
	if status, _ := call(t, "GET", srv.prod+"/metrics", "", ""); status != 404 {
		t.Fatalf("metrics on the API: %d", status)
	}
}

func TestAdminAddress(t *testing.T) {
	for in, want := range map[string]string{
		":9090":          "127.0.0.1:9090",
		"127.0.0.1:9090": "127.0.0.1:9090",
		"[::1]:9090":     "[::1]:9090",
		"0.0.0.0:9090":   "0.0.0.0:9090",
	} {
		if got, err := adminAddress(in); err != nil || got != want {
			t.Errorf("%q: %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := adminAddress("9090"); err == nil {
		t.Error("a port without a colon is taken")
	}
}

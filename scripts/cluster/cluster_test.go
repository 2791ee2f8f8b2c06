package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/minio/minio-go/v7"
	"github.com/pulsewire/pulsewire/storage/storagetest"
)

// TestCluster runs three instances on one PostgreSQL database and one
// object store behind HAProxy, and checks that the service keeps every
// promise it makes on one box: what is counted is counted for the cluster,
// a revocation or a deactivation counts on every instance at once, a
// session resumes through the load balancer whichever instance it reaches,
// media live in the object store, and a SIGKILL of an instance during a
// burst loses no answered write and leaves no measure started.
func TestCluster(t *testing.T) {
	if _, err := exec.LookPath("haproxy"); err != nil {
		storagetest.Unavailable(t, "HAProxy", err)
	}
	bin, err := buildBinary(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	c, err := startCluster(ctx, clusterOptions{instances: 3, bin: bin, runLimit: 4 * time.Second})
	if err != nil {
		storagetest.Unavailable(t, "the cluster's servers", err)
	}
	defer func() {
		if t.Failed() {
			for i, in := range c.instances {
				t.Logf("instance %d log:\n%s", i, in.out)
			}
		}
		c.stop()
	}()
	client := func(t *testing.T, flags ...string) (id, key string) {
		t.Helper()
		id, key, err := c.createClient("test", t.Name(), flags...)
		if err != nil {
			t.Fatal(err)
		}
		return id, key
	}

	t.Run("token minting limit holds for the cluster", func(t *testing.T) {
		_, key := client(t)
		codes := concurrently(25, func(int) int {
			code, _ := c.call(t, "POST", c.test+"/access-tokens", key, tokenRequest("measurement.scan", 1))
			return code
		})
		if codes[201] != 20 || codes[429] != 5 {
			t.Fatalf("answers %v, want 20 created and 5 refused (20 a minute per key)", codes)
		}
	})

	t.Run("a maxSessions=1 token opens one session in the cluster", func(t *testing.T) {
		_, key := client(t)
		token := c.mint(t, key, "measurement.realtime", 1)
		opened := concurrently(9, func(int) int {
			conn, o, err := openSession(ctx, c.test, token)
			if err != nil {
				return 0
			}
			defer conn.CloseNow()
			send(ctx, conn, map[string]any{"type": "stop"})
			_ = o
			return 1
		})
		if opened[1] != 1 {
			t.Fatalf("%d sessions opened, want 1", opened[1])
		}
	})

	t.Run("monthly credits hold for the cluster", func(t *testing.T) {
		_, key := client(t, "--monthly-credits", "3")
		signal := contactSignal(20*time.Second, 50)
		outcomes := concurrently(8, func(int) int {
			code, body := c.call(t, "POST", c.test+"/measures/cppg/signal", key, signal)
			switch {
			case code != 201:
				return code
			case strings.Contains(body, `"hr":{"value":{"mean"`):
				return 1
			case strings.Contains(body, `"CREDIT_EXCEEDED"`):
				return 2
			}
			return -1
		})
		if outcomes[1] != 3 || outcomes[2] != 5 {
			t.Fatalf("outcomes %v, want 3 charged (1) and 5 without credit (2)", outcomes)
		}
	})

	t.Run("revocation and deactivation count on every instance", func(t *testing.T) {
		id, key := client(t)
		code, body := c.call(t, "POST", c.test+"/access-tokens", key, tokenRequest("measurement.scan", 0))
		if code != 201 {
			t.Fatalf("mint: %d %s", code, body)
		}
		var tok struct{ ID, Value string }
		json.Unmarshal([]byte(body), &tok)
		if code, _ := c.call(t, "DELETE", c.test+"/access-tokens/"+tok.ID, key, ""); code != 200 {
			t.Fatalf("revoke: %d", code)
		}
		for i, in := range c.instances {
			if _, _, err := openSession(ctx, "http://"+in.test, tok.Value); websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
				t.Fatalf("instance %d opened a session of a revoked token: %v", i, err)
			}
		}
		if _, err := c.cli("client", "deactivate", id, "--env", "test"); err != nil {
			t.Fatal(err)
		}
		for i, in := range c.instances {
			if code, _ := c.call(t, "GET", "http://"+in.test+"/measures", key, ""); code != 401 {
				t.Fatalf("instance %d answered %d to a deactivated client's key", i, code)
			}
		}
	})

	t.Run("media live in the object store and go with their measure", func(t *testing.T) {
		_, key := client(t)
		s3, err := c.s3.Client()
		if err != nil {
			t.Fatal(err)
		}
		objects := func(id string) int {
			n := 0
			for o := range s3.ListObjects(ctx, c.s3.Bucket, minio.ListObjectsOptions{Prefix: "pulsewire/test/" + id + "/", Recursive: true}) {
				if o.Err == nil {
					n++
				}
			}
			return n
		}
		run := func() string {
			code, body := c.call(t, "POST", c.test+"/measures/cppg/signal", key, contactSignal(20*time.Second, 50))
			if code != 201 {
				t.Fatalf("run: %d %s", code, body)
			}
			var m struct{ ID string }
			json.Unmarshal([]byte(body), &m)
			if objects(m.ID) == 0 {
				t.Fatalf("no object of measure %s in the bucket", m.ID)
			}
			return m.ID
		}
		id := run()
		if code, _ := c.call(t, "DELETE", c.test+"/measures/"+id, key, ""); code != 200 {
			t.Fatalf("delete: %d", code)
		}
		if n := objects(id); n != 0 {
			t.Fatalf("%d objects left after the delete", n)
		}
		for _, method := range []string{"GET", "DELETE"} {
			if code, _ := c.call(t, method, c.test+"/measures/"+id, key, ""); code != 404 {
				t.Fatalf("%s after the delete: %d", method, code)
			}
		}
		// A delete cut off between its two steps: the media are gone, the
		// record is not. Issued again, it completes.
		id = run()
		for o := range s3.ListObjects(ctx, c.s3.Bucket, minio.ListObjectsOptions{Prefix: "pulsewire/test/" + id + "/", Recursive: true}) {
			if err := s3.RemoveObject(ctx, c.s3.Bucket, o.Key, minio.RemoveObjectOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if code, _ := c.call(t, "DELETE", c.test+"/measures/"+id, key, ""); code != 200 {
			t.Fatalf("delete of an interrupted deletion: %d", code)
		}
		if code, _ := c.call(t, "GET", c.test+"/measures/"+id, key, ""); code != 404 {
			t.Fatalf("after the second delete: %d", code)
		}
	})

	t.Run("a session resumes through any instance and the proxy", func(t *testing.T) {
		_, key := client(t)
		token := c.mint(t, key, "measurement.realtime", 1)
		conn, o, err := openSession(ctx, "http://"+c.instances[0].test, token)
		if err != nil {
			t.Fatal(err)
		}
		conn.CloseNow()
		ticket := o.ResumeTicket
		for _, base := range []string{"http://" + c.instances[1].test, "http://" + c.instances[2].test, c.test} {
			conn, r, err := resume(ctx, base, ticket)
			if err != nil {
				t.Fatalf("resume through %s: %v", base, err)
			}
			if r.SessionID != o.SessionID || !r.Resumed {
				t.Fatalf("resumed through %s: %+v, opened %+v", base, r, o)
			}
			ticket = r.ResumeTicket
			if base == c.test {
				send(ctx, conn, map[string]any{"type": "stop"})
				if _, err := readUntil(ctx, conn, "result"); err != nil {
					t.Fatalf("result through the proxy: %v", err)
				}
			}
			conn.Close(websocket.StatusNormalClosure, "")
		}
	})

	t.Run("SIGKILL of an instance during a burst loses no answered write", func(t *testing.T) {
		// A key for each writer: a key's requests are limited per minute
		// (the burst and the reads that check it stay under the limit), and
		// a read the limit refuses all the same waits and tries again.
		keys := make([]string, 8)
		for i := range keys {
			_, keys[i] = client(t)
		}
		// A session held by the instance that dies: its run must not stay
		// started.
		token := c.mint(t, keys[0], "measurement.realtime", 1)
		victim := 2
		conn, o, err := openSession(ctx, "http://"+c.instances[victim].test, token)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.CloseNow()

		type write struct{ key, kind, id string }
		var (
			mu       sync.Mutex // protects answered
			answered []write
			wg       sync.WaitGroup
		)
		stop := make(chan struct{})
		signal := contactSignal(20*time.Second, 50)
		fast := &http.Client{Timeout: 10 * time.Second}
		for w := range 8 {
			wg.Go(func() {
				key := keys[w%len(keys)]
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					path, body, kind := "/measures", `{"tags":["burst"]}`, "measure"
					switch i % 10 {
					case 3:
						path, body, kind = "/measures/cppg/signal", signal, "run"
					case 7:
						path, body, kind = "/access-tokens", tokenRequest("measurement.scan", 0), "token"
					}
					code, b, err := doRequest(fast, "POST", c.test+path, key, body)
					if err != nil || code != 201 {
						continue
					}
					var v struct{ ID string }
					if json.Unmarshal([]byte(b), &v) == nil {
						mu.Lock()
						answered = append(answered, write{key, kind, v.ID})
						mu.Unlock()
					}
				}
			})
		}
		// Kill after 1.5 s of the burst and 50 answered writes, however long
		// a busy machine takes to answer them.
		for start := time.Now(); time.Since(start) < 30*time.Second; time.Sleep(10 * time.Millisecond) {
			mu.Lock()
			n := len(answered)
			mu.Unlock()
			if n >= 50 && time.Since(start) >= 1500*time.Millisecond {
				break
			}
		}
		c.kill(victim)
		time.Sleep(2 * time.Second) // the proxy takes the dead instance out
		close(stop)
		wg.Wait()
		if len(answered) < 50 {
			t.Fatalf("only %d writes answered", len(answered))
		}
		lost := 0
		for _, w := range answered {
			method, path := "GET", "/measures/"+w.id
			if w.kind == "token" {
				method, path = "DELETE", "/access-tokens/"+w.id // 200 only if stored
			}
			code, body := c.call(t, method, c.test+path, w.key, "")
			for tries := 0; code == http.StatusTooManyRequests && tries < 30; tries++ {
				time.Sleep(time.Second)
				code, body = c.call(t, method, c.test+path, w.key, "")
			}
			if code != 200 || (w.kind == "run" && !strings.Contains(body, `"status":"ended"`)) {
				if lost < 5 {
					t.Logf("lost %s %s: %d %.300s", w.kind, w.id, code, body)
				}
				lost++
			}
		}
		if lost > 0 {
			t.Fatalf("%d of %d answered writes lost", lost, len(answered))
		}
		t.Logf("%d answered writes, all read back after the SIGKILL", len(answered))

		// The dead instance's session run ends, by another instance's
		// sweep, once the instance has been gone for the run limit.
		var m struct {
			Status    string
			Variables map[string]struct{ Error string }
		}
		for deadline := time.Now().Add(30 * time.Second); m.Status != "ended"; time.Sleep(200 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the dead instance's run is still %q", m.Status)
			}
			_, body := c.call(t, "GET", c.test+"/measures/"+o.MeasureID, keys[0], "")
			json.Unmarshal([]byte(body), &m)
		}
		for name, v := range m.Variables {
			if v.Error != "PROCESSOR_FAIL" {
				t.Errorf("%s of the swept run: %q", name, v.Error)
			}
		}
	})
}

// concurrently runs fn n times at once and counts the values it returned.
func concurrently(n int, fn func(i int) int) map[int]int {
	var (
		mu     sync.Mutex
		counts = map[int]int{}
		wg     sync.WaitGroup
	)
	for i := range n {
		wg.Go(func() {
			v := fn(i)
			mu.Lock()
			counts[v]++
			mu.Unlock()
		})
	}
	wg.Wait()
	return counts
}

func tokenRequest(permission string, maxSessions int) string {
	max := "null"
	if maxSessions > 0 {
		max = fmt.Sprint(maxSessions)
	}
	return fmt.Sprintf(`{"permissions":[{"name":%q,"maxSessions":%s}],"duration":"10m"}`, permission, max)
}

// call sends one request and returns its status and body.
func (c *cluster) call(t *testing.T, method, target, key, body string) (int, string) {
	t.Helper()
	code, b, err := doRequest(httpClient, method, target, key, body)
	if err != nil {
		t.Fatal(err)
	}
	return code, b
}

func doRequest(hc *http.Client, method, target, key, body string) (int, string, error) {
	req, err := http.NewRequest(method, target, strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// mint creates an access token through the proxy and returns its value.
func (c *cluster) mint(t *testing.T, key, permission string, maxSessions int) string {
	t.Helper()
	code, body := c.call(t, "POST", c.test+"/access-tokens", key, tokenRequest(permission, maxSessions))
	if code != 201 {
		t.Fatalf("mint: %d %s", code, body)
	}
	var tok struct{ Value string }
	json.Unmarshal([]byte(body), &tok)
	return tok.Value
}

// opened is the server's answer to an open or a resume.
type opened struct {
	SessionID, MeasureID, ResumeTicket string
	Resumed                            bool
}

// openSession opens a realtime session at base with token.
func openSession(ctx context.Context, base, token string) (*websocket.Conn, opened, error) {
	return handshake(ctx, base, map[string]any{"type": "open", "token": token, "chain": "realtime"})
}

// resume resumes the session of ticket at base.
func resume(ctx context.Context, base, ticket string) (*websocket.Conn, opened, error) {
	return handshake(ctx, base, map[string]any{"type": "resume", "ticket": ticket})
}

func handshake(ctx context.Context, base string, first map[string]any) (*websocket.Conn, opened, error) {
	var o opened
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(dctx, "ws"+strings.TrimPrefix(base, "http")+"/sessions", nil)
	if err != nil {
		return nil, o, err
	}
	send(ctx, conn, first)
	b, err := readUntil(ctx, conn, "opened")
	if err != nil {
		conn.CloseNow()
		return nil, o, err
	}
	return conn, o, json.Unmarshal(b, &o)
}

func send(ctx context.Context, conn *websocket.Conn, msg any) {
	b, _ := json.Marshal(msg)
	conn.Write(ctx, websocket.MessageText, b)
}

// readUntil reads messages until one of type typ, within 10 seconds.
func readUntil(ctx context.Context, conn *websocket.Conn, typ string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		_, b, err := conn.Read(ctx)
		if err != nil {
			return nil, err
		}
		var m struct{ Type string }
		if json.Unmarshal(b, &m) == nil && m.Type == typ {
			return b, nil
		}
	}
}

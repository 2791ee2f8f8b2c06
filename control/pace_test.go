package control

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pulsewire/pulsewire/dsp/media"
)

// pacedReader sends b in chunks, rate bytes per second.
type pacedReader struct {
	b     []byte
	rate  int
	chunk int
}

func (p *pacedReader) Read(buf []byte) (int, error) {
	if len(p.b) == 0 {
		return 0, io.EOF
	}
	n := copy(buf[:min(len(buf), p.chunk)], p.b)
	p.b = p.b[n:]
	time.Sleep(time.Duration(n) * time.Second / time.Duration(p.rate))
	return n, nil
}

// pacedServer is an API on a real server (deadlines need a connection)
// with one upload place and a pace of rate bytes per second after 300 ms.
func pacedServer(t *testing.T, rate float64) (*testEnv, string, *httptest.Server) {
	az := NewAnalyzer(1, 0, 1, media.VideoOptions{})
	az.pace = bodyPace{grace: 300 * time.Millisecond, rate: rate}
	e := newTestEnv(t, Production, withAnalyzer(az))
	_, key := e.client("acme")
	srv := httptest.NewServer(e.api)
	t.Cleanup(srv.Close)
	return e, key, srv
}

// TestBodyPace: a body that keeps the minimum pace is received whole, one
// that falls below it is cut off with 408 as soon as it does, and either
// way its upload place is free again.
func TestBodyPace(t *testing.T) {
	t.Parallel()
	_, key, srv := pacedServer(t, 64<<10)
	// About 300 KB, long enough for the pace, not the grace, to decide.
	body, _ := json.Marshal(pulseSignal("cppg", 1.2, 120))
	post := func(r io.Reader) int {
		req, _ := http.NewRequest("POST", srv.URL+"/measures/cppg/signal", r)
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		req.ContentLength = int64(len(body))
		res, err := srv.Client().Do(req)
		if err != nil {
			return 0 // the server cut the body off while it was sent
		}
		res.Body.Close()
		return res.StatusCode
	}
	for _, tc := range []struct {
		name   string
		rate   int // bytes per second
		status int
	}{
		{"four times the minimum pace", 256 << 10, http.StatusCreated},
		{"a quarter of it", 16 << 10, http.StatusRequestTimeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			status := post(&pacedReader{b: body, rate: tc.rate, chunk: 4 << 10})
			if status != tc.status && !(status == 0 && tc.status == http.StatusRequestTimeout) {
				t.Fatalf("%d after %v, want %d", status, time.Since(start), tc.status)
			}
			if status := post(bytes.NewReader(body)); status != http.StatusCreated {
				t.Fatalf("the next run: %d", status)
			}
		})
	}
}

// TestStalledBody: headers, a little of the body, then nothing: the body is
// cut off after the grace with 408, and its upload place frees.
func TestStalledBody(t *testing.T) {
	t.Parallel()
	e, key, srv := pacedServer(t, 16<<10)
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	fmt.Fprintf(c, "POST /measures/cppg/signal HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{\"signal\":{", key)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusRequestTimeout || time.Since(start) > 5*time.Second {
		t.Fatalf("%d after %v, want 408 soon after the grace", res.StatusCode, time.Since(start))
	}
	body, _ := json.Marshal(pulseSignal("cppg", 1.2, 12))
	if r := e.send("/measures/cppg/signal", key, "application/json", bytes.NewReader(body)); r.status != http.StatusCreated {
		t.Fatalf("the next run: %d", r.status)
	}
}

// TestBodyDeclaredNeverSent: a request that declares a body and sends
// none is answered all the same, and its connection closed, soon after
// its handler is done, whether the handler read the body or not: such
// requests cost no key and must not hold connections.
func TestBodyDeclaredNeverSent(t *testing.T) {
	t.Parallel()
	_, key, srv := pacedServer(t, 16<<10)
	for _, tc := range []struct {
		request string
		status  int
	}{
		{"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n", http.StatusOK},
		{"POST /measures HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n", http.StatusUnauthorized},
		{"POST /measures/rppg/video HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + key +
			"\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: 100000\r\n\r\n" +
			"--b\r\nContent-Disposition: form-data; name=\"clip\"; filename=\"a.mp4\"\r\n\r\n", http.StatusBadRequest},
	} {
		t.Run(strings.Fields(tc.request)[1], func(t *testing.T) {
			t.Parallel()
			c, err := net.Dial("tcp", srv.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			start := time.Now()
			fmt.Fprint(c, tc.request)
			c.SetReadDeadline(time.Now().Add(3 * discardTimeout))
			r := bufio.NewReader(c)
			res, err := http.ReadResponse(r, nil)
			if err != nil {
				t.Fatalf("no answer after %v: %v", time.Since(start), err)
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode != tc.status {
				t.Fatalf("%d, want %d", res.StatusCode, tc.status)
			}
			if _, err := r.ReadByte(); err != io.EOF {
				t.Fatalf("the connection is still open after %v: %v", time.Since(start), err)
			}
			t.Logf("answered and closed after %v", time.Since(start).Round(time.Millisecond))
		})
	}
}

// TestBodyCutShort: a client that sends part of the body its
// Content-Length announces and half-closes its connection, still reading,
// is answered 400 (the body is cut short), not as a client gone away; no
// measure is stored.
func TestBodyCutShort(t *testing.T) {
	t.Parallel()
	e, key, srv := pacedServer(t, 16<<10)
	signal, _ := json.Marshal(pulseSignal("cppg", 1.2, 12))
	video, err := os.ReadFile(lavfi(t, "grey-1s.mp4", 1))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, route, contentType, body string }{
		{"a signal", "/measures/cppg/signal", "application/json", string(signal[:len(signal)/2])},
		{"a multipart upload", "/measures/rppg/video", "multipart/form-data; boundary=XX",
			"--XX\r\nContent-Disposition: form-data; name=\"video\"; filename=\"v.mp4\"\r\nContent-Type: video/mp4\r\n\r\n" + string(video[:len(video)/2])},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.Dial("tcp", srv.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n%s",
				tc.route, key, tc.contentType, 2*len(tc.body), tc.body)
			c.(*net.TCPConn).CloseWrite()
			c.SetReadDeadline(time.Now().Add(10 * time.Second))
			res, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "cut short") {
				t.Fatalf("%d %s, want 400: the body is cut short", res.StatusCode, b)
			}
			e.noTrace(key)
		})
	}
}

package session

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// dialFrom opens a WebSocket on /sessions from the loopback address src
// (any of 127.0.0.0/8), so that a test can play several sources. It
// returns the HTTP status of a refused upgrade.
func (e *testEnv) dialFrom(src string) (*websocket.Conn, int, error) {
	e.t.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
	client := &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, res, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(e.http.URL, "http")+"/sessions", &websocket.DialOptions{HTTPClient: client})
	if err != nil {
		status := 0
		if res != nil {
			status = res.StatusCode
		}
		return nil, status, err
	}
	e.t.Cleanup(func() { c.CloseNow() })
	return c, http.StatusSwitchingProtocols, nil
}

// TestPendingHandshakes: connections that have not said who they are are
// bounded per source address and on the server: at the bound the upgrade
// is refused with 503 and Retry-After, before anything is read, and a
// place frees as soon as a handshake is decided.
func TestPendingHandshakes(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, Config{})
	// One source up to its bound, then one past it.
	var first []*websocket.Conn
	for i := range maxPendingPerSource {
		c, status, err := e.dialFrom("127.0.0.1")
		if err != nil {
			t.Fatalf("handshake %d of the source's %d: %d %v", i+1, maxPendingPerSource, status, err)
		}
		first = append(first, c)
	}
	if _, status, _ := e.dialFrom("127.0.0.1"); status != http.StatusServiceUnavailable {
		t.Fatalf("one past the source's bound: %d, want 503", status)
	}
	// Other sources up to the server's bound, then one past it.
	sources := maxPendingHandshakes/maxPendingPerSource + 1
	for i := maxPendingPerSource; i < maxPendingHandshakes; i++ {
		src := fmt.Sprintf("127.0.0.%d", 2+i/maxPendingPerSource)
		if _, status, err := e.dialFrom(src); err != nil {
			t.Fatalf("handshake %d of the server's %d from %s: %d %v", i+1, maxPendingHandshakes, src, status, err)
		}
	}
	if _, status, _ := e.dialFrom(fmt.Sprintf("127.0.0.%d", 2+sources)); status != http.StatusServiceUnavailable {
		t.Fatalf("one past the server's bound: %d, want 503", status)
	}
	// A decided handshake gives its place back: the first source may
	// open a session again.
	first[0].CloseNow()
	token, _ := e.mint(scanOnce())
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, status, err := e.dialFrom("127.0.0.1")
		if err == nil {
			openSession(t, c, openMessage(token, Scan, nil))
			break
		}
		if status != http.StatusServiceUnavailable || time.Now().After(deadline) {
			t.Fatalf("after a place freed: %d %v", status, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestFirstMessageLimit: the first message may be as large as an open
// message can need and no larger; past it the connection is closed 1009
// before the rest is read.
func TestFirstMessageLimit(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, Config{})
	for _, tc := range []struct {
		name string
		size int
		code websocket.StatusCode
	}{
		{"at the limit", maxOpenMessageBytes, websocket.StatusPolicyViolation}, // read, and refused as no open message
		{"one byte past it", maxOpenMessageBytes + 1, websocket.StatusMessageTooBig},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := e.dial()
			msg := `{"type":"open","token":"` + strings.Repeat("x", tc.size-len(`{"type":"open","token":""}`)) + `"}`
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c.Write(ctx, websocket.MessageText, []byte(msg)) // may fail once the server has closed
			_, err := next(c, 10*time.Second)
			if code := websocket.CloseStatus(err); code != tc.code {
				t.Fatalf("%d bytes: %v, want close %d", len(msg), err, tc.code)
			}
		})
	}
}

// TestHandshakeMemory: the first messages being read hold at most their
// share of memory: a source that sends large unfinished first messages on
// many connections gets the later ones refused as busy (1013), and holds no
// more than its share meanwhile.
func TestHandshakeMemory(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, Config{})
	const conns = 8
	chunk := []byte(`{"type":"open","token":"` + strings.Repeat("x", maxOpenMessageBytes-64))
	closes := make(chan websocket.StatusCode, conns)
	for range conns {
		c, status, err := e.dialFrom("127.0.0.3")
		if err != nil {
			t.Fatalf("%d %v", status, err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		w, err := c.Writer(ctx, websocket.MessageText)
		if err == nil {
			_, err = w.Write(chunk) // the message never ends
		}
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			_, err := next(c, 2*handshakeTimeout)
			closes <- websocket.CloseStatus(err)
		}()
	}
	// Until the handshake timeout ends them all, the source never holds
	// more than its share.
	busy := 0
	for range conns {
		timeout := time.After(2 * handshakeTimeout)
	wait:
		for {
			if held := e.srv.pending.heldBy("127.0.0.3"); held > sourceMemory {
				t.Fatalf("the source holds %d bytes, over its share %d", held, sourceMemory)
			}
			select {
			case code := <-closes:
				if code == websocket.StatusTryAgainLater {
					busy++
				}
				break wait
			case <-timeout:
				t.Fatal("a handshake outlived its timeout")
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	if busy == 0 || busy == conns {
		t.Fatalf("%d of %d unfinished large first messages refused as busy; want some, not all", busy, conns)
	}
}

// heldBy is the memory the first messages of source src hold.
func (h *handshakes) heldBy(src string) int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	if load := h.bySource[src]; load != nil {
		return load.bytes
	}
	return 0
}

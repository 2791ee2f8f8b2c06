package session

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// wsPair is a WebSocket connection on loopback: the server's end and the
// client's.
func wsPair(t testing.TB) (server, client *websocket.Conn) {
	t.Helper()
	accepted := make(chan *websocket.Conn, 1)
	h := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
		if err != nil {
			t.Error(err)
			return
		}
		accepted <- c
		<-r.Context().Done()
	}))
	t.Cleanup(h.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(h.URL, "http"), &websocket.DialOptions{CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		t.Fatal(err)
	}
	server = <-accepted
	t.Cleanup(func() { client.CloseNow(); server.CloseNow() })
	return server, client
}

// TestReadPooled: messages of every size up to the read limit come whole
// into the pooled buffers, in order, whatever the buffer held before; one
// over the limit is refused, as Conn.Read refuses it.
func TestReadPooled(t *testing.T) {
	server, client := wsPair(t)
	const limit = 200 << 10
	server.SetReadLimit(limit)
	ctx := context.Background()
	sizes := []int{9, 100 << 10, 1, 40 << 10, limit, 33 << 10, 5}
	go func() {
		for i, n := range sizes {
			client.Write(ctx, websocket.MessageBinary, bytes.Repeat([]byte{byte(i + 1)}, n))
		}
		client.Write(ctx, websocket.MessageBinary, make([]byte, limit+1))
	}()
	for i, n := range sizes {
		typ, buf, err := readPooled(ctx, server)
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		if want := bytes.Repeat([]byte{byte(i + 1)}, n); typ != websocket.MessageBinary || !bytes.Equal(*buf, want) {
			t.Fatalf("message %d: %d bytes of type %v, want %d", i, len(*buf), typ, n)
		}
		messageBuffers.Put(buf)
	}
	if _, _, err := readPooled(ctx, server); err == nil || !strings.Contains(err.Error(), websocket.ErrMessageTooBig.Error()) {
		t.Fatalf("a message over the limit: %v", err)
	}
}

// BenchmarkReadFrame is reading one 20 KB frame from a WebSocket into a
// pooled buffer and giving the buffer back, as a session's reader and loop
// do, with the client's write of it on the same machine (its allocations
// count too).
func BenchmarkReadFrame(b *testing.B) {
	server, client := wsPair(b)
	server.SetReadLimit(DefaultMaxFrameBytes)
	ctx := context.Background()
	msg := make([]byte, 20<<10)
	next, errc := make(chan struct{}), make(chan error, 1)
	go func() {
		for range next {
			if err := client.Write(ctx, websocket.MessageBinary, msg); err != nil {
				errc <- err
				return
			}
		}
		errc <- nil
	}()
	b.ReportAllocs()
	for b.Loop() {
		next <- struct{}{}
		_, buf, err := readPooled(ctx, server)
		if err != nil {
			b.Fatal(err)
		}
		f := frame{jpeg: (*buf)[frameHeaderBytes:], buf: buf}
		f.release()
	}
	close(next)
	if err := <-errc; err != nil {
		b.Fatal(err)
	}
}

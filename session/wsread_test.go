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
	b.ReportAllocs()
	readEach(b, client, server, 20<<10, func(buf *[]byte) {
		f := frame{jpeg: (*buf)[frameHeaderBytes:], buf: buf}
		f.release()
	})
}

// readEach has from write one binary message of n bytes for every
// iteration of b and reads each from read into a pooled buffer, which
// it hands to done.
func readEach(b *testing.B, write, read *websocket.Conn, n int, done func(*[]byte)) {
	ctx := context.Background()
	msg := make([]byte, n)
	next, errc := make(chan struct{}), make(chan error, 1)
	go func() {
		for range next {
			if err := write.Write(ctx, websocket.MessageBinary, msg); err != nil {
				errc <- err
				return
			}
		}
		errc <- nil
	}()
	for b.Loop() {
		next <- struct{}{}
		_, buf, err := readPooled(ctx, read)
		if err != nil {
			b.Fatal(err)
		}
		done(buf)
	}
	close(next)
	if err := <-errc; err != nil {
		b.Fatal(err)
	}
}

// TestPipe: a relay passes every message whole and in order, whatever the
// size of the one its pooled buffer held before, then closes the far end
// with the status and reason the near end was closed with.
func TestPipe(t *testing.T) {
	in, sender := wsPair(t)
	receiver, out := wsPair(t)
	in.SetReadLimit(DefaultMaxFrameBytes)
	receiver.SetReadLimit(DefaultMaxFrameBytes)
	ctx := context.Background()
	sizes := []int{40 << 10, 3, 100 << 10, 0, 20 << 10, 1}
	typeOf := func(i int) websocket.MessageType {
		if i%2 == 1 {
			return websocket.MessageText
		}
		return websocket.MessageBinary
	}
	go func() {
		for i, n := range sizes {
			sender.Write(ctx, typeOf(i), bytes.Repeat([]byte{byte('a' + i)}, n))
		}
		sender.Close(4001, "done here")
	}()
	go pipe(ctx, in, out)
	for i, n := range sizes {
		typ, got, err := receiver.Read(ctx)
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		want := bytes.Repeat([]byte{byte('a' + i)}, n)
		if typ != typeOf(i) || !bytes.Equal(got, want) {
			t.Fatalf("message %d: %d bytes of type %v, want %d of type %v", i, len(got), typ, n, typeOf(i))
		}
	}
	_, _, err := receiver.Read(ctx)
	if websocket.CloseStatus(err) != 4001 || !strings.Contains(err.Error(), "done here") {
		t.Fatalf("after the last message: %v, want the close 4001 done here", err)
	}
}

// BenchmarkPipe is relaying one 40 KB frame from one WebSocket to another,
// as an instance does for a session another instance holds; the writes and
// reads at both ends count too.
func BenchmarkPipe(b *testing.B) {
	in, sender := wsPair(b)
	receiver, out := wsPair(b)
	in.SetReadLimit(DefaultMaxFrameBytes)
	receiver.SetReadLimit(DefaultMaxFrameBytes)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go pipe(ctx, in, out)
	b.ReportAllocs()
	readEach(b, sender, receiver, 40<<10, func(buf *[]byte) { messageBuffers.Put(buf) })
}

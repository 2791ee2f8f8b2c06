package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"

	"github.com/coder/websocket"
	"github.com/pulsewire/pulsewire/control"
)

// A session lives in the memory of the instance that opened it. Behind a
// load balancer, its later requests (a resume after a dropped connection, a
// WHIP DELETE) may reach any instance: one that does not hold the session
// finds, in the database, the instance that does (recorded when it opened
// the session) and hands the request on over that instance's own address.
// A resume's WebSocket is relayed message by message for the rest of its
// life; a DELETE is forwarded and its answer returned. The holder checks
// the ticket or the token itself. A request handed on once carries
// handedOnHeader and is never handed on again.

// handedOnHeader marks a request one instance handed on to another.
const handedOnHeader = "Pulsewire-Handed-On"

// heldElsewhere is the answer of a handshake whose session another
// instance holds.
type heldElsewhere struct {
	id      string // the session
	address string // host:port of the instance that holds it
}

func (h *heldElsewhere) Error() string {
	return fmt.Sprintf("session %s is held by the instance at %s", h.id, h.address)
}

// heldElsewhere returns the address of the instance holding session id,
// when another instance than this one does.
func (s *Server) heldElsewhere(ctx context.Context, id string) (string, bool) {
	in, err := s.svc.SessionHolder(ctx, id)
	if err != nil || in.ID == s.svc.Instance() {
		return "", false
	}
	return in.Address, true
}

// relay hands a resume on: it opens a WebSocket to the holder, sends it the
// client's first message, then copies messages both ways until either
// side closes, and closes the other with the same status. A holder that
// cannot be reached is a session that has ended: the resume is refused as
// any other.
func (s *Server) relay(ctx context.Context, client *websocket.Conn, h *heldElsewhere, first []byte, log *slog.Logger) {
	dctx, cancel := context.WithTimeout(ctx, handshakeTimeout)
	holder, _, err := websocket.Dial(dctx, "ws://"+h.address+"/sessions", &websocket.DialOptions{
		HTTPHeader:      http.Header{handedOnHeader: {"1"}},
		CompressionMode: websocket.CompressionDisabled,
	})
	cancel()
	if err != nil {
		log.Warn("session refused: its instance cannot be reached", "session", h.id, "instance", h.address, "err", err)
		client.Close(websocket.StatusPolicyViolation, "")
		return
	}
	defer holder.CloseNow()
	holder.SetReadLimit(s.cfg.MaxFrameBytes)
	if err := holder.Write(ctx, websocket.MessageText, first); err != nil {
		client.Close(websocket.StatusPolicyViolation, "")
		return
	}
	log.Info("session handed on", "session", h.id, "instance", h.address)
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan struct{})
	go func() {
		defer close(done)
		pipe(ctx, holder, client)
		stop()
	}()
	pipe(ctx, client, holder)
	stop()
	<-done
}

// pipe copies the messages of src to dst until src ends, then closes dst
// as src was closed: with its status and reason, or "going away" when the
// connection broke without one. Each message passes through a pooled
// buffer, as a local session's frames do, so a relayed session's frames
// take no new memory each.
func pipe(ctx context.Context, src, dst *websocket.Conn) {
	for {
		typ, buf, err := readPooled(ctx, src)
		if err != nil {
			var ce websocket.CloseError
			if errors.As(err, &ce) && ce.Code != websocket.StatusNoStatusRcvd && ce.Code != websocket.StatusAbnormalClosure {
				dst.Close(ce.Code, ce.Reason)
			} else {
				dst.Close(websocket.StatusGoingAway, "")
			}
			return
		}
		wctx, cancel := context.WithTimeout(ctx, writeTimeout)
		err = dst.Write(wctx, typ, *buf)
		cancel()
		messageBuffers.Put(buf) // Write has sent the message or failed
		if err != nil {
			src.Close(websocket.StatusGoingAway, "")
			return
		}
	}
}

// maxHandedOnAnswer bounds the body of a forwarded answer: a WHIP DELETE
// answers an empty body or an error object.
const maxHandedOnAnswer = 64 << 10

// forward hands an HTTP request on to the instance at address, with its
// credentials, and answers what that instance answers. An instance that
// cannot be reached holds nothing any more: NotFound.
func forward(w http.ResponseWriter, r *http.Request, address string) {
	target := "http://" + address + (&url.URL{Path: r.URL.Path}).EscapedPath()
	req, err := http.NewRequestWithContext(r.Context(), r.Method, target, nil)
	if err != nil {
		control.WriteError(w, r, err)
		return
	}
	for _, h := range []string{"Authorization", "X-Request-Id"} {
		if v := r.Header.Get(h); v != "" {
			req.Header.Set(h, v)
		}
	}
	req.Header.Set(handedOnHeader, "1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		control.RequestLogger(r.Context()).Warn("hand on: the instance cannot be reached", "instance", address, "err", err)
		control.WriteError(w, r, &control.Error{Code: control.NotFound})
		return
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		w.Header().Set("Content-Type", ct)
	}
	w.WriteHeader(resp.StatusCode)
	io.Copy(w, io.LimitReader(resp.Body, maxHandedOnAnswer))
}

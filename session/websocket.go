package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/pulsewire/pulsewire/control"
	"github.com/pulsewire/pulsewire/control/metrics"
)

// serveWebSocket is GET /sessions: the handshake, then one reader (this
// goroutine) feeding frames and commands to the session, and one writer
// (wsPeer.write) sending what the session pushes, until the connection
// ends. PROTOCOL.md describes the exchange.
func (s *Server) serveWebSocket(w http.ResponseWriter, r *http.Request) {
	log := control.RequestLogger(r.Context())
	hs, ok := s.pending.begin(r)
	if !ok {
		log.Info("session refused", "cause", errTooManyHandshakes.Error())
		s.countRefusal(errTooManyHandshakes)
		control.WriteError(w, r, &control.Error{Code: control.Unavailable, RetryAfter: handshakeTimeout})
		return
	}
	defer hs.end()
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		// Any page may embed the widget, and nothing ambient (no
		// cookie) authenticates this route: the token in the first
		// message does. So every origin is accepted.
		InsecureSkipVerify: true,
		// Frames are JPEG already; deflate would cost CPU for nothing.
		CompressionMode: websocket.CompressionDisabled,
	})
	if err != nil {
		log.Info("websocket upgrade failed", "err", err)
		return
	}
	defer c.CloseNow()
	// Until the client has said who it is, a message can be an open
	// message and no more.
	c.SetReadLimit(maxOpenMessageBytes)
	ctx := r.Context()

	sess, first, err := s.handshake(ctx, c, hs, r.Header.Get(handedOnHeader) == "")
	hs.end()
	var elsewhere *heldElsewhere
	if errors.As(err, &elsewhere) {
		// The relayed session's frames come through c.
		c.SetReadLimit(s.cfg.MaxFrameBytes)
		s.relay(ctx, c, elsewhere, first, log)
		return
	}
	if err != nil {
		code, reason := refusal(err)
		if code == websocket.StatusInternalError {
			log.Error("session handshake", "err", err)
		} else {
			log.Info("session refused", "cause", err.Error())
			s.countRefusal(err)
		}
		c.Close(code, reason)
		return
	}
	c.SetReadLimit(s.cfg.MaxFrameBytes)
	p := &wsPeer{conn: c, log: sess.log, out: make(chan []byte, outboundQueue), done: make(chan struct{})}
	go p.write()
	sess.do(command{kind: attach, peer: p})
	s.read(ctx, c, sess, p)
	p.close(websocket.StatusNormalClosure, "")
	sess.do(command{kind: detach, peer: p})
	<-p.done
}

// handshake reads the first message, with the memory hs allows it, and
// opens or resumes the session it asks for; it returns that message too,
// for a resume handed on to another instance (mayHandOn).
func (s *Server) handshake(ctx context.Context, c *websocket.Conn, hs *handshake, mayHandOn bool) (*session, []byte, error) {
	// A context deadline on Read would drop the connection without a
	// close frame; a refusal must look like every other one.
	timer := time.AfterFunc(handshakeTimeout, func() { c.Close(websocket.StatusPolicyViolation, "") })
	typ, data, err := readMessage(ctx, c, hs)
	switch {
	case errors.Is(err, errHandshakeMemory):
		timer.Stop()
		return nil, nil, fmt.Errorf("%w: %w", errBusy, err)
	case errors.Is(err, errFirstMessageSize), errors.Is(err, websocket.ErrMessageTooBig):
		timer.Stop()
		return nil, nil, errFirstMessageSize
	}
	if !timer.Stop() {
		err = errors.Join(err, errors.New("no first message in time"))
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%w: no first message: %w", errRefused, err)
	}
	if typ != websocket.MessageText {
		return nil, nil, fmt.Errorf("%w: the first message is binary", errRefused)
	}
	m, err := parseClientMessage(data)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: first message: %w", errRefused, err)
	}
	var sess *session
	switch m.Type {
	case typeOpen:
		sess, err = s.open(ctx, opening{token: m.Token, chain: m.Chain, measure: m.Measure, measureID: m.MeasureID, transport: metrics.TransportWebSocket})
	case typeResume:
		sess, err = s.resume(ctx, m.Ticket, mayHandOn)
	default:
		err = fmt.Errorf("%w: the first message is a %s message", errRefused, m.Type)
	}
	return sess, data, err
}

// readMessage reads the next message of c into memory hs reserves.
func readMessage(ctx context.Context, c *websocket.Conn, hs *handshake) (websocket.MessageType, []byte, error) {
	typ, r, err := c.Reader(ctx)
	if err != nil {
		return 0, nil, err
	}
	data, err := hs.read(r)
	return typ, data, err
}

// refusal is the close status and reason of a failed handshake: the same
// for every cause the client must not tell apart.
func refusal(err error) (websocket.StatusCode, string) {
	switch {
	case errors.Is(err, errRefused):
		return websocket.StatusPolicyViolation, ""
	case errors.Is(err, errBusy):
		return websocket.StatusTryAgainLater, "busy"
	case errors.Is(err, errClosing):
		return websocket.StatusGoingAway, "shutting down"
	case errors.Is(err, errFirstMessageSize):
		return websocket.StatusMessageTooBig, ""
	}
	return websocket.StatusInternalError, ""
}

// messageBuffers holds the buffers Server.read reads messages into, each
// grown to the largest message it has held (at most the read limit, and
// kept only as long as the pool keeps it, until a garbage collection or
// two finds it unused). A frame's buffer goes with the frame to the
// session, whose loop gives it back (frame.release) once the picture is
// decoded or ignored, or offer once the frame is dropped; any other
// message's comes back as soon as it is parsed, and a relayed message's
// (pipe) once it is written on. So reading frames takes no new memory once
// the pool holds a buffer for each frame in flight.
var messageBuffers = sync.Pool{New: func() any {
	b := make([]byte, 0, 32<<10) // a 640x480 webcam JPEG is some 20 to 60 KB
	return &b
}}

// release gives a frame's buffer back to messageBuffers: the frame's
// picture is not to be read after it.
func (f *frame) release() {
	if f.buf != nil {
		messageBuffers.Put(f.buf)
		f.buf, f.jpeg = nil, nil
	}
}

// readPooled reads the next message of c into a buffer of
// messageBuffers, as Conn.Read does into a new one, and with the same read
// limit.
func readPooled(ctx context.Context, c *websocket.Conn) (websocket.MessageType, *[]byte, error) {
	typ, r, err := c.Reader(ctx)
	if err != nil {
		return 0, nil, err
	}
	buf := messageBuffers.Get().(*[]byte)
	if err := readAllInto(r, buf); err != nil {
		messageBuffers.Put(buf)
		return 0, nil, err
	}
	return typ, buf, nil
}

// readAllInto reads r to its end into *buf, from its start, growing it as
// io.ReadAll grows its own.
func readAllInto(r io.Reader, buf *[]byte) error {
	b := (*buf)[:0]
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			*buf = b
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}

// read passes the connection's messages to the session until the
// connection ends or breaks the protocol.
func (s *Server) read(ctx context.Context, c *websocket.Conn, sess *session, p *wsPeer) {
	for {
		typ, buf, err := readPooled(ctx, c)
		if err != nil {
			return
		}
		if typ == websocket.MessageBinary {
			us, picture, err := parseFrame(*buf)
			if err != nil {
				messageBuffers.Put(buf)
				p.close(websocket.StatusProtocolError, "a frame needs a capture time and a picture")
				return
			}
			sess.offer(frame{captureUs: us, jpeg: picture, buf: buf})
			continue
		}
		// What parseClientMessage returns is copied out of the buffer.
		m, err := parseClientMessage(*buf)
		messageBuffers.Put(buf)
		if err != nil {
			p.close(websocket.StatusProtocolError, "malformed message")
			return
		}
		cmd, ok := commandOf(m)
		if !ok {
			p.close(websocket.StatusProtocolError, "unexpected "+m.Type+" message")
			return
		}
		sess.do(cmd)
	}
}

// wsPeer sends a session's messages on a WebSocket: a bounded queue and one
// writer goroutine, every write under a timeout, so that a client that
// reads too slowly is closed rather than letting messages pile up.
type wsPeer struct {
	conn *websocket.Conn
	log  *slog.Logger
	done chan struct{} // closed when the writer has finished

	mu     sync.Mutex // protects the fields below
	out    chan []byte
	closed bool // out is closed
	code   websocket.StatusCode
	reason string
	slow   bool // closed for being too slow: nothing more to send
}

func (p *wsPeer) resumable() bool { return true }

func (p *wsPeer) send(msg []byte) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	select {
	case p.out <- msg:
		return true
	default:
		p.closeSlow()
		return false
	}
}

// closeSlow closes a client that does not keep up. p.mu is held.
func (p *wsPeer) closeSlow() {
	p.closed, p.slow = true, true
	close(p.out)
	// Close waits for the client's answer: not under the lock.
	go p.conn.Close(statusTooSlow, "too slow")
}

func (p *wsPeer) close(code websocket.StatusCode, reason string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed {
		p.closed, p.code, p.reason = true, code, reason
		close(p.out)
	}
}

// write sends the queued messages, then closes the connection with the
// status close asked for.
func (p *wsPeer) write() {
	defer close(p.done)
	for msg := range p.out {
		ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
		err := p.conn.Write(ctx, websocket.MessageText, msg)
		cancel()
		if err != nil {
			// A write past its timeout closes the connection.
			p.mu.Lock()
			if !p.closed {
				p.closeSlow()
			}
			p.mu.Unlock()
			for range p.out {
			}
			return
		}
	}
	p.mu.Lock()
	slow, code, reason := p.slow, p.code, p.reason
	p.mu.Unlock()
	if !slow {
		p.conn.Close(code, reason)
	}
}

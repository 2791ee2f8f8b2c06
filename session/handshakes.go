package session

import (
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/pulsewire/pulsewire/control"
)

// Bounds of the handshakes in progress: connections that have been
// accepted but have not yet said who they are. Nothing authenticates them
// yet, so what they may hold is bounded per source address, in all, and in
// time.
const (
	// maxPendingPerSource and maxPendingHandshakes bound the handshakes
	// in progress per source address and on the server; beyond, 503.
	// Honest handshakes take milliseconds: a widget sends its first
	// message as soon as it has connected.
	maxPendingPerSource  = 16
	maxPendingHandshakes = 64
	// handshakeTimeout is how long a new WebSocket may take to send its
	// first message, and a WHIP request its offer.
	handshakeTimeout = 5 * time.Second
	// maxOpenMessageBytes is the largest first message: an open message
	// whose measure inputs fill their bound (1000 tags of 255 characters
	// and the rest), plus the token and the members around them.
	maxOpenMessageBytes = control.MaxMeasureInputBytes + 4<<10
	// handshakeMemory is what the first messages being read may hold on
	// the server, sourceMemory what those of one source address may. An
	// honest first message is a few hundred bytes; a source that sends
	// messages at their size bound holds a few at once, and four such
	// sources are needed to exhaust the server's.
	handshakeMemory = 16 << 20
	sourceMemory    = handshakeMemory / 4
)

// errHandshakeMemory: the first messages in progress hold all the memory
// they may; the handshake is refused as busy.
var errHandshakeMemory = errors.New("handshake memory exhausted")

// errTooManyHandshakes: the source address or the server has as many
// handshakes in progress as it may; the request is refused with 503.
var errTooManyHandshakes = errors.New("too many handshakes in progress")

// errFirstMessageSize: the first message is larger than an open message
// can be; the connection is closed 1009.
var errFirstMessageSize = errors.New("the first message is over its size limit")

// handshakes counts the handshakes in progress of a server and the memory
// their first messages hold, in all and per source address (without its
// port).
type handshakes struct {
	mu       sync.Mutex // protects the fields below
	total    int
	bytes    int64
	bySource map[string]*sourceLoad
}

type sourceLoad struct {
	count int
	bytes int64
}

// handshake is one handshake in progress.
type handshake struct {
	h    *handshakes
	src  string
	held int64 // bytes reserved for its first message
	once sync.Once
}

// begin admits a handshake from r's source address, or refuses it when
// that address or the server is at its bound. end must be called once the
// handshake is decided.
func (h *handshakes) begin(r *http.Request) (*handshake, bool) {
	src, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		src = r.RemoteAddr
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.bySource == nil {
		h.bySource = map[string]*sourceLoad{}
	}
	load := h.bySource[src]
	if h.total >= maxPendingHandshakes || (load != nil && load.count >= maxPendingPerSource) {
		return nil, false
	}
	if load == nil {
		load = &sourceLoad{}
		h.bySource[src] = load
	}
	h.total++
	load.count++
	return &handshake{h: h, src: src}, true
}

// end gives back the handshake's place and memory; later calls do nothing.
func (hs *handshake) end() {
	hs.once.Do(func() {
		h := hs.h
		h.mu.Lock()
		defer h.mu.Unlock()
		load := h.bySource[hs.src]
		h.total--
		h.bytes -= hs.held
		load.count--
		load.bytes -= hs.held
		if load.count == 0 {
			delete(h.bySource, hs.src)
		}
	})
}

// reserve takes n more bytes of handshake memory; false when the server
// or the source has not that much left.
func (hs *handshake) reserve(n int64) bool {
	h := hs.h
	h.mu.Lock()
	defer h.mu.Unlock()
	load := h.bySource[hs.src]
	if h.bytes+n > handshakeMemory || load.bytes+n > sourceMemory {
		return false
	}
	h.bytes += n
	load.bytes += n
	hs.held += n
	return true
}

// read reads the first message from r into a buffer that grows only as
// bytes arrive, each growth reserved from the handshake memory (given back
// by end). r's own limit bounds the message.
func (hs *handshake) read(r io.Reader) ([]byte, error) {
	var buf []byte
	for {
		if len(buf) > maxOpenMessageBytes {
			return nil, errFirstMessageSize
		}
		if len(buf) == cap(buf) {
			grown := min(max(2*cap(buf), 512), maxOpenMessageBytes+1)
			if !hs.reserve(int64(grown - cap(buf))) {
				return nil, errHandshakeMemory
			}
			buf = append(make([]byte, 0, grown), buf...)
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		switch {
		case errors.Is(err, io.EOF):
			return buf, nil
		case err != nil:
			return nil, err
		}
	}
}

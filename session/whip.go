package session

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"time"

	"github.com/pulsewire/pulsewire/control"
	"github.com/pulsewire/pulsewire/control/metrics"
)

// maxOfferBytes bounds a WHIP request body: an SDP offer is a few KB, and
// the JSON form adds the measure inputs (up to 1000 tags).
const maxOfferBytes = 64 << 10

// whipRequest is a WHIP POST, read and checked: nothing in it needs the
// token.
type whipRequest struct {
	offer string
	open  opening
}

// errWHIPRequest is a WHIP request that is malformed (answered 400 before
// the token is looked at).
var errWHIPRequest = errors.New("malformed WHIP request")

// readWHIP reads POST /sessions/whip?chain=...[&measureId=...] with an
// application/sdp offer, or an application/json body {"offer", "measure" |
// "measureId"}.
func readWHIP(w http.ResponseWriter, r *http.Request) (whipRequest, error) {
	var req whipRequest
	q := r.URL.Query()
	chain, ok := parseChain(q.Get("chain"))
	if !ok || len(q["chain"]) != 1 {
		return req, errors.Join(errWHIPRequest, errors.New("chain must be scan or realtime"))
	}
	req.open = opening{chain: chain, measureID: q.Get("measureId")}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxOfferBytes))
	if err != nil {
		return req, err // *http.MaxBytesError, or a broken body
	}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch ct {
	case "application/sdp":
		req.offer = string(body)
	case "application/json":
		var b struct {
			Offer     string          `json:"offer"`
			Measure   json.RawMessage `json:"measure"`
			MeasureID string          `json:"measureId"`
		}
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		if err := control.DecodeOne(dec, &b); err != nil {
			return req, errors.Join(errWHIPRequest, errors.New("the body must be one JSON object {offer, measure | measureId}"))
		}
		if err := req.open.setMeasure(b.Measure, b.MeasureID); err != nil {
			return req, errors.Join(errWHIPRequest, err)
		}
		req.offer = b.Offer
	default:
		return req, errors.Join(errWHIPRequest, errors.New("the offer must be application/sdp or application/json"))
	}
	if err := checkOffer(req.offer); err != nil {
		return req, errors.Join(errWHIPRequest, err)
	}
	return req, nil
}

// serveWHIP is POST /sessions/whip: an SDP offer in, a session opened like
// a WebSocket one, the SDP answer out (201, Location for the DELETE).
// Every refusal has an empty body: 401 for any cause the client must not
// tell apart (the token, the measure), 503 with Retry-After for a busy or
// closing server, 400 for a malformed request and 413 for one too large.
func (s *Server) serveWHIP(w http.ResponseWriter, r *http.Request) {
	log := control.RequestLogger(r.Context())
	hs, ok := s.pending.begin(r)
	if !ok {
		log.Info("session refused", "cause", errTooManyHandshakes.Error())
		s.countRefusal(errTooManyHandshakes)
		unavailable(w, handshakeTimeout)
		return
	}
	defer hs.end()
	// The offer comes in one go; a body that trickles is cut off. (Not
	// every writer supports deadlines: httptest's does not.)
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(handshakeTimeout))
	req, err := readWHIP(w, r)
	_ = rc.SetReadDeadline(time.Time{})
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		return
	case err != nil:
		log.Info("whip request refused", "cause", err.Error())
		s.countRefusal(err)
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	req.open.token = control.Bearer(r.Header)
	req.open.transport = metrics.TransportWebRTC
	sess, err := s.open(r.Context(), req.open)
	switch {
	case errors.Is(err, errRefused):
		log.Info("session refused", "cause", err.Error())
		s.countRefusal(err)
		w.WriteHeader(http.StatusUnauthorized)
		return
	case errors.Is(err, errBusy), errors.Is(err, errClosing):
		log.Info("session refused", "cause", err.Error())
		s.countRefusal(err)
		unavailable(w, busyRetry)
		return
	case err != nil:
		log.Error("session handshake", "err", err)
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	answer, err := s.connect(sess, req.offer)
	if err != nil {
		// The offer passed checkOffer: what fails here is ours.
		sess.log.Error("answer the offer", "err", err)
		sess.do(command{kind: cancel})
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/sdp")
	w.Header().Set("Location", "/sessions/whip/"+sess.id)
	w.WriteHeader(http.StatusCreated)
	io.WriteString(w, answer)
}

// busyRetry is how long a WHIP client refused by a full or closing server
// is told to wait: the server cannot know when a place frees, and a few
// seconds keep a client that retries at once from hammering it.
const busyRetry = 5 * time.Second

// unavailable answers 503 with Retry-After (rounded as the API rounds it)
// and WHIP's empty body.
func unavailable(w http.ResponseWriter, wait time.Duration) {
	control.SetRetryAfter(w.Header(), wait)
	w.WriteHeader(http.StatusServiceUnavailable)
}

// deleteWHIP is DELETE /sessions/whip/{id}: the token that opened the
// session ends it (hangUp), on whichever instance holds it (handon.go). Any other token, and an unknown session, are
// 404. It answers once the session has ended, so a realtime measure is
// stored when the caller reads it, without polling (the result is also
// pushed on the data channel while it is open); 500 when it could not be
// stored, 404 when it was deleted meanwhile. If the caller gives up
// waiting, the session still ends.
func (s *Server) deleteWHIP(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	sess := s.session(id)
	if sess == nil && r.Header.Get(handedOnHeader) == "" {
		if address, ok := s.heldElsewhere(r.Context(), id); ok {
			forward(w, r, address)
			return
		}
	}
	hash := control.SecretHash(control.Bearer(r.Header))
	if sess == nil || subtle.ConstantTimeCompare(hash[:], sess.tokenHash[:]) != 1 {
		control.WriteError(w, r, &control.Error{Code: control.NotFound})
		return
	}
	sess.do(command{kind: hangUp})
	select {
	case <-sess.done:
	case <-r.Context().Done():
		return
	}
	switch {
	case sess.deleted:
		control.WriteError(w, r, &control.Error{Code: control.NotFound})
		return
	case sess.unstored:
		control.WriteError(w, r, &control.Error{Code: control.Internal})
		return
	}
	w.WriteHeader(http.StatusOK)
}

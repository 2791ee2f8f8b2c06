package session

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/pulsewire/pulsewire/control"
	"github.com/pulsewire/pulsewire/control/metrics"
	"github.com/pulsewire/pulsewire/dsp"
	"github.com/pulsewire/pulsewire/dsp/face"
	"github.com/pulsewire/pulsewire/dsp/media"
	"github.com/pulsewire/pulsewire/storage"
)

// A session is one measurement of one person: the frames of a capture, the
// analysis that follows them, and the measure its result is stored in. Its
// loop goroutine owns all of it; transports reach it through offer (frames)
// and its commands channel. A session outlives its connections: a
// WebSocket that drops may be replaced by a resume.
type session struct {
	id        string
	chain     Chain
	srv       *Server
	client    storage.Client
	tokenHash [sha256.Size]byte // of the token that opened it: a WHIP DELETE must present it
	turns     ticketTurns       // its resume tickets
	run       *control.Run
	opened    time.Time
	deadline  time.Time // the longest life
	log       *slog.Logger

	frames   chan frame   // bounded: a full queue drops frames
	commands chan command // from transports and the server
	done     chan struct{}
	// decoder is the loop's: it decodes every JPEG frame into the same
	// planes, which a picture holds until the next frame.
	decoder media.FrameDecoder

	received, dropped atomic.Int64
	// receivedUs is the capture time of the latest frame received (the
	// client's clock, WebSocket only): the client reads in the vitals how
	// far behind its sending the server is.
	receivedUs atomic.Uint64
	counted    *metrics.Session // the session in the metrics
	// unstored is set by the loop when a realtime result could not be
	// stored, deleted when the measure was deleted meanwhile; read only
	// after done is closed, which orders them.
	unstored, deleted bool
}

// frame is one captured picture: a JPEG with its capture clock
// (WebSocket), or a picture a transport has already observed (WebRTC:
// decoded by ffmpeg and seen by that transport's face tracker).
type frame struct {
	captureUs uint64 // WebSocket: client capture time, microseconds, any origin
	jpeg      []byte
	buf       *[]byte // WebSocket: the pooled buffer jpeg is in (release)
	observed  bool
	obs       face.Observation
	at        time.Duration // observed: time since the capture's first frame
}

// command is a request to a session's loop.
type command struct {
	kind commandKind
	peer peer            // attach, detach
	body json.RawMessage // calibration
}

type commandKind int

const (
	attach commandKind = iota
	detach
	stop
	calibrate
	cancel // give the session up: nothing is stored
	hangUp // end the session: as stop, then no wait for a calibration
)

// peer is the connection a session pushes its messages to: a WebSocket or a
// WebRTC data channel. Its methods never block.
type peer interface {
	// send queues a message; false when the peer cannot keep up, and
	// it is then being closed.
	send(msg []byte) bool
	// close sends what is queued, then ends the connection with code.
	close(code websocket.StatusCode, reason string)
	// resumable says whether a resume ticket means anything to it.
	resumable() bool
}

// Close codes of PROTOCOL.md section 6 beyond the standard ones.
const (
	statusIdle      websocket.StatusCode = 4000
	statusTooSlow   websocket.StatusCode = 4001
	statusReplaced  websocket.StatusCode = 4002
	statusTimeLimit websocket.StatusCode = 4003
	statusDeleted   websocket.StatusCode = 4004
)

// offer queues a frame for analysis, or drops it when the analysis lags:
// frames are never queued without bound. It never blocks.
func (s *session) offer(f frame) {
	s.received.Add(1)
	if !f.observed {
		s.receivedUs.Store(f.captureUs)
	}
	select {
	case s.frames <- f:
	default:
		s.dropped.Add(1)
		s.counted.FrameDropped()
		f.release()
	}
}

// do hands a command to the loop; it does not block once the loop has
// ended.
func (s *session) do(c command) {
	select {
	case s.commands <- c:
	case <-s.done:
	}
}

// loopState is what the loop of one session keeps.
type loopState struct {
	// stream holds the frames analysed; what it already counts and
	// orders, the loop does not keep again.
	stream   *dsp.Stream
	peer     peer
	firstUs  uint64        // capture clock of the first WebSocket frame
	last     time.Duration // capture time of the latest frame analysed
	lastWall time.Time     // arrival of the latest frame (or the opening)
	rejected int64
	reported bool // a bad frame has been reported
	attached int  // peers attached so far
	ended    bool // the result is stored
	endedAt  time.Time
	// recheck is the capture time at which a scan whose pulse was still
	// too faint at its duration is analysed again; 0 until then. answered
	// says that the last recheck answered (scanResult).
	recheck  time.Duration
	answered bool
}

// loop runs the session until it ends, then unregisters it.
func (s *session) loop() {
	defer s.srv.forget(s)
	st := &loopState{stream: dsp.NewStream(s.srv.cascade, s.run.Inputs()), lastWall: s.opened}
	defer s.report(st)
	tick := time.NewTicker(vitalsEvery)
	defer tick.Stop()
	for {
		select {
		case f := <-s.frames:
			st.lastWall = s.srv.now()
			taken := !st.ended && s.analyse(st, f)
			f.release() // decoded or ignored: its buffer can take another frame
			if taken && s.chain == Scan && st.covered() >= s.scanEnd(st) {
				if res, done := s.scanResult(st); done && !s.finish(st, res) {
					return
				}
			}
		case c := <-s.commands:
			if !s.handle(st, c) {
				return
			}
		case <-tick.C:
			if !s.tick(st) {
				return
			}
		case <-s.srv.closing:
			s.conclude(st)
			s.closePeer(st, websocket.StatusGoingAway, "shutting down")
			return
		}
	}
}

// analyse adds a frame to the capture. It returns whether the frame was
// taken: a frame not later than the previous one is ignored, and a picture
// that is no JPEG (or too large) is rejected.
func (s *session) analyse(st *loopState, f frame) bool {
	at := f.at
	if !f.observed {
		if st.stream.Frames() == 0 {
			st.firstUs = f.captureUs
		}
		if f.captureUs < st.firstUs || f.captureUs-st.firstUs > uint64(s.srv.cfg.MaxLength/time.Microsecond) {
			return false // before the capture began, or after it must have ended
		}
		at = time.Duration(f.captureUs-st.firstUs) * time.Microsecond
	}
	if st.stream.Stale(at) {
		return false
	}
	if f.observed {
		st.stream.Observe(f.obs, at)
	} else {
		img, err := s.decoder.Decode(f.jpeg, maxFramePixels)
		if err != nil {
			st.rejected++
			if !st.reported {
				st.reported = true
				s.push(st, errorMessage{"error", codeBadFrame, fmt.Sprintf("frame %d is not a JPEG picture of at most 1280x720 pixels (%v)", s.received.Load(), err)})
			}
			return false
		}
		st.stream.Push(img, at)
	}
	st.last = at
	return true
}

// covered is the capture time the frames cover: a frame stands for the
// time until the next, so the last one goes on for the mean interval
// between frames, and 900 frames at 30 a second cover 30 s (the last one
// is taken 29.967 s after the first). Half an interval more allows for a
// capture clock that rounds (to the millisecond), so the 900th frame
// covers 30 s however the client writes its times, and the 899th does not.
func (st *loopState) covered() time.Duration {
	n := st.stream.Frames()
	if n < 2 {
		return st.last
	}
	return st.last + 3*st.last/time.Duration(2*(n-1))
}

// handle runs a command. It returns false when the session is over.
func (s *session) handle(st *loopState, c command) bool {
	switch c.kind {
	case attach:
		if st.peer != nil && st.peer != c.peer {
			st.peer.close(statusReplaced, "replaced")
		}
		st.peer = c.peer
		st.attached++
		return s.sendOpened(st)
	case detach:
		if st.peer == c.peer {
			st.peer = nil
			if st.ended {
				return false // nobody left to calibrate
			}
		}
	case cancel:
		if !st.ended {
			s.abandon()
		}
		s.closePeer(st, websocket.StatusNormalClosure, "")
		return false
	case hangUp:
		s.conclude(st)
		s.closePeer(st, websocket.StatusNormalClosure, "")
		return false
	case stop:
		if !s.conclude(st) {
			s.closePeer(st, websocket.StatusNormalClosure, "")
			return false
		}
	case calibrate:
		return s.calibrate(st, c.body)
	}
	return true
}

// tick is the session's clock: vitals about every second, and the end of
// a session that is idle, too long, or done waiting for a calibration.
func (s *session) tick(st *loopState) bool {
	now := s.srv.now()
	switch {
	case st.ended:
		if now.Sub(st.endedAt) >= calibrationWindow {
			s.closePeer(st, websocket.StatusNormalClosure, "")
			return false
		}
	case s.chain == Scan && st.stream.Frames() > 0 && st.covered() >= s.srv.cfg.ScanDuration &&
		(now.Sub(st.lastWall) >= scanLinger || !now.Before(s.deadline)):
		// The scan waited for a face found late or for a faint pulse,
		// but the frames stopped (a client that counts the duration
		// from its first frame), or the session's longest life came.
		// Its capture covers the duration; it is measured as it is.
		s.log.Info("scan measured before its end", "frames", s.received.Load(), "faint_pulse", st.recheck > 0)
		return s.finish(st, st.stream.Result())
	case now.Sub(st.lastWall) >= s.srv.cfg.IdleTimeout:
		s.log.Info("session idle", "frames", s.received.Load())
		s.conclude(st)
		s.closePeer(st, statusIdle, "idle")
		return false
	case !now.Before(s.deadline):
		s.log.Info("session at its longest life", "frames", s.received.Load())
		if !s.conclude(st) {
			s.closePeer(st, statusTimeLimit, "time limit")
			return false
		}
	case st.peer != nil:
		v := st.stream.Vitals()
		m := newVitals(v, s.progress(st), s.received.Load(), s.dropped.Load(), st.rejected)
		m.ReceivedUs = s.receivedUs.Load()
		return s.push(st, m)
	}
	return true
}

// scanEnd is the capture time at which a scan has its measure: its
// duration after the face was first found, so that a person who sits down
// after the camera starts, or whose face is found only once the guidance
// has been followed, is measured for the whole duration. When no face is
// found within the duration, it ends then (and is refused as missing a
// face). A scan given more time for a faint pulse (scanResult) ends at its
// next recheck instead: so a scan's frames cover at most its duration plus
// its longest.
func (s *session) scanEnd(st *loopState) time.Duration {
	if st.recheck > 0 {
		return st.recheck
	}
	return s.scanStart(st) + s.srv.cfg.ScanDuration
}

// scanStart is the capture time a scan's duration counts from: the first
// frame with a face, or the first frame when no face came within the
// duration.
func (s *session) scanStart(st *loopState) time.Duration {
	if at, ok := st.stream.FaceSince(); ok && at < s.srv.cfg.ScanDuration {
		return at
	}
	return 0
}

// scanResult analyses a scan at its end, and says whether that is its
// result. A pulse still too faint to answer (CONFORMITY_MISSING_SIGNAL)
// is given more time, up to ScanMaxDuration from the scan's start: it is
// analysed again every scanRecheck, and ends when two analyses in a row
// answer, or at the longest as it is. A faint pulse near the decision's
// level crosses it at one length and not at the next, where noise grows
// less sure with length; one answer alone would take the one look in
// several where noise crossed it. Measured on real skin noise with a real
// fingertip pulse added at 0.8%, in pieces of 60 s (docs/sessions.md):
// 23 of 77 answered at 30 s, 31 so, all within 5 bpm, and of 819 pieces of
// the real noise alone, none more than the 3 that 30 s answered.
func (s *session) scanResult(st *loopState) (dsp.Result, bool) {
	res := st.stream.Result()
	answered := res.Summary.Conformity == ""
	switch {
	case st.covered() >= s.scanStart(st)+s.srv.cfg.ScanMaxDuration:
		return res, true
	case st.recheck == 0 && res.Summary.Conformity != dsp.ConformityMissingSignal:
		return res, true // answered, or refused for what more time would not mend
	case st.recheck > 0 && answered && st.answered:
		return res, true
	}
	st.answered = st.recheck > 0 && answered
	st.recheck = min(s.scanEnd(st)+scanRecheck, s.scanStart(st)+s.srv.cfg.ScanMaxDuration)
	return res, false
}

// progress is the vitals' progress: the share of a scan's duration
// measured since the face was found (0 before), of its longest once it is
// given more time, or of the realtime warm-up captured.
func (s *session) progress(st *loopState) float64 {
	if s.chain == Realtime {
		return share(st.last, warmUp)
	}
	if _, ok := st.stream.FaceSince(); !ok {
		return 0
	}
	d := s.srv.cfg.ScanDuration
	if st.recheck > 0 {
		d = s.srv.cfg.ScanMaxDuration
	}
	return share(st.covered()-s.scanStart(st), d)
}

// conclude ends the capture the way its chain ends when the client is
// done or gone: a realtime session stores and pushes its result, a scan
// that has not covered its duration is given up. It returns false when the
// session is over (a session with its result may wait for a calibration).
func (s *session) conclude(st *loopState) bool {
	switch {
	case st.ended:
		return true
	case s.chain == Realtime:
		return s.finish(st, st.stream.Result())
	}
	s.abandon()
	return false
}

// finish stores the result of the whole capture through the run and
// pushes it. It returns false when the session is over: the result could
// not be stored, or the client went away before it.
func (s *session) finish(st *loopState, res dsp.Result) bool {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	m, err := s.run.End(ctx, res)
	if control.ErrorCode(err) == control.NotFound {
		s.measureDeleted(st)
		return false
	}
	if err != nil {
		s.log.Error("store the session's measure", "err", err)
		s.unstored = true
		s.abandon()
		s.push(st, errorMessage{"error", codeInternal, "the measure could not be stored"})
		s.closePeer(st, websocket.StatusInternalError, "")
		return false
	}
	st.ended, st.endedAt = true, s.srv.now()
	s.log.Info("session measured", "measure", m.ID, "frames", s.received.Load(), "dropped", s.dropped.Load(),
		"seconds", res.Summary.Seconds, "conformity", string(res.Summary.Conformity), "faint_pulse", st.recheck > 0)
	if st.peer == nil {
		return false
	}
	return s.push(st, resultMessage{"result", control.NewMeasureView(m)})
}

// measureDeleted ends a session whose measure was deleted while it ran
// (its client's right at any time): nothing is stored, the client is told
// so, and the connection closes with 4004. It is no failure of the
// server.
func (s *session) measureDeleted(st *loopState) {
	s.log.Info("the session's measure was deleted", "measure", s.run.Measure().ID)
	s.deleted = true
	if !st.ended {
		s.abandon() // the media that remain, if any
	}
	s.push(st, errorMessage{"error", codeMeasureDeleted, "the measure was deleted: nothing more is stored"})
	s.closePeer(st, statusDeleted, "measure deleted")
}

// storeTimeout bounds storing or undoing a session's measure.
const storeTimeout = 30 * time.Second

// abandon undoes the run of a session that ends without a result: a new
// measure is removed, a two-step one returns to created.
func (s *session) abandon() {
	if err := s.run.Abandon(context.Background()); err != nil {
		s.log.Error("abandon the session's measure", "err", err)
	}
}

// calibrate stores a reference pressure for the measured person.
func (s *session) calibrate(st *loopState, body json.RawMessage) bool {
	if !st.ended {
		return s.push(st, errorMessage{"error", codeInvalid, "a calibration follows the result"})
	}
	ref, err := control.ParseReference(body)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		_, err = s.srv.svc.Calibrate(ctx, s.client, s.run.Measure().ID, ref)
		cancel()
	}
	var e *control.Error
	switch {
	case err == nil:
		s.push(st, typeOnly{"calibrated"})
		s.closePeer(st, websocket.StatusNormalClosure, "")
		return false
	case errors.As(err, &e) && e.Code == control.Invalid:
		return s.push(st, errorMessage{"error", codeInvalid, strings.Join(e.Messages, "; ")})
	case control.ErrorCode(err) == control.NotFound:
		s.measureDeleted(st)
		return false
	default:
		s.log.Error("calibrate", "err", err)
		return s.push(st, errorMessage{"error", codeInternal, "the calibration could not be stored"})
	}
}

// sendOpened tells a newly attached peer about the session.
func (s *session) sendOpened(st *loopState) bool {
	m := openedMessage{
		Type: "opened", SessionID: s.id, Chain: s.chain, MeasureID: s.run.Measure().ID,
		DurationMs: s.srv.cfg.MaxLength.Milliseconds(), MaxFrameBytes: s.srv.cfg.MaxFrameBytes,
		Resumed: st.attached > 1,
	}
	if s.chain == Scan {
		m.DurationMs = s.srv.cfg.ScanDuration.Milliseconds()
		m.MaxDurationMs = s.srv.cfg.ScanMaxDuration.Milliseconds()
	}
	if st.peer.resumable() {
		t, err := s.srv.tickets.issue(s.id, s.turns.next(s.srv.now()), s.deadline)
		if err != nil {
			s.log.Error("resume ticket", "err", err)
			s.abandon()
			s.closePeer(st, websocket.StatusInternalError, "")
			return false
		}
		m.ResumeTicket = t
	}
	return s.push(st, m)
}

// push sends a message to the attached peer, if any. It returns false
// when the peer could not keep up: it is then closed, and the session
// with it if it has its result (a realtime session goes on capturing
// until it is resumed or idle).
func (s *session) push(st *loopState, msg any) bool {
	if st.peer == nil {
		return true
	}
	b, err := json.Marshal(msg)
	if err != nil {
		s.log.Error("encode message", "err", err)
		return true
	}
	if !st.peer.send(b) {
		s.log.Info("client too slow", "frames", s.received.Load())
		st.peer = nil
		return !st.ended
	}
	return true
}

// closePeer ends the attached connection, if any, after what is queued.
func (s *session) closePeer(st *loopState, code websocket.StatusCode, reason string) {
	if st.peer != nil {
		st.peer.close(code, reason)
		st.peer = nil
	}
}

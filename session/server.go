package session

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/pulsewire/pulsewire/control"
	"github.com/pulsewire/pulsewire/control/metrics"
	"github.com/pulsewire/pulsewire/dsp/face"
	"github.com/pulsewire/pulsewire/storage"
)

// Server is the session server of one environment: it opens sessions for
// access tokens of that environment's clients, over WebSocket and WebRTC,
// and keeps them until they end.
type Server struct {
	svc      *control.Service
	cascade  *face.Cascade
	cfg      Config
	log      *slog.Logger
	now      func() time.Time
	capacity *Capacity
	tickets  *tickets
	webrtc   *webrtcAPI
	pending  handshakes

	mu       sync.Mutex // protects the fields below
	sessions map[string]*session
	closing  chan struct{} // closed by Shutdown
	loops    sync.WaitGroup
}

// Options configure a Server.
type Options struct {
	Config
	// Cascade is the face detector, loaded once (face.LoadCascade) and
	// shared by every session of the process.
	Cascade *face.Cascade
	// Logger receives the server's log: refusals with their causes,
	// sessions opened and ended. Never a token, a ticket or person data.
	Logger *slog.Logger
	// Capacity bounds the sessions open at once; share one between the
	// environments of a process, which share its CPU. Nil: a capacity of
	// Config.MaxSessions for this server alone.
	Capacity *Capacity
	// Now is the clock of the opening rate, the tickets and the session
	// timers; nil means time.Now.
	Now func() time.Time
	// ListenIP is the address of the listener the routes are served on;
	// WebRTC gathers its candidates accordingly (ice.go). Nil: loopback.
	ListenIP net.IP
}

// NewServer returns the session server of svc's environment.
func NewServer(svc *control.Service, opts Options) (*Server, error) {
	cfg := opts.Config.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if opts.Cascade == nil {
		return nil, errors.New("session: a face cascade is needed")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Capacity == nil {
		opts.Capacity = NewCapacity(cfg.MaxSessions)
	}
	s := &Server{
		svc:      svc,
		cascade:  opts.Cascade,
		cfg:      cfg,
		log:      opts.Logger.With("env", string(svc.Env())),
		now:      opts.Now,
		capacity: opts.Capacity,
		tickets:  newTickets(string(svc.Env()), opts.Now),
		sessions: map[string]*session{},
		closing:  make(chan struct{}),
	}
	var err error
	if s.webrtc, err = newWebRTCAPI(scopeOf(opts.ListenIP), cfg); err != nil {
		return nil, err
	}
	return s, nil
}

// Routes are the session server's routes, for the environment's listener.
func (s *Server) Routes() []control.Route {
	return []control.Route{
		{Method: http.MethodGet, Path: "/sessions", Handler: http.HandlerFunc(s.serveWebSocket)},
		{Method: http.MethodPost, Path: "/sessions/whip", Handler: whipCORS(http.HandlerFunc(s.serveWHIP))},
		{Method: http.MethodDelete, Path: "/sessions/whip/:id", Handler: whipCORS(http.HandlerFunc(s.deleteWHIP))},
		{Method: http.MethodOptions, Path: "/sessions/whip", Handler: whipCORS(nil), Internal: true},
		{Method: http.MethodOptions, Path: "/sessions/whip/:id", Handler: whipCORS(nil), Internal: true},
	}
}

// whipCORS lets the widget, imported by a page of another origin, call
// the WHIP routes: like the WebSocket, they accept any origin, since
// nothing ambient (no cookie) authenticates them, the token in the
// Authorization header does. A nil h answers the preflight.
func whipCORS(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Access-Control-Allow-Origin", "*")
		hd.Set("Access-Control-Expose-Headers", "Location, Retry-After")
		if h == nil {
			hd.Set("Access-Control-Allow-Methods", "POST, DELETE")
			hd.Set("Access-Control-Allow-Headers", "Authorization, Content-Type")
			hd.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// Capacity bounds the sessions open at once. A session holds a place from
// its handshake to its end.
type Capacity struct{ places chan struct{} }

// NewCapacity returns room for n sessions.
func NewCapacity(n int) *Capacity { return &Capacity{places: make(chan struct{}, n)} }

func (c *Capacity) take() bool {
	select {
	case c.places <- struct{}{}:
		return true
	default:
		return false
	}
}

func (c *Capacity) give() { <-c.places }

// Why a handshake fails. errRefused covers every cause the client must
// not tell apart (PROTOCOL.md section 1); errBusy and errClosing say
// nothing about the token.
var (
	errRefused = errors.New("refused")
	errBusy    = errors.New("at the session limit")
	errClosing = errors.New("shutting down")
	// errNoResume: a resume ticket that does not reattach (a refusal).
	errNoResume = errors.New("cannot resume")
)

// opening is what a handshake asks for, whatever its transport.
type opening struct {
	token     string
	chain     Chain
	measure   []byte // inputs of a new measure (JSON), nil for none
	measureID string // or the created measure to run
	transport metrics.Transport
}

// open opens a session: the inputs are checked, a place is taken, the
// token opens (and counts) a session if the account's opening rate allows
// it, and the measure is claimed; a session that does not open counts
// nothing. Every refusal wraps errRefused and its
// cause, for the log only.
func (s *Server) open(ctx context.Context, o opening) (*session, error) {
	var of control.RunOf
	if o.measureID != "" {
		of.MeasureID = o.measureID
	} else {
		n, err := control.ParseMeasureInput(o.measure, s.svc.Now())
		if err != nil {
			return nil, fmt.Errorf("%w: measure inputs: %w", errRefused, err)
		}
		of.New = n
	}
	select {
	case <-s.closing:
		return nil, errClosing
	default:
	}
	if !s.capacity.take() {
		return nil, errBusy
	}
	ts, err := s.svc.OpenSession(ctx, o.token, o.chain.permission(), openingLimits)
	if err != nil {
		s.capacity.give()
		if errors.Is(err, storage.ErrSessionRefused) {
			return nil, fmt.Errorf("%w: %w", errRefused, err)
		}
		return nil, err
	}
	// The token counted the session; one that does not open after all
	// gives it back, so that a refused measure or a failure of ours does
	// not spend a one-session token.
	unopened := func(err error) (*session, error) {
		if uerr := s.svc.UncountSession(context.WithoutCancel(ctx), ts); uerr != nil {
			err = errors.Join(err, uerr)
		}
		s.capacity.give()
		return nil, err
	}
	run, err := s.svc.StartRun(ctx, ts.Client, of, storage.KindRPPG)
	if err != nil {
		if code := control.ErrorCode(err); code == control.Invalid || code == control.NotFound {
			return unopened(fmt.Errorf("%w: token %s of client %s: measure: %w", errRefused, ts.TokenID, ts.Client.ID, err))
		}
		return unopened(fmt.Errorf("token %s of client %s: start the run: %w", ts.TokenID, ts.Client.ID, err))
	}
	// Recorded before it opens, so that any instance can hand on its
	// resumes and its WHIP DELETE from its first message on.
	id := uuid.NewString()
	if err := s.svc.HoldSession(ctx, id); err != nil {
		if aerr := run.Abandon(ctx); aerr != nil {
			err = errors.Join(err, aerr)
		}
		return unopened(fmt.Errorf("token %s of client %s: %w", ts.TokenID, ts.Client.ID, err))
	}
	now := s.now()
	sess := &session{
		id:        id,
		chain:     o.chain,
		srv:       s,
		client:    ts.Client,
		tokenHash: control.SecretHash(o.token),
		run:       run,
		opened:    now,
		deadline:  now.Add(s.cfg.MaxLength),
		frames:    make(chan frame, s.cfg.FrameQueue),
		commands:  make(chan command),
		done:      make(chan struct{}),
	}
	sess.log = s.log.With("session", sess.id, "client", ts.Client.ID, "chain", string(o.chain))
	s.mu.Lock()
	select {
	case <-s.closing:
		// Shutdown began meanwhile and may be waiting for the loops
		// already: this one must not start.
		s.mu.Unlock()
		sess.abandon()
		s.svc.ReleaseSession(context.WithoutCancel(ctx), id)
		return unopened(errClosing)
	default:
	}
	s.sessions[sess.id] = sess
	s.loops.Add(1)
	s.mu.Unlock()
	sess.counted = s.svc.Metrics().SessionOpened(string(s.svc.Env()), chainMetric(o.chain), o.transport)
	sess.log.Info("session opened", "token", ts.TokenID, "measure", run.Measure().ID,
		"opened", ts.Opened, "max_sessions", maxSessions(ts.MaxSessions))
	go sess.loop()
	return sess, nil
}

func maxSessions(n *int64) any {
	if n == nil {
		return "none"
	}
	return *n
}

// resume finds the session a ticket names: here, or, when another
// instance holds it and mayHandOn, on that instance (a *heldElsewhere
// error: hand the connection on). A ticket is checked by the instance that
// signed it, the one that holds its session.
func (s *Server) resume(ctx context.Context, ticket string, mayHandOn bool) (*session, error) {
	id, n, err := s.tickets.check(ticket)
	if err == nil {
		sess := s.session(id)
		if sess == nil {
			return nil, fmt.Errorf("%w: %w: session %s has ended", errRefused, errNoResume, id)
		}
		if !sess.turns.current(n, s.now(), s.cfg.IdleTimeout) {
			return nil, fmt.Errorf("%w: %w: session %s issued a ticket after it", errRefused, errNoResume, id)
		}
		// A ticket is a credential of the client, as its tokens are: it
		// stops working once the client is deactivated, or the token
		// that opened the session revoked. The session itself runs on to
		// its end, as an upload in flight does.
		switch c, err := s.svc.Client(ctx, sess.client.ID); {
		case err != nil:
			return nil, err
		case !c.Active:
			return nil, fmt.Errorf("%w: %w: %w: client %s", errRefused, errNoResume, storage.ErrClientDeactivated, c.ID)
		}
		switch revoked, err := s.svc.TokenRevoked(ctx, sess.tokenHash[:]); {
		case err != nil:
			return nil, err
		case revoked:
			return nil, fmt.Errorf("%w: %w: %w: session %s", errRefused, errNoResume, storage.ErrTokenRevoked, id)
		}
		return sess, nil
	}
	if mayHandOn {
		if named, serr := ticketSubject(ticket); serr == nil {
			if address, ok := s.heldElsewhere(ctx, named); ok {
				return nil, &heldElsewhere{id: named, address: address}
			}
		}
	}
	return nil, fmt.Errorf("%w: %w: %w", errRefused, errNoResume, err)
}

// session returns the open session id, or nil.
func (s *Server) session(id string) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions[id]
}

// forget unregisters a session whose loop has ended and frees its place.
func (s *Server) forget(sess *session) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	if err := s.svc.ReleaseSession(ctx, sess.id); err != nil {
		// Left behind, the record only sends a late resume here, where
		// it is refused; the instance's exit removes it.
		sess.log.Warn("release the session", "err", err)
	}
	cancel()
	s.mu.Lock()
	delete(s.sessions, sess.id)
	s.mu.Unlock()
	close(sess.done)
	s.capacity.give()
	s.loops.Done()
}

// Shutdown ends every session (a realtime one stores and pushes its
// result first, a scan in progress is given up) and closes their
// connections with 1001, then waits for them, or for ctx. New handshakes
// are refused from the first call on. Register it with
// http.Server.RegisterOnShutdown and call it again, to wait, before the
// database closes: http.Server.Shutdown does not wait for hijacked
// connections.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	select {
	case <-s.closing:
	default:
		close(s.closing)
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() {
		s.loops.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("sessions still ending: %w", ctx.Err())
	}
}

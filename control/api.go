package control

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"runtime/debug"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/gin-gonic/gin/render"
	"github.com/pulsewire/pulsewire/dsp/media"
	"github.com/pulsewire/pulsewire/storage"
)

func init() {
	// Gin's debug mode prints every route at start-up; the API logs
	// through slog instead.
	gin.SetMode(gin.ReleaseMode)
}

// Rate limits (docs/api.md, Limits): per API key, over all routes, and
// again for minting tokens.
const (
	requestsPerMinute = 300
	tokensPerMinute   = 20
)

// maxJSONBody bounds a JSON request body: room for 1000 tags of 255
// characters and the rest.
const maxJSONBody = 1 << 20

// API is the REST API of one environment (docs/api.md) as an http.Handler.
type API struct {
	svc         *Service
	log         *slog.Logger
	engine      *gin.Engine
	internal    map[string]bool // routeKey of each Internal mounted route
	analyzer    *Analyzer
	writable    func(context.Context) error // the database's readiness
	mediaReady  func(context.Context) error // the media store's
	extraChecks []Check
}

// Route is a route another part of the server mounts on an environment's
// listener beside the API, such as the session server's WebSocket. It gets
// the request id, the request log and panic recovery, but no API-key check:
// it authenticates its own way. Path uses Gin's syntax (/sessions/whip/:id);
// its parameters reach the handler as r.PathValue.
type Route struct {
	Method, Path string
	Handler      http.Handler
	// Internal routes (a demo page, the widget's files) are not part of
	// the public API, so the OpenAPI document need not describe them.
	Internal bool
}

// Options configure an API.
type Options struct {
	Logger *slog.Logger // nil: no logs
	Routes []Route      // mounted beside the API
	// Analyzer runs the measurements of the run routes; nil: one of this
	// API's own (NewAnalyzer(0, DefaultQueue, DefaultUploads, ...)). Each
	// environment has its own: they share nothing.
	Analyzer *Analyzer
	// Checks are conditions of readiness (GET /readyz) beyond the API's
	// own (database, ffmpeg, analysis), such as the session server's.
	Checks []Check
	// Servers are the base URLs GET /openapi.json names; nil keeps the
	// document's own (the default listeners).
	Servers []Server
}

// NewAPI returns the API of svc's environment.
func NewAPI(svc *Service, opts Options) *API {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Analyzer == nil {
		opts.Analyzer = NewAnalyzer(0, DefaultQueue, DefaultUploads, media.VideoOptions{})
	}
	a := &API{
		svc:      svc,
		log:      opts.Logger.With("env", string(svc.Env())),
		engine:   gin.New(),
		internal: map[string]bool{},
		analyzer: opts.Analyzer,
	}
	a.writable = cachedCheck(a.log, errNotWritable, svc.db.CheckWritable)
	a.mediaReady = cachedCheck(a.log, errNoMedia, svc.media.Check)
	a.extraChecks = opts.Checks
	e := a.engine
	// Match on the escaped path, so that an externalId may hold a slash
	// (%2F), then unescape parameters.
	e.UseRawPath, e.UnescapePathValues = true, true
	e.RedirectTrailingSlash, e.RedirectFixedPath = false, false
	// The metrics first, so that they see the status of a recovered
	// panic too; then recovery, so that it also covers the log; then the
	// request id and the log, so that every later step can log with the id.
	e.Use(a.countRequests, a.recoverPanics, a.logRequests)
	e.NoRoute(func(c *gin.Context) { a.fail(c, storage.ErrNotFound) })

	doc := openAPI
	if opts.Servers != nil {
		var err error
		if doc, err = withServers(openAPI, opts.Servers); err != nil {
			panic("control: " + err.Error()) // the document is embedded: a build error, not outside data
		}
	}
	e.GET("/openapi.json", func(c *gin.Context) { c.Data(http.StatusOK, "application/json", doc) })
	e.GET("/healthz", gin.WrapF(Healthz))
	e.GET("/readyz", gin.WrapF(Readyz(a)))
	for _, r := range opts.Routes {
		e.Handle(r.Method, r.Path, mounted(r.Handler))
		if r.Internal {
			a.internal[routeKey(r.Method, r.Path)] = true
		}
	}

	api := e.Group("", noStore, a.authenticate, a.limit(generalLimit))
	api.POST("/access-tokens", a.limit(mintLimit), a.handle(a.createToken))
	api.DELETE("/access-tokens/:id", a.handle(a.revokeToken))
	api.POST("/measures", a.handle(a.createMeasure))
	api.GET("/measures", a.handle(a.listMeasures(""))) // filters apply
	api.GET("/measures/rppg", a.handle(a.listMeasures(storage.KindRPPG)))
	api.GET("/measures/cppg", a.handle(a.listMeasures(storage.KindCPPG)))
	api.GET("/measures/:id", a.handle(a.getMeasure))
	api.GET("/measures/:id/rppg", a.handle(a.getMeasureOfKind(storage.KindRPPG)))
	api.GET("/measures/:id/cppg", a.handle(a.getMeasureOfKind(storage.KindCPPG)))
	api.DELETE("/measures/:id", a.handle(a.deleteMeasure))
	api.GET("/external-users/:externalId", a.handle(a.externalUser))
	a.runRoutes(api)
	a.webhookRoutes(api)
	return a
}

// discardTimeout bounds what net/http reads of a body the handler left
// unread (up to 256 KiB) after the handler returns and before it sends the
// answer: without a deadline, a client that declares a body and never sends
// it holds the connection, and withholds the answer, for ever.
const discardTimeout = 5 * time.Second

// ServeHTTP serves the API and the mounted routes. A request that declares
// a body gets a read deadline before any route sees it (routes that stream
// a body move it: readBody, pacedBody, WHIP), and another once its handler
// has returned.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength == 0 {
		a.engine.ServeHTTP(w, r)
		return
	}
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(bodyTimeout))
	a.engine.ServeHTTP(w, r)
	_ = rc.SetReadDeadline(time.Now().Add(discardTimeout)) // ErrHijacked after a WebSocket: nothing to do
}

// mounted adapts a mounted handler: Gin's path parameters become
// r.PathValue.
func mounted(h http.Handler) gin.HandlerFunc {
	return func(c *gin.Context) {
		for _, p := range c.Params {
			c.Request.SetPathValue(p.Key, p.Value)
		}
		h.ServeHTTP(c.Writer, c.Request)
	}
}

// clientKey keeps the authenticated client on a request's gin.Context.
const clientKey = "pulsewire.client"

// handle adapts a handler of an authenticated route, which returns its
// error for fail to answer.
func (a *API) handle(h func(c *gin.Context, client storage.Client) error) gin.HandlerFunc {
	return func(c *gin.Context) {
		client := c.MustGet(clientKey).(storage.Client)
		if err := h(c, client); err != nil {
			a.fail(c, err)
		}
	}
}

// authenticate admits a request with the API key of an active client of
// this environment, and answers 401 to anything else.
func (a *API) authenticate(c *gin.Context) {
	client, err := a.svc.Authenticate(c.Request.Context(), Bearer(c.Request.Header))
	if err != nil {
		a.fail(c, err)
		return
	}
	c.Set(clientKey, client)
	setLogAttrs(c, slog.String("client", client.ID))
	c.Next()
}

// limit spends one request of the caller's key under l, or answers 429
// with Retry-After.
func (a *API) limit(l requestLimit) gin.HandlerFunc {
	return func(c *gin.Context) {
		client := c.MustGet(clientKey).(storage.Client)
		if err := a.svc.spendRequest(c.Request.Context(), client, l); err != nil {
			a.fail(c, err)
			return
		}
		c.Next()
	}
}

// noStore marks the answers of the keyed routes as kept by no cache (a
// token's value, a webhook's secret, a person's data and results) and
// never read as another type than they say.
func noStore(c *gin.Context) {
	h := c.Writer.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
}

// bodyTimeout bounds the time a client may take to send a JSON body, so
// that a slow sender cannot hold a connection open.
const bodyTimeout = 30 * time.Second

// readBody reads a request body of at most limit bytes; a longer one is
// TooLarge.
func readBody(c *gin.Context, limit int64) ([]byte, error) {
	// Not every writer supports deadlines (httptest's does not); then
	// the server's own timeouts apply.
	_ = http.NewResponseController(c.Writer).SetReadDeadline(time.Now().Add(bodyTimeout))
	b, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, limit))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, &Error{Code: TooLarge}
	}
	if err != nil {
		return nil, invalidf("the body could not be read")
	}
	return b, nil
}

// requestID is what a client may send as X-Request-Id to follow its request
// in our logs; anything else is replaced by an id of ours.
var requestID = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

type logAttrsKey struct{}

// logRequests gives every request an id (X-Request-Id), a logger that
// carries it (RequestLogger), and one log line when it ends: method, route
// pattern, status, duration and client. The line never holds the path
// itself, the query, a header or a body: they may carry an externalId, a
// tag, a key or a token.
func (a *API) logRequests(c *gin.Context) {
	start := time.Now()
	id := c.GetHeader("X-Request-Id")
	if !requestID.MatchString(id) {
		b := make([]byte, 8)
		rand.Read(b)
		id = hex.EncodeToString(b)
	}
	c.Header("X-Request-Id", id)
	attrs := &[]slog.Attr{}
	log := a.log.With("request_id", id)
	ctx := context.WithValue(c.Request.Context(), loggerKey{}, log)
	c.Request = c.Request.WithContext(context.WithValue(ctx, logAttrsKey{}, attrs))
	c.Next()
	route := c.FullPath()
	if route == "" {
		route = "(no route)"
	}
	level := slog.LevelInfo
	switch status := c.Writer.Status(); {
	case status < 400 && a.internal[routeKey(c.Request.Method, route)]:
		// The pages' own files (widget, demo, reference): a page load
		// asks for a dozen, which would bury the lines that matter.
		level = slog.LevelDebug
	case status == http.StatusServiceUnavailable:
		level = slog.LevelWarn // a full run pool: the load, not a fault
	case status >= 500:
		level = slog.LevelError
	}
	log.LogAttrs(c.Request.Context(), level, "request", append([]slog.Attr{
		slog.String("method", c.Request.Method),
		slog.String("route", route),
		slog.Int("status", c.Writer.Status()),
		slog.Float64("took_ms", float64(time.Since(start).Microseconds())/1000),
	}, *attrs...)...)
}

// setLogAttrs adds attributes to the request's closing log line.
func setLogAttrs(c *gin.Context, attrs ...slog.Attr) {
	if p, ok := c.Request.Context().Value(logAttrsKey{}).(*[]slog.Attr); ok {
		*p = append(*p, attrs...)
	}
}

type loggerKey struct{}

// RequestLogger returns the logger of the request ctx belongs to, which
// tags every line with the request id, or a logger that drops everything
// outside a request. Mounted routes log through it.
func RequestLogger(ctx context.Context) *slog.Logger {
	if l, ok := ctx.Value(loggerKey{}).(*slog.Logger); ok {
		return l
	}
	return slog.New(slog.DiscardHandler)
}

// recoverPanics turns a panic in a handler into a 500 and a log line with
// the stack, and keeps the server serving.
func (a *API) recoverPanics(c *gin.Context) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			RequestLogger(c.Request.Context()).Error("panic", "value", v, "stack", string(debug.Stack()))
			if !c.Writer.Written() {
				a.fail(c, errors.New("panic"))
			}
			c.Abort()
		}
	}()
	c.Next()
}

// errorStatus maps each error code to its HTTP status: the one place where
// an error becomes an answer.
var errorStatus = map[Code]int{
	Invalid:      http.StatusBadRequest,
	Unauthorized: http.StatusUnauthorized,
	NotFound:     http.StatusNotFound,
	TooLarge:     http.StatusRequestEntityTooLarge,
	TooSlow:      http.StatusRequestTimeout,
	RateLimited:  http.StatusTooManyRequests,
	Unavailable:  http.StatusServiceUnavailable,
	Internal:     http.StatusInternalServerError,
	NoSpace:      http.StatusInsufficientStorage,
}

// Error bodies, in NestJS's shapes, which clients of such APIs already parse.
type (
	badRequestBody struct {
		StatusCode int      `json:"statusCode"`
		Message    []string `json:"message"`
		Error      string   `json:"error"`
	}
	notFoundBody struct {
		Message    string `json:"message"`
		StatusCode int    `json:"statusCode"`
	}
	statusBody struct {
		StatusCode int    `json:"statusCode"`
		Message    string `json:"message"`
	}
)

// fail answers err and ends the request.
func (a *API) fail(c *gin.Context, err error) {
	WriteError(c.Writer, c.Request, err)
	c.Abort()
}

// WriteError answers err with the status and body of its code (one
// table: errorStatus), Retry-After for the waits: the answer of every
// route, mounted ones included. Only the server's errors (Internal,
// NoSpace) are logged here, at ERROR with their cause; the others are the
// caller's and show in the request line's status.
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	code := ErrorCode(err)
	status := errorStatus[code]
	var e *Error
	errors.As(err, &e)
	var body any
	switch code {
	case Invalid:
		body = badRequestBody{status, e.Messages, "Bad Request"}
	case NotFound:
		body = notFoundBody{"Not Found", status}
	case RateLimited, Unavailable:
		SetRetryAfter(w.Header(), e.RetryAfter)
		body = statusBody{status, http.StatusText(status)}
	case Internal:
		RequestLogger(r.Context()).Error("internal error", "err", err)
		body = statusBody{status, "Internal server error"}
	case NoSpace:
		RequestLogger(r.Context()).Error("no space to store the upload", "err", err)
		body = statusBody{status, http.StatusText(status)}
	default: // Unauthorized, TooLarge, TooSlow
		body = statusBody{status, http.StatusText(status)}
	}
	// gin's renderer, so that a mounted route writes the very bytes the
	// API's own routes do.
	out := render.JSON{Data: body}
	out.WriteContentType(w)
	w.WriteHeader(status)
	out.Render(w)
}

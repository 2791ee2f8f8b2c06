package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/pulsewire/pulsewire/control"
	"github.com/pulsewire/pulsewire/control/metrics"
	"github.com/pulsewire/pulsewire/dsp/face"
	"github.com/pulsewire/pulsewire/dsp/media"
	"github.com/pulsewire/pulsewire/session"
	"github.com/pulsewire/pulsewire/storage"
)

// lockName is the file in a SQLite data folder that its server holds
// locked (lockDataDir), and a restore too.
const lockName = "serve.lock"

const serveUsage = `Usage: pulsewire serve [flags]

Serves the Production and Test APIs on two listeners until SIGINT or SIGTERM,
each with its own database and media under --data-dir (created when missing).
Every listener also serves the API reference at /docs, the OpenAPI document at
/openapi.json and the browser widget at /widget/pulsewire.js. With --dev it
serves the demo page at / as well (make run starts the server so).
Every flag can also be set by the environment variable shown.

Flags:
`

// serveConfig is what `pulsewire serve` is told, by flag or environment
// variable.
type serveConfig struct {
	store          storeConfig
	addr, testAddr string
	// advertise and testAdvertise are where the other instances reach
	// this one's listeners; empty: derived from addr and testAddr.
	advertise, testAdvertise string
	runLimit                 time.Duration
	timeZone                 string
	dev                      bool
	logLevel                 string
	logFormat                string
	shutdownTimeout          time.Duration
	workers, queue           int
	uploads                  int
	memoryLimitMiB           int64
	sessions                 session.Config
	adminAddr                string
	keepMedia                bool
	webhookAllowPrivate      bool
}

func serveFlags(stderr io.Writer) (*flag.FlagSet, *serveConfig) {
	cfg := &serveConfig{}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	storeFlags(fs, &cfg.store)
	fs.StringVar(&cfg.addr, "addr", "127.0.0.1:8080", "address of the Production API")
	fs.StringVar(&cfg.testAddr, "test-addr", "127.0.0.1:8081", "address of the Test API")
	fs.StringVar(&cfg.advertise, "advertise-addr", "", "host:port at which the other instances reach this one's Production listener, to hand on a session's requests (default: --addr, or this machine's host name and its port when --addr listens on every interface)")
	fs.StringVar(&cfg.testAdvertise, "test-advertise-addr", "", "as --advertise-addr, for the Test listener")
	fs.DurationVar(&cfg.runLimit, "run-limit", control.DefaultRunLimit, "longest a measurement run lasts; a run whose instance has been gone for longer is ended with PROCESSOR_FAIL, and media of no measure older than this are removed at start")
	fs.StringVar(&cfg.timeZone, "time-zone", "UTC", "IANA time zone whose calendar counts token days and dates of birth")
	fs.BoolVar(&cfg.dev, "dev", false, "development mode, never for production: serves the demo page at / and its token route POST /demo/access-tokens, "+
		"which mints access tokens without an API key; logs as text; prints a banner with the addresses and next steps")
	fs.StringVar(&cfg.logLevel, "log-level", "", "debug, info, warn or error (default info)")
	fs.StringVar(&cfg.logFormat, "log-format", "", "json or text (default json, text with --dev)")
	fs.DurationVar(&cfg.shutdownTimeout, "shutdown-timeout", 15*time.Second, "how long a stop waits for requests in flight")
	fs.IntVar(&cfg.workers, "workers", max(1, runtime.NumCPU()/2), "measurements of uploads analysed at once, in each environment (default half the CPUs: both environments together use them all)")
	fs.Int64Var(&cfg.memoryLimitMiB, "memory-limit-mib", defaultMemoryLimitMiB, "soft limit of the server's Go memory, in MiB: the collector works harder near it (0: none; GOMEMLIMIT, when set, wins)")
	fs.IntVar(&cfg.queue, "queue", control.DefaultQueue, "further received measurement runs that may wait for a worker, in each environment; beyond, 503 with Retry-After")
	fs.IntVar(&cfg.uploads, "uploads", control.DefaultUploads, "measurement run bodies received at once, in each environment; beyond, 503 with Retry-After")
	fs.DurationVar(&cfg.sessions.ScanDuration, "scan-duration", session.DefaultScanDuration, "capture time a scan session measures, from the first frame with a face")
	fs.DurationVar(&cfg.sessions.ScanMaxDuration, "scan-max-duration", 0, "longest a scan goes on, from the same frame, while its pulse is still too faint to answer: analysed again every 5 s, it ends when two analyses in a row answer (default twice --scan-duration; --scan-duration itself: never longer)")
	fs.DurationVar(&cfg.sessions.MaxLength, "session-max-length", session.DefaultMaxLength, "longest life of a session, at most 10m (the longest capture analysed)")
	fs.DurationVar(&cfg.sessions.IdleTimeout, "session-idle-timeout", session.DefaultIdleTimeout, "a session without frames for this long ends (a dropped connection may resume within it)")
	fs.Int64Var(&cfg.sessions.MaxFrameBytes, "max-frame-bytes", session.DefaultMaxFrameBytes, "largest WebSocket message of a session (a JPEG frame and its 8-byte header)")
	fs.IntVar(&cfg.sessions.MaxSessions, "max-sessions", session.DefaultMaxSessions, "sessions open at once, both environments together")
	fs.StringVar(&cfg.sessions.WebRTCPublicIP, "webrtc-public-ip", "", "IPv4 address WebRTC clients reach this machine at behind a 1:1 NAT, published instead of the local address (not for a loopback listener)")
	fs.BoolVar(&cfg.keepMedia, "keep-media", true, "keep each upload (video, images, captures, signal) as its measure's media until the measure is deleted; false analyses it from <data-dir>/<env>/scratch and removes it before the measure ends")
	fs.BoolVar(&cfg.webhookAllowPrivate, "webhook-allow-private", false, "let clients register webhook endpoints on loopback, private, link-local and other internal addresses, and post to them; off, such endpoints are refused so that no client can make the server call into its own network")
	fs.StringVar(&cfg.adminAddr, "admin-addr", "", "address of the admin listener: Prometheus metrics at /metrics, /healthz and /readyz; off when empty, loopback when the host is left out (:9090)")
	fs.Var(&cfg.sessions.WebRTCPorts, "webrtc-udp-ports", "UDP port range `min-max` WebRTC takes its ports from, e.g. 50000-50100, for a firewall to open (default any port)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), serveUsage)
		fs.PrintDefaults()
	}
	withEnvNames(fs)
	return fs, cfg
}

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, cfg := serveFlags(stderr)
	if err := parseFlags(fs, args, stdout); err != nil {
		return helpIsDone(err)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "serve takes no arguments, got %q\n", fs.Args())
		return errUsage
	}
	if cfg.workers < 1 || cfg.queue < 0 || cfg.uploads < 1 {
		fmt.Fprintf(stderr, "--workers and --uploads must be 1 or more and --queue 0 or more\n")
		return errUsage
	}
	if cfg.runLimit <= 0 {
		fmt.Fprintf(stderr, "--run-limit must be more than 0\n")
		return errUsage
	}
	if err := cfg.store.check(); err != nil {
		return err
	}
	log, err := newLogger(stderr, cfg)
	if err != nil {
		return err
	}
	setMemoryLimit(cfg.memoryLimitMiB)
	loc, err := time.LoadLocation(cfg.timeZone)
	if err != nil {
		return fmt.Errorf("--time-zone: %w", err)
	}
	if err := cfg.sessions.Validate(); err != nil {
		return fmt.Errorf("sessions: %w", err)
	}
	s := &server{cfg: cfg, log: log, loc: loc}
	defer s.close()
	if err := s.open(ctx); err != nil {
		return err
	}
	if cfg.dev {
		s.banner(stderr)
	}
	return s.serve(ctx)
}

// server runs both environments, each on its own listener with its own
// database and media folder.
type server struct {
	cfg     *serveConfig
	log     *slog.Logger
	loc     *time.Location
	envs    []*environment
	unlock  func()           // releases the data folder; nil when not locked (PostgreSQL)
	metrics *metrics.Metrics // nil without --admin-addr: nothing is counted
	admin   *adminListener   // nil without --admin-addr
}

// environment is one environment being served.
type environment struct {
	svc      *control.Service
	db       *storage.DB
	sessions *session.Server
	analyzer *control.Analyzer
	api      *control.API
	ln       net.Listener
	srv      *http.Server
	upkeep   control.Upkeep
}

func (s *server) open(ctx context.Context) error {
	if s.cfg.adminAddr != "" {
		s.metrics = metrics.New()
	}
	// The face detector is loaded once and shared by every session; the
	// sessions of both environments share the machine, and so one bound.
	cascade, err := face.LoadCascade()
	if err != nil {
		return err
	}
	capacity := session.NewCapacity(s.cfg.sessions.MaxSessions)
	// On SQLite this process is the only server of the databases.
	if s.cfg.store.databaseURL == "" {
		if s.unlock, err = lockDataDir(s.cfg.store.dataDir); err != nil {
			return err
		}
	}
	// One name for this process in both environments' databases.
	instance := uuid.NewString()
	dbWhere, mediaWhere := s.cfg.store.describe()
	s.log.Info("storage", "database", dbWhere, "media", mediaWhere, "instance", instance)
	for _, e := range []struct {
		env             control.Env
		addr, advertise string
	}{{control.Production, s.cfg.addr, s.cfg.advertise}, {control.Test, s.cfg.testAddr, s.cfg.testAdvertise}} {
		svcOpts, err := s.serviceOptions(e.env)
		if err != nil {
			return err
		}
		svc, db, err := openEnvironment(ctx, s.cfg.store, e.env, s.loc, instance, svcOpts...)
		if err != nil {
			return err
		}
		env := &environment{svc: svc, db: db}
		s.envs = append(s.envs, env)
		if env.ln, err = net.Listen("tcp", e.addr); err != nil {
			return fmt.Errorf("%s: %w", e.env, err)
		}
		env.upkeep = control.Upkeep{Address: advertised(e.advertise, env.ln.Addr()), RunLimit: s.cfg.runLimit, Alone: s.unlock != nil, Logger: s.log}
		// Before serving: recorded, so that the others can hand on to it,
		// and what a crash of an instance left is repaired.
		if err := svc.Join(ctx, env.upkeep); err != nil {
			return fmt.Errorf("%s: %w", e.env, err)
		}
		// WebRTC gathers where the listener listens: loopback stays on
		// loopback, 0.0.0.0 reaches the LAN.
		opts := session.Options{Config: s.cfg.sessions, Cascade: cascade, Logger: s.log, Capacity: capacity, ListenIP: env.ln.Addr().(*net.TCPAddr).IP}
		if env.sessions, err = session.NewServer(svc, opts); err != nil {
			return err
		}
		// Each environment has its own pool: a client of one can never
		// starve the other of places.
		env.analyzer = control.NewAnalyzer(s.cfg.workers, s.cfg.queue, s.cfg.uploads, media.VideoOptions{})
		if s.metrics != nil {
			env.analyzer.Instrument(s.metrics, e.env)
		}
		s.log.Info("listening", "env", string(e.env), "addr", env.ln.Addr().String())
	}
	// The APIs come once both listen: each one's OpenAPI document names
	// both listeners.
	servers := s.openAPIServers()
	for _, env := range s.envs {
		env.api = control.NewAPI(env.svc, control.Options{Logger: s.log, Routes: mountedRoutes(env.svc, env.sessions, s.cfg), Analyzer: env.analyzer,
			Servers: servers, Checks: []control.Check{{Name: "sessions", Err: env.sessions.Ready}}})
		env.srv = &http.Server{
			Handler:           env.api,
			ReadHeaderTimeout: 10 * time.Second,
			IdleTimeout:       2 * time.Minute,
			ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		}
		// Shutdown does not reach hijacked connections: the sessions
		// end theirs (serve waits for them).
		env.srv.RegisterOnShutdown(func() { env.sessions.Shutdown(context.Background()) })
	}
	if s.cfg.adminAddr != "" {
		apis := []*control.API{s.envs[0].api, s.envs[1].api}
		if s.admin, err = openAdmin(s.cfg.adminAddr, s.metrics, s.log, apis); err != nil {
			return err
		}
	}
	return nil
}

// serviceOptions are how the server runs env's control plane: counted
// when metrics are served, without media when told to keep none, and
// posting webhooks to private addresses when told to.
func (s *server) serviceOptions(env control.Env) ([]control.ServiceOption, error) {
	opts := []control.ServiceOption{control.WithMetrics(s.metrics)}
	if s.cfg.webhookAllowPrivate {
		opts = append(opts, control.AllowPrivateWebhooks())
	}
	if !s.cfg.keepMedia {
		scratch, err := storage.NewMediaDir(filepath.Join(s.cfg.store.dataDir, string(env), "scratch"))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", env, err)
		}
		opts = append(opts, control.KeepNoMedia(scratch))
	}
	return opts, nil
}

// openAPIServers are the servers of the OpenAPI document: the base URL of
// each environment's listener. A listener on every address (0.0.0.0, ::)
// is named by the loopback address of its family, which reaches it from
// this machine; how others reach it (a proxy, a name) the server cannot
// know.
func (s *server) openAPIServers() []control.Server {
	var servers []control.Server
	for i, env := range s.envs {
		addr := env.ln.Addr().(*net.TCPAddr)
		ip := addr.IP
		if ip.IsUnspecified() {
			ip = net.IPv6loopback
			if ip4 := addr.IP.To4(); ip4 != nil {
				ip = net.IPv4(127, 0, 0, 1)
			}
		}
		name := []string{"Production", "Test"}[i]
		servers = append(servers, control.Server{
			URL:         "http://" + net.JoinHostPort(ip.String(), strconv.Itoa(addr.Port)),
			Description: name + " (this server's listener)",
		})
	}
	return servers
}

// mountedRoutes are the routes served beside the API on an environment's
// listener: the session server's (GET /sessions, POST /sessions/whip), the
// widget's files (GET /widget/...) and, with --dev only, the demo page and
// its token route.
func mountedRoutes(svc *control.Service, sessions *session.Server, cfg *serveConfig) []control.Route {
	routes := append(sessions.Routes(), widgetRoutes()...)
	if cfg.dev {
		routes = append(routes, demoRoutes(svc)...)
	}
	return routes
}

// serve answers requests until ctx ends, then stops accepting, lets the
// requests in flight finish (up to --shutdown-timeout) and returns. Beside
// the listeners, each environment keeps up with the other instances
// (control.Service.KeepUp) and delivers its webhooks
// (control.Service.DeliverWebhooks) until its sessions have ended.
func (s *server) serve(ctx context.Context) error {
	errs := make(chan error, len(s.envs)+1)
	upkeep, stopUpkeep := context.WithCancel(context.WithoutCancel(ctx))
	var kept sync.WaitGroup
	defer kept.Wait()
	defer stopUpkeep()
	for _, e := range s.envs {
		go func() { errs <- e.srv.Serve(e.ln) }()
		kept.Go(func() { e.svc.KeepUp(upkeep, e.upkeep) })
		kept.Go(func() { e.svc.DeliverWebhooks(upkeep, control.Dispatch{Logger: s.log}) })
	}
	if s.admin != nil {
		go func() { errs <- s.admin.serve() }()
	}
	var err error
	select {
	case <-ctx.Done():
		s.log.Info("stopping")
	case err = <-errs:
	}
	stop, cancel := context.WithTimeout(context.Background(), s.cfg.shutdownTimeout)
	defer cancel()
	for _, e := range s.envs {
		if serr := e.srv.Shutdown(stop); serr != nil {
			err = errors.Join(err, serr)
		}
	}
	// The sessions store their last measures before the databases close.
	for _, e := range s.envs {
		if serr := e.sessions.Shutdown(stop); serr != nil {
			err = errors.Join(err, serr)
		}
	}
	// The metrics stay up until the rest has drained.
	if s.admin != nil {
		if serr := s.admin.shutdown(stop); serr != nil {
			err = errors.Join(err, serr)
		}
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	s.log.Info("stopped")
	return err
}

func (s *server) close() {
	if s.admin != nil {
		s.admin.ln.Close()
	}
	for _, e := range s.envs {
		if e.ln != nil {
			e.ln.Close()
		}
		if err := e.db.Close(); err != nil {
			s.log.Error("close database", "err", err)
		}
	}
	if s.unlock != nil {
		s.unlock()
	}
}

// banner tells a developer where things are and what to do next: create
// a client on Test and mint a token with its key. Its paths are absolute,
// so that its commands work from any folder; it comes after the start-up
// logs, and in dev mode the requests for the pages' own files log at debug
// level only, so that it stays on screen while the demo page loads.
func (s *server) banner(w io.Writer) {
	self, err := os.Executable()
	if err != nil {
		self, _ = filepath.Abs(os.Args[0])
	}
	data, err := filepath.Abs(s.cfg.store.dataDir)
	if err != nil {
		data = s.cfg.store.dataDir
	}
	servers := s.openAPIServers()
	prod, test := servers[0].URL, servers[1].URL
	fmt.Fprintf(w, `
PulseWire %[5]s is running in dev mode (pulsewire serve --help lists every flag).
  Demo page      %[1]s/  (measure yourself with this computer's camera)
  API reference  %[1]s/docs
  Production     %[1]s
  Test           %[2]s
  Data           %[3]s

Next steps, in another terminal:
  1. Create a client on Test and keep its API key (shown once):
     export KEY=$(%[4]s client create --data-dir %[6]s --env test --name demo | sed -n 's/.*"apiKey":"\([^"]*\)".*/\1/p')
  2. Mint an access token for the widget:
     curl -s -X POST %[2]s/access-tokens -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' -d '{"permissions":[{"name":"measurement.scan","maxSessions":1}],"duration":"10m"}'

`, prod, test, data, shellQuote(self), readBuildVersion(), shellQuote(data))
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// environmentDB is the database of env, relative to the data folder.
func environmentDB(env control.Env) string {
	return filepath.Join(string(env), "pulsewire.db")
}

// advertised is the address the other instances reach a listener at:
// flag when given, else the listener's own address, with this machine's
// host name when it listens on every interface.
func advertised(flag string, listening net.Addr) string {
	if flag != "" {
		return flag
	}
	addr := listening.(*net.TCPAddr)
	if !addr.IP.IsUnspecified() {
		return addr.String()
	}
	host, err := os.Hostname()
	if err != nil {
		host = "localhost"
	}
	return net.JoinHostPort(host, strconv.Itoa(addr.Port))
}

func newLogger(w io.Writer, cfg *serveConfig) (*slog.Logger, error) {
	level, format := cfg.logLevel, cfg.logFormat
	if level == "" {
		level = "info"
	}
	if format == "" {
		format = map[bool]string{true: "text", false: "json"}[cfg.dev]
	}
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: l}
	switch format {
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format: %q is neither json nor text", format)
}

// envName is the environment variable that sets flag name:
// PULSEWIRE_ then the name in upper case, dashes as underscores.
func envName(name string) string {
	return "PULSEWIRE_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// withEnvNames adds each flag's environment variable to its help text.
func withEnvNames(fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) { f.Usage += " (" + envName(f.Name) + ")" })
}

// parseFlags sets every flag of fs from its environment variable, when that
// is set, then parses args (parseArgs), so that the command line wins.
func parseFlags(fs *flag.FlagSet, args []string, stdout io.Writer) error {
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if v, ok := os.LookupEnv(envName(f.Name)); ok && err == nil {
			if serr := fs.Set(f.Name, v); serr != nil {
				err = fmt.Errorf("%s: %w", envName(f.Name), serr)
			}
		}
	})
	if err != nil {
		return err
	}
	return parseArgs(fs, args, stdout)
}

// parseArgs parses args. Help asked for (-h, --help) goes to stdout, where it
// can be piped into a pager or grep, and is errHelp; after a bad flag the
// usage goes to fs's output (stderr) below the reason, and is errUsage. Every
// Usage writes to fs.Output() for this.
func parseArgs(fs *flag.FlagSet, args []string, stdout io.Writer) error {
	usage := fs.Usage
	fs.Usage = func() {}
	defer func() { fs.Usage = usage }()
	switch err := fs.Parse(args); {
	case errors.Is(err, flag.ErrHelp):
		out := fs.Output()
		fs.SetOutput(stdout)
		usage()
		fs.SetOutput(out)
		return errHelp
	case err != nil:
		usage()
		return errUsage
	}
	return nil
}

// errHelp ends a command whose help was asked for: nothing more to do.
var errHelp = errors.New("help shown")

// helpIsDone turns errHelp into success, for a command's return.
func helpIsDone(err error) error {
	if errors.Is(err, errHelp) {
		return nil
	}
	return err
}

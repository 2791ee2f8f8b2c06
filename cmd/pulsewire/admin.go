package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/pulsewire/pulsewire/control"
	"github.com/pulsewire/pulsewire/control/metrics"
)

// adminListener is the operator's listener (--admin-addr): the Prometheus
// metrics of both environments (GET /metrics) and their health (GET
// /healthz, GET /readyz), apart from the APIs so that a firewall or a
// scraper's network can reach it and nothing else. It has no key: it tells
// counts and states, never an id, a key or a person's data.
type adminListener struct {
	ln  net.Listener
	srv *http.Server
}

// adminAddress is where --admin-addr listens: an address without a host
// (":9090") listens on loopback, not on every interface, so that metrics
// leave the machine only when the operator names an address that lets them.
func adminAddress(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("--admin-addr %q: %w", addr, err)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// openAdmin listens on addr and serves m and the readiness of apis there.
func openAdmin(addr string, m *metrics.Metrics, log *slog.Logger, apis []*control.API) (*adminListener, error) {
	addr, err := adminAddress(addr)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("admin: %w", err)
	}
	if ip := ln.Addr().(*net.TCPAddr).IP; !ip.IsLoopback() {
		log.Warn("the admin listener is reachable beyond this machine: let only the metrics scraper reach it", "addr", ln.Addr().String())
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	mux.HandleFunc("GET /healthz", control.Healthz)
	mux.HandleFunc("GET /readyz", control.Readyz(apis...))
	log.Info("admin listening", "addr", ln.Addr().String())
	return &adminListener{ln: ln, srv: &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}}, nil
}

func (a *adminListener) serve() error { return a.srv.Serve(a.ln) }

func (a *adminListener) shutdown(ctx context.Context) error { return a.srv.Shutdown(ctx) }

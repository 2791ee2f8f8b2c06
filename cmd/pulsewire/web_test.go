package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/pulsewire/pulsewire/control"
	"github.com/pulsewire/pulsewire/dsp/face"
	"github.com/pulsewire/pulsewire/session"
	"github.com/pulsewire/pulsewire/storage"
)

// servedAPI is an environment's API as serve wires it, session routes
// included, in or out of dev mode, over a fresh database.
func servedAPI(t *testing.T, dev bool) (*control.Service, *control.API) {
	t.Helper()
	svc, db, err := openEnvironment(context.Background(), storeConfig{dataDir: t.TempDir()}, control.Test, time.UTC, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	cascade, err := face.LoadCascade()
	if err != nil {
		t.Fatal(err)
	}
	sessions, err := session.NewServer(svc, session.Options{Cascade: cascade})
	if err != nil {
		t.Fatal(err)
	}
	return svc, control.NewAPI(svc, control.Options{Routes: mountedRoutes(svc, sessions, &serveConfig{dev: dev})})
}

// do sends a request to a server on loopback, as serve listens by default.
func do(h http.Handler, method, target string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, nil)
	r.Host = "127.0.0.1:8080"
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// TestDemoOnlyInDevMode: the demo page and its token route exist with
// --dev only; the widget is served in both modes.
func TestDemoOnlyInDevMode(t *testing.T) {
	tests := []struct {
		name, method, target string
		prod, dev            int
	}{
		{"demo page", "GET", "/", 404, 200},
		{"demo script", "GET", "/demo/demo.js", 404, 200},
		{"demo token", "POST", "/demo/access-tokens?chain=scan", 404, 201},
		{"widget", "GET", "/widget/pulsewire.js", 200, 200},
		{"widget HEAD", "HEAD", "/widget/pulsewire.js", 200, 200},
	}
	_, prod := servedAPI(t, false)
	_, dev := servedAPI(t, true)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if w := do(prod, tc.method, tc.target); w.Code != tc.prod {
				t.Errorf("production: %d, want %d", w.Code, tc.prod)
			}
			if w := do(dev, tc.method, tc.target); w.Code != tc.dev {
				t.Errorf("dev: %d, want %d", w.Code, tc.dev)
			}
		})
	}
}

// TestDemoTokensOnlyForTheDemoPage: the route mints without a key, so a
// page of another site must not get a token from it, neither by a name of
// its own pointed at this machine nor from its own origin.
func TestDemoTokensOnlyForTheDemoPage(t *testing.T) {
	_, api := servedAPI(t, true)
	tests := []struct {
		host, origin string
		status       int
	}{
		{"127.0.0.1:8080", "", 201},
		{"127.0.0.1:8080", "http://127.0.0.1:8080", 201},
		{"localhost:8080", "http://localhost:8080", 201},
		{"[::1]:8080", "http://[::1]:8080", 201},
		{"192.168.1.20:8080", "http://192.168.1.20:8080", 201}, // a phone on the same network
		{"localhost", "", 201},
		{"rebound.example:8080", "http://rebound.example:8080", 400},
		{"localhost.example:8080", "", 400},
		{"127.0.0.1:8080", "http://other.example", 400},
		{"127.0.0.1:8080", "http://127.0.0.1:9090", 400},
		{"127.0.0.1:8080", "null", 400},
	}
	for _, tc := range tests {
		t.Run(tc.host+" "+tc.origin, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/demo/access-tokens?chain=scan", nil)
			r.Host = tc.host
			if tc.origin != "" {
				r.Header.Set("Origin", tc.origin)
			}
			w := httptest.NewRecorder()
			api.ServeHTTP(w, r)
			if w.Code != tc.status {
				t.Fatalf("%d %s, want %d", w.Code, w.Body, tc.status)
			}
			if tc.status == 400 && !strings.Contains(w.Body.String(), "the demo token route answers") {
				t.Errorf("body %s does not say why", w.Body)
			}
		})
	}
}

// TestDemoTokens: the dev route answers as POST /access-tokens does, with a
// one-session token of the asked chain for one demo client, created once.
func TestDemoTokens(t *testing.T) {
	svc, api := servedAPI(t, true)
	ctx := context.Background()
	tests := []struct {
		chain, permission string
		status            int
	}{
		{"scan", control.PermissionScan, 201},
		{"realtime", control.PermissionRealtime, 201},
		{"", "", 400},
		{"measurement.scan", "", 400},
	}
	for _, tc := range tests {
		t.Run("chain="+tc.chain, func(t *testing.T) {
			w := do(api, "POST", "/demo/access-tokens?chain="+tc.chain)
			if w.Code != tc.status {
				t.Fatalf("%d %s", w.Code, w.Body)
			}
			if w.Header().Get("Cache-Control") != "no-store" {
				t.Errorf("Cache-Control %q", w.Header().Get("Cache-Control"))
			}
			if tc.status != 201 {
				// The API's own 400 body.
				if want := `{"statusCode":400,"message":["chain must be scan or realtime"],"error":"Bad Request"}`; w.Body.String() != want {
					t.Errorf("body %s, want %s", w.Body, want)
				}
				return
			}
			var tok struct {
				ID, Value, ExpiresAt, CreatedAt string
				Description                     *string
				Permissions                     []struct {
					Name        string
					MaxSessions *int
				}
			}
			if err := json.Unmarshal(w.Body.Bytes(), &tok); err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(tok.Value, "ivat-") || len(tok.ID) != 36 || len(tok.Permissions) != 1 ||
				tok.Permissions[0].Name != tc.permission || tok.Permissions[0].MaxSessions == nil || *tok.Permissions[0].MaxSessions != 1 {
				t.Fatalf("token %s", w.Body)
			}
			created, _ := time.Parse(time.RFC3339, tok.CreatedAt)
			expires, _ := time.Parse(time.RFC3339, tok.ExpiresAt)
			if expires.Sub(created) != 10*time.Minute {
				t.Errorf("lives %v, want 10m", expires.Sub(created))
			}
			// It opens exactly one session of its chain, and its id opens none.
			if _, err := svc.OpenSession(ctx, tok.ID, tc.permission, nil); !errors.Is(err, storage.ErrSessionRefused) {
				t.Errorf("the id opened a session: %v", err)
			}
			if _, err := svc.OpenSession(ctx, tok.Value, tc.permission, nil); err != nil {
				t.Fatalf("first session: %v", err)
			}
			if _, err := svc.OpenSession(ctx, tok.Value, tc.permission, nil); !errors.Is(err, storage.ErrSessionRefused) {
				t.Errorf("second session: %v", err)
			}
		})
	}

	demo := func() (active []storage.Client) {
		clients, err := svc.Clients(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range clients {
			if c.Name == demoClientName && c.Active {
				active = append(active, c)
			}
		}
		return active
	}
	if d := demo(); len(d) != 1 {
		t.Fatalf("%d active demo clients after several tokens, want 1", len(d))
	}
	// An operator's deactivation holds: the next token goes to a new client.
	if _, err := svc.DeactivateClient(ctx, demo()[0].ID); err != nil {
		t.Fatal(err)
	}
	if w := do(api, "POST", "/demo/access-tokens?chain=scan"); w.Code != 201 {
		t.Fatalf("after deactivation: %d", w.Code)
	}
	if d := demo(); len(d) != 1 {
		t.Fatalf("%d active demo clients after a deactivation, want 1", len(d))
	}
}

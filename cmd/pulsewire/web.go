package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/pulsewire/pulsewire/control"
	"github.com/pulsewire/pulsewire/storage"
	"github.com/pulsewire/pulsewire/web"
)

// widgetRoutes serve the browser widget's files and the API reference on
// every listener, in every mode: a company's page imports
// /widget/pulsewire.js, and its developers read /docs.
func widgetRoutes() []control.Route {
	h, ref := web.Widget(), web.Reference()
	return []control.Route{
		{Method: http.MethodGet, Path: "/widget/:file", Handler: h, Internal: true},
		{Method: http.MethodHead, Path: "/widget/:file", Handler: h, Internal: true},
		{Method: http.MethodGet, Path: web.ReferencePath, Handler: ref, Internal: true},
		{Method: http.MethodHead, Path: web.ReferencePath, Handler: ref, Internal: true},
		{Method: http.MethodGet, Path: web.ReferencePath + "/:file", Handler: ref, Internal: true},
		{Method: http.MethodHead, Path: web.ReferencePath + "/:file", Handler: ref, Internal: true},
	}
}

// demoRoutes serve the demo page and mint its tokens. Only --dev mounts
// them: a production server has no route that mints a token without an
// API key.
func demoRoutes(svc *control.Service) []control.Route {
	page := web.Demo()
	return []control.Route{
		{Method: http.MethodGet, Path: "/", Handler: page, Internal: true},
		{Method: http.MethodHead, Path: "/", Handler: page, Internal: true},
		{Method: http.MethodGet, Path: "/demo/:file", Handler: page, Internal: true},
		{Method: http.MethodHead, Path: "/demo/:file", Handler: page, Internal: true},
		{Method: http.MethodPost, Path: web.DemoTokenPath, Handler: &demoTokens{svc: svc}, Internal: true},
	}
}

// demoClientName names the client whose tokens the demo page uses. The
// dev server creates it in the environment's database the first time a
// token is asked for, through the control service as any client is, and
// keeps no key: tokens are minted by the service directly.
const demoClientName = "demo page (pulsewire serve --dev)"

// demoTokenDuration is long enough for a person to allow the camera and be
// measured, short enough that a token left in a tab is soon worthless.
const demoTokenDuration = "10m"

// demoChains are the permissions the demo page may ask for, by chain.
var demoChains = map[string]string{"scan": control.PermissionScan, "realtime": control.PermissionRealtime}

// demoTokens answers POST /demo/access-tokens?chain=scan|realtime with a
// new token of the demo client, as POST /access-tokens answers: one
// permission for the chain, maxSessions 1, as the API advises for every
// measurement.
type demoTokens struct {
	svc *control.Service
	mu  sync.Mutex // serialises finding or creating the demo client
}

func (d *demoTokens) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if msg := foreignPage(r); msg != "" {
		control.WriteError(w, r, &control.Error{Code: control.Invalid, Messages: []string{msg}})
		return
	}
	permission, ok := demoChains[r.URL.Query().Get("chain")]
	if !ok {
		control.WriteError(w, r, &control.Error{Code: control.Invalid, Messages: []string{"chain must be scan or realtime"}})
		return
	}
	t, err := d.mint(r.Context(), permission)
	if err != nil {
		control.WriteError(w, r, fmt.Errorf("demo token: %w", err))
		return
	}
	writeJSON(w, http.StatusCreated, control.NewTokenView(t))
}

// foreignPage says why a token request may come from a page other than the
// demo page, or "" when it cannot. The route mints without a key, so it
// answers only a request addressed to an IP address or localhost (a page of
// another site whose name it has pointed at this machine, DNS rebinding, is
// addressed by that name) and, when the browser names the page's origin,
// only a page of this server.
func foreignPage(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.Host)
	if err != nil {
		host = r.Host // no port
	}
	if host != "localhost" && net.ParseIP(strings.Trim(host, "[]")) == nil {
		return fmt.Sprintf("the demo token route answers a server addressed by an IP address or localhost, not %q", host)
	}
	if origin := r.Header.Get("Origin"); origin != "" {
		if u, err := url.Parse(origin); err != nil || u.Host != r.Host {
			return fmt.Sprintf("the demo token route answers the demo page of this server, not a page of %q", origin)
		}
	}
	return ""
}

func (d *demoTokens) mint(ctx context.Context, permission string) (control.CreatedToken, error) {
	client, err := d.client(ctx)
	if err != nil {
		return control.CreatedToken{}, err
	}
	body := fmt.Sprintf(`{"description":"demo page","permissions":[{"name":%q,"maxSessions":1}],"duration":%q}`, permission, demoTokenDuration)
	req, err := control.ParseTokenRequest([]byte(body))
	if err != nil {
		return control.CreatedToken{}, err
	}
	return d.svc.CreateToken(ctx, client, req)
}

// client finds the active demo client, or creates it. An operator may
// deactivate it like any client; the next token then goes to a new one.
func (d *demoTokens) client(ctx context.Context) (storage.Client, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	clients, err := d.svc.Clients(ctx)
	if err != nil {
		return storage.Client{}, err
	}
	for _, c := range clients {
		if c.Name == demoClientName && c.Active {
			return c, nil
		}
	}
	c, _, err := d.svc.CreateClient(ctx, control.NewClient{Name: demoClientName}) // the key is not needed, so not kept
	return c, err
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

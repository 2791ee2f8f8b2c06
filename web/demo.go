package web

import "net/http"

// DemoTokenPath is the dev-only route the demo page asks for a token:
// POST with ?chain=scan|realtime, answered like POST /access-tokens.
const DemoTokenPath = "/demo/access-tokens"

var demoFiles = readDir("demo")

// demoPolicy keeps the demo page to its own origin: scripts, styles,
// connections (WebSocket and WHIP) and nothing framed or framing.
const demoPolicy = "default-src 'self'; img-src 'self' data: blob:; media-src 'self' blob: mediastream:; " +
	"connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

// Demo serves the demo page: GET / is index.html and GET /demo/<name> its
// script and style. Only `serve --dev` mounts it (with the token route of
// DemoTokenPath); a production server has neither.
func Demo() http.Handler {
	return page(demoFiles, "/", http.Header{
		"Content-Security-Policy": {demoPolicy},
		"Permissions-Policy":      {"camera=(self), microphone=()"},
	})
}

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
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var f file
		if r.URL.Path == "/" {
			f = demoFiles["index.html"]
		} else if g, ok := lookup(demoFiles, w, r); ok {
			f = g
		} else {
			return
		}
		h := w.Header()
		h.Set("Cache-Control", "no-cache")
		h.Set("Content-Security-Policy", demoPolicy)
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Permissions-Policy", "camera=(self), microphone=()")
		f.serve(w, r)
	})
}

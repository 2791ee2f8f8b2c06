package web

import "net/http"

// WidgetEntry is the path of the module a company's page imports; its
// sibling modules and style sheet are served beside it, under /widget/.
const WidgetEntry = "/widget/pulsewire.js"

var widgetFiles = readDir("widget")

// Widget serves the widget's files, GET and HEAD /widget/<name>, to any
// origin and without authentication: the files hold no secret, and the
// company's page that imports them lives on another origin, so module
// loading needs CORS.
//
// The modules import each other by plain relative URLs. A cache that kept
// one of them longer than another could run a new pulsewire.js against an
// old view.js; so every file is "no-cache" (stored, but revalidated on each
// use) with a strong ETag, which makes a revalidation a 304 without a body.
func Widget() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, ok := lookup(widgetFiles, w, r)
		if !ok {
			return
		}
		h := w.Header()
		h.Set("Cache-Control", "public, no-cache")
		h.Set("Access-Control-Allow-Origin", "*")
		h.Set("Cross-Origin-Resource-Policy", "cross-origin")
		f.serve(w, r)
	})
}

package web

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func get(t *testing.T, h http.Handler, method, target string, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestWidgetFiles(t *testing.T) {
	h := Widget()
	tests := []struct {
		name, target, contentType string
		status                    int
	}{
		{"entry module", WidgetEntry, "text/javascript; charset=utf-8", 200},
		{"sibling module", "/widget/view.js", "text/javascript; charset=utf-8", 200},
		{"encoding worker", "/widget/encoder.js", "text/javascript; charset=utf-8", 200},
		{"style sheet", "/widget/widget.css", "text/css; charset=utf-8", 200},
		{"unknown file", "/widget/nope.js", "application/json; charset=utf-8", 404},
		{"demo file is not a widget file", "/widget/demo.js", "application/json; charset=utf-8", 404},
		{"no traversal", "/widget/../demo/index.html", "application/json; charset=utf-8", 404},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := get(t, h, "GET", tc.target)
			if w.Code != tc.status || w.Header().Get("Content-Type") != tc.contentType {
				t.Fatalf("%d %q, want %d %q", w.Code, w.Header().Get("Content-Type"), tc.status, tc.contentType)
			}
			if tc.status != 200 {
				if w.Body.String() != `{"message":"Not Found","statusCode":404}` {
					t.Errorf("404 body %q", w.Body)
				}
				return
			}
			for k, want := range map[string]string{
				"Cache-Control":               "public, no-cache",
				"Access-Control-Allow-Origin": "*",
				"X-Content-Type-Options":      "nosniff",
			} {
				if got := w.Header().Get(k); got != want {
					t.Errorf("%s: %q, want %q", k, got, want)
				}
			}
			etag := w.Header().Get("ETag")
			if !strings.HasPrefix(etag, `"`) || w.Body.Len() == 0 {
				t.Fatalf("ETag %q, %d bytes", etag, w.Body.Len())
			}
			// A cache that holds the file revalidates it for nothing.
			if w := get(t, h, "GET", tc.target, "If-None-Match", etag); w.Code != http.StatusNotModified || w.Body.Len() != 0 {
				t.Errorf("revalidation: %d with %d bytes", w.Code, w.Body.Len())
			}
			if w := get(t, h, "GET", tc.target, "If-None-Match", `"stale"`); w.Code != 200 {
				t.Errorf("a stale ETag: %d", w.Code)
			}
			if w := get(t, h, "HEAD", tc.target); w.Code != 200 || w.Body.Len() != 0 {
				t.Errorf("HEAD: %d with %d bytes", w.Code, w.Body.Len())
			}
		})
	}
}

func TestDemoFiles(t *testing.T) {
	h := Demo()
	tests := []struct {
		name, target, contains string
		status                 int
	}{
		{"page", "/", `<div id="widget">`, 200},
		{"an icon of its own: no request for /favicon.ico", "/", `<link rel="icon" href="data:,">`, 200},
		{"script", "/demo/demo.js", "PulseWire.mount", 200},
		{"style", "/demo/demo.css", "body", 200},
		{"unknown", "/demo/secret.txt", "Not Found", 404},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := get(t, h, "GET", tc.target)
			if w.Code != tc.status || !strings.Contains(w.Body.String(), tc.contains) {
				t.Fatalf("%d %q", w.Code, w.Body)
			}
			if tc.status == 200 && !strings.Contains(w.Header().Get("Content-Security-Policy"), "default-src 'self'") {
				t.Errorf("CSP %q", w.Header().Get("Content-Security-Policy"))
			}
		})
	}
}

func TestReferenceFiles(t *testing.T) {
	h := Reference()
	tests := []struct {
		name, target, contentType, contains string
		status                              int
	}{
		{"page", ReferencePath, "text/html; charset=utf-8", `src="/docs/redoc.standalone.js"`, 200},
		{"an icon of its own", ReferencePath, "text/html; charset=utf-8", `<link rel="icon" href="data:,">`, 200},
		{"script", "/docs/reference.js", "text/javascript; charset=utf-8", "Redoc.init('/openapi.json'", 200},
		{"redoc", "/docs/redoc.standalone.js", "text/javascript; charset=utf-8", "redoc.standalone.js.LICENSE.txt", 200},
		{"redoc's licences", "/docs/redoc.standalone.js.LICENSE.txt", "text/plain; charset=utf-8", "MIT", 200},
		{"unknown", "/docs/openapi.yaml", "application/json; charset=utf-8", "Not Found", 404},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := get(t, h, "GET", tc.target)
			if w.Code != tc.status || w.Header().Get("Content-Type") != tc.contentType || !strings.Contains(w.Body.String(), tc.contains) {
				t.Fatalf("%d %q %.80q", w.Code, w.Header().Get("Content-Type"), w.Body)
			}
			if tc.status == 200 && !strings.Contains(w.Header().Get("Content-Security-Policy"), "default-src 'self'") {
				t.Errorf("CSP %q", w.Header().Get("Content-Security-Policy"))
			}
		})
	}
}

// TestNoOutsideReferences keeps the widget, the demo and the reference
// page free of other origins: no CDN, no web font, no absolute URL to
// anywhere. The widget reaches its server only through URLs built from its
// own address. Redoc's bundle is not read here: it names URLs it never
// loads (JSON Schema identifiers, its authors' sites), and the reference
// page's Content-Security-Policy is what keeps it to its own origin.
func TestNoOutsideReferences(t *testing.T) {
	err := fs.WalkDir(embedded, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(path, "reference/redoc.standalone.js") {
			return err
		}
		b, _ := fs.ReadFile(embedded, path)
		for _, bad := range []string{"http://", "https://", "//cdn", "@import", "fonts.googleapis", "url("} {
			for i, line := range strings.Split(string(b), "\n") {
				// The module's usage comment shows a company's page importing it.
				if strings.Contains(line, bad) && !strings.HasPrefix(strings.TrimSpace(line), "//") && !strings.Contains(line, "svgNS") {
					t.Errorf("%s:%d refers outside: %s", path, i+1, strings.TrimSpace(line))
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestPageHeaders: the demo page and the reference page, which a browser
// shows as pages of the server, keep to it: no other site frames them (the
// demo page opens the camera), their address is sent to no one they link
// to, and the demo page lets only itself use the camera and no page the
// microphone.
func TestPageHeaders(t *testing.T) {
	directives := func(csp string) map[string]bool {
		set := map[string]bool{}
		for d := range strings.SplitSeq(csp, ";") {
			set[strings.Join(strings.Fields(d), " ")] = true
		}
		return set
	}
	for _, tc := range []struct {
		name, target string
		h            http.Handler
		permissions  string
	}{
		{"demo page", "/", Demo(), "camera=(self), microphone=()"},
		{"demo script", "/demo/demo.js", Demo(), "camera=(self), microphone=()"},
		{"reference page", ReferencePath, Reference(), ""},
		{"reference script", "/docs/reference.js", Reference(), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := get(t, tc.h, "GET", tc.target)
			if w.Code != 200 {
				t.Fatalf("%d", w.Code)
			}
			csp := directives(w.Header().Get("Content-Security-Policy"))
			for _, d := range []string{"default-src 'self'", "frame-ancestors 'none'", "base-uri 'none'"} {
				if !csp[d] {
					t.Errorf("Content-Security-Policy %q lacks %q", w.Header().Get("Content-Security-Policy"), d)
				}
			}
			for k, want := range map[string]string{
				"Referrer-Policy":    "no-referrer",
				"Permissions-Policy": tc.permissions,
				"Cache-Control":      "no-cache",
			} {
				if got := w.Header().Get(k); got != want {
					t.Errorf("%s: %q, want %q", k, got, want)
				}
			}
		})
	}
}

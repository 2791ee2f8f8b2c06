package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"
)

//go:embed widget/*.js widget/*.css demo/*.html demo/*.js demo/*.css reference/*
var embedded embed.FS

// file is one embedded file, ready to serve.
type file struct {
	body        []byte
	contentType string
	etag        string // strong: a digest of the content
}

// contentTypes are set by us rather than by the system's MIME table, which
// differs between machines (application/javascript, text/javascript, none).
var contentTypes = map[string]string{
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".html": "text/html; charset=utf-8",
	".txt":  "text/plain; charset=utf-8",
}

// readDir loads every file of one embedded folder, by name.
func readDir(dir string) map[string]file {
	entries, err := fs.ReadDir(embedded, dir)
	if err != nil {
		panic("web: " + err.Error()) // the folder is embedded: a build error, not outside data
	}
	files := make(map[string]file, len(entries))
	for _, e := range entries {
		body, err := fs.ReadFile(embedded, dir+"/"+e.Name())
		if err != nil {
			panic("web: " + err.Error())
		}
		sum := sha256.Sum256(body)
		files[e.Name()] = file{
			body:        body,
			contentType: contentTypes[path.Ext(e.Name())],
			etag:        `"` + base64.RawURLEncoding.EncodeToString(sum[:12]) + `"`,
		}
	}
	return files
}

// serve answers GET and HEAD with f: its ETag lets a cache revalidate for a
// 304, and ServeContent handles If-None-Match and ranges.
func (f file) serve(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", f.contentType)
	h.Set("ETag", f.etag)
	h.Set("X-Content-Type-Options", "nosniff")
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(f.body))
}

// lookup serves the file named by the last element of the request's path,
// or answers 404 in the API's shape.
func lookup(files map[string]file, w http.ResponseWriter, r *http.Request) (file, bool) {
	name := path.Base(r.URL.Path)
	f, ok := files[name]
	if !ok || strings.HasPrefix(name, ".") {
		notFound(w)
		return file{}, false
	}
	return f, true
}

// notFound is the API's 404 body, so that a missing file looks
// like any other unknown route.
func notFound(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusNotFound)
	w.Write([]byte(`{"message":"Not Found","statusCode":404}`))
}

// page serves a page of files: GET index is its index.html, any other path
// the file named by its last element. Every answer carries the page's
// headers; pages change with the binary, so a cache revalidates them.
func page(files map[string]file, index string, headers http.Header) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var f file
		if r.URL.Path == index {
			f = files["index.html"]
		} else if g, ok := lookup(files, w, r); ok {
			f = g
		} else {
			return
		}
		h := w.Header()
		for k, v := range headers {
			h[k] = v
		}
		h.Set("Cache-Control", "no-cache")
		h.Set("Referrer-Policy", "no-referrer")
		f.serve(w, r)
	})
}

package control

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// gatedReader reads first, then waits for gate to close before the rest.
type gatedReader struct {
	first, rest []byte
	gate        chan struct{}
}

func (g *gatedReader) Read(p []byte) (int, error) {
	if len(g.first) > 0 {
		n := copy(p, g.first)
		g.first = g.first[n:]
		return n, nil
	}
	<-g.gate
	if len(g.rest) == 0 {
		return 0, io.EOF
	}
	n := copy(p, g.rest)
	g.rest = g.rest[n:]
	return n, nil
}

// TestDeleteDuringRun: a measure deleted while its video streams in (the
// two-step form) answers its run with 404, as any later request about it,
// logs no error, and leaves no media.
func TestDeleteDuringRun(t *testing.T) {
	video := faceVideoBytes(t)
	e := newTestEnv(t, Production)
	_, key := e.client("acme")
	id := e.do("POST", "/measures", key, `{}`).json(t)["id"].(string)
	gate := make(chan struct{})
	done := make(chan response, 1)
	go func() {
		r, _ := e.upload("/measures/"+id+"/rppg/video", key,
			part{name: "video", ctype: "video/mp4", file: true, body: &gatedReader{first: video[:len(video)/2], rest: video[len(video)/2:], gate: gate}})
		done <- r
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if slices.Contains(e.mediaFolders(), id) {
			break // half the video is in
		}
		if time.Now().After(deadline) {
			t.Fatal("the upload never reached the media folder")
		}
		time.Sleep(5 * time.Millisecond)
	}
	wantStatus(t, e.do("DELETE", "/measures/"+id, key, nil), http.StatusOK)
	close(gate)
	r := <-done
	wantStatus(t, r, http.StatusNotFound)
	wantBody(t, r, `{"message":"Not Found","statusCode":404}`)
	wantStatus(t, e.do("GET", "/measures/"+id, key, nil), http.StatusNotFound)
	if ids := e.mediaFolders(); len(ids) != 0 {
		t.Fatalf("media left: %v", ids)
	}
	if logs := e.logs.String(); strings.Contains(logs, `"level":"ERROR"`) {
		t.Fatalf("a deletion is no error of the server:\n%s", logs)
	}
}

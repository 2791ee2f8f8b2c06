package control

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/pulsewire/pulsewire/storage"
)

// recordingMedia counts the files put in a media folder.
type recordingMedia struct {
	storage.Media
	puts atomic.Int32
}

func (r *recordingMedia) Put(ctx context.Context, id, name string, rd io.Reader) error {
	r.puts.Add(1)
	return r.Media.Put(ctx, id, name, rd)
}

// withoutMedia keeps no media: uploads go to a scratch folder of the test,
// returned.
func withoutMedia(t *testing.T) (envOption, *recordingMedia) {
	dir, err := storage.NewMediaDir(filepath.Join(t.TempDir(), "scratch"))
	if err != nil {
		t.Fatal(err)
	}
	scratch := &recordingMedia{Media: dir}
	return func(e *testEnv, _ *storage.Options) { e.svcOpt = append(e.svcOpt, KeepNoMedia(scratch)) }, scratch
}

// mediaKept reads an answer's mediaKept: "true", "false", or "" when absent.
func mediaKept(t *testing.T, r response) string {
	t.Helper()
	var v struct{ MediaKept *bool }
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatalf("%s: %v", r.body, err)
	}
	if v.MediaKept == nil {
		return ""
	}
	return map[bool]string{true: "true", false: "false"}[*v.MediaKept]
}

// TestMediaKeptByDefault: a run keeps its capture and says so; a measure
// not yet run says nothing.
func TestMediaKeptByDefault(t *testing.T) {
	e := newTestEnv(t, Production)
	_, key := e.client("acme")
	body, _ := json.Marshal(pulseSignal("cppg", 1.2, 12))
	r := e.send("/measures/cppg/signal", key, "application/json", bytes.NewReader(body))
	wantStatus(t, r, http.StatusCreated)
	if got := mediaKept(t, r); got != "true" {
		t.Fatalf("mediaKept %q: %s", got, r.body)
	}
	if ids := e.mediaFolders(); len(ids) != 1 || ids[0] != e.measureOf(r).ID {
		t.Fatalf("media folders %v", ids)
	}
	if got := mediaKept(t, e.do("GET", "/measures/"+e.measureOf(r).ID, key, nil)); got != "true" {
		t.Fatalf("read back: mediaKept %q", got)
	}
	created := e.do("POST", "/measures", key, `{}`)
	if strings.Contains(string(created.body), "mediaKept") {
		t.Fatalf("a created measure: %s", created.body)
	}
}

// TestKeepNoMedia: without media, an upload is analysed from the scratch
// folder and gone before its measure ends; the measure says it kept none,
// and nothing reaches the measures' media, whether the run ends, is
// refused or runs an existing measure.
func TestKeepNoMedia(t *testing.T) {
	path, truth := faceVideo(t)
	video, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	opt, scratch := withoutMedia(t)
	e := newTestEnv(t, Production, opt)
	_, key := e.client("acme")

	r, _ := e.upload("/measures/rppg/video", key, field("tags", "no-media"), file("video", "video/mp4", video))
	wantStatus(t, r, http.StatusCreated)
	if hr := e.measureOf(r).mean(t, "hr"); math.Abs(hr-truth.HeartRate) > 3 {
		t.Errorf("hr %.1f bpm, truth %.1f", hr, truth.HeartRate)
	}
	if got := mediaKept(t, r); got != "false" {
		t.Fatalf("mediaKept %q", got)
	}

	body, _ := json.Marshal(pulseSignal("cppg", 1.2, 12))
	id := e.measureOf(e.do("POST", "/measures", key, `{}`)).ID
	r = e.send("/measures/"+id+"/cppg/signal", key, "application/json", bytes.NewReader(body))
	wantStatus(t, r, http.StatusOK)
	if got := mediaKept(t, e.do("GET", "/measures/"+id, key, nil)); got != "false" {
		t.Fatalf("two-step run: mediaKept %q", got)
	}
	wantStatus(t, e.send("/measures/cppg/signal", key, "application/json", strings.NewReader(`{"signal":{}}`)), http.StatusBadRequest)

	if n := scratch.puts.Load(); n != 3 {
		t.Fatalf("%d uploads went through the scratch folder, want 3", n)
	}
	if ids, _ := scratch.List(context.Background()); len(ids) != 0 {
		t.Fatalf("the scratch folder keeps %v", ids)
	}
	if ids := e.mediaFolders(); len(ids) != 0 {
		t.Fatalf("media kept: %v", ids)
	}
}

// TestKeepNoMediaLeavesOldMedia: media kept before are still removed with
// their measure by a server that keeps none.
func TestKeepNoMediaLeavesOldMedia(t *testing.T) {
	e := newTestEnv(t, Production)
	c, key := e.client("acme")
	body, _ := json.Marshal(pulseSignal("cppg", 1.2, 12))
	id := e.measureOf(e.send("/measures/cppg/signal", key, "application/json", bytes.NewReader(body))).ID
	scratch, err := storage.NewMediaDir(filepath.Join(t.TempDir(), "scratch"))
	if err != nil {
		t.Fatal(err)
	}
	now := NewService(Production, e.db, e.media, KeepNoMedia(scratch))
	if ids := e.mediaFolders(); len(ids) != 1 {
		t.Fatalf("media folders %v", ids)
	}
	if err := now.DeleteMeasure(context.Background(), c, id); err != nil {
		t.Fatal(err)
	}
	if ids := e.mediaFolders(); len(ids) != 0 {
		t.Fatalf("media after the deletion: %v", ids)
	}
}

// TestJoinClearsScratch: what a crash left in the scratch folder is
// removed at the next start.
func TestJoinClearsScratch(t *testing.T) {
	opt, scratch := withoutMedia(t)
	e := newTestEnv(t, Production, opt)
	const id = "0f8e0b52-3c8c-4f4e-9a67-8b7f3f1d2a10"
	if err := scratch.Put(context.Background(), id, "video", strings.NewReader("half an upload")); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.Join(context.Background(), Upkeep{}); err != nil {
		t.Fatal(err)
	}
	if ids, _ := scratch.List(context.Background()); len(ids) != 0 {
		t.Fatalf("the scratch folder keeps %v", ids)
	}
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestServeKeepsNoMedia: with --keep-media=false an upload is measured and
// nothing of it stays on disk; the measure says so. Started again with the
// default, the server keeps the next upload.
func TestServeKeepsNoMedia(t *testing.T) {
	bin := buildBinary(t)
	data := t.TempDir()
	_, key := createClient(t, bin, data, "test", "acme")
	entries := func(dir string) []os.DirEntry {
		e, _ := os.ReadDir(filepath.Join(data, "test", dir))
		return e
	}

	srv := startServer(t, bin, data, "--keep-media=false")
	status, body := call(t, "POST", srv.test+"/measures/cppg/signal", key, cppgSignal(""))
	if status != 201 || !strings.Contains(string(body), `"hr":{"value":{"mean":75`) || !strings.Contains(string(body), `"mediaKept":false`) {
		t.Fatalf("run without media: %d %s", status, body)
	}
	if m, s := entries("media"), entries("scratch"); len(m) != 0 || len(s) != 0 {
		t.Fatalf("left on disk: media %v, scratch %v", m, s)
	}
	if err := srv.stop(t, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}

	srv = startServer(t, bin, data)
	status, body = call(t, "POST", srv.test+"/measures/cppg/signal", key, cppgSignal(""))
	if status != 201 || !strings.Contains(string(body), `"mediaKept":true`) {
		t.Fatalf("run with media: %d %s", status, body)
	}
	if m := entries("media"); len(m) != 1 || m[0].Name() != field(t, body, "id") {
		t.Fatalf("media %v", m)
	}
	if err := srv.stop(t, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
}

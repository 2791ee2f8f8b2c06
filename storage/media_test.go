package storage

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMediaDir(t *testing.T) {
	ctx := context.Background()
	m, err := NewMediaDir(filepath.Join(t.TempDir(), "media"))
	if err != nil {
		t.Fatal(err)
	}
	const id = "6f1c1d2e-3b4a-4c5d-8e9f-0a1b2c3d4e5f"
	if err := m.Put(ctx, id, "video.mp4", strings.NewReader("frames")); err != nil {
		t.Fatal(err)
	}
	r, err := m.Open(ctx, id, "video.mp4")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r)
	r.Close()
	if string(b) != "frames" {
		t.Fatalf("read back %q", b)
	}

	// A reader that fails leaves no file, not even a temporary one.
	if err := m.Put(ctx, id, "broken.bin", io.MultiReader(strings.NewReader("half"), failingReader{})); err == nil {
		t.Fatal("a failed copy was reported stored")
	}
	entries, _ := os.ReadDir(filepath.Join(m.Root, id))
	if len(entries) != 1 {
		t.Fatalf("files after a failed put: %v", entries)
	}

	for _, tc := range []struct{ name, id, file string }{
		{"parent folder", id, ".."},
		{"hidden", id, ".secret"},
		{"nested", id, "a/b"},
		{"non-canonical id", strings.ToUpper(id), "x"},
		{"id escaping the root", "../../etc", "x"},
	} {
		if err := m.Put(ctx, tc.id, tc.file, strings.NewReader("x")); err == nil {
			t.Errorf("%s: put %q/%q accepted", tc.name, tc.id, tc.file)
		}
	}

	for range 2 { // twice: removing what is gone is no error
		if err := m.Remove(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := m.Open(ctx, id, "video.mp4"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("open after remove: %v", err)
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }

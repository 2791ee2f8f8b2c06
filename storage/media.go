package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"

	"github.com/google/uuid"
)

// Media keeps the files of measures (videos, images, captures, signals),
// grouped by measure. It is an interface so that a deployment can move media
// to an object store without touching the rules around it.
type Media interface {
	// Put stores the contents of r as file name of measure id, replacing
	// any file of that name. A reader error leaves nothing behind.
	Put(ctx context.Context, id, name string, r io.Reader) error
	// Open reads back file name of measure id.
	Open(ctx context.Context, id, name string) (io.ReadCloser, error)
	// Remove deletes every file of measure id. A measure with no files is
	// no error, so an interrupted removal can simply be run again.
	Remove(ctx context.Context, id string) error
	// List returns the ids of the measures that have files, for the sweep
	// that removes what a crash left behind.
	List(ctx context.Context) ([]string, error)
}

// MediaDir is Media on the local disk: one folder per measure under Root.
type MediaDir struct {
	Root string
}

// NewMediaDir returns the media folder root, creating it if needed.
func NewMediaDir(root string) (*MediaDir, error) {
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, fmt.Errorf("media folder: %w", err)
	}
	return &MediaDir{Root: root}, nil
}

// mediaName is what a file name may look like: a plain name that cannot
// leave its folder or hide.
var mediaName = regexp.MustCompile(`^[A-Za-z0-9_-][A-Za-z0-9._-]{0,99}$`)

// dir is the folder of measure id; id must be a canonical UUID, so it can
// never name a path outside Root.
func (m *MediaDir) dir(id string) (string, error) {
	u, err := uuid.Parse(id)
	if err != nil || u.String() != id {
		return "", fmt.Errorf("media: bad measure id %q", id)
	}
	return filepath.Join(m.Root, id), nil
}

func (m *MediaDir) path(id, name string) (string, error) {
	dir, err := m.dir(id)
	if err != nil {
		return "", err
	}
	if !mediaName.MatchString(name) {
		return "", fmt.Errorf("media: bad file name %q", name)
	}
	return filepath.Join(dir, name), nil
}

// Put writes to a temporary file beside the target and renames it into
// place, so a reader never sees half a file.
func (m *MediaDir) Put(ctx context.Context, id, name string, r io.Reader) (err error) {
	target, err := m.path(id, name)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
		return fmt.Errorf("media put: %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(target), ".put-*")
	if err != nil {
		return fmt.Errorf("media put: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err := io.Copy(f, contextReader{ctx, r}); err != nil {
		return fmt.Errorf("media put %s/%s: %w", id, name, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("media put: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("media put: %w", err)
	}
	if err := os.Rename(f.Name(), target); err != nil {
		return fmt.Errorf("media put: %w", err)
	}
	return nil
}

// Open opens a stored file.
func (m *MediaDir) Open(_ context.Context, id, name string) (io.ReadCloser, error) {
	p, err := m.path(id, name)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, ErrNotFound
	}
	return f, err
}

// Remove deletes the measure's folder and all in it.
func (m *MediaDir) Remove(_ context.Context, id string) error {
	dir, err := m.dir(id)
	if err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("media remove %s: %w", id, err)
	}
	return nil
}

// List reads the measure folders under Root; anything else there is not
// ours and is left alone.
func (m *MediaDir) List(context.Context) ([]string, error) {
	entries, err := os.ReadDir(m.Root)
	if err != nil {
		return nil, fmt.Errorf("media list: %w", err)
	}
	var ids []string
	for _, e := range entries {
		if _, err := m.dir(e.Name()); err == nil && e.IsDir() {
			ids = append(ids, e.Name())
		}
	}
	return ids, nil
}

// contextReader stops a copy when its context ends.
type contextReader struct {
	ctx context.Context
	r   io.Reader
}

func (c contextReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

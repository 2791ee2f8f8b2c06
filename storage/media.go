package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"github.com/google/uuid"
)

// Media keeps the files of measures (videos, images, captures, signals),
// grouped by measure: in a folder (MediaDir) or in an S3-compatible object
// store (S3Media), behind the same methods, so that the rules around them
// never ask where they are.
type Media interface {
	// Put stores the contents of r as file name of measure id, replacing
	// any file of that name. It streams: r is never held whole in memory.
	// A reader error leaves nothing behind, and a reader never sees half a
	// file.
	Put(ctx context.Context, id, name string, r io.Reader) error
	// Open reads back file name of measure id; ErrNotFound when there is
	// none.
	Open(ctx context.Context, id, name string) (io.ReadCloser, error)
	// Remove deletes every file of measure id. A measure with no files is
	// no error, so an interrupted removal can simply be run again.
	Remove(ctx context.Context, id string) error
	// List returns the measures that have files, for the sweep that
	// removes what a crash left behind.
	List(ctx context.Context) ([]StoredMedia, error)
	// Check reports whether the media can be reached now (the folder is
	// there, the bucket answers): the server's readiness.
	Check(ctx context.Context) error
}

// StoredMedia is what List says of one measure's files.
type StoredMedia struct {
	ID string
	// Modified is when a file of the measure last changed (at least
	// roughly: the folder's time, the newest object's).
	Modified time.Time
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

// checkMediaID refuses an id that is not a canonical UUID: a measure's
// media can never name a path or a key outside its own.
func checkMediaID(id string) error {
	u, err := uuid.Parse(id)
	if err != nil || u.String() != id {
		return fmt.Errorf("media: bad measure id %q", id)
	}
	return nil
}

// checkMediaFile refuses what is not a plain file name, and a bad id.
func checkMediaFile(id, name string) error {
	if err := checkMediaID(id); err != nil {
		return err
	}
	if !mediaName.MatchString(name) {
		return fmt.Errorf("media: bad file name %q", name)
	}
	return nil
}

// dir is the folder of measure id.
func (m *MediaDir) dir(id string) (string, error) {
	if err := checkMediaID(id); err != nil {
		return "", err
	}
	return filepath.Join(m.Root, id), nil
}

func (m *MediaDir) path(id, name string) (string, error) {
	if err := checkMediaFile(id, name); err != nil {
		return "", err
	}
	return filepath.Join(m.Root, id, name), nil
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
			// and the measure's folder if that leaves it empty:
			// List takes every folder for a measure with files.
			os.Remove(filepath.Dir(target))
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

// List reads the measure folders under Root, each with its time: a folder
// changes when a file is created or renamed in it. Anything else there is
// not ours and is left alone.
// Check reports whether the root folder is there: a disk unmounted, or a
// folder removed under the server, takes no upload.
func (m *MediaDir) Check(context.Context) error {
	fi, err := os.Stat(m.Root)
	if err == nil && !fi.IsDir() {
		err = fmt.Errorf("%s is not a folder", m.Root)
	}
	if err != nil {
		return fmt.Errorf("media: %w", err)
	}
	return nil
}

func (m *MediaDir) List(context.Context) ([]StoredMedia, error) {
	entries, err := os.ReadDir(m.Root)
	if err != nil {
		return nil, fmt.Errorf("media list: %w", err)
	}
	var stored []StoredMedia
	for _, e := range entries {
		if checkMediaID(e.Name()) != nil || !e.IsDir() {
			continue
		}
		info, err := e.Info()
		if errors.Is(err, os.ErrNotExist) { // removed meanwhile
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("media list: %w", err)
		}
		stored = append(stored, StoredMedia{ID: e.Name(), Modified: info.ModTime()})
	}
	return stored, nil
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

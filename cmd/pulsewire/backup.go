package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pulsewire/pulsewire/control"
	"github.com/pulsewire/pulsewire/storage"
)

// A backup folder has the layout of a data folder, so that restore is a
// checked copy: <env>/pulsewire.db (a consistent copy of the database),
// <env>/media/<measure id>/<file> (the media of the measures the copy holds
// as ended), and manifest.json, which lists every file with its size and
// SHA-256.

const backupUsage = `Usage: pulsewire backup --data-dir D --out DIR

Copies both environments' databases and media from the data folder D into
the new folder DIR, safely while the server runs and writes: each database
is copied as one consistent state (SQLite's VACUUM INTO), then the media of
the measures that state holds as ended. DIR is written under a temporary
name and renamed when complete, so a DIR that exists is a whole backup.
Prints a summary as JSON. Restore with 'pulsewire restore'.

Flags:
`

// manifestName is the manifest's file name in a backup folder.
const manifestName = "manifest.json"

// backupFormat is the version of the backup layout this binary writes and
// reads.
const backupFormat = 1

type manifest struct {
	Format       int                            `json:"format"`
	CreatedAt    string                         `json:"createdAt"`
	Environments map[control.Env]*envBackupList `json:"environments"`
}

type envBackupList struct {
	Database backupFile   `json:"database"`
	Media    []backupFile `json:"media"`
}

// backupFile is one file of a backup: Measure and Name for media.
type backupFile struct {
	Measure string `json:"measure,omitempty"`
	Name    string `json:"name,omitempty"`
	Bytes   int64  `json:"bytes"`
	SHA256  string `json:"sha256"`
}

// databaseName is an environment's database file in a data folder (see
// openEnvironment) and in a backup.
const databaseName = "pulsewire.db"

func runBackup(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	flags := flag.NewFlagSet("backup", flag.ContinueOnError)
	flags.SetOutput(stderr)
	dataDir := flags.String("data-dir", "./data", "the data folder of the server")
	out := flags.String("out", "", "the new folder the backup is written to")
	flags.Usage = func() { fmt.Fprint(flags.Output(), backupUsage); flags.PrintDefaults() }
	withEnvNames(flags)
	if err := parseFlags(flags, args, stdout); err != nil {
		return helpIsDone(err)
	}
	if *out == "" || flags.NArg() > 0 {
		flags.Usage()
		return errUsage
	}
	if _, err := os.Lstat(*out); !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("--out %s exists: a backup goes into a new folder", *out)
	}
	if inside(*out, *dataDir) {
		return fmt.Errorf("--out %s is inside the data folder %s: a backup there is lost with the data, and a restore moves it away with the folder", *out, *dataDir)
	}
	start := time.Now()
	tmp := fmt.Sprintf("%s.partial-%s", filepath.Clean(*out), randomSuffix())
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	m, err := backup(ctx, *dataDir, tmp)
	if err == nil {
		err = writeManifest(tmp, m)
	}
	if err == nil {
		err = os.Rename(tmp, *out)
	}
	if err != nil {
		os.RemoveAll(tmp)
		return err
	}
	syncDir(filepath.Dir(*out))
	return printSummary(stdout, *out, m, time.Since(start))
}

// inside reports whether path is dir or lies under it, once both are
// absolute (symbolic links are not followed).
func inside(path, dir string) bool {
	p, perr := filepath.Abs(path)
	d, derr := filepath.Abs(dir)
	if perr != nil || derr != nil {
		return false
	}
	rel, err := filepath.Rel(d, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// backup copies every environment dataDir holds into the folder tmp.
func backup(ctx context.Context, dataDir, tmp string) (*manifest, error) {
	m := &manifest{Format: backupFormat, CreatedAt: time.Now().UTC().Format(time.RFC3339), Environments: map[control.Env]*envBackupList{}}
	for _, env := range []control.Env{control.Production, control.Test} {
		src := filepath.Join(dataDir, string(env))
		if _, err := os.Stat(filepath.Join(src, databaseName)); errors.Is(err, fs.ErrNotExist) {
			continue // an environment never served has nothing to keep
		}
		list, err := backupEnvironment(ctx, src, filepath.Join(tmp, string(env)))
		if err != nil {
			return nil, fmt.Errorf("backup %s: %w", env, err)
		}
		m.Environments[env] = list
	}
	if len(m.Environments) == 0 {
		return nil, fmt.Errorf("backup: no database in %s (neither %s nor %s)", dataDir,
			filepath.Join(string(control.Production), databaseName), filepath.Join(string(control.Test), databaseName))
	}
	return m, nil
}

// backupEnvironment copies the database of the environment folder src into
// dst, then the media of the measures the copy holds as ended: a measure
// ended later is not in the copy, so its media are not needed; one deleted
// meanwhile keeps its record in the copy, and its media if they were still
// there (media are never changed, only added and removed).
func backupEnvironment(ctx context.Context, src, dst string) (*envBackupList, error) {
	if err := os.MkdirAll(dst, 0o700); err != nil {
		return nil, err
	}
	dbFile := filepath.Join(dst, databaseName)
	if err := storage.Backup(ctx, filepath.Join(src, databaseName), dbFile); err != nil {
		return nil, err
	}
	list := &envBackupList{}
	var err error
	if list.Database, err = hashFile(dbFile); err != nil {
		return nil, err
	}
	db, err := storage.OpenReadOnly(dbFile)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	if err := db.Verify(ctx); err != nil {
		return nil, err
	}
	from := &storage.MediaDir{Root: filepath.Join(src, "media")}
	stored, err := from.List(ctx)
	if errors.Is(err, fs.ErrNotExist) {
		return list, nil
	}
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(stored))
	for i, m := range stored {
		ids[i] = m.ID
	}
	ended, err := db.EndedAmong(ctx, ids)
	if err != nil {
		return nil, err
	}
	to, err := storage.NewMediaDir(filepath.Join(dst, "media"))
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		if !ended[id] {
			continue
		}
		names, err := from.Files(id)
		if err != nil {
			return nil, err
		}
		for _, name := range names {
			f, err := copyMedia(ctx, from, to, id, name)
			if errors.Is(err, storage.ErrNotFound) {
				continue // deleted while the backup ran
			}
			if err != nil {
				return nil, err
			}
			list.Media = append(list.Media, f)
		}
	}
	return list, nil
}

// copyMedia copies file name of measure id from one media folder to
// another (Put syncs it), and returns its size and SHA-256 as read.
func copyMedia(ctx context.Context, from, to *storage.MediaDir, id, name string) (backupFile, error) {
	rc, err := from.Open(ctx, id, name)
	if err != nil {
		return backupFile{}, err
	}
	defer rc.Close()
	h := &hashingReader{r: rc, h: sha256.New()}
	if err := to.Put(ctx, id, name, h); err != nil {
		return backupFile{}, err
	}
	return backupFile{Measure: id, Name: name, Bytes: h.n, SHA256: hex.EncodeToString(h.h.Sum(nil))}, nil
}

// hashingReader hashes and counts what is read through it.
type hashingReader struct {
	r io.Reader
	h hash.Hash
	n int64
}

func (h *hashingReader) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	h.h.Write(p[:n])
	h.n += int64(n)
	return n, err
}

func hashFile(name string) (backupFile, error) {
	f, err := os.Open(name)
	if err != nil {
		return backupFile{}, err
	}
	defer f.Close()
	h := &hashingReader{r: f, h: sha256.New()}
	if _, err := io.Copy(io.Discard, h); err != nil {
		return backupFile{}, err
	}
	return backupFile{Bytes: h.n, SHA256: hex.EncodeToString(h.h.Sum(nil))}, nil
}

func writeManifest(dir string, m *manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(dir, manifestName), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// syncDir makes a rename in dir durable; a file system that cannot sync a
// folder has nothing more to do.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

func randomSuffix() string {
	b := make([]byte, 4)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// printSummary prints what a backup or a restore holds, as JSON.
func printSummary(w io.Writer, dir string, m *manifest, took time.Duration) error {
	type envSummary struct {
		DatabaseBytes int64 `json:"databaseBytes"`
		MediaFiles    int   `json:"mediaFiles"`
		MediaBytes    int64 `json:"mediaBytes"`
	}
	s := struct {
		Folder       string                     `json:"folder"`
		CreatedAt    string                     `json:"createdAt"`
		Environments map[control.Env]envSummary `json:"environments"`
		Seconds      float64                    `json:"seconds"`
	}{dir, m.CreatedAt, map[control.Env]envSummary{}, took.Round(time.Millisecond).Seconds()}
	for env, list := range m.Environments {
		e := envSummary{DatabaseBytes: list.Database.Bytes, MediaFiles: len(list.Media)}
		for _, f := range list.Media {
			e.MediaBytes += f.Bytes
		}
		s.Environments[env] = e
	}
	return json.NewEncoder(w).Encode(s)
}

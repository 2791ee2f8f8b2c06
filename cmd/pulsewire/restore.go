package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/pulsewire/pulsewire/control"
	"github.com/pulsewire/pulsewire/storage"
)

const restoreUsage = `Usage: pulsewire restore --from DIR --data-dir D

Restores the backup in DIR into the data folder D, which must not hold the
environments restored (a new or empty folder) and no server may be using
(stop it first): every file is checked
against the backup's manifest (size and SHA-256) and each database with
SQLite's integrity check before anything is put in place. Measures whose
run was in progress when the backup was made end with PROCESSOR_FAIL, as
when a server dies during a run. Then start the server on D. Prints a
summary as JSON.

Flags:
`

func runRestore(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	flags := flag.NewFlagSet("restore", flag.ContinueOnError)
	flags.SetOutput(stderr)
	from := flags.String("from", "", "the backup folder 'pulsewire backup' wrote")
	dataDir := flags.String("data-dir", "./data", "the data folder to restore into")
	flags.Usage = func() { fmt.Fprint(flags.Output(), restoreUsage); flags.PrintDefaults() }
	withEnvNames(flags)
	if err := parseFlags(flags, args, stdout); err != nil {
		return helpIsDone(err)
	}
	if *from == "" || flags.NArg() > 0 {
		flags.Usage()
		return errUsage
	}
	start := time.Now()
	m, err := readManifest(*from)
	if err != nil {
		return err
	}
	// A server on the folder would keep writing to the databases it holds
	// open, past the restored ones: restore only into a folder no server
	// holds, and hold it meanwhile.
	lockFile := filepath.Join(*dataDir, lockName)
	_, statErr := os.Stat(lockFile)
	unlock, err := lockDataDir(*dataDir)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if unlock != nil {
		defer unlock()
	}
	defer func() {
		if err != nil && errors.Is(statErr, fs.ErrNotExist) {
			os.Remove(lockFile) // a failed restore leaves the folder as it was
		}
	}()
	// Nothing is touched unless every environment can be restored.
	for env := range m.Environments {
		target := filepath.Join(*dataDir, string(env))
		if entries, err := os.ReadDir(target); err == nil && len(entries) > 0 {
			return fmt.Errorf("restore: %s is not empty: restore into a new data folder, or move it away first", target)
		}
	}
	if err := os.MkdirAll(*dataDir, 0o700); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	tmp, err := os.MkdirTemp(*dataDir, ".restore-")
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	defer os.RemoveAll(tmp)
	for env, list := range m.Environments {
		if err := restoreEnvironment(ctx, env, list, filepath.Join(*from, string(env)), filepath.Join(tmp, string(env))); err != nil {
			return fmt.Errorf("restore %s: %w", env, err)
		}
	}
	// Every environment is checked and copied: now they go in place.
	for env := range m.Environments {
		target := filepath.Join(*dataDir, string(env))
		os.Remove(target) // empty, if there
		if err := os.Rename(filepath.Join(tmp, string(env)), target); err != nil {
			return fmt.Errorf("restore %s: %w", env, err)
		}
	}
	syncDir(*dataDir)
	return printSummary(stdout, *dataDir, m, time.Since(start))
}

// readManifest reads a backup's manifest and refuses what this binary
// cannot restore.
func readManifest(dir string) (*manifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, manifestName))
	if err != nil {
		return nil, fmt.Errorf("restore: %w (is %s a complete backup?)", err, dir)
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("restore: %s: %w", manifestName, err)
	}
	if m.Format != backupFormat {
		return nil, fmt.Errorf("restore: backup format %d; this version reads format %d", m.Format, backupFormat)
	}
	if len(m.Environments) == 0 {
		return nil, fmt.Errorf("restore: %s lists no environment", manifestName)
	}
	for env := range m.Environments {
		if _, err := control.ParseEnv(string(env)); err != nil {
			return nil, fmt.Errorf("restore: %s: %w", manifestName, err)
		}
	}
	return &m, nil
}

// restoreEnvironment copies one environment of a backup (src) into dst,
// checking every file against the manifest as it is copied, and the
// database with SQLite's integrity check. Runs that were in progress when
// the backup was made can never finish (their uploads were not copied,
// their server is not this one): they end at once, as the sweep ends the
// runs of a server that died, with PROCESSOR_FAIL.
func restoreEnvironment(ctx context.Context, env control.Env, list *envBackupList, src, dst string) error {
	if err := os.MkdirAll(dst, 0o700); err != nil {
		return err
	}
	dbFile := filepath.Join(dst, databaseName)
	got, err := copyFile(filepath.Join(src, databaseName), dbFile)
	if err != nil {
		return err
	}
	if got.Bytes != list.Database.Bytes || got.SHA256 != list.Database.SHA256 {
		return fmt.Errorf("%s differs from the manifest: the backup is damaged", databaseName)
	}
	db, err := storage.OpenReadOnly(dbFile)
	if err != nil {
		return err
	}
	err = db.Verify(ctx)
	db.Close()
	if err != nil {
		return err
	}
	from := &storage.MediaDir{Root: filepath.Join(src, "media")}
	to, err := storage.NewMediaDir(filepath.Join(dst, "media"))
	if err != nil {
		return err
	}
	for _, want := range list.Media {
		got, err := copyMedia(ctx, from, to, want.Measure, want.Name)
		if err != nil {
			return err
		}
		if got != want {
			return fmt.Errorf("media %s/%s differs from the manifest: the backup is damaged", want.Measure, want.Name)
		}
	}
	return endCutRuns(ctx, env, dbFile, to)
}

// copyFile copies src to the new file dst, synced, and returns the size
// and SHA-256 it read.
func copyFile(src, dst string) (backupFile, error) {
	in, err := os.Open(src)
	if err != nil {
		return backupFile{}, err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return backupFile{}, err
	}
	h := &hashingReader{r: in, h: sha256.New()}
	_, err = io.Copy(out, h)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return backupFile{}, err
	}
	return backupFile{Bytes: h.n, SHA256: hex.EncodeToString(h.h.Sum(nil))}, nil
}

// endCutRuns ends every run still in progress in the database file, whose
// media are in media: every server the copy knows of is gone.
func endCutRuns(ctx context.Context, env control.Env, dbFile string, media storage.Media) error {
	db, err := storage.Open(ctx, dbFile, storage.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = control.NewService(env, db, media).SweepRuns(ctx, 0)
	return err
}

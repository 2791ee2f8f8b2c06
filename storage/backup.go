package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
	"time"
)

// Backup writes a consistent copy of the database file src to the new file
// dst while servers and commands go on reading and writing src: VACUUM INTO
// reads one committed state in a single read transaction, which in WAL mode
// never holds up a writer, and writes it compacted. The copy is synced to
// disk before Backup returns. src is opened read-only and never migrated,
// so that a newer binary backs up a server it has not upgraded yet.
func Backup(ctx context.Context, src, dst string) error {
	if strings.ContainsAny(src, "?#") {
		return fmt.Errorf("backup: path %q must not contain ? or #", src)
	}
	if _, err := os.Stat(src); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if _, err := os.Lstat(dst); !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("backup: %s exists", dst)
	}
	db, err := sql.Open("sqlite", "file:"+strings.ReplaceAll(src, "%", "%25")+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		return fmt.Errorf("backup %s: %w", src, err)
	}
	defer db.Close()
	// The copy, like the database, is for its owner alone: VACUUM INTO
	// writes into an empty file as it finds it.
	if err := createPrivate(dst); err != nil {
		return fmt.Errorf("backup %s: %w", src, err)
	}
	if _, err := db.ExecContext(ctx, `VACUUM INTO ?`, dst); err != nil {
		os.Remove(dst)
		return fmt.Errorf("backup %s: %w", src, err)
	}
	if err := syncFile(dst); err != nil {
		return fmt.Errorf("backup %s: %w", src, err)
	}
	return nil
}

func syncFile(name string) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// OpenReadOnly opens a database file as it is, for reading only: nothing is
// migrated, and every write fails. It reads backups, which nobody writes
// while they are read.
func OpenReadOnly(file string) (*DB, error) {
	if strings.ContainsAny(file, "?#") {
		return nil, fmt.Errorf("open database: path %q must not contain ? or #", file)
	}
	if _, err := os.Stat(file); err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	db, err := sql.Open("sqlite", "file:"+strings.ReplaceAll(file, "%", "%25")+"?mode=ro&immutable=1")
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", file, err)
	}
	return &DB{read: db, write: db, e: sqliteEngine, now: time.Now, loc: time.UTC}, nil
}

// ErrNewerSchema: a database holds migrations this binary does not know, so
// it was written by a newer version, which this one must not serve.
var ErrNewerSchema = errors.New("storage: the database was written by a newer version")

// Verify checks a database file: SQLite's integrity check passes, and its
// schema is one this binary can serve (every migration it records is one
// this binary has; it applies the missing ones when it opens the file).
func (db *DB) Verify(ctx context.Context) error {
	rows, err := db.read.QueryContext(ctx, `PRAGMA integrity_check`)
	if err != nil {
		return fmt.Errorf("verify database: %w", err)
	}
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			rows.Close()
			return fmt.Errorf("verify database: %w", err)
		}
		if line != "ok" {
			problems = append(problems, line)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("verify database: %w", err)
	}
	if len(problems) > 0 {
		return fmt.Errorf("verify database: %s", strings.Join(problems, "; "))
	}
	known := map[string]bool{}
	names, err := fs.Glob(migrations, "migrations/"+sqliteEngine.name+"/*.sql")
	if err != nil {
		return err
	}
	for _, n := range names {
		known[path.Base(n)] = true
	}
	rows, err = db.read.QueryContext(ctx, `SELECT name FROM schema_migrations`)
	if err != nil {
		return fmt.Errorf("verify database: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return fmt.Errorf("verify database: %w", err)
		}
		if !known[name] {
			return fmt.Errorf("%w (migration %s)", ErrNewerSchema, name)
		}
	}
	return rows.Err()
}

// Files lists the names of the files of measure id, none when it has no
// folder. Files being written (Put's temporary files) are left out.
func (m *MediaDir) Files(id string) ([]string, error) {
	dir, err := m.dir(id)
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("media files of %s: %w", id, err)
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() && mediaName.MatchString(e.Name()) { // not .put-*
			names = append(names, e.Name())
		}
	}
	return names, nil
}

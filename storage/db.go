package storage

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Sentinel errors. Callers compare with errors.Is; the control plane maps them
// to its own error codes.
var (
	// ErrNotFound: no record with that id belongs to the caller. A record of
	// another client is reported exactly like one that never existed.
	ErrNotFound = errors.New("storage: not found")
	// ErrDurationCeiling: a token's calendar duration exceeds MaxTokenDuration
	// once resolved on the configured time zone (a day is not always 24 h).
	ErrDurationCeiling = errors.New("storage: token duration exceeds the ceiling on the calendar")
)

// DB is the database of one environment. It holds two pools over the same
// SQLite file: one connection for writes, because SQLite has a single writer
// and queueing writers in Go is cheaper than SQLITE_BUSY retries, and a pool
// for reads, which in WAL mode never wait for the writer.
type DB struct {
	write *sql.DB
	read  *sql.DB
	now   func() time.Time
	loc   *time.Location
}

// Options configure a DB. The zero value is ready to use.
type Options struct {
	// Now is the clock that stamps every record (createdAt, expiresAt); nil
	// means time.Now. Tests inject a fixed clock.
	Now func() time.Time
	// Location is the calendar on which a token duration in days is counted;
	// nil means UTC.
	Location *time.Location
	// ReadConns bounds the read pool; 0 means 4.
	ReadConns int
}

//go:embed migrations/*.sql
var migrations embed.FS

// Open opens (creating if needed) the SQLite database at file and brings its
// schema up to date. Several processes may open the same file at once (the
// server and the client command): WAL mode lets readers run beside the writer,
// busy_timeout makes a second writer wait instead of failing, and
// BEGIN IMMEDIATE (_txlock) takes the write lock at the start of a
// transaction so that a read-then-write transaction never fails half-way.
// synchronous=FULL makes every answered write durable, power cut included.
func Open(ctx context.Context, file string, opts Options) (*DB, error) {
	if strings.ContainsAny(file, "?#") {
		return nil, fmt.Errorf("open database: path %q must not contain ? or #", file)
	}
	base := "file:" + strings.ReplaceAll(file, "%", "%25") +
		"?_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=mmap_size(268435456)"
	write, err := sql.Open("sqlite", base+"&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", file, err)
	}
	write.SetMaxOpenConns(1)
	write.SetConnMaxIdleTime(0)
	read, err := sql.Open("sqlite", base+"&_pragma=query_only(1)")
	if err != nil {
		write.Close()
		return nil, fmt.Errorf("open database %s: %w", file, err)
	}
	n := opts.ReadConns
	if n <= 0 {
		n = 4
	}
	read.SetMaxOpenConns(n)
	read.SetMaxIdleConns(n)
	db := &DB{write: write, read: read, now: opts.Now, loc: opts.Location}
	if db.now == nil {
		db.now = time.Now
	}
	if db.loc == nil {
		db.loc = time.UTC
	}
	if err := db.migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open database %s: %w", file, err)
	}
	return db, nil
}

// Close closes both pools.
func (db *DB) Close() error {
	return errors.Join(db.read.Close(), db.write.Close())
}

// migrate applies, in name order, every embedded migration not yet recorded
// in schema_migrations, each in its own write transaction so that two
// processes opening a fresh file at once apply each migration exactly once.
func (db *DB) migrate(ctx context.Context) error {
	if _, err := db.write.ExecContext(ctx,
		`CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return err
	}
	sort.Strings(names)
	for _, name := range names {
		body, err := migrations.ReadFile(name)
		if err != nil {
			return err
		}
		name = path.Base(name)
		err = db.inWrite(ctx, func(tx *sql.Tx) error {
			var done int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations WHERE name = ?`, name).Scan(&done); err != nil {
				return err
			}
			if done > 0 {
				return nil
			}
			if _, err := tx.ExecContext(ctx, string(body)); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)`, name, db.now().UnixMilli())
			return err
		})
		if err != nil {
			return fmt.Errorf("migration %s: %w", name, err)
		}
	}
	return nil
}

// inWrite runs fn in a write transaction and commits it when fn returns nil.
func (db *DB) inWrite(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// inRead runs fn in a read transaction: every query of fn sees one snapshot.
func (db *DB) inRead(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := db.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	return fn(tx)
}

// millis stores a time as Unix milliseconds, the precision of the API.
func millis(t time.Time) int64 { return t.UnixMilli() }

// fromMillis reads a time stored by millis, in UTC.
func fromMillis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// Now is the time on the store's clock, in its time zone: the calendar on
// which the rules count days (a token's days, a date of birth).
func (db *DB) Now() time.Time { return db.now().In(db.loc) }

// stamp reads the clock truncated to the millisecond, so that what is stored
// and what is answered are the same instant.
func (db *DB) stamp() time.Time { return fromMillis(db.now().UnixMilli()) }

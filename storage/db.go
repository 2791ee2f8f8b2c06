package storage

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"
	"modernc.org/sqlite" // also registers the "sqlite" driver
	sqlite3 "modernc.org/sqlite/lib"
)

// Sentinel errors. Callers compare with errors.Is; the control plane maps them
// to its own error codes.
var (
	// ErrNotFound: no record with that id belongs to the caller. A record of
	// another client is reported exactly like one that never existed.
	ErrNotFound = errors.New("storage: not found")
)

// DB is the database of one environment, in an SQLite file (one box) or in a
// schema of a PostgreSQL database (several instances of the server sharing
// it). Its methods are the same on both, and so are their guarantees: what
// they count (sessions, openings, requests, credits) is decided in one
// transaction, so it holds for every process working on the same database.
//
// On SQLite it holds two pools over the file: one connection for writes,
// because SQLite has a single writer and queueing writers in Go is cheaper
// than SQLITE_BUSY retries, and a pool for reads, which in WAL mode never
// wait for the writer. On PostgreSQL both are one pool.
type DB struct {
	write, read *sql.DB
	e           *engine
	now         func() time.Time
	loc         *time.Location
	instance    string
}

// Options configure a DB. The zero value is ready to use.
type Options struct {
	// Now is the clock that stamps every record (createdAt, expiresAt) and
	// that every rate is counted on; nil means time.Now. Tests inject a
	// fixed clock.
	Now func() time.Time
	// Location is the calendar on which a token duration in days is counted;
	// nil means UTC.
	Location *time.Location
	// ReadConns bounds the read pool (SQLite) or the one pool (PostgreSQL);
	// 0 means 4 and 8.
	ReadConns int
	// Instance names the server process that works on the database: the
	// runs it starts are its own (see Sweep). Empty: a fresh random name.
	Instance string
}

//go:embed migrations
var migrations embed.FS

// Open opens (creating if needed) the SQLite database at file and brings its
// schema up to date. Several processes may open the same file at once (the
// server and the client command): WAL mode (walMode) lets readers run beside
// the writer, busy_timeout makes a second writer wait instead of failing, and
// BEGIN IMMEDIATE (_txlock) takes the write lock at the start of a
// transaction so that a read-then-write transaction never fails half-way.
// synchronous=FULL makes every answered write durable, power cut included.
func Open(ctx context.Context, file string, opts Options) (*DB, error) {
	if strings.ContainsAny(file, "?#") {
		return nil, fmt.Errorf("open database: path %q must not contain ? or #", file)
	}
	if err := createPrivate(file); err != nil {
		return nil, fmt.Errorf("open database %s: %w", file, err)
	}
	dsn := "file:" + strings.ReplaceAll(file, "%", "%25") + "?_pragma=busy_timeout(10000)"
	if err := walMode(ctx, dsn); err != nil {
		return nil, fmt.Errorf("open database %s: %w", file, err)
	}
	base := dsn + "&_pragma=foreign_keys(1)&_pragma=synchronous(FULL)&_pragma=mmap_size(268435456)"
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
	db := newDB(write, read, sqliteEngine, opts)
	if err := db.migrate(ctx, func(ctx context.Context, run func(context.Context, dbtx) error) error {
		return run(ctx, db.writer())
	}); err != nil {
		db.Close()
		return nil, fmt.Errorf("open database %s: %w", file, err)
	}
	return db, nil
}

// createPrivate creates file, empty, readable by its owner alone, unless it
// exists: SQLite would make a new database readable by everyone (0644),
// and it gives the files beside it (-wal, -shm) the database's mode. An
// empty file is a new database to SQLite.
func createPrivate(file string) error {
	f, err := os.OpenFile(file, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return f.Close()
}

// walMode puts the file in WAL mode, which the file keeps, so that every
// connection opened after it (the pools) is in WAL mode. Switching a new file
// to WAL is done once, here, and retried: SQLite answers SQLITE_BUSY at once,
// without waiting out busy_timeout, to a connection that asks for the switch
// while another process makes it on the same new file.
func walMode(ctx context.Context, dsn string) error {
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var mode string
		err := db.QueryRowContext(ctx, `PRAGMA journal_mode=WAL`).Scan(&mode)
		var se *sqlite.Error
		if errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_BUSY && time.Now().Before(deadline) {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(10 * time.Millisecond):
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("set WAL mode: %w", err)
		}
		if mode != "wal" {
			return fmt.Errorf("set WAL mode: the file stays in %s mode", mode)
		}
		return nil
	}
}

func newDB(write, read *sql.DB, e *engine, opts Options) *DB {
	db := &DB{write: write, read: read, e: e, now: opts.Now, loc: opts.Location, instance: opts.Instance}
	if db.now == nil {
		db.now = time.Now
	}
	if db.loc == nil {
		db.loc = time.UTC
	}
	if db.instance == "" {
		db.instance = uuid.NewString()
	}
	return db
}

// Close closes the pools.
func (db *DB) Close() error {
	if db.read == db.write {
		return db.write.Close()
	}
	return errors.Join(db.read.Close(), db.write.Close())
}

// Engine names the database the DB runs on: "sqlite" or "postgres".
func (db *DB) Engine() string { return db.e.name }

// writer and reader run single statements on the write and read pools.
func (db *DB) writer() dbtx { return dbtx{db.write, db.e} }
func (db *DB) reader() dbtx { return dbtx{db.read, db.e} }

// migrate applies, in name order, every embedded migration of the engine
// not yet recorded in schema_migrations, each in its own write transaction.
// locked runs its function while no other process migrates the same
// database, on the runner it is given: SQLite's write lock does that for
// each transaction, PostgreSQL's advisory lock for the whole.
func (db *DB) migrate(ctx context.Context, locked func(context.Context, func(context.Context, dbtx) error) error) error {
	names, err := fs.Glob(migrations, "migrations/"+db.e.name+"/*.sql")
	if err != nil {
		return err
	}
	sort.Strings(names)
	return locked(ctx, func(ctx context.Context, on dbtx) error {
		if _, err := on.Exec(ctx,
			`CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at BIGINT NOT NULL)`); err != nil {
			return fmt.Errorf("create schema_migrations: %w", err)
		}
		for _, name := range names {
			body, err := migrations.ReadFile(name)
			if err != nil {
				return err
			}
			name = path.Base(name)
			err = inTx(ctx, on, nil, func(tx dbtx) error {
				var done int
				if err := tx.QueryRow(ctx, `SELECT count(*) FROM schema_migrations WHERE name = ?`, name).Scan(&done); err != nil {
					return err
				}
				if done > 0 {
					return nil
				}
				// No arguments: both drivers run a script of several
				// statements.
				if _, err := tx.r.ExecContext(ctx, string(body)); err != nil {
					return err
				}
				_, err := tx.Exec(ctx, `INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)`, name, db.now().UnixMilli())
				return err
			})
			if err != nil {
				return fmt.Errorf("migration %s: %w", name, err)
			}
		}
		return nil
	})
}

// beginner starts transactions: a pool or one connection.
type beginner interface {
	BeginTx(ctx context.Context, opts *sql.TxOptions) (*sql.Tx, error)
}

// inTx runs fn in a transaction of on's pool or connection and commits it
// when fn returns nil.
func inTx(ctx context.Context, on dbtx, opts *sql.TxOptions, fn func(tx dbtx) error) error {
	b, ok := on.r.(beginner)
	if !ok {
		return errors.New("storage: nested transaction")
	}
	sqlTx, err := b.BeginTx(ctx, opts)
	if err != nil {
		return err
	}
	if err := fn(dbtx{sqlTx, on.e}); err != nil {
		sqlTx.Rollback()
		return err
	}
	return sqlTx.Commit()
}

// maxAttempts bounds how often a write transaction that lost to a
// concurrent one is run again.
const maxAttempts = 5

// inWrite runs fn in a write transaction and commits it when fn returns
// nil; once the commit returns, the write is on disk. fn may run more than
// once (see engine.retryable): it must set what it reports afresh each
// time.
func (db *DB) inWrite(ctx context.Context, fn func(tx dbtx) error) error {
	var err error
	for range maxAttempts {
		if err = inTx(ctx, db.writer(), nil, fn); !db.e.retryable(err) {
			return err
		}
	}
	return err
}

// inLightWrite is inWrite for what may be lost on a power cut at no cost
// (rate counters, heartbeats): its commit does not wait for the disk, which
// is most of a small write's time. A crash of the process loses nothing.
func (db *DB) inLightWrite(ctx context.Context, fn func(tx dbtx) error) error {
	if db.e.lightBefore == "" {
		return db.inWrite(ctx, func(tx dbtx) error {
			if _, err := tx.Exec(ctx, db.e.lightInside); err != nil {
				return err
			}
			return fn(tx)
		})
	}
	conn, err := db.write.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, db.e.lightBefore); err != nil {
		return err
	}
	err = inTx(ctx, dbtx{conn, db.e}, nil, fn)
	// The connection goes back to the pool: it must be durable again even
	// if ctx has ended, and is dropped if it cannot be made so.
	if _, rerr := conn.ExecContext(context.WithoutCancel(ctx), db.e.lightAfter); rerr != nil {
		conn.Raw(func(any) error { return driver.ErrBadConn }) // database/sql drops it
		return errors.Join(err, rerr)
	}
	return err
}

// inRead runs fn in a read transaction: every query of fn sees one snapshot.
func (db *DB) inRead(ctx context.Context, fn func(tx dbtx) error) error {
	sqlTx, err := db.read.BeginTx(ctx, &db.e.readTx)
	if err != nil {
		return err
	}
	defer sqlTx.Rollback()
	return fn(dbtx{sqlTx, db.e})
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

package storage

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// engine is what differs between the two databases a DB runs on. The
// package's SQL is written once, with ? placeholders, in the subset both
// SQLite and PostgreSQL accept; what cannot be written so is here.
type engine struct {
	name string // "sqlite" or "postgres"
	// dollar: placeholders are $1, $2... (PostgreSQL) rather than ?.
	dollar bool
	// forUpdate ends a SELECT that must lock the rows it reads until the
	// transaction ends. SQLite needs none: its write transactions run one
	// at a time, which is a lock on everything.
	forUpdate string
	// skipLocked ends a SELECT that claims rows: it locks them and passes
	// over those another transaction holds. SQLite needs none, as above.
	skipLocked string
	// readTx opens a read transaction: one snapshot for all its queries.
	readTx sql.TxOptions
	// lightBefore and lightInside make a transaction's commit skip the wait
	// for the disk (see DB.inLightWrite): SQLite's is run on the connection
	// before the transaction (and lightAfter after it), PostgreSQL's inside.
	lightBefore, lightInside, lightAfter string
	// retryable says a transaction failed only because a concurrent one
	// won (a PostgreSQL deadlock or serialization failure) and may simply
	// be run again.
	retryable func(error) bool
}

var sqliteEngine = &engine{
	name:   "sqlite",
	readTx: sql.TxOptions{ReadOnly: true},
	// In WAL mode a commit at synchronous=NORMAL is as safe against a
	// crash of the process as one at FULL; only a power cut may lose it,
	// and the next FULL commit makes it durable as well.
	lightBefore: "PRAGMA synchronous = NORMAL",
	lightAfter:  "PRAGMA synchronous = FULL",
	retryable:   func(error) bool { return false },
}

var postgresEngine = &engine{
	name:        "postgres",
	dollar:      true,
	forUpdate:   " FOR UPDATE",
	skipLocked:  " FOR UPDATE SKIP LOCKED",
	readTx:      sql.TxOptions{ReadOnly: true, Isolation: sql.LevelRepeatableRead},
	lightInside: "SET LOCAL synchronous_commit = off",
	retryable: func(err error) bool {
		var pe *pgconn.PgError
		// 40001 serialization_failure, 40P01 deadlock_detected.
		return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
	},
}

// rebind writes query's ? placeholders the engine's way. The package's SQL
// holds no ? inside a string literal, so every ? is a placeholder.
func (e *engine) rebind(query string) string {
	if !e.dollar || !strings.Contains(query, "?") {
		return query
	}
	var b strings.Builder
	b.Grow(len(query) + 16)
	n := 0
	for i := 0; i < len(query); i++ {
		if query[i] == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(query[i])
	}
	return b.String()
}

// runner is what runs SQL: a pool, a connection or a transaction.
type runner interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	PrepareContext(ctx context.Context, query string) (*sql.Stmt, error)
}

// dbtx runs the package's SQL on a runner of an engine, rewriting each
// query for it. Every query of the package goes through one.
type dbtx struct {
	r runner
	e *engine
}

func (t dbtx) Exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return t.r.ExecContext(ctx, t.e.rebind(query), args...)
}

func (t dbtx) Query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return t.r.QueryContext(ctx, t.e.rebind(query), args...)
}

func (t dbtx) QueryRow(ctx context.Context, query string, args ...any) *sql.Row {
	return t.r.QueryRowContext(ctx, t.e.rebind(query), args...)
}

func (t dbtx) Prepare(ctx context.Context, query string) (*sql.Stmt, error) {
	return t.r.PrepareContext(ctx, t.e.rebind(query))
}

// lockClient locks the row of client key until the transaction ends, so
// that what the transaction decides for that client (a credit, an opening,
// a count) cannot interleave with another instance's decision. Every write
// transaction that takes it takes it first, so two of them never wait on
// each other in a cycle. SQLite runs its write transactions one at a time:
// nothing to lock.
func lockClient(ctx context.Context, tx dbtx, key int64) error {
	if tx.e.forUpdate == "" {
		return nil
	}
	var k int64
	return tx.QueryRow(ctx, `SELECT key FROM clients WHERE key = ?`+tx.e.forUpdate, key).Scan(&k)
}

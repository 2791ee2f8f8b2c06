package storage

import (
	"context"
	"fmt"
	"hash/fnv"
	"regexp"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// schemaName is what a schema may be called: a plain lower-case identifier,
// which needs no quoting anywhere.
var schemaName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// OpenPostgres opens the environment whose tables live in schema of the
// PostgreSQL database at url (postgres://user:pass@host:port/db?sslmode=...,
// or any form pgx reads), creating the schema if needed and bringing it up
// to date. Several instances may open the same schema at once: the
// migrations run under an advisory lock of that schema, so they are applied
// once, and an instance that waited finds them done.
func OpenPostgres(ctx context.Context, url, schema string, opts Options) (*DB, error) {
	if !schemaName.MatchString(schema) {
		return nil, fmt.Errorf("open database: schema %q must be a lower-case identifier", schema)
	}
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		// pgx's message hides the password.
		return nil, fmt.Errorf("open database: %w", err)
	}
	// Every table the package names is the schema's: the environments of
	// one database share nothing.
	cfg.RuntimeParams["search_path"] = schema
	// The package's queries are short, and JIT compiling one costs
	// 10-20 ms, more than running it. PostgreSQL decides by the plan's
	// estimated cost, and a list whose tag filter keeps most sets is
	// estimated costly however fast it runs. An operator's own setting
	// in the URL wins.
	if cfg.RuntimeParams["jit"] == "" {
		cfg.RuntimeParams["jit"] = "off"
	}
	if cfg.RuntimeParams["application_name"] == "" {
		cfg.RuntimeParams["application_name"] = "pulsewire"
	}
	pool := stdlib.OpenDB(*cfg)
	n := opts.ReadConns
	if n <= 0 {
		n = 8
	}
	pool.SetMaxOpenConns(n)
	pool.SetMaxIdleConns(n)
	pool.SetConnMaxIdleTime(5 * time.Minute)
	db := newDB(pool, pool, postgresEngine, opts)
	if err := db.migrate(ctx, func(ctx context.Context, run func(context.Context, dbtx) error) error {
		return db.underMigrationLock(ctx, schema, run)
	}); err != nil {
		db.Close()
		return nil, fmt.Errorf("open database schema %s: %w", schema, err)
	}
	return db, nil
}

// underMigrationLock runs fn on one connection that holds the schema's
// advisory lock, after creating the schema: instances that start together
// migrate one after the other.
func (db *DB) underMigrationLock(ctx context.Context, schema string, fn func(context.Context, dbtx) error) error {
	conn, err := db.write.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	h := fnv.New64a()
	h.Write([]byte("pulsewire migrations " + schema))
	key := int64(h.Sum64())
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, key); err != nil {
		return fmt.Errorf("take the migration lock: %w", err)
	}
	// A session lock outlives a failed statement; it is given back on
	// every path, and with the connection should that fail.
	defer conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, key)
	// A schema made beforehand (by an administrator who gave its user no
	// right to create schemas) is used as it is: CREATE SCHEMA IF NOT
	// EXISTS asks for that right even when the schema exists.
	var exists bool
	if err := conn.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)`, schema).Scan(&exists); err != nil {
		return fmt.Errorf("look up schema %s: %w", schema, err)
	}
	if !exists {
		if _, err := conn.ExecContext(ctx, `CREATE SCHEMA IF NOT EXISTS `+schema); err != nil {
			return fmt.Errorf("create schema: %w", err)
		}
	}
	return fn(ctx, dbtx{conn, db.e})
}

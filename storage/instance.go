package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"
)

// An instance is one server process working on the database. Several may
// share one (PostgreSQL); each records itself in the instances table with
// the address its environment's listener is reached at by the others, and
// renews the record with a heartbeat. What an instance holds in memory, a
// live session or a run in progress, is recorded with its name, so that the
// others can hand a request on to it while it lives, and end what it left
// once it is gone.

// Instance names the instance this DB works for (Options.Instance).
func (db *DB) Instance() string { return db.instance }

// Heartbeat records that this DB's instance is alive, reached at address
// (host:port) by the other instances; the first call registers it.
func (db *DB) Heartbeat(ctx context.Context, address string) error {
	now := millis(db.now())
	err := db.inLightWrite(ctx, func(tx dbtx) error {
		_, err := tx.Exec(ctx,
			`INSERT INTO instances (id, address, started_at, seen_at) VALUES (?, ?, ?, ?)
			 ON CONFLICT (id) DO UPDATE SET address = excluded.address, seen_at = excluded.seen_at`,
			db.instance, address, now, now)
		return err
	})
	if err != nil {
		return fmt.Errorf("heartbeat: %w", err)
	}
	return nil
}

// Leave removes this DB's instance and its live sessions from the
// database: a clean stop, after which nothing can be handed on to it.
func (db *DB) Leave(ctx context.Context) error {
	err := db.inWrite(ctx, func(tx dbtx) error { return forgetInstance(ctx, tx, db.instance) })
	if err != nil {
		return fmt.Errorf("leave: %w", err)
	}
	return nil
}

func forgetInstance(ctx context.Context, tx dbtx, id string) error {
	if _, err := tx.Exec(ctx, `DELETE FROM live_sessions WHERE instance = ?`, id); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `DELETE FROM instances WHERE id = ?`, id)
	return err
}

// ForgetInstances removes the instances last seen before goneBefore, with
// their live sessions, and returns how many. End their runs first
// (StaleRuns): a run whose instance has no record counts as gone from the
// start.
func (db *DB) ForgetInstances(ctx context.Context, goneBefore time.Time) (int, error) {
	var n int
	err := db.inWrite(ctx, func(tx dbtx) error {
		n = 0
		rows, err := tx.Query(ctx, `SELECT id FROM instances WHERE seen_at < ?`, millis(goneBefore))
		if err != nil {
			return err
		}
		ids, err := scanStrings(rows)
		if err != nil {
			return err
		}
		for _, id := range ids {
			if err := forgetInstance(ctx, tx, id); err != nil {
				return err
			}
		}
		n = len(ids)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("forget instances: %w", err)
	}
	return n, nil
}

// StaleRun is a run that cannot end: the instance that started it is gone.
type StaleRun struct {
	Client  Client
	Measure Measure
	// Kind is what the run measured from; empty when the run was started
	// before runs recorded it.
	Kind Kind
}

// StaleRuns returns the started measures whose run belongs to an instance
// last seen before goneBefore, or to none this database knows.
func (db *DB) StaleRuns(ctx context.Context, goneBefore time.Time) ([]StaleRun, error) {
	var runs []StaleRun
	err := db.inRead(ctx, func(tx dbtx) error {
		runs = nil
		rows, err := tx.Query(ctx,
			`SELECT client, run_kind, `+measureColumns+` FROM measures
			 WHERE status = 'started' AND NOT EXISTS (
			   SELECT 1 FROM instances i WHERE i.id = measures.run_owner AND i.seen_at >= ?)`, millis(goneBefore))
		if err != nil {
			return err
		}
		defer rows.Close()
		var keys []int64
		for rows.Next() {
			var (
				key  int64
				kind sql.NullString
			)
			m, err := scanMeasure(scanAfter{rows, []any{&key, &kind}})
			if err != nil {
				return err
			}
			keys = append(keys, key)
			runs = append(runs, StaleRun{Measure: m, Kind: Kind(kind.String)})
		}
		if err := rows.Err(); err != nil {
			return err
		}
		rows.Close()
		for i, key := range keys {
			if runs[i].Client, err = findClient(ctx, tx, "key", key); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("stale runs: %w", err)
	}
	return runs, nil
}

// HoldSession records that this DB's instance holds the live session id.
func (db *DB) HoldSession(ctx context.Context, id string) error {
	err := db.inLightWrite(ctx, func(tx dbtx) error {
		_, err := tx.Exec(ctx, `INSERT INTO live_sessions (id, instance, opened_at) VALUES (?, ?, ?)`,
			id, db.instance, millis(db.now()))
		return err
	})
	if err != nil {
		return fmt.Errorf("hold session %s: %w", id, err)
	}
	return nil
}

// ReleaseSession forgets the live session id of this DB's instance.
func (db *DB) ReleaseSession(ctx context.Context, id string) error {
	err := db.inLightWrite(ctx, func(tx dbtx) error {
		_, err := tx.Exec(ctx, `DELETE FROM live_sessions WHERE id = ? AND instance = ?`, id, db.instance)
		return err
	})
	if err != nil {
		return fmt.Errorf("release session %s: %w", id, err)
	}
	return nil
}

// SessionHolder returns the instance that holds the live session id, with
// the address it is reached at; ErrNotFound when no known instance does.
func (db *DB) SessionHolder(ctx context.Context, id string) (Instance, error) {
	var (
		in            Instance
		started, seen int64
	)
	err := db.reader().QueryRow(ctx,
		`SELECT i.id, i.address, i.started_at, i.seen_at FROM live_sessions s JOIN instances i ON i.id = s.instance
		 WHERE s.id = ?`, id).Scan(&in.ID, &in.Address, &started, &seen)
	if errors.Is(err, sql.ErrNoRows) {
		return Instance{}, ErrNotFound
	}
	if err != nil {
		return Instance{}, fmt.Errorf("session holder: %w", err)
	}
	in.StartedAt, in.SeenAt = fromMillis(started), fromMillis(seen)
	return in, nil
}

// Instance is a server process as the database knows it.
type Instance struct {
	ID      string
	Address string // host:port of the environment's listener
	// StartedAt is its first heartbeat, SeenAt its latest.
	StartedAt, SeenAt time.Time
}

// scanStrings reads a one-column result of text and closes rows.
func scanStrings(rows *sql.Rows) ([]string, error) {
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// scanAfter scans into first, then into what its caller asks for: a row
// whose leading columns precede the ones a scan function reads.
type scanAfter struct {
	row   interface{ Scan(...any) error }
	first []any
}

func (s scanAfter) Scan(dest ...any) error { return s.row.Scan(slices.Concat(s.first, dest)...) }

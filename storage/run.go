package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrAlreadyRun: a run was asked of a measure that is no longer in the
// created state. A measure runs once.
var ErrAlreadyRun = errors.New("storage: measure already run")

// StartNewMeasure stores a new measure of c already started: the first step
// of a create-and-run, which passes through started. id is the
// caller's, who may have stored the run's media under it already. Such a
// measure is removed, not reset, when its run fails.
func (db *DB) StartNewMeasure(ctx context.Context, c Client, id string, n NewMeasure) (Measure, error) {
	now := db.stamp()
	m := newMeasure(id, n, now)
	m.Status, m.StartedAt = StatusStarted, now
	if err := db.inWrite(ctx, func(tx *sql.Tx) error { return insertMeasures(ctx, tx, c, []Measure{m}, true) }); err != nil {
		return Measure{}, fmt.Errorf("start new measure: %w", err)
	}
	return m, nil
}

// StartMeasure starts c's measure id: created becomes started in one
// conditional UPDATE, so of concurrent starts exactly one succeeds. The
// others, like the start of a measure already started or ended, get
// ErrAlreadyRun; a measure that does not exist or is another client's is
// ErrNotFound.
func (db *DB) StartMeasure(ctx context.Context, c Client, id string) (Measure, error) {
	var m Measure
	err := db.inWrite(ctx, func(tx *sql.Tx) error {
		var err error
		m, err = scanMeasure(tx.QueryRowContext(ctx,
			`UPDATE measures SET status = 'started', started_at = ?
			 WHERE id = ? AND client = ? AND status = 'created' RETURNING `+measureColumns,
			millis(db.stamp()), id, c.key))
		if errors.Is(err, sql.ErrNoRows) {
			return alreadyRunOrMissing(ctx, tx, c, id)
		}
		return err
	})
	if err != nil && !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrAlreadyRun) {
		return Measure{}, fmt.Errorf("start measure %s: %w", id, err)
	}
	return m, err
}

// alreadyRunOrMissing says why a conditional update found no measure in
// the state it wanted: ErrAlreadyRun when c's measure id exists.
func alreadyRunOrMissing(ctx context.Context, tx *sql.Tx, c Client, id string) error {
	var exists bool
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM measures WHERE id = ? AND client = ?)`, id, c.key).Scan(&exists); err != nil {
		return err
	}
	if exists {
		return ErrAlreadyRun
	}
	return ErrNotFound
}

// Outcome is what a run found, as the API shows it: the JSON of the measure's
// signal (nil: null) and variables, and the pulse features a later
// calibration is anchored to (nil: none).
type Outcome struct {
	Signal    json.RawMessage
	Variables json.RawMessage
	Features  json.RawMessage
}

// MeasureEnd is how a run ends.
type MeasureEnd struct {
	// Kind is the sensor the run measured from; a measure gets its kind
	// when it ends.
	Kind              Kind
	ReturnedVariables []string
	// Outcome is stored while the client has credit left this month, or
	// unlimited credit.
	Outcome Outcome
	// Chargeable says the outcome computed something: it costs one credit.
	Chargeable bool
	// NoCredit is stored instead of Outcome when the client has no credit
	// left this month; nothing is charged then.
	NoCredit Outcome
}

// EndMeasure ends c's started measure id, all in one transaction: it reads
// the client's monthly credits, stores e.Outcome (charging one credit of
// the calendar month, UTC, when e.Chargeable) or, with no credit left,
// e.NoCredit, and sets the kind and endedAt. Transactions on one database
// run one at a time, so N concurrent ends with k credits left charge
// exactly k. A measure no longer started (deleted during its run) is
// ErrNotFound and nothing is charged.
func (db *DB) EndMeasure(ctx context.Context, c Client, id string, e MeasureEnd) (Measure, error) {
	var m Measure
	ended := db.stamp()
	month := creditMonth(ended)
	err := db.inWrite(ctx, func(tx *sql.Tx) error {
		var credits sql.NullInt64
		if err := tx.QueryRowContext(ctx, `SELECT monthly_credits FROM clients WHERE key = ?`, c.key).Scan(&credits); err != nil {
			return err
		}
		var used int64
		err := tx.QueryRowContext(ctx, `SELECT used FROM credit_usage WHERE client = ? AND month = ?`, c.key, month).Scan(&used)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		out := e.Outcome
		switch {
		case credits.Valid && used >= credits.Int64:
			out = e.NoCredit
		case e.Chargeable:
			if _, err := tx.ExecContext(ctx,
				`INSERT INTO credit_usage (client, month, used) VALUES (?, ?, 1)
				 ON CONFLICT (client, month) DO UPDATE SET used = used + 1`, c.key, month); err != nil {
				return err
			}
		}
		variables := out.Variables
		if variables == nil {
			variables = json.RawMessage("{}")
		}
		m, err = scanMeasure(tx.QueryRowContext(ctx,
			`UPDATE measures SET status = 'ended', kind = ?, ended_at = ?, returned_variables = ?, signal = ?, variables = ?,
			   features = ?
			 WHERE id = ? AND client = ? AND status = 'started' RETURNING `+measureColumns,
			e.Kind, millis(ended), jsonOrNull(nonNil(e.ReturnedVariables)), rawOrNull(out.Signal), string(variables),
			rawOrNull(out.Features), id, c.key))
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		return err
	})
	if err != nil && !errors.Is(err, ErrNotFound) {
		return Measure{}, fmt.Errorf("end measure %s: %w", id, err)
	}
	return m, err
}

// creditMonth is the calendar month (UTC) a credit spent at t counts in.
func creditMonth(t time.Time) string { return t.UTC().Format("2006-01") }

// CreditsUsed is how many credits c has spent in the calendar month (UTC)
// of t.
func (db *DB) CreditsUsed(ctx context.Context, c Client, t time.Time) (int64, error) {
	var used int64
	err := db.read.QueryRowContext(ctx, `SELECT used FROM credit_usage WHERE client = ? AND month = ?`,
		c.key, creditMonth(t)).Scan(&used)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("credits used: %w", err)
	}
	return used, nil
}

// ResetMeasure puts c's started measure id back in the created state, as
// if its run had never begun: what a failed run of an existing measure
// leaves. ErrNotFound when it is not started (deleted during the run).
func (db *DB) ResetMeasure(ctx context.Context, c Client, id string) error {
	err := expectOne(db.write.ExecContext(ctx,
		`UPDATE measures SET status = 'created', kind = NULL, started_at = NULL WHERE id = ? AND client = ? AND status = 'started'`,
		id, c.key))
	if err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("reset measure %s: %w", id, err)
	}
	return err
}

// RecoverRuns repairs the runs a crash cut short: every measure still
// started is put back in the created state, or removed when a
// create-and-run inserted it. Call it at start-up, before any run begins.
func (db *DB) RecoverRuns(ctx context.Context) (reset, removed int, err error) {
	err = db.inWrite(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT id, client FROM measures WHERE status = 'started' AND by_run = 1`)
		if err != nil {
			return err
		}
		type owned struct {
			id     string
			client int64
		}
		var gone []owned
		for rows.Next() {
			var o owned
			if err := rows.Scan(&o.id, &o.client); err != nil {
				rows.Close()
				return err
			}
			gone = append(gone, o)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, o := range gone {
			if err := deleteMeasure(ctx, tx, o.client, o.id); err != nil {
				return err
			}
		}
		res, err := tx.ExecContext(ctx,
			`UPDATE measures SET status = 'created', kind = NULL, started_at = NULL WHERE status = 'started'`)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		reset, removed = int(n), len(gone)
		return err
	})
	if err != nil {
		return 0, 0, fmt.Errorf("recover runs: %w", err)
	}
	return reset, removed, nil
}

// EndedAmong returns which of ids are ended measures, of any client: the
// measures whose media are kept.
func (db *DB) EndedAmong(ctx context.Context, ids []string) (map[string]bool, error) {
	ended := map[string]bool{}
	const batch = 500 // well under SQLite's limit of bound parameters
	for len(ids) > 0 {
		n := min(batch, len(ids))
		args := make([]any, n)
		for i, id := range ids[:n] {
			args[i] = id
		}
		rows, err := db.read.QueryContext(ctx,
			`SELECT id FROM measures WHERE status = 'ended' AND id IN (?`+strings.Repeat(", ?", n-1)+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("ended measures: %w", err)
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return nil, fmt.Errorf("ended measures: %w", err)
			}
			ended[id] = true
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("ended measures: %w", err)
		}
		ids = ids[n:]
	}
	return ended, nil
}

// rawOrNull stores raw JSON text, or SQL NULL for none.
func rawOrNull(raw json.RawMessage) any {
	if raw == nil {
		return nil
	}
	return string(raw)
}

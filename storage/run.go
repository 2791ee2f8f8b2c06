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

// StartNewMeasure stores a new measure of c already started, for a run from
// kind: the first step of a create-and-run, which passes through started.
// id is the caller's, who may have stored the run's media under it already.
// Such a measure is removed, not reset, when its run fails. The run is this
// DB's instance's (Options.Instance).
func (db *DB) StartNewMeasure(ctx context.Context, c Client, id string, n NewMeasure, kind Kind) (Measure, error) {
	now := db.stamp()
	m := newMeasure(id, n, now)
	m.Status, m.StartedAt = StatusStarted, now
	run := &runClaim{owner: db.instance, kind: kind}
	if err := db.inWrite(ctx, func(tx dbtx) error { return insertMeasures(ctx, tx, c, []Measure{m}, run) }); err != nil {
		return Measure{}, fmt.Errorf("start new measure: %w", err)
	}
	return m, nil
}

// StartMeasure starts c's measure id for a run from kind, which is this
// DB's instance's: created becomes started in one conditional UPDATE, so of
// concurrent starts exactly one succeeds. The others, like the start of a
// measure already started or ended, get ErrAlreadyRun; a measure that does
// not exist or is another client's is ErrNotFound.
func (db *DB) StartMeasure(ctx context.Context, c Client, id string, kind Kind) (Measure, error) {
	var m Measure
	err := db.inWrite(ctx, func(tx dbtx) error {
		var err error
		m, err = scanMeasure(tx.QueryRow(ctx,
			`UPDATE measures SET status = 'started', started_at = ?, run_owner = ?, run_kind = ?
			 WHERE id = ? AND client = ? AND status = 'created' RETURNING `+measureColumns,
			millis(db.stamp()), db.instance, kind, id, c.key))
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
func alreadyRunOrMissing(ctx context.Context, tx dbtx, c Client, id string) error {
	var exists bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM measures WHERE id = ? AND client = ?)`, id, c.key).Scan(&exists); err != nil {
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
	// when it ends. Empty: unknown (a run ended by a sweep that did not
	// record it), stored as none.
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
	// MediaKept says whether the run kept its capture as the measure's
	// media; nil when it is not known (a run ended by the sweep after its
	// instance died), stored as none.
	MediaKept *bool
}

// EndMeasure ends c's started measure id, all in one transaction: it reads
// the client's monthly credits, stores e.Outcome (charging one credit of
// the calendar month, UTC, when e.Chargeable) or, with no credit left,
// e.NoCredit, and sets the kind and endedAt. The credit is decided under
// the client's lock, so N concurrent ends with k credits left, on any
// number of instances, charge exactly k. A measure no longer started
// (deleted during its run, or ended by a sweep) is ErrNotFound and nothing
// is charged. The same transaction writes the measure.ended webhooks of
// the client's endpoints (see enqueueWebhooks), so an ended measure never
// misses its event.
func (db *DB) EndMeasure(ctx context.Context, c Client, id string, e MeasureEnd) (Measure, error) {
	var m Measure
	ended := db.stamp()
	month := creditMonth(ended)
	err := db.inWrite(ctx, func(tx dbtx) error {
		if err := lockClient(ctx, tx, c.key); err != nil {
			return err
		}
		var credits sql.NullInt64
		if err := tx.QueryRow(ctx, `SELECT monthly_credits FROM clients WHERE key = ?`, c.key).Scan(&credits); err != nil {
			return err
		}
		var used int64
		err := tx.QueryRow(ctx, `SELECT used FROM credit_usage WHERE client = ? AND month = ?`, c.key, month).Scan(&used)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		out := e.Outcome
		switch {
		case credits.Valid && used >= credits.Int64:
			out = e.NoCredit
		case e.Chargeable:
			if _, err := tx.Exec(ctx,
				`INSERT INTO credit_usage (client, month, used) VALUES (?, ?, 1)
				 ON CONFLICT (client, month) DO UPDATE SET used = credit_usage.used + 1`, c.key, month); err != nil {
				return err
			}
		}
		variables := out.Variables
		if variables == nil {
			variables = json.RawMessage("{}")
		}
		m, err = scanMeasure(tx.QueryRow(ctx,
			`UPDATE measures SET status = 'ended', kind = ?, ended_at = ?, returned_variables = ?, signal = ?, variables = ?,
			   features = ?, media_kept = ?
			 WHERE id = ? AND client = ? AND status = 'started' RETURNING `+measureColumns,
			nullIfEmpty(string(e.Kind)), millis(ended), jsonOrNull(nonNil(e.ReturnedVariables)), rawOrNull(out.Signal), string(variables),
			rawOrNull(out.Features), e.MediaKept, id, c.key))
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		return enqueueWebhooks(ctx, tx, c.key, EventMeasureEnded, m, ended)
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
	err := db.reader().QueryRow(ctx, `SELECT used FROM credit_usage WHERE client = ? AND month = ?`,
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
	err := expectOne(db.writer().Exec(ctx,
		`UPDATE measures SET status = 'created', kind = NULL, started_at = NULL, run_owner = NULL, run_kind = NULL
		 WHERE id = ? AND client = ? AND status = 'started'`,
		id, c.key))
	if err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("reset measure %s: %w", id, err)
	}
	return err
}

// ExistingAmong returns which of ids are measures, of any client and in
// any state: the measures whose media are kept.
func (db *DB) ExistingAmong(ctx context.Context, ids []string) (map[string]bool, error) {
	return db.among(ctx, ids, "")
}

// EndedAmong returns which of ids are ended measures, of any client: the
// measures whose media are complete.
func (db *DB) EndedAmong(ctx context.Context, ids []string) (map[string]bool, error) {
	return db.among(ctx, ids, ` AND status = 'ended'`)
}

// among returns which of ids are measures that also meet the condition
// cond (an SQL fragment starting with AND, or empty).
func (db *DB) among(ctx context.Context, ids []string, cond string) (map[string]bool, error) {
	found := map[string]bool{}
	const batch = 500 // well under either engine's limit of bound parameters
	for len(ids) > 0 {
		n := min(batch, len(ids))
		args := make([]any, n)
		for i, id := range ids[:n] {
			args[i] = id
		}
		rows, err := db.reader().Query(ctx, `SELECT id FROM measures WHERE id IN (?`+strings.Repeat(", ?", n-1)+`)`+cond, args...)
		if err != nil {
			return nil, fmt.Errorf("existing measures: %w", err)
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return nil, fmt.Errorf("existing measures: %w", err)
			}
			found[id] = true
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("existing measures: %w", err)
		}
		ids = ids[n:]
	}
	return found, nil
}

// rawOrNull stores raw JSON text, or SQL NULL for none.
func rawOrNull(raw json.RawMessage) any {
	if raw == nil {
		return nil
	}
	return string(raw)
}

// nullIfEmpty stores an empty string as SQL NULL.
func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

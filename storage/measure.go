package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// Status is where a measure is in its life.
type Status string

// The states of a measure.
const (
	StatusCreated Status = "created"
	StatusStarted Status = "started"
	StatusEnded   Status = "ended"
)

// Kind is the sensor a measure was run from; a measure gets one when it runs.
type Kind string

// The kinds of measure.
const (
	KindRPPG Kind = "rppg" // camera
	KindCPPG Kind = "cppg" // contact sensor
)

// UserData describes the measured person. A nil field was not
// sent. A date of birth is stored as the age it gave at creation: the age the
// measurement describes, and less person data kept.
type UserData struct {
	ExternalID    *string
	Sex           *string // "M" or "F"
	Age           *int64  // years
	Weight        *int64  // kilograms
	Height        *int64  // centimetres
	SmokingStatus *string // "smoker" or "non-smoker"
}

// ComputeOptions adjusts how variables are expressed.
type ComputeOptions struct {
	BPClass *BPClassOptions `json:"bpClass,omitempty"`
}

// BPClassOptions: Scale 2 reports bpClass on two levels instead of three.
type BPClassOptions struct {
	Scale int64 `json:"scale"`
}

// NewMeasure is what CreateMeasure stores.
type NewMeasure struct {
	UserData          *UserData // nil: none given
	DesiredVariables  []string  // nil: none given
	UnwantedVariables []string  // nil: none given
	Tags              []string
	ComputeOptions    *ComputeOptions
}

// Measure is a stored measure.
type Measure struct {
	ID     string
	Status Status
	Kind   Kind // empty until the measure runs
	// CreatedAt is always set; StartedAt and EndedAt are zero until the
	// measure reaches those states.
	CreatedAt, StartedAt, EndedAt time.Time
	UserData                      *UserData
	DesiredVariables              []string
	UnwantedVariables             []string
	Tags                          []string
	ComputeOptions                *ComputeOptions
	// Set when the measure ends.
	ReturnedVariables []string
	Signal            json.RawMessage // nil: null
	Variables         json.RawMessage
	// MediaKept says whether the run kept its capture as the measure's
	// media; nil when not recorded (not ended, or ended before it was).
	MediaKept *bool
}

// CreateMeasure stores a new measure of c in the created state, with its tag
// index, in one transaction.
func (db *DB) CreateMeasure(ctx context.Context, c Client, n NewMeasure) (Measure, error) {
	ms, err := db.CreateMeasures(ctx, c, []NewMeasure{n})
	if err != nil {
		return Measure{}, err
	}
	return ms[0], nil
}

// CreateMeasures stores several new measures of c in one transaction: all or
// none. Creation order is the order of ns.
func (db *DB) CreateMeasures(ctx context.Context, c Client, ns []NewMeasure) ([]Measure, error) {
	created := db.stamp()
	ms := make([]Measure, len(ns))
	for i, n := range ns {
		ms[i] = newMeasure(uuid.NewString(), n, created)
	}
	err := db.inWrite(ctx, func(tx dbtx) error { return insertMeasures(ctx, tx, c, ms, nil) })
	if err != nil {
		return nil, fmt.Errorf("create measures: %w", err)
	}
	return ms, nil
}

// newMeasure is n as a measure id in the created state.
func newMeasure(id string, n NewMeasure, created time.Time) Measure {
	return Measure{
		ID:                id,
		Status:            StatusCreated,
		CreatedAt:         created,
		UserData:          n.UserData,
		DesiredVariables:  n.DesiredVariables,
		UnwantedVariables: n.UnwantedVariables,
		Tags:              nonNil(n.Tags),
		ComputeOptions:    n.ComputeOptions,
	}
}

// runClaim is what a measure inserted already started records of its run:
// the instance that runs it and the kind the run will give it.
type runClaim struct {
	owner string
	kind  Kind
}

// insertMeasures inserts ms, new measures of c in the created state or,
// with run, started by a create-and-run (see by_run in the schema), with
// their tag index.
func insertMeasures(ctx context.Context, tx dbtx, c Client, ms []Measure, run *runClaim) error {
	// The client's row first (see lockClient), with its count.
	if _, err := tx.Exec(ctx, `UPDATE clients SET measures = measures + ? WHERE key = ?`, len(ms), c.key); err != nil {
		return err
	}
	insert, err := tx.Prepare(ctx,
		`INSERT INTO measures (id, client, status, created_at, started_at, by_run, run_owner, run_kind, has_user_data,
		   external_id, sex, age, weight, height, smoking_status, desired_variables, unwanted_variables, tags, tag_set,
		   compute_options)
		 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer insert.Close()
	sets := newTagSetWriter(ctx, tx, c)
	defer sets.close()
	var owner, kind any
	if run != nil {
		owner, kind = run.owner, run.kind
	}
	for _, m := range ms {
		set, err := sets.add(m.Tags)
		if err != nil {
			return err
		}
		u := m.UserData
		if u == nil {
			u = &UserData{}
		}
		var startedAt any
		if m.Status != StatusCreated {
			startedAt = millis(m.StartedAt)
		}
		_, err = insert.ExecContext(ctx, m.ID, c.key, m.Status, millis(m.CreatedAt), startedAt, run != nil, owner, kind,
			m.UserData != nil, u.ExternalID, u.Sex, nullInt(u.Age), nullInt(u.Weight), nullInt(u.Height), u.SmokingStatus,
			jsonOrNull(m.DesiredVariables), jsonOrNull(m.UnwantedVariables), jsonOrNull(m.Tags), set,
			jsonOrNull(m.ComputeOptions))
		if err != nil {
			return err
		}
	}
	return nil
}

// Measure returns c's measure id; another client's measure is ErrNotFound.
func (db *DB) Measure(ctx context.Context, c Client, id string) (Measure, error) {
	m, err := scanMeasure(db.reader().QueryRow(ctx,
		`SELECT `+measureColumns+` FROM measures WHERE id = ? AND client = ?`, id, c.key))
	if errors.Is(err, sql.ErrNoRows) {
		return Measure{}, ErrNotFound
	}
	if err != nil {
		return Measure{}, fmt.Errorf("measure %s: %w", id, err)
	}
	return m, nil
}

// DeleteMeasure removes c's measure id and its place in the tag index, and
// writes the measure.deleted webhooks of c's endpoints in the same
// transaction. The caller removes the media first. Of concurrent deletions
// exactly one succeeds; the others, like a deletion of a missing measure,
// get ErrNotFound.
func (db *DB) DeleteMeasure(ctx context.Context, c Client, id string) error {
	return db.deleteMeasure(ctx, c, id, true)
}

// DiscardRun removes c's new measure id whose create-and-run failed, as
// DeleteMeasure but without an event: for its client the measure never
// existed.
func (db *DB) DiscardRun(ctx context.Context, c Client, id string) error {
	return db.deleteMeasure(ctx, c, id, false)
}

func (db *DB) deleteMeasure(ctx context.Context, c Client, id string, notify bool) error {
	at := db.stamp()
	err := db.inWrite(ctx, func(tx dbtx) error {
		m, err := deleteMeasure(ctx, tx, c.key, id)
		if err != nil || !notify {
			return err
		}
		return enqueueWebhooks(ctx, tx, c.key, EventMeasureDeleted, m, at)
	})
	if err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("delete measure %s: %w", id, err)
	}
	return err
}

// deleteMeasure removes measure id of the client with that key, and its
// place in the tag index, and returns its id, status and kind as they were;
// ErrNotFound when there is no such measure.
func deleteMeasure(ctx context.Context, tx dbtx, client int64, id string) (Measure, error) {
	if err := lockClient(ctx, tx, client); err != nil {
		return Measure{}, err
	}
	var (
		set    int64
		m      = Measure{ID: id}
		status string
		kind   sql.NullString
	)
	err := tx.QueryRow(ctx, `DELETE FROM measures WHERE id = ? AND client = ? RETURNING tag_set, status, kind`, id, client).
		Scan(&set, &status, &kind)
	if errors.Is(err, sql.ErrNoRows) {
		return Measure{}, ErrNotFound
	}
	if err != nil {
		return Measure{}, err
	}
	m.Status, m.Kind = Status(status), Kind(kind.String)
	if _, err := tx.Exec(ctx, `UPDATE clients SET measures = measures - 1 WHERE key = ?`, client); err != nil {
		return Measure{}, err
	}
	return m, removeFromTagSet(ctx, tx, set)
}

// ExternalUser is the calibration status of a person.
type ExternalUser struct {
	ExternalID     string
	RPPGCalibrated bool
	CPPGCalibrated bool
}

// ExternalUser reports on the person c knows as externalID: ErrNotFound when
// none of c's measures carries that id.
func (db *DB) ExternalUser(ctx context.Context, c Client, externalID string) (ExternalUser, error) {
	u := ExternalUser{ExternalID: externalID}
	err := db.inRead(ctx, func(tx dbtx) error {
		var known bool
		err := tx.QueryRow(ctx,
			`SELECT EXISTS (SELECT 1 FROM measures WHERE client = ? AND external_id = ?)`, c.key, externalID).Scan(&known)
		if err != nil {
			return err
		}
		if !known {
			return ErrNotFound
		}
		return tx.QueryRow(ctx,
			`SELECT EXISTS (SELECT 1 FROM calibrations WHERE client = ? AND external_id = ? AND kind = 'rppg'),
			        EXISTS (SELECT 1 FROM calibrations WHERE client = ? AND external_id = ? AND kind = 'cppg')`,
			c.key, externalID, c.key, externalID).Scan(&u.RPPGCalibrated, &u.CPPGCalibrated)
	})
	if err != nil && !errors.Is(err, ErrNotFound) {
		return ExternalUser{}, fmt.Errorf("external user: %w", err)
	}
	return u, err
}

const measureColumns = `id, status, kind, created_at, started_at, ended_at, has_user_data, external_id, sex, age,
	weight, height, smoking_status, desired_variables, unwanted_variables, tags, compute_options,
	returned_variables, signal, variables, media_kept`

func scanMeasure(row interface{ Scan(...any) error }) (Measure, error) {
	var (
		m                                           Measure
		kind, externalID, sex, smoking              sql.NullString
		startedAt, endedAt, age, weight, height     sql.NullInt64
		createdAt                                   int64
		hasUserData                                 bool
		desired, unwanted, computeOptions, returned sql.NullString
		tags                                        string
		signal, variables                           sql.NullString
		mediaKept                                   sql.NullBool
	)
	err := row.Scan(&m.ID, &m.Status, &kind, &createdAt, &startedAt, &endedAt, &hasUserData, &externalID, &sex,
		&age, &weight, &height, &smoking, &desired, &unwanted, &tags, &computeOptions, &returned, &signal, &variables, &mediaKept)
	if err != nil {
		return Measure{}, err
	}
	m.Kind = Kind(kind.String)
	m.CreatedAt = fromMillis(createdAt)
	if startedAt.Valid {
		m.StartedAt = fromMillis(startedAt.Int64)
	}
	if endedAt.Valid {
		m.EndedAt = fromMillis(endedAt.Int64)
	}
	if hasUserData {
		m.UserData = &UserData{
			ExternalID: nullableString(externalID), Sex: nullableString(sex), Age: nullableInt(age),
			Weight: nullableInt(weight), Height: nullableInt(height), SmokingStatus: nullableString(smoking),
		}
	}
	for _, f := range []struct {
		src sql.NullString
		dst any
	}{
		{desired, &m.DesiredVariables}, {unwanted, &m.UnwantedVariables}, {sql.NullString{String: tags, Valid: true}, &m.Tags},
		{computeOptions, &m.ComputeOptions}, {returned, &m.ReturnedVariables},
	} {
		if f.src.Valid {
			if err := json.Unmarshal([]byte(f.src.String), f.dst); err != nil {
				return Measure{}, fmt.Errorf("measure %s: %w", m.ID, err)
			}
		}
	}
	if signal.Valid {
		m.Signal = json.RawMessage(signal.String)
	}
	if variables.Valid {
		m.Variables = json.RawMessage(variables.String)
	}
	if mediaKept.Valid {
		m.MediaKept = &mediaKept.Bool
	}
	return m, nil
}

// jsonOrNull encodes v as JSON text, or SQL NULL for a nil slice or pointer.
func jsonOrNull[T any](v T) any {
	b, err := json.Marshal(v)
	if err != nil || string(b) == "null" {
		return nil
	}
	return string(b)
}

func nullableString(s sql.NullString) *string {
	if !s.Valid {
		return nil
	}
	return &s.String
}

func nullableInt(n sql.NullInt64) *int64 {
	if !n.Valid {
		return nil
	}
	return &n.Int64
}

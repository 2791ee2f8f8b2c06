package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Calibration is a reference blood pressure taken with a cuff at the end of
// a measure, for the person (externalId) and sensor kind of that measure,
// with the measure's pulse features.
type Calibration struct {
	ExternalID string
	Kind       Kind
	MeasureID  string
	// Systole and Diastole are the cuff reading, mmHg.
	Systole, Diastole float64
	Features          json.RawMessage // nil: the measure had no usable pulse
	CreatedAt         time.Time
}

const calibrationColumns = `external_id, kind, measure_id, systole, diastole, features, created_at`

func scanCalibration(row interface{ Scan(...any) error }) (Calibration, error) {
	var (
		cal       Calibration
		features  sql.NullString
		createdAt int64
	)
	if err := row.Scan(&cal.ExternalID, &cal.Kind, &cal.MeasureID, &cal.Systole, &cal.Diastole, &features, &createdAt); err != nil {
		return Calibration{}, err
	}
	if features.Valid {
		cal.Features = json.RawMessage(features.String)
	}
	cal.CreatedAt = fromMillis(createdAt)
	return cal, nil
}

// Calibrate stores a reference pressure (mmHg) entered after c's measure
// id, for that measure's externalId and kind, with its features. A second
// reference for the same measure replaces the first. The measure must be
// ended and carry an externalId; otherwise, or when it does not exist or is
// another client's, ErrNotFound.
func (db *DB) Calibrate(ctx context.Context, c Client, measureID string, systole, diastole float64) (Calibration, error) {
	// The arguments are cast: PostgreSQL cannot infer their types from a
	// SELECT's output columns.
	cal, err := scanCalibration(db.writer().QueryRow(ctx,
		`INSERT INTO calibrations (client, external_id, kind, measure_id, systole, diastole, features, created_at)
		 SELECT client, external_id, kind, id, CAST(? AS DOUBLE PRECISION), CAST(? AS DOUBLE PRECISION), features,
		   CAST(? AS BIGINT) FROM measures
		 WHERE id = ? AND client = ? AND status = 'ended' AND external_id IS NOT NULL
		 ON CONFLICT (client, external_id, kind, measure_id) DO UPDATE
		   SET systole = excluded.systole, diastole = excluded.diastole, created_at = excluded.created_at
		 RETURNING `+calibrationColumns,
		systole, diastole, millis(db.stamp()), measureID, c.key))
	if errors.Is(err, sql.ErrNoRows) {
		return Calibration{}, ErrNotFound
	}
	if err != nil {
		return Calibration{}, fmt.Errorf("calibrate from measure %s: %w", measureID, err)
	}
	return cal, nil
}

// LatestCalibration returns the newest calibration c holds for the person
// externalID and kind; ErrNotFound when there is none.
func (db *DB) LatestCalibration(ctx context.Context, c Client, externalID string, kind Kind) (Calibration, error) {
	cal, err := scanCalibration(db.reader().QueryRow(ctx,
		`SELECT `+calibrationColumns+` FROM calibrations WHERE client = ? AND external_id = ? AND kind = ?
		 ORDER BY created_at DESC, rowid DESC LIMIT 1`, c.key, externalID, kind))
	if errors.Is(err, sql.ErrNoRows) {
		return Calibration{}, ErrNotFound
	}
	if err != nil {
		return Calibration{}, fmt.Errorf("calibration: %w", err)
	}
	return cal, nil
}

package storage

import (
	"context"
	"fmt"
)

// CheckWritable proves that the database takes writes now: it commits a
// write of one row, durably as every write, so that a full disk, a
// read-only file system, a lock held too long or a PostgreSQL server out
// of reach all show. It is the
// database's part of a readiness probe; the caller bounds how often it runs.
func (db *DB) CheckWritable(ctx context.Context) error {
	_, err := db.writer().Exec(ctx,
		`INSERT INTO readiness (id, checked_at) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET checked_at = excluded.checked_at`,
		millis(db.now()))
	if err != nil {
		return fmt.Errorf("check the database takes writes: %w", err)
	}
	return nil
}

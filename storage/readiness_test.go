package storage

import (
	"context"
	"testing"
	"time"
)

// TestCheckWritable: the check writes, and fails (within its context)
// while another process holds the writes back: SQLite's write lock, or on
// PostgreSQL a lock on the table the check writes.
func TestCheckWritable(t *testing.T) {
	engines(t, func(t *testing.T, e *testEngine) {
		ctx := context.Background()
		db := e.openNamed(t, "ready", Options{})
		for range 2 { // the first write inserts, the next updates
			if err := db.CheckWritable(ctx); err != nil {
				t.Fatal(err)
			}
		}

		// Another process on the same database.
		other := e.openNamed(t, "ready", Options{})
		tx, err := other.write.BeginTx(ctx, nil) // SQLite: BEGIN IMMEDIATE, the write lock
		if err != nil {
			t.Fatal(err)
		}
		if e.name == "postgres" {
			if _, err := tx.ExecContext(ctx, `LOCK TABLE readiness IN EXCLUSIVE MODE`); err != nil {
				t.Fatal(err)
			}
		}
		short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		if err := db.CheckWritable(short); err == nil {
			t.Fatal("writable while another process holds the writes back")
		}
		if err := tx.Rollback(); err != nil {
			t.Fatal(err)
		}
		if err := db.CheckWritable(ctx); err != nil {
			t.Fatalf("after the lock is released: %v", err)
		}
	})
}

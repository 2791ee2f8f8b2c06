package storage

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"
)

// TestCheckWritable: the check writes, and fails (within its context)
// while another process holds the write lock.
func TestCheckWritable(t *testing.T) {
	file := filepath.Join(t.TempDir(), "db.sqlite")
	db, err := Open(context.Background(), file, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for range 2 { // the first write inserts, the next updates
		if err := db.CheckWritable(context.Background()); err != nil {
			t.Fatal(err)
		}
	}

	other, err := sql.Open("sqlite", file)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := db.CheckWritable(ctx); err == nil {
		t.Fatal("writable while another connection holds the write lock")
	}
	if _, err := conn.ExecContext(context.Background(), "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if err := db.CheckWritable(context.Background()); err != nil {
		t.Fatalf("after the lock is released: %v", err)
	}
}

package storage

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// countMeasures reads, in one read transaction, how many measures db holds
// and how many its clients' counters say they hold: equal in any state a
// transaction committed.
func countMeasures(t *testing.T, db *DB) (rows, counted int) {
	t.Helper()
	ctx := context.Background()
	err := db.inRead(ctx, func(tx dbtx) error {
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM measures`).Scan(&rows); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `SELECT coalesce(sum(measures), 0) FROM clients`).Scan(&counted)
	})
	if err != nil {
		t.Fatal(err)
	}
	return rows, counted
}

// TestBackupWhileWriting copies a database while a writer commits measures
// as fast as it can: the copy passes the integrity check, holds every
// measure committed before the backup began, and is one committed state
// (each client's count of measures matches its rows), and the writer went
// on committing during the copy.
func TestBackupWhileWriting(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := Open(ctx, filepath.Join(dir, "live.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c := newTestClient(t, db, "acme")
	// Enough rows that the copy takes a while.
	seed := make([]NewMeasure, 2000)
	for i := range seed {
		seed[i] = NewMeasure{Tags: []string{"seed", "ward-" + string(rune('a'+i%20))}}
	}
	for range 10 {
		if _, err := db.CreateMeasures(ctx, c, seed); err != nil {
			t.Fatal(err)
		}
	}

	var committed atomic.Int64
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := db.CreateMeasure(ctx, c, NewMeasure{Tags: []string{"during"}}); err != nil {
				t.Error(err)
				return
			}
			committed.Add(1)
		}
	}()
	for committed.Load() < 10 { // the writer is under way
		time.Sleep(time.Millisecond)
	}
	before := 20000 + int(committed.Load())
	start := time.Now()
	copyFile := filepath.Join(dir, "copy.db")
	if err := Backup(ctx, filepath.Join(dir, "live.db"), copyFile); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	during := int(committed.Load()) + 20000 - before
	close(stop)
	<-done

	cp, err := OpenReadOnly(copyFile)
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close()
	if err := cp.Verify(ctx); err != nil {
		t.Fatal(err)
	}
	rows, counted := countMeasures(t, cp)
	if rows < before || rows != counted {
		t.Fatalf("the copy holds %d measures, its counters %d; %d were committed before the backup", rows, counted, before)
	}
	if during == 0 {
		t.Fatalf("no write was committed during the %v backup", took)
	}
	t.Logf("backup of %d measures took %v; %d measures committed meanwhile", rows, took, during)

	if _, err := cp.CreateMeasure(ctx, c, NewMeasure{}); err == nil {
		t.Fatal("a read-only database took a write")
	}
	if err := Backup(ctx, filepath.Join(dir, "live.db"), copyFile); err == nil {
		t.Fatal("a backup overwrote a file")
	}
}

// TestVerify refuses a damaged file and one of a newer version.
func TestVerify(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := Open(ctx, filepath.Join(dir, "live.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := newTestClient(t, db, "acme")
	for range 5 {
		seed := make([]NewMeasure, 500)
		if _, err := db.CreateMeasures(ctx, c, seed); err != nil {
			t.Fatal(err)
		}
	}
	newer := filepath.Join(dir, "newer.db")
	if err := Backup(ctx, filepath.Join(dir, "live.db"), newer); err != nil {
		t.Fatal(err)
	}
	if _, err := db.write.Exec(`INSERT INTO schema_migrations (name, applied_at) VALUES ('9999_future.sql', 0)`); err != nil {
		t.Fatal(err)
	}
	newest := filepath.Join(dir, "newest.db")
	if err := Backup(ctx, filepath.Join(dir, "live.db"), newest); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if err := verifyFile(newer); err != nil {
		t.Fatalf("a sound copy: %v", err)
	}
	if err := verifyFile(newest); !errors.Is(err, ErrNewerSchema) {
		t.Fatalf("a newer schema: %v", err)
	}
	// Damage a page in the middle of the file.
	b, err := os.ReadFile(newer)
	if err != nil {
		t.Fatal(err)
	}
	for i := len(b) / 2; i < len(b)/2+512; i++ {
		b[i] ^= 0x5a
	}
	os.WriteFile(newer, b, 0o600)
	if err := verifyFile(newer); err == nil {
		t.Fatal("a damaged file passes")
	}
}

func verifyFile(file string) error {
	db, err := OpenReadOnly(file)
	if err != nil {
		return err
	}
	defer db.Close()
	return db.Verify(context.Background())
}

func TestMediaFiles(t *testing.T) {
	m, err := NewMediaDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	const id = "0f8e0b52-3c8c-4f4e-9a67-8b7f3f1d2a10"
	if names, err := m.Files(id); err != nil || names != nil {
		t.Fatalf("no folder: %v %v", names, err)
	}
	for _, name := range []string{"video", "image-1"} {
		if err := m.Put(context.Background(), id, name, strings.NewReader(name)); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(m.Root, id, ".put-123"), []byte("half"), 0o600)
	names, err := m.Files(id)
	if err != nil || len(names) != 2 || names[0] != "image-1" || names[1] != "video" {
		t.Fatalf("files %v, %v", names, err)
	}
	if _, err := m.Files("../etc"); err == nil {
		t.Fatal("a path outside the folder")
	}
}

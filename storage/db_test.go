package storage

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// testClock is a settable clock for the store.
type testClock struct {
	mu sync.Mutex // protects t
	t  time.Time
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// succeeded runs fn n times at once and counts the calls that returned nil;
// any error but refused fails the test.
func succeeded(t *testing.T, n int, refused error, fn func() error) int {
	t.Helper()
	var wg sync.WaitGroup
	results := make(chan error, n)
	for range n {
		wg.Go(func() { results <- fn() })
	}
	wg.Wait()
	close(results)
	ok := 0
	for err := range results {
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, refused):
			t.Fatal(err)
		}
	}
	return ok
}

// openTest opens a fresh database in a temporary folder.
func openTest(t testing.TB, opts Options) *DB {
	t.Helper()
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "test.db"), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// newTestClient creates a client whose API key hash is name.
func newTestClient(t testing.TB, db *DB, name string) Client {
	t.Helper()
	c, err := db.CreateClient(context.Background(), NewClient{Name: name, APIKeyHash: []byte(name), Variables: []string{"hr"}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestOpenConcurrentlyMigratesOnce(t *testing.T) {
	file := filepath.Join(t.TempDir(), "shared.db")
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Go(func() {
			db, err := Open(context.Background(), file, Options{})
			if err == nil {
				err = db.Close()
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	db, err := Open(context.Background(), file, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.read.QueryRow(`SELECT count(*) FROM schema_migrations`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if want, _ := migrations.ReadDir("migrations"); n != len(want) {
		t.Fatalf("schema_migrations holds %d rows, want %d", n, len(want))
	}
}

func TestDataSurvivesReopen(t *testing.T) {
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "reopen.db")
	db, err := Open(ctx, file, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := newTestClient(t, db, "acme")
	m, err := db.CreateMeasure(ctx, c, NewMeasure{Tags: []string{"a"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = Open(ctx, file, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c2, err := db.ClientByKeyHash(ctx, []byte("acme"))
	if err != nil || c2.ID != c.ID {
		t.Fatalf("client after reopen: %+v, %v", c2, err)
	}
	got, err := db.Measure(ctx, c2, m.ID)
	if err != nil || got.ID != m.ID || len(got.Tags) != 1 {
		t.Fatalf("measure after reopen: %+v, %v", got, err)
	}
}

func TestOpenRefusesAmbiguousPath(t *testing.T) {
	if _, err := Open(context.Background(), filepath.Join(t.TempDir(), "a?b.db"), Options{}); err == nil {
		t.Fatal("a path with ? was accepted")
	}
}

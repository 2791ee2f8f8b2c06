package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pulsewire/pulsewire/storage/storagetest"
)

// The tests of this package run on both engines: SQLite in a temporary
// folder, and PostgreSQL in a cluster of their own that TestMain starts
// (and, where it cannot, reports: see storagetest.Unavailable).
var (
	postgres    *storagetest.Postgres
	postgresErr error
)

func TestMain(m *testing.M) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	postgres, postgresErr = storagetest.StartPostgres(ctx, storagetest.PostgresOptions{})
	cancel()
	code := m.Run()
	if postgres != nil {
		postgres.Stop()
	}
	stopS3()
	os.Exit(code)
}

// testEngine opens fresh databases of one engine for one test.
type testEngine struct {
	name string
	// open opens the database called name in this test: the same name
	// twice is the same database (as two processes would open it), another
	// name is another, empty one.
	openNamed func(t testing.TB, name string, opts Options) *DB
	fresh     atomic.Int64
}

// open opens a fresh, empty database.
func (e *testEngine) open(t testing.TB, opts Options) *DB {
	return e.openNamed(t, fmt.Sprintf("db%d", e.fresh.Add(1)), opts)
}

// schemas numbers the PostgreSQL schemas of the tests, which share one
// cluster.
var schemas atomic.Int64

// engines runs test once on SQLite and once on PostgreSQL, as subtests
// named after the engine.
func engines(t *testing.T, test func(t *testing.T, e *testEngine)) {
	t.Run("sqlite", func(t *testing.T) {
		dir := t.TempDir()
		test(t, &testEngine{name: "sqlite", openNamed: func(t testing.TB, name string, opts Options) *DB {
			t.Helper()
			return opened(t)(Open(context.Background(), filepath.Join(dir, name+".db"), opts))
		}})
	})
	t.Run("postgres", func(t *testing.T) {
		if postgres == nil {
			storagetest.Unavailable(t, "PostgreSQL", postgresErr)
		}
		prefix := fmt.Sprintf("t%d_", schemas.Add(1))
		test(t, &testEngine{name: "postgres", openNamed: func(t testing.TB, name string, opts Options) *DB {
			t.Helper()
			return opened(t)(OpenPostgres(context.Background(), postgres.URL, prefix+name, opts))
		}})
	})
}

// opened fails t on an error of Open, and closes the database at the end.
func opened(t testing.TB) func(*DB, error) *DB {
	return func(db *DB, err error) *DB {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
}

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

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// succeeded runs fn n times at once and counts the calls that returned nil;
// any error but refused fails the test.
func succeeded(t *testing.T, n int, refused error, fn func(i int) error) int {
	t.Helper()
	var wg sync.WaitGroup
	results := make(chan error, n)
	for i := range n {
		wg.Go(func() { results <- fn(i) })
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

// newTestClient creates a client whose API key hash is name.
func newTestClient(t testing.TB, db *DB, name string) Client {
	t.Helper()
	c, err := db.CreateClient(context.Background(), NewClient{Name: name, APIKeyHash: []byte(name), Variables: []string{"hr"}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// count runs a query of one integer.
func count(t testing.TB, db *DB, query string, args ...any) int {
	t.Helper()
	var n int
	if err := db.reader().QueryRow(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestOpenConcurrentlyMigratesOnce(t *testing.T) {
	engines(t, func(t *testing.T, e *testEngine) {
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() { e.openNamed(t, "shared", Options{}) })
		}
		wg.Wait()
		db := e.openNamed(t, "shared", Options{})
		want, _ := fs.Glob(migrations, "migrations/"+e.name+"/*.sql")
		if n := count(t, db, `SELECT count(*) FROM schema_migrations`); n != len(want) {
			t.Fatalf("schema_migrations holds %d rows, want %d", n, len(want))
		}
		if e.name == "sqlite" {
			var mode string
			if err := db.reader().QueryRow(context.Background(), `PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
				t.Fatalf("journal mode %q (%v), want wal", mode, err)
			}
		}
	})
}

// TestMigrationsMatch: every migration exists for both engines, under the
// same name, so that a change to the schema is made to both.
func TestMigrationsMatch(t *testing.T) {
	names := func(engine string) []string {
		files, err := fs.Glob(migrations, "migrations/"+engine+"/*.sql")
		if err != nil {
			t.Fatal(err)
		}
		for i, f := range files {
			files[i] = path.Base(f)
		}
		return files
	}
	if s, p := names("sqlite"), names("postgres"); len(s) == 0 || !slices.Equal(s, p) {
		t.Fatalf("migrations differ: sqlite %v, postgres %v", s, p)
	}
}

func TestDataSurvivesReopen(t *testing.T) {
	engines(t, func(t *testing.T, e *testEngine) {
		ctx := context.Background()
		db := e.openNamed(t, "reopen", Options{})
		c := newTestClient(t, db, "acme")
		m, err := db.CreateMeasure(ctx, c, NewMeasure{Tags: []string{"a"}})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		db = e.openNamed(t, "reopen", Options{})
		c2, err := db.ClientByKeyHash(ctx, []byte("acme"))
		if err != nil || c2.ID != c.ID {
			t.Fatalf("client after reopen: %+v, %v", c2, err)
		}
		got, err := db.Measure(ctx, c2, m.ID)
		if err != nil || got.ID != m.ID || len(got.Tags) != 1 {
			t.Fatalf("measure after reopen: %+v, %v", got, err)
		}
	})
}

// TestDatabaseFilesArePrivate: a new SQLite database, the files beside it
// and a backup of it are readable by their owner alone.
func TestDatabaseFilesArePrivate(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "private.db")
	db := opened(t)(Open(context.Background(), file, Options{}))
	newTestClient(t, db, "acme")
	copied := filepath.Join(dir, "copy.db")
	if err := Backup(context.Background(), file, copied); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{file, file + "-wal", file + "-shm", copied} {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if mode := fi.Mode().Perm(); mode != 0o600 {
			t.Errorf("%s: mode %v, want -rw-------", filepath.Base(f), mode)
		}
	}
}

// TestPostgresSchemaMadeBeforehand: a user that may not create schemas
// serves from a schema an administrator made and gave it.
func TestPostgresSchemaMadeBeforehand(t *testing.T) {
	if postgres == nil {
		storagetest.Unavailable(t, "PostgreSQL", postgresErr)
	}
	ctx := context.Background()
	admin, err := sql.Open("pgx", postgres.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	schema := fmt.Sprintf("t%d_given", schemas.Add(1))
	role := schema + "_user"
	for _, q := range []string{
		`CREATE ROLE ` + role + ` LOGIN`,
		`CREATE SCHEMA ` + schema + ` AUTHORIZATION ` + role,
	} {
		if _, err := admin.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	u, err := url.Parse(postgres.URL)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User(role)
	db := opened(t)(OpenPostgres(ctx, u.String(), schema, Options{}))
	newTestClient(t, db, "acme")
	// And without the schema, the same user is told why.
	if _, err := OpenPostgres(ctx, u.String(), schema+"_missing", Options{}); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Fatalf("a schema the user may not create: %v", err)
	}
}

// TestEnvironmentsShareNothing: two schemas of one PostgreSQL database, as
// the two environments of a deployment use, see none of each other's rows.
func TestEnvironmentsShareNothing(t *testing.T) {
	engines(t, func(t *testing.T, e *testEngine) {
		ctx := context.Background()
		prod, test := e.openNamed(t, "production", Options{}), e.openNamed(t, "test", Options{})
		newTestClient(t, prod, "acme")
		if _, err := test.ClientByKeyHash(ctx, []byte("acme")); !errors.Is(err, ErrNotFound) {
			t.Fatalf("the other environment found the client: %v", err)
		}
		if list, _ := test.Clients(ctx); len(list) != 0 {
			t.Fatalf("the other environment lists %d clients", len(list))
		}
	})
}

func TestOpenRefusesAmbiguousPath(t *testing.T) {
	if _, err := Open(context.Background(), filepath.Join(t.TempDir(), "a?b.db"), Options{}); err == nil {
		t.Fatal("a path with ? was accepted")
	}
}

func TestOpenPostgresRefusesBadSchemaName(t *testing.T) {
	for _, schema := range []string{"", "Production", "a-b", "a;drop", "1abc"} {
		if _, err := OpenPostgres(context.Background(), "postgres://127.0.0.1:1/x", schema, Options{}); err == nil {
			t.Errorf("schema %q accepted", schema)
		}
	}
}

func TestRebind(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"SELECT 1", "SELECT 1"},
		{"a = ? AND b IN (?, ?)", "a = $1 AND b IN ($2, $3)"},
	} {
		if got := postgresEngine.rebind(tc.in); got != tc.want {
			t.Errorf("rebind(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if got := sqliteEngine.rebind(tc.in); got != tc.in {
			t.Errorf("sqlite rebind changed %q", tc.in)
		}
	}
}

// TestUpgradeKeepsTagCounts: a database of the schema before the member
// rows counted their sets' measures, with tagged measures in it, is
// upgraded in place when a newer server opens it: the counts are filled
// from the sets, filtered lists count the measures made before the
// upgrade, and the counts follow the measures made and deleted after it.
// The older database is made by taking the later migrations back out of
// a current one.
func TestUpgradeKeepsTagCounts(t *testing.T) {
	engines(t, func(t *testing.T, e *testEngine) {
		ctx := context.Background()
		db := e.openNamed(t, "upgrade", Options{})
		acme := newTestClient(t, db, "acme")
		var ids []string
		for _, tags := range [][]string{{"a"}, {"a"}, {"a", "b"}, {"b"}, nil, {"a"}} {
			m, err := db.CreateMeasure(ctx, acme, NewMeasure{Tags: tags})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, m.ID)
		}
		if err := db.DeleteMeasure(ctx, acme, ids[5]); err != nil {
			t.Fatal(err)
		}
		back := []string{
			`DROP TRIGGER tag_set_members_count`,
			`ALTER TABLE tag_set_members DROP COLUMN measures`,
		}
		if e.name == "postgres" {
			back = []string{
				`DROP TRIGGER tag_set_members_count ON tag_sets`,
				`DROP FUNCTION tag_set_members_count()`,
				`ALTER TABLE tag_set_members DROP CONSTRAINT tag_set_members_pkey, DROP COLUMN measures, ADD PRIMARY KEY (client, tag, tag_set)`,
			}
		}
		back = append(back, `DROP TABLE request_windows`,
			`DELETE FROM schema_migrations WHERE name IN ('0007_member_counts.sql', '0008_request_windows.sql')`)
		for _, q := range back {
			if _, err := db.writer().Exec(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}

		db = e.openNamed(t, "upgrade", Options{})
		total := func(f *TagFilter) int {
			t.Helper()
			page, err := db.Measures(ctx, acme, MeasureQuery{Tags: f, Take: 10})
			if err != nil {
				t.Fatal(err)
			}
			return page.Total
		}
		has := func(tags ...string) *TagFilter { return &TagFilter{Operator: TagsContain, Values: tags} }
		for _, c := range []struct {
			f    *TagFilter
			want int
		}{{has("a"), 3}, {has("b"), 2}, {has("a", "b"), 1}, {nil, 5}} {
			if got := total(c.f); got != c.want {
				t.Errorf("after the upgrade, %s counts %d measures, want %d", describe(c.f), got, c.want)
			}
		}
		if _, err := db.CreateMeasure(ctx, acme, NewMeasure{Tags: []string{"a"}}); err != nil {
			t.Fatal(err)
		}
		if err := db.DeleteMeasure(ctx, acme, ids[3]); err != nil {
			t.Fatal(err)
		}
		if a, b := total(has("a")), total(has("b")); a != 4 || b != 1 {
			t.Errorf("after a measure made and one deleted, a counts %d and b %d, want 4 and 1", a, b)
		}
		if n := count(t, db, `SELECT count(*) FROM request_windows`); n != 0 {
			t.Errorf("request_windows holds %d rows", n)
		}
	})
}

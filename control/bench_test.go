package control

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pulsewire/pulsewire/storage"
	"github.com/pulsewire/pulsewire/storage/storagetest"
)

// benchAPI is an environment for benchmarks: real SQLite in a temporary
// folder, with a clock that moves a minute each time it is read, so that
// no rate limit is ever reached (the limits are still counted, in the
// database, as they are when serving).
func benchAPI(b *testing.B, dir string) (*API, *storage.DB, *Service) {
	return benchAPIOn(b, func(opts storage.Options) (*storage.DB, error) {
		return storage.Open(context.Background(), filepath.Join(dir, "bench.db"), opts)
	}, dir)
}

// benchAPIOn is benchAPI on the database open opens.
func benchAPIOn(b *testing.B, open func(storage.Options) (*storage.DB, error), dir string) (*API, *storage.DB, *Service) {
	b.Helper()
	var minutes atomic.Int64
	now := func() time.Time { return time.Unix(minutes.Add(60), 0) }
	db, err := open(storage.Options{Now: now})
	if err != nil {
		b.Fatal(err)
	}
	media, err := storage.NewMediaDir(filepath.Join(dir, "media"))
	if err != nil {
		b.Fatal(err)
	}
	svc := NewService(Production, db, media)
	api := NewAPI(svc, Options{})
	return api, db, svc
}

// serve answers one request in process and fails the benchmark on an
// unexpected status.
func serve(b *testing.B, api *API, req *http.Request, status int) {
	w := httptest.NewRecorder()
	api.ServeHTTP(w, req)
	if w.Code != status {
		b.Fatalf("status %d: %s", w.Code, w.Body)
	}
}

// BenchmarkCreateToken is the server time of POST /access-tokens:
// authentication, the two rate limits counted in the database (writes that
// do not wait for the disk), validation, a 256-bit value, and one durable
// insert.
func BenchmarkCreateToken(b *testing.B) {
	api, db, svc := benchAPI(b, b.TempDir())
	defer db.Close()
	_, key, err := svc.CreateClient(context.Background(), NewClient{Name: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	body := `{"description":"widget","permissions":[{"name":"measurement.scan","maxSessions":1}],"duration":"10m"}`
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest("POST", "/access-tokens", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		serve(b, api, req, http.StatusCreated)
	}
}

// listDB is the database of a list benchmark, seeded once per process:
// two clients with 100,000 measures each.
type listDB struct {
	once sync.Once
	dir  string
	api  *API
	db   *storage.DB
	key  string
	err  error
	// postgres is the cluster of the PostgreSQL one.
	postgres *storagetest.Postgres
}

// listBench is on SQLite, listBenchPostgres on PostgreSQL.
var listBench, listBenchPostgres listDB

func TestMain(m *testing.M) {
	code := m.Run()
	removeFixtures()
	for _, l := range []*listDB{&listBench, &listBenchPostgres} {
		if l.db != nil {
			l.db.Close()
		}
		if l.postgres != nil {
			l.postgres.Stop()
		}
		if l.dir != "" {
			os.RemoveAll(l.dir)
		}
	}
	os.Exit(code)
}

// benchTags draws the tags of n measures: 0 to 4 tags each (a fifth have
// none), from 50 tags under a Zipf law (s = 1.2), so that a few tags are on
// many measures and most on few, as sites, campaigns and devices are. For
// the caller: tag-01 is on 26% of the measures, tag-04 on 10%, tag-30 on 1%,
// and 12,431 distinct tag sets occur.
func benchTags(seed uint64, n int) [][]string {
	r := rand.New(rand.NewPCG(seed, 0))
	z := rand.NewZipf(r, 1.2, 1, 49)
	sets := make([][]string, n)
	for i := range sets {
		k := r.IntN(5)
		set := make([]string, 0, k)
		for len(set) < k {
			if t := fmt.Sprintf("tag-%02d", z.Uint64()); !slices.Contains(set, t) {
				set = append(set, t)
			}
		}
		sets[i] = set
	}
	return sets
}

// seedListBench seeds l on SQLite, or on PostgreSQL (a cluster of its own,
// flushing every commit as in production) when l is listBenchPostgres.
func seedListBench(b *testing.B, l *listDB) (*API, string) {
	l.once.Do(func() {
		ctx := context.Background()
		if l.dir, l.err = os.MkdirTemp("", "pulsewire-bench"); l.err != nil {
			return
		}
		var (
			api *API
			db  *storage.DB
			svc *Service
		)
		if l == &listBenchPostgres {
			if l.postgres, l.err = storagetest.StartPostgres(ctx, storagetest.PostgresOptions{Durable: true}); l.err != nil {
				return
			}
			api, db, svc = benchAPIOn(b, func(opts storage.Options) (*storage.DB, error) {
				return storage.OpenPostgres(ctx, l.postgres.URL, "bench", opts)
			}, l.dir)
		} else {
			api, db, svc = benchAPI(b, l.dir)
		}
		l.api, l.db = api, db
		start := time.Now()
		for i := range 2 {
			c, key, err := svc.CreateClient(ctx, NewClient{Name: fmt.Sprint("client", i)})
			if err != nil {
				l.err = err
				return
			}
			if i == 0 {
				l.key = key
			}
			sets := benchTags(uint64(i+1), 100_000)
			for lo := 0; lo < len(sets); lo += 5000 {
				batch := make([]storage.NewMeasure, 0, 5000)
				for _, tags := range sets[lo : lo+5000] {
					batch = append(batch, storage.NewMeasure{Tags: tags, UserData: &storage.UserData{}})
				}
				if _, l.err = db.CreateMeasures(ctx, c, batch); l.err != nil {
					return
				}
			}
		}
		if l == &listBenchPostgres {
			// Vacuumed tables and fresh statistics, as autovacuum
			// keeps them on a server that has run a while: a bulk load
			// outruns it, the planner then guesses from the empty
			// tables it saw, and index-only scans visit the rows the
			// load left behind.
			l.err = vacuumPostgres(ctx, l.postgres.URL)
			if l.err != nil {
				return
			}
		}
		fmt.Fprintf(os.Stderr, "seeded 200,000 measures on %s in %s\n", db.Engine(), time.Since(start).Round(time.Second))
	})
	if l.err != nil {
		if l == &listBenchPostgres {
			storagetest.Unavailable(b, "PostgreSQL", l.err)
		}
		b.Fatal(l.err)
	}
	return l.api, l.key
}

// BenchmarkListMeasures is the server time of GET /measures?take=100 with a
// tag filter, over the caller's 100,000 measures among 200,000, total
// included, for each operator; it reports the median and the 95th
// percentile of one request. The first three are the headline cases, the
// next three heavier (a tag on a quarter of the measures, four popular
// tags), then a rare tag (gathered rather than walked) and no filter.
func BenchmarkListMeasures(b *testing.B) { benchmarkListMeasures(b, &listBench) }

// BenchmarkListMeasuresPostgres is BenchmarkListMeasures on PostgreSQL.
func BenchmarkListMeasuresPostgres(b *testing.B) { benchmarkListMeasures(b, &listBenchPostgres) }

func benchmarkListMeasures(b *testing.B, l *listDB) {
	api, key := seedListBench(b, l)
	for _, tc := range []struct{ name, filter string }{
		{"contains-2", `{"operator":"contains","name":"tags","values":["tag-01","tag-02"]}`},
		{"overlaps-2", `{"operator":"overlaps","name":"tags","values":["tag-03","tag-04"]}`},
		{"contained-by-3", `{"operator":"contained-by","name":"tags","values":["tag-01","tag-02","tag-03"]}`},
		{"contains-1-quarter", `{"operator":"contains","name":"tags","values":["tag-01"]}`},
		{"overlaps-4-popular", `{"operator":"overlaps","name":"tags","values":["tag-01","tag-02","tag-03","tag-04"]}`},
		{"contained-by-1", `{"operator":"contained-by","name":"tags","values":["tag-01"]}`},
		{"contains-1-rare", `{"operator":"contains","name":"tags","values":["tag-30"]}`},
		{"no-filter", ``},
	} {
		b.Run(tc.name, func(b *testing.B) {
			target := "/measures?take=100"
			if tc.filter != "" {
				target += "&filters=" + url.QueryEscape(tc.filter)
			}
			b.ReportAllocs()
			var took []time.Duration
			for b.Loop() {
				req := httptest.NewRequest("GET", target, nil)
				req.Header.Set("Authorization", "Bearer "+key)
				start := time.Now()
				serve(b, api, req, http.StatusOK)
				took = append(took, time.Since(start))
			}
			sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
			ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
			b.ReportMetric(ms(took[len(took)/2]), "p50-ms")
			b.ReportMetric(ms(took[len(took)*95/100]), "p95-ms")
		})
	}
}

// vacuumPostgres vacuums every table of the database at url and refreshes
// the planner's statistics.
func vacuumPostgres(ctx context.Context, url string) error {
	db, err := sql.Open("pgx", url)
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.ExecContext(ctx, "VACUUM ANALYZE")
	return err
}

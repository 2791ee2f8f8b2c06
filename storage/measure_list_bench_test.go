package storage

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"
)

// benchList is the database of the list benchmark, seeded once per process:
// two clients with 100,000 measures each.
var benchList struct {
	once   sync.Once
	dir    string
	db     *DB
	caller Client
	err    error
}

// TestMain removes what the benchmarks seeded.
func TestMain(m *testing.M) {
	code := m.Run()
	if benchList.db != nil {
		benchList.db.Close()
	}
	if benchList.dir != "" {
		os.RemoveAll(benchList.dir)
	}
	os.Exit(code)
}

// benchTagSets draws the tags of n measures: 0 to 4 tags each (a fifth have
// none), drawn from 50 tags with a Zipf law (s = 1.2), so a few tags are on
// most measures and most tags on few, as labels such as sites, campaigns and
// devices are.
func benchTagSets(seed uint64, n int) [][]string {
	r := rand.New(rand.NewPCG(seed, 0))
	z := rand.NewZipf(r, 1.2, 1, 49)
	sets := make([][]string, n)
	for i := range sets {
		k := r.IntN(5)
		set := make([]string, 0, k)
		for len(set) < k {
			t := fmt.Sprintf("tag-%02d", z.Uint64())
			if !slices.Contains(set, t) {
				set = append(set, t)
			}
		}
		sets[i] = set
	}
	return sets
}

func seedBenchList(b *testing.B) (*DB, Client) {
	benchList.once.Do(func() {
		ctx := context.Background()
		dir, err := os.MkdirTemp("", "pulsewire-bench")
		if err != nil {
			benchList.err = err
			return
		}
		benchList.dir = dir
		db, err := Open(ctx, filepath.Join(dir, "bench.db"), Options{})
		if err != nil {
			benchList.err = err
			return
		}
		start := time.Now()
		for ci := range 2 {
			c, err := db.CreateClient(ctx, NewClient{Name: fmt.Sprint("client", ci), APIKeyHash: []byte{byte(ci)}})
			if err != nil {
				benchList.err = err
				return
			}
			sets := benchTagSets(uint64(ci+1), 100_000)
			for lo := 0; lo < len(sets); lo += 5000 {
				ns := make([]NewMeasure, 0, 5000)
				for _, s := range sets[lo : lo+5000] {
					ns = append(ns, NewMeasure{Tags: s})
				}
				if _, err := db.CreateMeasures(ctx, c, ns); err != nil {
					benchList.err = err
					return
				}
			}
			if ci == 0 {
				benchList.caller = c
			}
		}
		fmt.Printf("seeded 200,000 measures in %s\n", time.Since(start).Round(time.Millisecond))
		benchList.db = db
	})
	if benchList.err != nil {
		b.Fatal(benchList.err)
	}
	return benchList.db, benchList.caller
}

// BenchmarkMeasuresByTags lists one page (take=100) of the caller's 100,000
// measures among 200,000 under each tag operator, and reports the median and
// 95th percentile of one call, count included. The first three filters are
// the headline cases; the next three are heavier (a tag on a quarter of the
// measures, four popular tags), the last a rare tag (the gathering path).
func BenchmarkMeasuresByTags(b *testing.B) {
	db, c := seedBenchList(b)
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		f    TagFilter
	}{
		{"contains-2", TagFilter{TagsContain, []string{"tag-01", "tag-02"}}},
		{"overlaps-2", TagFilter{TagsOverlap, []string{"tag-03", "tag-04"}}},
		{"contained-by-3", TagFilter{TagsContainedBy, []string{"tag-01", "tag-02", "tag-03"}}},
		{"contains-1-quarter", TagFilter{TagsContain, []string{"tag-01"}}},
		{"overlaps-4-popular", TagFilter{TagsOverlap, []string{"tag-01", "tag-02", "tag-03", "tag-04"}}},
		{"contained-by-1", TagFilter{TagsContainedBy, []string{"tag-01"}}},
		{"contains-1-rare", TagFilter{TagsContain, []string{"tag-30"}}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			var took []time.Duration
			var total int
			for b.Loop() {
				start := time.Now()
				p, err := db.Measures(ctx, c, MeasureQuery{Tags: &tc.f, Take: 100})
				if err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(start))
				total = p.Total
			}
			sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(took[len(took)*95/100].Microseconds())/1000, "p95-ms")
			b.ReportMetric(float64(total), "total")
		})
	}
}

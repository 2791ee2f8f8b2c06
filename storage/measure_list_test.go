package storage

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// keeps is the definition of each tag operator, written plainly
// to check the indexed implementation against.
func keeps(f TagFilter, tags []string) bool {
	switch f.Operator {
	case TagsContain:
		for _, v := range f.Values {
			if !slices.Contains(tags, v) {
				return false
			}
		}
		return true
	case TagsOverlap:
		for _, v := range f.Values {
			if slices.Contains(tags, v) {
				return true
			}
		}
		return false
	case TagsContainedBy:
		for _, tag := range tags {
			if !slices.Contains(f.Values, tag) {
				return false
			}
		}
		return true
	}
	panic("unknown operator " + f.Operator)
}

// TestMeasuresMatchDefinition lists random pages under random filters from a
// random store (with deletions, and another client's measures beside) and
// compares each answer with the definition.
func TestMeasuresMatchDefinition(t *testing.T) {
	engines(t, func(t *testing.T, e *testEngine) {
		ctx := context.Background()
		db := e.open(t, Options{})
		acme, other := newTestClient(t, db, "acme"), newTestClient(t, db, "other")
		r := rand.New(rand.NewPCG(7, 7))
		vocabulary := []string{"a", "b", "c", "d", "e", "f"}
		randomTags := func(max int) []string {
			tags := make([]string, r.IntN(max+1))
			for i := range tags {
				tags[i] = vocabulary[r.IntN(len(vocabulary))] // repeats allowed
			}
			return tags
		}
		var want []Measure // acme's live measures, oldest first
		for range 20 {
			ns := make([]NewMeasure, 10)
			for i := range ns {
				ns[i] = NewMeasure{Tags: randomTags(4)}
			}
			ms, err := db.CreateMeasures(ctx, acme, ns)
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, ms...)
			if _, err := db.CreateMeasures(ctx, other, ns[:3]); err != nil {
				t.Fatal(err)
			}
		}
		for range 40 {
			i := r.IntN(len(want))
			if err := db.DeleteMeasure(ctx, acme, want[i].ID); err != nil {
				t.Fatal(err)
			}
			want = slices.Delete(want, i, i+1)
		}
		slices.Reverse(want) // newest first

		operators := []TagOperator{TagsContain, TagsOverlap, TagsContainedBy}
		for i := range 150 {
			f := &TagFilter{Operator: operators[i%3], Values: randomTags(3)}
			if len(f.Values) == 0 {
				f = nil
			}
			q := MeasureQuery{Tags: f, Take: 1 + r.IntN(40), Skip: r.IntN(60)}
			var match []string
			for _, m := range want {
				if f == nil || keeps(*f, m.Tags) {
					match = append(match, m.ID)
				}
			}
			page, err := db.Measures(ctx, acme, q)
			if err != nil {
				t.Fatal(err)
			}
			got := make([]string, len(page.Items))
			for i, m := range page.Items {
				got[i] = m.ID
			}
			wantPage := match[min(q.Skip, len(match)):min(q.Skip+q.Take, len(match))]
			if page.Total != len(match) || !slices.Equal(got, wantPage) {
				t.Fatalf("%s take=%d skip=%d: total %d, want %d; page %v, want %v",
					describe(f), q.Take, q.Skip, page.Total, len(match), got, wantPage)
			}
		}
		// The member rows repeat their set's count, through creations and
		// deletions alike.
		var astray int
		err := db.reader().QueryRow(ctx, `SELECT count(*) FROM tag_set_members JOIN tag_sets ON tag_sets.key = tag_set_members.tag_set
		  WHERE tag_set_members.measures <> tag_sets.measures`).Scan(&astray)
		if err != nil || astray != 0 {
			t.Fatalf("%d member rows count their set's measures wrongly (%v)", astray, err)
		}
	})
}

func describe(f *TagFilter) string {
	if f == nil {
		return "no filter"
	}
	return fmt.Sprintf("%s %q", f.Operator, f.Values)
}

func TestMeasuresByKind(t *testing.T) {
	engines(t, func(t *testing.T, e *testEngine) {
		ctx := context.Background()
		db := e.open(t, Options{})
		acme := newTestClient(t, db, "acme")
		ms, err := db.CreateMeasures(ctx, acme, make([]NewMeasure, 5))
		if err != nil {
			t.Fatal(err)
		}
		// Runs come with a later issue; set kinds directly to check the lists.
		for i, kind := range []Kind{KindRPPG, KindCPPG, KindRPPG} {
			if _, err := db.writer().Exec(ctx, `UPDATE measures SET kind = ?, status = 'ended' WHERE id = ?`, kind, ms[i].ID); err != nil {
				t.Fatal(err)
			}
		}
		for _, tc := range []struct {
			kind Kind
			want []string
		}{
			{KindRPPG, []string{ms[2].ID, ms[0].ID}},
			{KindCPPG, []string{ms[1].ID}},
			{"", []string{ms[4].ID, ms[3].ID, ms[2].ID, ms[1].ID, ms[0].ID}},
		} {
			page, err := db.Measures(ctx, acme, MeasureQuery{Kind: tc.kind, Take: 10})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range page.Items {
				got = append(got, m.ID)
			}
			if page.Total != len(tc.want) || !slices.Equal(got, tc.want) {
				t.Errorf("kind %q: total %d, items %v; want %v", tc.kind, page.Total, got, tc.want)
			}
		}
	})
}

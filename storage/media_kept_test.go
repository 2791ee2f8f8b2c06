package storage

import (
	"context"
	"testing"

	"github.com/google/uuid"
)

// TestMediaKept: an ended measure records whether its run kept media; a
// measure not ended, or ended without saying (the sweep), records nothing.
func TestMediaKept(t *testing.T) {
	engines(t, func(t *testing.T, e *testEngine) {
		ctx := context.Background()
		db := e.open(t, Options{})
		acme := newTestClient(t, db, "acme")
		yes, no := true, false
		for _, kept := range []*bool{&yes, &no, nil} {
			m, err := db.StartNewMeasure(ctx, acme, uuid.NewString(), NewMeasure{}, KindRPPG)
			if err != nil {
				t.Fatal(err)
			}
			if m.MediaKept != nil {
				t.Fatalf("a started measure records mediaKept %v", *m.MediaKept)
			}
			ended, err := db.EndMeasure(ctx, acme, m.ID, MeasureEnd{Kind: KindRPPG, MediaKept: kept})
			if err != nil {
				t.Fatal(err)
			}
			read, err := db.Measure(ctx, acme, m.ID)
			if err != nil {
				t.Fatal(err)
			}
			for _, got := range []Measure{ended, read} {
				switch {
				case kept == nil && got.MediaKept != nil:
					t.Fatalf("mediaKept %v, want none", *got.MediaKept)
				case kept != nil && (got.MediaKept == nil || *got.MediaKept != *kept):
					t.Fatalf("mediaKept %v, want %v", got.MediaKept, *kept)
				}
			}
		}
		created, err := db.CreateMeasure(ctx, acme, NewMeasure{})
		if err != nil || created.MediaKept != nil {
			t.Fatalf("created: %v %v", created.MediaKept, err)
		}
	})
}

package storage

import (
	"context"
	"errors"
	"slices"
	"testing"
)

func TestClientLifecycle(t *testing.T) {
	engines(t, func(t *testing.T, e *testEngine) {
		ctx := context.Background()
		db := e.open(t, Options{})
		credits := int64(10)
		c, err := db.CreateClient(ctx, NewClient{Name: "acme", APIKeyHash: []byte("k1"), Variables: []string{"hr", "br"}, MonthlyCredits: &credits})
		if err != nil {
			t.Fatal(err)
		}
		if !c.Active || c.MonthlyCredits == nil || *c.MonthlyCredits != 10 {
			t.Fatalf("created %+v", c)
		}
		if _, err := db.CreateClient(ctx, NewClient{Name: "dup", APIKeyHash: []byte("k1")}); err == nil {
			t.Fatal("two clients share one key hash")
		}
		got, err := db.ClientByKeyHash(ctx, []byte("k1"))
		if err != nil || got.ID != c.ID || !slices.Equal(got.Variables, []string{"hr", "br"}) {
			t.Fatalf("by key: %+v, %v", got, err)
		}
		if _, err := db.ClientByKeyHash(ctx, []byte("nope")); !errors.Is(err, ErrNotFound) {
			t.Fatalf("unknown key: %v", err)
		}

		var unlimited *int64
		up, err := db.UpdateClient(ctx, c.ID, ClientUpdate{Variables: []string{"hrv"}, MonthlyCredits: &unlimited})
		if err != nil || up.MonthlyCredits != nil || !slices.Equal(up.Variables, []string{"hrv"}) {
			t.Fatalf("update: %+v, %v", up, err)
		}
		same, err := db.UpdateClient(ctx, c.ID, ClientUpdate{})
		if err != nil || !slices.Equal(same.Variables, []string{"hrv"}) {
			t.Fatalf("empty update changed the client: %+v, %v", same, err)
		}
		if _, err := db.UpdateClient(ctx, "missing", ClientUpdate{Variables: []string{"hr"}}); !errors.Is(err, ErrNotFound) {
			t.Fatalf("update of a missing client: %v", err)
		}

		for range 2 { // twice: deactivation is idempotent
			d, err := db.DeactivateClient(ctx, c.ID)
			if err != nil || d.Active {
				t.Fatalf("deactivate: %+v, %v", d, err)
			}
		}
		if got, _ := db.ClientByKeyHash(ctx, []byte("k1")); got.Active {
			t.Fatal("deactivation not seen by the next lookup")
		}
		if _, err := db.DeactivateClient(ctx, "missing"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("deactivate a missing client: %v", err)
		}

		list, err := db.Clients(ctx)
		if err != nil || len(list) != 1 || list[0].ID != c.ID {
			t.Fatalf("list: %+v, %v", list, err)
		}
	})
}

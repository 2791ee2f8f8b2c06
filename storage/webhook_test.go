package storage

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
)

var bothEvents = []string{EventMeasureEnded, EventMeasureDeleted}

// TestWebhookEndpoints: an endpoint is stored with its secret, listed and
// removed by its client only, and a client holds at most the limit.
func TestWebhookEndpoints(t *testing.T) {
	engines(t, func(t *testing.T, e *testEngine) {
		ctx := context.Background()
		db := e.open(t, Options{})
		acme, other := newTestClient(t, db, "acme"), newTestClient(t, db, "other")
		const max = 3
		var ids []string
		for i := range max {
			w, err := db.CreateWebhookEndpoint(ctx, acme, "https://hooks.example/"+string(rune('a'+i)), bothEvents, "whsec_x", max)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, w.ID)
		}
		// At the limit: one more is refused, and another client is not
		// counted with this one.
		if _, err := db.CreateWebhookEndpoint(ctx, acme, "https://hooks.example/d", bothEvents, "s", max); !errors.Is(err, ErrWebhookLimit) {
			t.Fatalf("past the limit: %v", err)
		}
		if _, err := db.CreateWebhookEndpoint(ctx, other, "https://hooks.example/o", bothEvents, "s", max); err != nil {
			t.Fatal(err)
		}
		ws, err := db.WebhookEndpoints(ctx, acme)
		if err != nil || len(ws) != max || ws[0].ID != ids[0] || ws[0].Secret != "whsec_x" || !ws[0].Wants(EventMeasureDeleted) {
			t.Fatalf("list: %+v %v", ws, err)
		}
		if _, err := db.WebhookEndpoint(ctx, other, ids[0]); !errors.Is(err, ErrNotFound) {
			t.Fatalf("another client's endpoint: %v", err)
		}
		if err := db.DeleteWebhookEndpoint(ctx, other, ids[0]); !errors.Is(err, ErrNotFound) {
			t.Fatalf("deletion by another client: %v", err)
		}
		if err := db.DeleteWebhookEndpoint(ctx, acme, ids[0]); err != nil {
			t.Fatal(err)
		}
		if _, err := db.WebhookEndpoint(ctx, acme, ids[0]); !errors.Is(err, ErrNotFound) {
			t.Fatalf("deleted endpoint: %v", err)
		}
		// Room again for one.
		if _, err := db.CreateWebhookEndpoint(ctx, acme, "https://hooks.example/e", bothEvents, "s", max); err != nil {
			t.Fatal(err)
		}
	})
}

// TestWebhookOutbox: ending and deleting a measure write a pending delivery
// to each endpoint that wants the event, in the same transaction; a failed
// create-and-run writes none; and another client's endpoints get nothing.
func TestWebhookOutbox(t *testing.T) {
	engines(t, func(t *testing.T, e *testEngine) {
		ctx := context.Background()
		db := e.open(t, Options{})
		acme, other := newTestClient(t, db, "acme"), newTestClient(t, db, "other")
		ended, err := db.CreateWebhookEndpoint(ctx, acme, "https://a.example/ended", []string{EventMeasureEnded}, "s1", 16)
		if err != nil {
			t.Fatal(err)
		}
		both, err := db.CreateWebhookEndpoint(ctx, acme, "https://a.example/both", bothEvents, "s2", 16)
		if err != nil {
			t.Fatal(err)
		}
		elsewhere, err := db.CreateWebhookEndpoint(ctx, other, "https://o.example/", bothEvents, "s3", 16)
		if err != nil {
			t.Fatal(err)
		}
		id := uuid.NewString()
		if _, err := db.StartNewMeasure(ctx, acme, id, NewMeasure{}, KindCPPG); err != nil {
			t.Fatal(err)
		}
		if _, err := db.EndMeasure(ctx, acme, id, end(true)); err != nil {
			t.Fatal(err)
		}
		if err := db.DeleteMeasure(ctx, acme, id); err != nil {
			t.Fatal(err)
		}
		failed := uuid.NewString()
		if _, err := db.StartNewMeasure(ctx, acme, failed, NewMeasure{}, KindCPPG); err != nil {
			t.Fatal(err)
		}
		if err := db.DiscardRun(ctx, acme, failed); err != nil {
			t.Fatal(err)
		}
		logOf := func(endpoint string) []WebhookDelivery {
			t.Helper()
			ds, err := db.WebhookDeliveries(ctx, acme, endpoint)
			if err != nil {
				t.Fatal(err)
			}
			return ds
		}
		if ds := logOf(ended.ID); len(ds) != 1 || ds[0].Event.Type != EventMeasureEnded || ds[0].Event.MeasureID != id ||
			ds[0].Event.MeasureStatus != StatusEnded || ds[0].Event.MeasureKind != KindCPPG || ds[0].Outcome != DeliveryPending {
			t.Fatalf("measure.ended only: %+v", ds)
		}
		ds := logOf(both.ID)
		if len(ds) != 2 {
			t.Fatalf("both events: %+v", ds)
		}
		types := map[string]WebhookDelivery{ds[0].Event.Type: ds[0], ds[1].Event.Type: ds[1]}
		if del := types[EventMeasureDeleted]; del.Event.MeasureID != id || del.Event.MeasureStatus != StatusEnded {
			t.Fatalf("measure.deleted: %+v", del)
		}
		// One event, one id, whatever the endpoint.
		if types[EventMeasureEnded].Event.ID != logOf(ended.ID)[0].Event.ID {
			t.Fatal("the endpoints got different ids for one event")
		}
		if _, err := db.WebhookDeliveries(ctx, acme, elsewhere.ID); !errors.Is(err, ErrNotFound) {
			t.Fatalf("another client's log: %v", err)
		}
		if ds, _ := db.WebhookDeliveries(ctx, other, elsewhere.ID); len(ds) != 0 {
			t.Fatalf("another client's endpoint got %+v", ds)
		}
		// Another client cannot redeliver acme's delivery, through acme's
		// endpoint or its own: it is not there for it.
		delivery := logOf(ended.ID)[0]
		for _, endpoint := range []string{ended.ID, elsewhere.ID} {
			if d, err := db.RedeliverWebhook(ctx, other, endpoint, delivery.ID); !errors.Is(err, ErrNotFound) {
				t.Fatalf("another client redelivered acme's delivery through endpoint %s: %+v %v", endpoint, d, err)
			}
		}
	})
}

// TestWebhookDeliveriesListed: the delivery log of an endpoint holds its
// MaxDeliveriesListed most recent deliveries, newest first; the older ones
// are left out, never the newest.
func TestWebhookDeliveriesListed(t *testing.T) {
	engines(t, func(t *testing.T, e *testEngine) {
		ctx := context.Background()
		clock := &testClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
		db := e.open(t, Options{Now: clock.now})
		acme := newTestClient(t, db, "acme")
		w, err := db.CreateWebhookEndpoint(ctx, acme, "https://a.example/", []string{EventMeasureEnded}, "s", 16)
		if err != nil {
			t.Fatal(err)
		}
		var ended []string // oldest first
		for range MaxDeliveriesListed + 1 {
			clock.advance(time.Second)
			id := uuid.NewString()
			if _, err := db.StartNewMeasure(ctx, acme, id, NewMeasure{}, KindCPPG); err != nil {
				t.Fatal(err)
			}
			if _, err := db.EndMeasure(ctx, acme, id, end(false)); err != nil {
				t.Fatal(err)
			}
			ended = append(ended, id)
		}
		ds, err := db.WebhookDeliveries(ctx, acme, w.ID)
		if err != nil || len(ds) != MaxDeliveriesListed {
			t.Fatalf("%d deliveries listed (%v), want %d", len(ds), err, MaxDeliveriesListed)
		}
		for i, d := range ds {
			if want := ended[len(ended)-1-i]; d.Event.MeasureID != want {
				t.Fatalf("delivery %d is of measure %s, want %s (newest first)", i, d.Event.MeasureID, want)
			}
		}
	})
}

// TestWebhookDeactivatedClient: deactivating a client gives up its pending
// deliveries at once, a measure of it ended afterwards (as the sweep ends
// the runs a crash left) posts nothing, and other clients are untouched.
func TestWebhookDeactivatedClient(t *testing.T) {
	engines(t, func(t *testing.T, e *testEngine) {
		ctx := context.Background()
		db := e.open(t, Options{})
		acme, other := newTestClient(t, db, "acme"), newTestClient(t, db, "other")
		endOne := func(c Client) string {
			t.Helper()
			id := uuid.NewString()
			if _, err := db.StartNewMeasure(ctx, c, id, NewMeasure{}, KindCPPG); err != nil {
				t.Fatal(err)
			}
			if _, err := db.EndMeasure(ctx, c, id, end(false)); err != nil {
				t.Fatal(err)
			}
			return id
		}
		wa, err := db.CreateWebhookEndpoint(ctx, acme, "https://a.example/", bothEvents, "s", 16)
		if err != nil {
			t.Fatal(err)
		}
		wo, err := db.CreateWebhookEndpoint(ctx, other, "https://o.example/", bothEvents, "s", 16)
		if err != nil {
			t.Fatal(err)
		}
		endOne(acme)
		endOne(other)
		started := uuid.NewString()
		if _, err := db.StartNewMeasure(ctx, acme, started, NewMeasure{}, KindCPPG); err != nil {
			t.Fatal(err)
		}
		if _, err := db.DeactivateClient(ctx, acme.ID); err != nil {
			t.Fatal(err)
		}
		ds, err := db.WebhookDeliveries(ctx, acme, wa.ID)
		if err != nil || len(ds) != 1 || ds[0].Outcome != DeliveryFailed || ds[0].LastError != errClientDeactivated || !ds[0].NextAttemptAt.IsZero() {
			t.Fatalf("the deactivated client's delivery: %+v %v", ds, err)
		}
		if _, err := db.EndMeasure(ctx, acme, started, end(false)); err != nil {
			t.Fatal(err)
		}
		if ds, _ := db.WebhookDeliveries(ctx, acme, wa.ID); len(ds) != 1 {
			t.Fatalf("a measure ended after the deactivation posted: %+v", ds)
		}
		due, err := db.ClaimWebhooks(ctx, 10, 16, time.Minute)
		if err != nil || len(due) != 1 || due[0].Endpoint != wo.ID {
			t.Fatalf("claimed %+v %v, want the other client's one delivery", due, err)
		}
	})
}

// TestWebhookClaimsPerClient: a client's deliveries are claimed at most
// perClient at a time, counted over every instance, and a claim serves
// every client's oldest before any client's second.
func TestWebhookClaimsPerClient(t *testing.T) {
	engines(t, func(t *testing.T, e *testEngine) {
		ctx := context.Background()
		clock := &testClock{t: time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)}
		one := e.openNamed(t, "fair", Options{Now: clock.now, Instance: "one"})
		two := e.openNamed(t, "fair", Options{Now: clock.now, Instance: "two"})
		busy, calm := newTestClient(t, one, "busy"), newTestClient(t, one, "calm")
		endOne := func(c Client) {
			t.Helper()
			id := uuid.NewString()
			if _, err := one.StartNewMeasure(ctx, c, id, NewMeasure{}, KindCPPG); err != nil {
				t.Fatal(err)
			}
			if _, err := one.EndMeasure(ctx, c, id, end(false)); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 6 {
			if _, err := one.CreateWebhookEndpoint(ctx, busy, fmt.Sprintf("https://busy.example/%d", i), bothEvents, "s", 16); err != nil {
				t.Fatal(err)
			}
		}
		calmHook, err := one.CreateWebhookEndpoint(ctx, calm, "https://calm.example/", bothEvents, "s", 16)
		if err != nil {
			t.Fatal(err)
		}
		endOne(busy) // six deliveries, older than calm's one
		clock.advance(time.Second)
		endOne(calm)
		owners := func(due []DueWebhook) (ofBusy, ofCalm int) {
			for _, d := range due {
				if d.Endpoint == calmHook.ID {
					ofCalm++
				} else {
					ofBusy++
				}
			}
			return ofBusy, ofCalm
		}
		claim := func(db *DB, n, wantBusy, wantCalm int) []DueWebhook {
			t.Helper()
			due, err := db.ClaimWebhooks(ctx, n, 4, time.Minute)
			if b, c := owners(due); err != nil || b != wantBusy || c != wantCalm {
				t.Fatalf("%s claimed %d of busy and %d of calm (%v), want %d and %d", db.Instance(), b, c, err, wantBusy, wantCalm)
			}
			return due
		}
		// Two places: one each, though busy's six are older.
		claim(one, 2, 1, 1)
		// Busy has one in flight: three more, then none, on any instance.
		first := claim(two, 10, 3, 0)
		claim(one, 10, 0, 0)
		claim(two, 10, 0, 0)
		// One attempt ends: busy may take one more of its two left.
		if _, err := two.RecordWebhookAttempt(ctx, first[0].ID, WebhookAttempt{Status: 204, Delivered: true}); err != nil {
			t.Fatal(err)
		}
		claim(one, 10, 1, 0)
		// Claims that expire count no more: busy's five left, four at once.
		clock.advance(time.Minute + time.Millisecond)
		claim(two, 10, 4, 1)
	})
}

// TestWebhookClaims: a due delivery is claimed once, by one instance; a
// failed attempt makes it due again at its next time; past its window it
// is given up; a claim released or expired makes it due again; redelivery
// makes a delivered one due; all of it survives a reopening.
func TestWebhookClaims(t *testing.T) {
	engines(t, func(t *testing.T, e *testEngine) {
		ctx := context.Background()
		clock := &testClock{t: time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)}
		one := e.openNamed(t, "claims", Options{Now: clock.now, Instance: "one"})
		two := e.openNamed(t, "claims", Options{Now: clock.now, Instance: "two"})
		acme := newTestClient(t, one, "acme")
		w, err := one.CreateWebhookEndpoint(ctx, acme, "https://a.example/", bothEvents, "s", 16)
		if err != nil {
			t.Fatal(err)
		}
		endOne := func() {
			t.Helper()
			id := uuid.NewString()
			if _, err := one.StartNewMeasure(ctx, acme, id, NewMeasure{}, KindCPPG); err != nil {
				t.Fatal(err)
			}
			if _, err := one.EndMeasure(ctx, acme, id, end(false)); err != nil {
				t.Fatal(err)
			}
		}
		endOne()
		endOne()
		claim := func(db *DB, want int) []DueWebhook {
			t.Helper()
			due, err := db.ClaimWebhooks(ctx, 10, 16, time.Minute)
			if err != nil || len(due) != want {
				t.Fatalf("%s claimed %d (%v), want %d", db.Instance(), len(due), err, want)
			}
			return due
		}
		// Two deliveries to one endpoint: one at a time.
		due := claim(one, 1)
		if due[0].URL != w.URL || due[0].Secret != "s" || due[0].Endpoint != w.ID {
			t.Fatalf("claimed %+v", due[0])
		}
		claim(two, 0)
		// Another instance cannot record an attempt on one's claim.
		if _, err := two.RecordWebhookAttempt(ctx, due[0].ID, WebhookAttempt{Delivered: true}); !errors.Is(err, ErrNotFound) {
			t.Fatalf("attempt on another's claim: %v", err)
		}
		clock.advance(time.Second)
		out, err := one.RecordWebhookAttempt(ctx, due[0].ID, WebhookAttempt{Status: 500, Error: "answered 500", Next: clock.now().Add(time.Minute)})
		if err != nil || out != DeliveryPending {
			t.Fatalf("failed attempt: %q %v", out, err)
		}
		// The other delivery is due now; the failed one in a minute.
		other := claim(two, 1)
		if other[0].ID == due[0].ID {
			t.Fatal("the failed delivery was due before its time")
		}
		if err := two.ReleaseWebhooks(ctx); err != nil {
			t.Fatal(err)
		}
		other = claim(one, 1)
		if out, err := one.RecordWebhookAttempt(ctx, other[0].ID, WebhookAttempt{Status: 204, Delivered: true}); err != nil || out != DeliveryDelivered {
			t.Fatalf("delivered: %q %v", out, err)
		}
		claim(one, 0)
		// Done, but not older than the limit: kept.
		if n, err := one.ForgetWebhookDeliveries(ctx, other[0].Event.CreatedAt); err != nil || n != 0 {
			t.Fatalf("forgot %d recent deliveries (%v)", n, err)
		}
		clock.advance(time.Minute)
		// Reopened (a restart), the pending delivery is still there, and a
		// claim whose instance died expires.
		one.Close()
		one = e.openNamed(t, "claims", Options{Now: clock.now, Instance: "one"})
		again := claim(one, 1)
		if again[0].ID != due[0].ID || again[0].Attempts != 1 || again[0].LastStatus != 500 {
			t.Fatalf("after reopening: %+v", again[0])
		}
		claim(two, 0)
		clock.advance(time.Minute + time.Millisecond)
		again = claim(two, 1)
		// Past the retry window, the attempt gives the delivery up.
		clock.advance(WebhookRetryWindow)
		if out, err := two.RecordWebhookAttempt(ctx, again[0].ID, WebhookAttempt{Error: "timeout", Next: clock.now().Add(time.Hour)}); err != nil || out != DeliveryFailed {
			t.Fatalf("past the window: %q %v", out, err)
		}
		claim(two, 0)
		log, err := one.WebhookDeliveries(ctx, acme, w.ID)
		if err != nil || len(log) != 2 {
			t.Fatalf("log: %+v %v", log, err)
		}
		for _, d := range log {
			if d.ID == due[0].ID && (d.Outcome != DeliveryFailed || d.Attempts != 2 || d.LastError != "timeout" || !d.NextAttemptAt.IsZero()) {
				t.Fatalf("given up: %+v", d)
			}
		}
		// Redelivery makes both due again, delivered or failed.
		for _, d := range log {
			r, err := one.RedeliverWebhook(ctx, acme, w.ID, d.ID)
			if err != nil || r.Outcome != DeliveryPending || !r.NextAttemptAt.Equal(clock.now()) {
				t.Fatalf("redeliver: %+v %v", r, err)
			}
		}
		if _, err := one.RedeliverWebhook(ctx, acme, w.ID, uuid.NewString()); !errors.Is(err, ErrNotFound) {
			t.Fatalf("redeliver of no delivery: %v", err)
		}
		// The log forgets what is done and old, never what is pending.
		if n, err := one.ForgetWebhookDeliveries(ctx, clock.now().Add(time.Hour)); err != nil || n != 0 {
			t.Fatalf("forgot %d pending deliveries (%v)", n, err)
		}
		claim(one, 1)
		// Deleting the endpoint drops its deliveries, claimed ones too.
		if err := one.DeleteWebhookEndpoint(ctx, acme, w.ID); err != nil {
			t.Fatal(err)
		}
		clock.advance(time.Hour)
		claim(two, 0)
	})
}

// TestWebhookClaimsConcurrent: instances claiming at once never claim one
// delivery twice.
func TestWebhookClaimsConcurrent(t *testing.T) {
	engines(t, func(t *testing.T, e *testEngine) {
		ctx := context.Background()
		first := e.openNamed(t, "race", Options{})
		acme := newTestClient(t, first, "acme")
		const endpoints = 12
		for range endpoints {
			if _, err := first.CreateWebhookEndpoint(ctx, acme, "https://a.example/", bothEvents, "s", endpoints); err != nil {
				t.Fatal(err)
			}
		}
		id := uuid.NewString()
		if _, err := first.StartNewMeasure(ctx, acme, id, NewMeasure{}, KindCPPG); err != nil {
			t.Fatal(err)
		}
		if _, err := first.EndMeasure(ctx, acme, id, end(false)); err != nil {
			t.Fatal(err)
		}
		var (
			mu      sync.Mutex
			claimed = map[string]int{}
			wg      sync.WaitGroup
		)
		for i := range 4 {
			db := e.openNamed(t, "race", Options{Instance: string(rune('a' + i))})
			wg.Go(func() {
				for range 6 {
					due, err := db.ClaimWebhooks(ctx, 2, 16, time.Minute)
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					for _, d := range due {
						claimed[d.ID]++
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if len(claimed) != endpoints {
			t.Fatalf("%d deliveries claimed, want %d", len(claimed), endpoints)
		}
		for id, n := range claimed {
			if n != 1 {
				t.Fatalf("delivery %s claimed %d times", id, n)
			}
		}
	})
}

// TestForgetWebhookDeliveries: the deliveries done before the limit go;
// later ones, and pending ones of any age, stay.
func TestForgetWebhookDeliveries(t *testing.T) {
	engines(t, func(t *testing.T, e *testEngine) {
		ctx := context.Background()
		clock := &testClock{t: time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)}
		db := e.open(t, Options{Now: clock.now})
		acme := newTestClient(t, db, "acme")
		w, err := db.CreateWebhookEndpoint(ctx, acme, "https://a.example/", bothEvents, "s", 16)
		if err != nil {
			t.Fatal(err)
		}
		id := uuid.NewString()
		if _, err := db.StartNewMeasure(ctx, acme, id, NewMeasure{}, KindCPPG); err != nil {
			t.Fatal(err)
		}
		if _, err := db.EndMeasure(ctx, acme, id, end(false)); err != nil {
			t.Fatal(err)
		}
		due, err := db.ClaimWebhooks(ctx, 1, 16, time.Minute)
		if err != nil || len(due) != 1 {
			t.Fatalf("claimed %d (%v)", len(due), err)
		}
		if _, err := db.RecordWebhookAttempt(ctx, due[0].ID, WebhookAttempt{Status: 200, Delivered: true}); err != nil {
			t.Fatal(err)
		}
		if err := db.DeleteMeasure(ctx, acme, id); err != nil { // measure.deleted stays pending
			t.Fatal(err)
		}
		clock.advance(time.Hour)
		if n, err := db.ForgetWebhookDeliveries(ctx, clock.now()); err != nil || n != 1 {
			t.Fatalf("forgot %d (%v), want the delivered one", n, err)
		}
		if ds, err := db.WebhookDeliveries(ctx, acme, w.ID); err != nil || len(ds) != 1 || ds[0].Event.Type != EventMeasureDeleted {
			t.Fatalf("left %+v %v", ds, err)
		}
	})
}

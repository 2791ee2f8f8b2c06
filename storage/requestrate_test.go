package storage

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"
)

// TestSpendWindow: a limit of N per span admits at most N requests
// in any span, exact at its edge, refuses only when N are in the span, and
// says how long until one leaves it.
func TestSpendWindow(t *testing.T) {
	engines(t, func(t *testing.T, e *testEngine) {
		ctx := context.Background()
		start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		clock := &testClock{t: start}
		db := e.open(t, Options{Now: clock.now})
		acme, other := newTestClient(t, db, "acme"), newTestClient(t, db, "other")
		rate := Rate{N: 3, Per: time.Minute}
		spend := func(c Client, name string, r Rate) (bool, time.Duration) {
			t.Helper()
			ok, wait, err := db.SpendWindow(ctx, c, name, r)
			if err != nil {
				t.Fatal(err)
			}
			return ok, wait
		}
		want := func(what string, ok bool, wait time.Duration, wantOK bool, wantWait time.Duration) {
			t.Helper()
			if ok != wantOK || wait != wantWait {
				t.Fatalf("%s: admitted %v, wait %v; want %v, %v", what, ok, wait, wantOK, wantWait)
			}
		}
		for range rate.N {
			ok, wait := spend(acme, "mint", rate)
			want("a request of the first burst", ok, wait, true, 0)
		}
		ok, wait := spend(acme, "mint", rate)
		want("one more at once", ok, wait, false, time.Minute)
		ok, wait = spend(acme, "general", rate) // another limit of the same client
		want("another limit", ok, wait, true, 0)
		ok, wait = spend(other, "mint", rate) // another client
		want("another client", ok, wait, true, 0)
		// A bucket would have earned one back after 20 s; the window holds
		// the burst for the whole minute.
		clock.advance(time.Minute - time.Millisecond)
		ok, wait = spend(acme, "mint", rate)
		want("1 ms before the burst leaves the window", ok, wait, false, time.Millisecond)
		clock.advance(time.Millisecond)
		for range rate.N {
			ok, wait = spend(acme, "mint", rate)
			want("a minute after the burst", ok, wait, true, 0)
		}
		ok, wait = spend(acme, "mint", rate)
		want("the second burst's next", ok, wait, false, time.Minute)
		// A limit lowered since counts the newest requests only.
		ok, wait = spend(acme, "mint", Rate{N: 2, Per: time.Minute})
		want("a lowered limit", ok, wait, false, time.Minute)
		// A clock behind the one that spent last counts from that time.
		clock.advance(-10 * time.Second)
		ok, wait = spend(acme, "mint", rate)
		want("an instance whose clock is behind", ok, wait, false, time.Minute)
	})
}

// TestSpendWindowAnySpan: requests at random times, in bursts and
// apart, never pass N in any span of the window, and each refusal finds N
// in the span that ends at it.
func TestSpendWindowAnySpan(t *testing.T) {
	engines(t, func(t *testing.T, e *testEngine) {
		ctx := context.Background()
		clock := &testClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
		db := e.open(t, Options{Now: clock.now})
		acme := newTestClient(t, db, "acme")
		rate := Rate{N: 20, Per: time.Minute}
		rng := rand.New(rand.NewPCG(1, 2))
		var admitted []time.Time
		refusals := 0
		for range 400 {
			if rng.IntN(4) > 0 { // bursts: three in four requests come at once
				clock.advance(time.Duration(rng.IntN(8000)) * time.Millisecond)
			}
			now := clock.now()
			ok, wait, err := db.SpendWindow(ctx, acme, "mint", rate)
			if err != nil {
				t.Fatal(err)
			}
			inSpan := 0 // admitted requests in (now - Per, now]
			for _, a := range admitted {
				if now.Sub(a) < rate.Per {
					inSpan++
				}
			}
			switch {
			case ok && inSpan >= rate.N:
				t.Fatalf("at %v: admitted with %d in the span", now, inSpan)
			case !ok && inSpan < rate.N:
				t.Fatalf("at %v: refused with %d in the span", now, inSpan)
			case !ok && now.Add(wait).Sub(admitted[len(admitted)-rate.N]) != rate.Per:
				t.Fatalf("at %v: wait %v, but the span's oldest leaves it at %v", now, wait, admitted[len(admitted)-rate.N].Add(rate.Per))
			}
			if ok {
				admitted = append(admitted, now)
			} else {
				refusals++
			}
		}
		if refusals == 0 || len(admitted) < 100 {
			t.Fatalf("%d admitted, %d refused: the sequence does not test the limit", len(admitted), refusals)
		}
	})
}

// TestSpendBucket: a bucket of N per span admits N at once, then one every
// span/N, says how long until the next is earned, and holds at most N however
// long its client was idle: an hour without requests buys no burst larger
// than the limit.
func TestSpendBucket(t *testing.T) {
	engines(t, func(t *testing.T, e *testEngine) {
		ctx := context.Background()
		clock := &testClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
		db := e.open(t, Options{Now: clock.now})
		acme, other := newTestClient(t, db, "acme"), newTestClient(t, db, "other")
		rate := Rate{N: 3, Per: time.Minute} // one earned back every 20 s
		spend := func(what string, c Client, name string, wantOK bool, wantWait time.Duration) {
			t.Helper()
			ok, wait, err := db.SpendBucket(ctx, c, name, rate)
			if err != nil {
				t.Fatal(err)
			}
			if ok != wantOK || wait != wantWait {
				t.Fatalf("%s: admitted %v, wait %v; want %v, %v", what, ok, wait, wantOK, wantWait)
			}
		}
		for range rate.N {
			spend("a request of the first burst", acme, "general", true, 0)
		}
		spend("one more at once", acme, "general", false, 20*time.Second)
		spend("another limit", acme, "mint", true, 0)
		spend("another client", other, "general", true, 0)
		clock.advance(20 * time.Second)
		spend("one earned back", acme, "general", true, 0)
		spend("the next at once", acme, "general", false, 20*time.Second)
		clock.advance(10 * time.Second)
		spend("half earned", acme, "general", false, 10*time.Second)
		// Idle for an hour, the bucket is full again, and no fuller.
		clock.advance(time.Hour)
		for range rate.N {
			spend("a request after an idle hour", acme, "general", true, 0)
		}
		spend("one past the limit after an idle hour", acme, "general", false, 20*time.Second)
		// A clock behind the one that spent last counts from that time.
		clock.advance(-10 * time.Second)
		spend("an instance whose clock is behind", acme, "general", false, 20*time.Second)
	})
}

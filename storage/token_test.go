package storage

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/google/uuid"
	"testing"
	"time"
)

func ptr[T any](v T) *T { return &v }

func TestCreateTokenExpiresOnTheCalendar(t *testing.T) {
	engines(t, func(t *testing.T, e *testEngine) {
		newYork, err := time.LoadLocation("America/New_York")
		if err != nil {
			t.Fatal(err)
		}
		// New York left daylight saving time at 2026-11-01 02:00 (clocks back to
		// 01:00, a 25-hour day) and entered it at 2026-03-08 02:00 (a 23-hour day).
		beforeFallBack := time.Date(2026, 10, 31, 12, 0, 0, 123_456_789, newYork)
		beforeSpring := time.Date(2026, 3, 7, 12, 0, 0, 0, newYork)
		for _, tc := range []struct {
			name    string
			loc     *time.Location
			at      time.Time
			d       TokenDuration
			life    time.Duration // wanted expiresAt - createdAt; 0: refused
			refused bool
		}{
			{"2d in UTC is 48h", time.UTC, beforeFallBack, TokenDuration{Days: 2}, 48 * time.Hour, false},
			{"48h across fall-back is 48h", newYork, beforeFallBack, TokenDuration{Hours: 48}, 48 * time.Hour, false},
			{"1d across fall-back is 25h", newYork, beforeFallBack, TokenDuration{Days: 1}, 25 * time.Hour, false},
			{"1d 23h across fall-back is 48h, the ceiling", newYork, beforeFallBack, TokenDuration{Days: 1, Hours: 23}, 48 * time.Hour, false},
			{"1d 23h 1s across fall-back is one second over", newYork, beforeFallBack, TokenDuration{Days: 1, Hours: 23, Seconds: 1}, 0, true},
			{"2d across fall-back is 49h", newYork, beforeFallBack, TokenDuration{Days: 2}, 0, true},
			{"2d across spring-forward is 47h", newYork, beforeSpring, TokenDuration{Days: 2}, 47 * time.Hour, false},
			{"1m 1s", time.UTC, beforeFallBack, TokenDuration{Minutes: 1, Seconds: 1}, 61 * time.Second, false},
			{"zero", time.UTC, beforeFallBack, TokenDuration{}, 0, true},
			{"negative", time.UTC, beforeFallBack, TokenDuration{Hours: 2, Minutes: -1}, 0, true},
			{"past the unit bound", time.UTC, beforeFallBack, TokenDuration{Seconds: maxUnits + 1}, 0, true},
		} {
			t.Run(tc.name, func(t *testing.T) {
				clock := &testClock{t: tc.at}
				db := e.open(t, Options{Now: clock.now, Location: tc.loc})
				c := newTestClient(t, db, "acme")
				tok, err := db.CreateToken(context.Background(), c, NewToken{
					ValueHash:   []byte("v"),
					Permissions: []Permission{{Name: "measurement.scan", MaxSessions: ptr(int64(1))}},
					Duration:    tc.d,
				})
				if tc.refused {
					if !errors.Is(err, ErrTokenDuration) {
						t.Fatalf("got %v, want ErrTokenDuration", err)
					}
					if count(t, db, `SELECT count(*) FROM access_tokens`) != 0 {
						t.Fatalf("a refused token was stored")
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if want := tc.at.Truncate(time.Millisecond).UTC(); !tok.CreatedAt.Equal(want) {
					t.Fatalf("createdAt %s, want %s", tok.CreatedAt, want)
				}
				if got := tok.ExpiresAt.Sub(tok.CreatedAt); got != tc.life {
					t.Fatalf("expiresAt - createdAt = %s, want %s", got, tc.life)
				}
				if stored := int64(count(t, db, `SELECT expires_at FROM access_tokens WHERE id = ?`, tok.ID)); stored != tok.ExpiresAt.UnixMilli() {
					t.Fatalf("stored expires_at %d, answered %d", stored, tok.ExpiresAt.UnixMilli())
				}
			})
		}
	})
}

func TestRevokeToken(t *testing.T) {
	engines(t, func(t *testing.T, e *testEngine) {
		ctx := context.Background()
		clock := &testClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
		db := e.open(t, Options{Now: clock.now})
		acme, other := newTestClient(t, db, "acme"), newTestClient(t, db, "other")
		create := func(c Client, hash string) Token {
			tok, err := db.CreateToken(ctx, c, NewToken{ValueHash: []byte(hash), Permissions: []Permission{{Name: "measurement.scan"}}, Duration: TokenDuration{Minutes: 1}})
			if err != nil {
				t.Fatal(err)
			}
			return tok
		}
		tok := create(acme, "a")
		if err := db.RevokeToken(ctx, other, tok.ID); !errors.Is(err, ErrNotFound) {
			t.Fatalf("another client revoked it: %v", err)
		}
		if err := db.RevokeToken(ctx, acme, "00000000-0000-4000-8000-000000000000"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("unknown id: %v", err)
		}
		if revoked, err := db.TokenRevoked(ctx, []byte("a")); err != nil || revoked {
			t.Fatalf("before its revocation: revoked %v, %v", revoked, err)
		}
		clock.set(clock.now().Add(time.Hour)) // expired: still revocable
		if err := db.RevokeToken(ctx, acme, tok.ID); err != nil {
			t.Fatalf("revoke expired: %v", err)
		}
		for _, hash := range []string{"a", "never minted"} {
			if revoked, err := db.TokenRevoked(ctx, []byte(hash)); err != nil || !revoked {
				t.Fatalf("%s: revoked %v, %v", hash, revoked, err)
			}
		}
		if err := db.RevokeToken(ctx, acme, tok.ID); !errors.Is(err, ErrNotFound) {
			t.Fatalf("second revocation: %v", err)
		}

		// Concurrent revocations of one token: exactly one wins.
		tok = create(acme, "b")
		if n := succeeded(t, 8, ErrNotFound, func(int) error { return db.RevokeToken(ctx, acme, tok.ID) }); n != 1 {
			t.Fatalf("%d revocations succeeded, want 1", n)
		}
	})
}

func TestOpenTokenSession(t *testing.T) {
	engines(t, func(t *testing.T, e *testEngine) {
		ctx := context.Background()
		start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		clock := &testClock{t: start}
		db := e.open(t, Options{Now: clock.now})
		acme := newTestClient(t, db, "acme")
		mint := func(hash string, perms ...Permission) Token {
			tok, err := db.CreateToken(ctx, acme, NewToken{ValueHash: []byte(hash), Permissions: perms, Duration: TokenDuration{Minutes: 10}})
			if err != nil {
				t.Fatal(err)
			}
			return tok
		}
		scanOnce := Permission{Name: "measurement.scan", MaxSessions: ptr(int64(1))}
		mint("once", scanOnce)
		mint("both", Permission{Name: "measurement.scan", MaxSessions: ptr(int64(2))}, Permission{Name: "measurement.realtime"})
		revoked := mint("revoked", scanOnce)
		if err := db.RevokeToken(ctx, acme, revoked.ID); err != nil {
			t.Fatal(err)
		}

		s, err := db.OpenTokenSession(ctx, []byte("once"), "measurement.scan", nil)
		if err != nil || s.Client.ID != acme.ID || s.Opened != 1 || s.MaxSessions == nil || *s.MaxSessions != 1 {
			t.Fatalf("first opening: %+v, %v", s, err)
		}
		for _, tc := range []struct {
			name, hash, perm string
			cause            error
		}{
			{"spent", "once", "measurement.scan", ErrTokenSpent},
			{"wrong permission", "once", "measurement.realtime", ErrTokenLacksChain},
			{"unknown value", "nope", "measurement.scan", ErrTokenUnknown},
			{"revoked", "revoked", "measurement.scan", ErrTokenRevoked},
		} {
			if _, err := db.OpenTokenSession(ctx, []byte(tc.hash), tc.perm, nil); !errors.Is(err, ErrSessionRefused) || !errors.Is(err, tc.cause) {
				t.Errorf("%s: got %v, want ErrSessionRefused and %v", tc.name, err, tc.cause)
			}
		}
		// A session given back opens again, once; giving back what was
		// never counted takes the count below nothing.
		if err := db.UncountTokenSession(ctx, s); err != nil {
			t.Fatal(err)
		}
		if s, err = db.OpenTokenSession(ctx, []byte("once"), "measurement.scan", nil); err != nil || s.Opened != 1 {
			t.Fatalf("opening after a session given back: %+v, %v", s, err)
		}
		if _, err := db.OpenTokenSession(ctx, []byte("once"), "measurement.scan", nil); !errors.Is(err, ErrTokenSpent) {
			t.Fatalf("a second opening after one given back: %v, want spent", err)
		}
		for range 2 {
			if err := db.UncountTokenSession(ctx, s); err != nil {
				t.Fatal(err)
			}
		}
		if s, err = db.OpenTokenSession(ctx, []byte("once"), "measurement.scan", nil); err != nil || s.Opened != 1 {
			t.Fatalf("opening after two given back: %+v, %v", s, err)
		}

		// Permissions count apart: the realtime one has no limit.
		for range 3 {
			if _, err := db.OpenTokenSession(ctx, []byte("both"), "measurement.realtime", nil); err != nil {
				t.Fatal(err)
			}
		}

		// A maxSessions of 2 opens two sessions and refuses the third.
		mint("twice", Permission{Name: "measurement.scan", MaxSessions: ptr(int64(2))})
		for i := int64(1); i <= 2; i++ {
			if s, err := db.OpenTokenSession(ctx, []byte("twice"), "measurement.scan", nil); err != nil || s.Opened != i || *s.MaxSessions != 2 {
				t.Fatalf("opening %d of 2: %+v, %v", i, s, err)
			}
		}
		if _, err := db.OpenTokenSession(ctx, []byte("twice"), "measurement.scan", nil); !errors.Is(err, ErrSessionRefused) || !errors.Is(err, ErrTokenSpent) {
			t.Fatalf("third opening of 2: %v", err)
		}

		// N concurrent openings of a maxSessions=1 token open exactly one.
		mint("race", scanOnce)
		opened := succeeded(t, 10, ErrSessionRefused, func(int) error {
			_, err := db.OpenTokenSession(ctx, []byte("race"), "measurement.scan", nil)
			return err
		})
		if opened != 1 {
			t.Fatalf("%d sessions opened, want 1", opened)
		}

		clock.set(start.Add(10*time.Minute - time.Millisecond)) // the last millisecond before expiresAt
		if _, err := db.OpenTokenSession(ctx, []byte("both"), "measurement.scan", nil); err != nil {
			t.Fatalf("a millisecond before expiry: %v", err)
		}
		clock.set(start.Add(10 * time.Minute)) // expiresAt itself is too late
		if _, err := db.OpenTokenSession(ctx, []byte("both"), "measurement.scan", nil); !errors.Is(err, ErrSessionRefused) || !errors.Is(err, ErrTokenExpired) {
			t.Fatalf("expired: %v", err)
		}
		clock.set(start)
		if _, err := db.DeactivateClient(ctx, acme.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := db.OpenTokenSession(ctx, []byte("both"), "measurement.scan", nil); !errors.Is(err, ErrSessionRefused) || !errors.Is(err, ErrClientDeactivated) {
			t.Fatalf("deactivated client: %v", err)
		}
	})
}

// openingLimits are the session server's: 2 a second and 20 a minute.
var openingLimits = []Rate{{2, time.Second}, {20, time.Minute}}

// TestOpeningRate: each window is exact at its edge, a refusal spends
// nothing, and only a token that passed its own checks is counted against
// the rate.
func TestOpeningRate(t *testing.T) {
	engines(t, func(t *testing.T, e *testEngine) {
		ctx := context.Background()
		start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		clock := &testClock{t: start}
		db := e.open(t, Options{Now: clock.now})
		acme, other := newTestClient(t, db, "acme"), newTestClient(t, db, "other")
		mint := func(c Client, hash string, max *int64) {
			t.Helper()
			if _, err := db.CreateToken(ctx, c, NewToken{ValueHash: []byte(hash), Duration: TokenDuration{Hours: 1},
				Permissions: []Permission{{Name: "measurement.scan", MaxSessions: max}}}); err != nil {
				t.Fatal(err)
			}
		}
		mint(acme, "many", nil)
		mint(acme, "once", ptr(int64(1)))
		mint(acme, "spent", ptr(int64(1)))
		mint(other, "other", nil)
		open := func(hash string) error {
			_, err := db.OpenTokenSession(ctx, []byte(hash), "measurement.scan", openingLimits)
			return err
		}
		refused := func(what string, err error) {
			t.Helper()
			if !errors.Is(err, ErrSessionRefused) {
				t.Fatalf("%s: %v, want a refusal", what, err)
			}
		}
		if err := open("spent"); err != nil {
			t.Fatal(err)
		}
		clock.advance(time.Second)
		// A spent token and an unknown one are refused by their own
		// checks, and count as no opening.
		refused("spent", open("spent"))
		refused("unknown", open("unknown"))
		for i := range 2 {
			if err := open("many"); err != nil {
				t.Fatalf("opening %d: %v", i+1, err)
			}
		}
		clock.advance(999 * time.Millisecond)
		err := open("once")
		refused("a third opening 999 ms after two", err)
		if !errors.Is(err, ErrOpeningRate) {
			t.Fatalf("refused for %v, want the opening rate", err)
		}
		if err := open("other"); err != nil { // another account's rate
			t.Fatal(err)
		}
		clock.advance(time.Millisecond)
		// The refusal spent nothing: the token opens its one session.
		if err := open("once"); err != nil {
			t.Fatalf("a third opening 1000 ms after two: %v", err)
		}
		// 20 a minute: 16 more, one a second, reach it (the spent token's
		// opening at start was the first); the 21st waits for that one to
		// leave the window.
		for i := range 16 {
			clock.advance(time.Second)
			if err := open("many"); err != nil {
				t.Fatalf("opening %d of the minute: %v", i+5, err)
			}
		}
		clock.set(start.Add(time.Minute - time.Millisecond))
		refused("the 21st opening of a minute", open("many"))
		clock.set(start.Add(time.Minute))
		if err := open("many"); err != nil {
			t.Fatalf("once the first opening left the minute: %v", err)
		}
	})
}

// TestCountsHoldAcrossInstances: three instances on one database decide
// together what each decides alone: the sessions of a token, the opening
// rate of an account, the requests of a key and the credits of a month.
func TestCountsHoldAcrossInstances(t *testing.T) {
	engines(t, func(t *testing.T, e *testEngine) {
		ctx := context.Background()
		var dbs []*DB
		for i := range 3 {
			dbs = append(dbs, e.openNamed(t, "shared", Options{Instance: fmt.Sprint("instance-", i)}))
		}
		on := func(i int) *DB { return dbs[i%len(dbs)] }
		acme, beta := newTestClient(t, dbs[0], "acme"), newTestClient(t, dbs[0], "beta")
		for _, hash := range []string{"once", "many"} {
			c, max := beta, (*int64)(nil) // the rate is beta's alone
			if hash == "once" {
				c, max = acme, ptr(int64(1))
			}
			if _, err := dbs[0].CreateToken(ctx, c, NewToken{ValueHash: []byte(hash), Duration: TokenDuration{Hours: 1},
				Permissions: []Permission{{Name: "measurement.scan", MaxSessions: max}}}); err != nil {
				t.Fatal(err)
			}
		}
		if n := succeeded(t, 12, ErrSessionRefused, func(i int) error {
			_, err := on(i).OpenTokenSession(ctx, []byte("once"), "measurement.scan", nil)
			return err
		}); n != 1 {
			t.Fatalf("%d sessions of a maxSessions=1 token opened, want 1", n)
		}
		// All at once: the 2-a-second window admits two.
		if n := succeeded(t, 12, ErrSessionRefused, func(i int) error {
			_, err := on(i).OpenTokenSession(ctx, []byte("many"), "measurement.scan", openingLimits)
			return err
		}); n != 2 {
			t.Fatalf("%d openings admitted at once, want 2", n)
		}
		rate := Rate{N: 30, Per: time.Minute}
		for name, spend := range map[string]func(*DB, context.Context, Client, string, Rate) (bool, time.Duration, error){
			"bucket": (*DB).SpendBucket, "window": (*DB).SpendWindow,
		} {
			var mu sync.Mutex
			spent := 0
			succeeded(t, 45, nil, func(i int) error {
				ok, _, err := spend(on(i), ctx, acme, name, rate)
				if ok {
					mu.Lock()
					spent++
					mu.Unlock()
				}
				return err
			})
			if spent != rate.N {
				t.Fatalf("%s: %d requests spent at once, want %d", name, spent, rate.N)
			}
		}
		if _, err := dbs[0].UpdateClient(ctx, acme.ID, ClientUpdate{MonthlyCredits: ptr(ptr(int64(4)))}); err != nil {
			t.Fatal(err)
		}
		ids := make([]string, 12)
		for i := range ids {
			ids[i] = uuid.NewString()
			if _, err := on(i).StartNewMeasure(ctx, acme, ids[i], NewMeasure{}, KindCPPG); err != nil {
				t.Fatal(err)
			}
		}
		succeeded(t, len(ids), nil, func(i int) error {
			_, err := on(i).EndMeasure(ctx, acme, ids[i], end(true))
			return err
		})
		if used, err := dbs[1].CreditsUsed(ctx, acme, time.Now()); err != nil || used != 4 {
			t.Fatalf("charged %d credits (%v), want the 4 left", used, err)
		}
	})
}

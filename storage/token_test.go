package storage

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func ptr[T any](v T) *T { return &v }

func TestCreateTokenExpiresOnTheCalendar(t *testing.T) {
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
			db := openTest(t, Options{Now: clock.now, Location: tc.loc})
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
				var n int
				db.read.QueryRow(`SELECT count(*) FROM access_tokens`).Scan(&n)
				if n != 0 {
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
			var stored int64
			db.read.QueryRow(`SELECT expires_at FROM access_tokens WHERE id = ?`, tok.ID).Scan(&stored)
			if stored != tok.ExpiresAt.UnixMilli() {
				t.Fatalf("stored expires_at %d, answered %d", stored, tok.ExpiresAt.UnixMilli())
			}
		})
	}
}

func TestRevokeToken(t *testing.T) {
	ctx := context.Background()
	clock := &testClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	db := openTest(t, Options{Now: clock.now})
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
	clock.set(clock.now().Add(time.Hour)) // expired: still revocable
	if err := db.RevokeToken(ctx, acme, tok.ID); err != nil {
		t.Fatalf("revoke expired: %v", err)
	}
	if err := db.RevokeToken(ctx, acme, tok.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second revocation: %v", err)
	}

	// Concurrent revocations of one token: exactly one wins.
	tok = create(acme, "b")
	if n := succeeded(t, 8, ErrNotFound, func() error { return db.RevokeToken(ctx, acme, tok.ID) }); n != 1 {
		t.Fatalf("%d revocations succeeded, want 1", n)
	}
}

func TestOpenTokenSession(t *testing.T) {
	ctx := context.Background()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := &testClock{t: start}
	db := openTest(t, Options{Now: clock.now})
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
	// Permissions count apart: the realtime one has no limit.
	for range 3 {
		if _, err := db.OpenTokenSession(ctx, []byte("both"), "measurement.realtime", nil); err != nil {
			t.Fatal(err)
		}
	}

	// N concurrent openings of a maxSessions=1 token open exactly one.
	mint("race", scanOnce)
	opened := succeeded(t, 10, ErrSessionRefused, func() error {
		_, err := db.OpenTokenSession(ctx, []byte("race"), "measurement.scan", nil)
		return err
	})
	if opened != 1 {
		t.Fatalf("%d sessions opened, want 1", opened)
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
}

// TestOpenTokenSessionAdmit: admit sees the token's client only after every
// check of the token passed, and its refusal counts nothing.
func TestOpenTokenSessionAdmit(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, Options{})
	acme := newTestClient(t, db, "acme")
	for _, hash := range []string{"once", "spent"} {
		if _, err := db.CreateToken(ctx, acme, NewToken{ValueHash: []byte(hash), Duration: TokenDuration{Minutes: 10},
			Permissions: []Permission{{Name: "measurement.scan", MaxSessions: ptr(int64(1))}}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.OpenTokenSession(ctx, []byte("spent"), "measurement.scan", nil); err != nil {
		t.Fatal(err)
	}
	var asked []string
	refuse := func(c Client) error { asked = append(asked, c.ID); return errors.New("over the opening rate") }
	for _, hash := range []string{"spent", "unknown"} {
		if _, err := db.OpenTokenSession(ctx, []byte(hash), "measurement.scan", refuse); !errors.Is(err, ErrSessionRefused) {
			t.Fatalf("%s: %v", hash, err)
		}
	}
	if len(asked) != 0 {
		t.Fatalf("admit was asked about a token that failed its own checks: %v", asked)
	}
	_, err := db.OpenTokenSession(ctx, []byte("once"), "measurement.scan", refuse)
	if !errors.Is(err, ErrSessionRefused) || !strings.Contains(err.Error(), "over the opening rate") {
		t.Fatalf("refused by admit: %v", err)
	}
	if len(asked) != 1 || asked[0] != acme.ID {
		t.Fatalf("admit asked about %v, want [%s]", asked, acme.ID)
	}
	s, err := db.OpenTokenSession(ctx, []byte("once"), "measurement.scan", func(Client) error { return nil })
	if err != nil || s.Opened != 1 {
		t.Fatalf("after a refusal by admit the token must still open its one session: %+v, %v", s, err)
	}
}

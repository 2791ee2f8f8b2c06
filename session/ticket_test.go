package session

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

func TestTickets(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	tk := newTickets("test", clock)
	good, err := tk.issue("session-1", 3, now.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	sign := func(key []byte, m jwt.SigningMethod, claims jwt.RegisteredClaims) string {
		s, err := jwt.NewWithClaims(m, claims).SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	claims := func(f func(*jwt.RegisteredClaims)) jwt.RegisteredClaims {
		c := jwt.RegisteredClaims{Issuer: ticketIssuer, Subject: "session-1", ID: "3", Audience: jwt.ClaimStrings{"test"},
			ExpiresAt: jwt.NewNumericDate(now.Add(time.Minute))}
		f(&c)
		return c
	}
	none, _ := jwt.NewWithClaims(jwt.SigningMethodNone, claims(func(*jwt.RegisteredClaims) {})).SignedString(jwt.UnsafeAllowNoneSignatureType)
	parts := strings.Split(good, ".")
	cases := []struct {
		name   string
		ticket string
		at     time.Duration
		want   string // session id, "" for a refusal
	}{
		{"good", good, 0, "session-1"},
		{"one second before it expires", good, 59 * time.Second, "session-1"},
		{"when it expires", good, time.Minute, ""},
		{"another environment's", func() string {
			s, _ := newTickets("production", clock).issue("session-1", 3, now.Add(time.Minute))
			return s
		}(), 0, ""},
		// Signed with this server's key: only the audience tells the
		// environments apart, should they ever share a key.
		{"another environment's, with our key", sign(tk.key, jwt.SigningMethodHS256, claims(func(c *jwt.RegisteredClaims) { c.Audience = jwt.ClaimStrings{"production"} })), 0, ""},
		{"no environment", sign(tk.key, jwt.SigningMethodHS256, claims(func(c *jwt.RegisteredClaims) { c.Audience = nil })), 0, ""},
		{"another server's key", sign([]byte("another key of 32 bytes, really!"), jwt.SigningMethodHS256, claims(func(*jwt.RegisteredClaims) {})), 0, ""},
		{"alg none", none, 0, ""},
		{"HS512 with our key: only HS256 is ours", sign(tk.key, jwt.SigningMethodHS512, claims(func(*jwt.RegisteredClaims) {})), 0, ""},
		{"another issuer", sign(tk.key, jwt.SigningMethodHS256, claims(func(c *jwt.RegisteredClaims) { c.Issuer = "someone" })), 0, ""},
		{"no expiry", sign(tk.key, jwt.SigningMethodHS256, claims(func(c *jwt.RegisteredClaims) { c.ExpiresAt = nil })), 0, ""},
		{"no session", sign(tk.key, jwt.SigningMethodHS256, claims(func(c *jwt.RegisteredClaims) { c.Subject = "" })), 0, ""},
		{"no number", sign(tk.key, jwt.SigningMethodHS256, claims(func(c *jwt.RegisteredClaims) { c.ID = "" })), 0, ""},
		{"number 0", sign(tk.key, jwt.SigningMethodHS256, claims(func(c *jwt.RegisteredClaims) { c.ID = "0" })), 0, ""},
		{"tampered session", parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"iss":"pulsewire-session","sub":"session-2","aud":["test"],"exp":9999999999}`)) + "." + parts[2], 0, ""},
		{"not a JWT", "ticket", 0, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			at := now.Add(tc.at)
			tk.now = func() time.Time { return at }
			id, n, err := tk.check(tc.ticket)
			if id != tc.want || (tc.want == "" && !errors.Is(err, errTicket)) || (tc.want != "" && n != 3) {
				t.Fatalf("check: %q %d, %v; want %q 3", id, n, err, tc.want)
			}
		})
	}
}

// TestTicketTurns: the latest ticket resumes; the one before it only for
// the grace after the latest was issued; older ones never.
func TestTicketTurns(t *testing.T) {
	at := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	grace := 10 * time.Second
	var turns ticketTurns
	first := turns.next(at)
	if !turns.current(first, at.Add(time.Minute), grace) {
		t.Fatal("the only ticket does not resume")
	}
	at = at.Add(time.Minute)
	second := turns.next(at)
	third := turns.next(at.Add(time.Second))
	for _, tc := range []struct {
		n     int64
		after time.Duration
		want  bool
	}{
		{third, 0, true}, {third, time.Hour, true},
		{second, 5 * time.Second, true}, {second, grace + time.Second, false},
		{first, 0, false}, {third + 1, 0, false},
	} {
		if got := turns.current(tc.n, at.Add(tc.after), grace); got != tc.want {
			t.Errorf("ticket %d, %v after the first of the last two: %v, want %v", tc.n, tc.after, got, tc.want)
		}
	}
}

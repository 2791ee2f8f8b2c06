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
	good, err := tk.issue("session-1", now.Add(time.Minute))
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
		c := jwt.RegisteredClaims{Issuer: ticketIssuer, Subject: "session-1", Audience: jwt.ClaimStrings{"test"},
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
			s, _ := newTickets("production", clock).issue("session-1", now.Add(time.Minute))
			return s
		}(), 0, ""},
		{"another server's key", sign([]byte("another key of 32 bytes, really!"), jwt.SigningMethodHS256, claims(func(*jwt.RegisteredClaims) {})), 0, ""},
		{"alg none", none, 0, ""},
		{"HS512 with our key: only HS256 is ours", sign(tk.key, jwt.SigningMethodHS512, claims(func(*jwt.RegisteredClaims) {})), 0, ""},
		{"another issuer", sign(tk.key, jwt.SigningMethodHS256, claims(func(c *jwt.RegisteredClaims) { c.Issuer = "someone" })), 0, ""},
		{"no expiry", sign(tk.key, jwt.SigningMethodHS256, claims(func(c *jwt.RegisteredClaims) { c.ExpiresAt = nil })), 0, ""},
		{"no session", sign(tk.key, jwt.SigningMethodHS256, claims(func(c *jwt.RegisteredClaims) { c.Subject = "" })), 0, ""},
		{"tampered session", parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"iss":"pulsewire-session","sub":"session-2","aud":["test"],"exp":9999999999}`)) + "." + parts[2], 0, ""},
		{"not a JWT", "ticket", 0, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			at := now.Add(tc.at)
			tk.now = func() time.Time { return at }
			id, err := tk.check(tc.ticket)
			if id != tc.want || (tc.want == "" && !errors.Is(err, errTicket)) {
				t.Fatalf("check: %q, %v; want %q", id, err, tc.want)
			}
		})
	}
}

package session

import (
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// tickets issues and checks resume tickets: JWTs (HS256) naming one session
// of one environment, signed with a key that lives only in this process's
// memory. Sessions live in memory too, so nothing a restart forgets needs a
// ticket that survives it; a ticket that reaches another instance is handed
// on, with its connection, to the one that signed it (handon.go).
type tickets struct {
	key      []byte
	audience string // the environment
	now      func() time.Time
}

// ticketIssuer is the iss claim of every ticket.
const ticketIssuer = "pulsewire-session"

func newTickets(audience string, now func() time.Time) *tickets {
	key := make([]byte, 32)
	rand.Read(key)
	return &tickets{key: key, audience: audience, now: now}
}

// issue returns a ticket for session id, good until expires.
func (t *tickets) issue(id string, expires time.Time) (string, error) {
	claims := jwt.RegisteredClaims{
		Issuer:    ticketIssuer,
		Subject:   id,
		Audience:  jwt.ClaimStrings{t.audience},
		IssuedAt:  jwt.NewNumericDate(t.now()),
		ExpiresAt: jwt.NewNumericDate(expires),
	}
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(t.key)
	if err != nil {
		return "", fmt.Errorf("sign resume ticket: %w", err)
	}
	return s, nil
}

// errTicket is a ticket that does not resume anything; the wrapped cause is
// for the log.
var errTicket = errors.New("invalid resume ticket")

// check returns the session id a ticket names, when the ticket is ours,
// for this environment, and not expired.
func (t *tickets) check(ticket string) (string, error) {
	var claims jwt.RegisteredClaims
	_, err := jwt.ParseWithClaims(ticket, &claims, func(*jwt.Token) (any, error) { return t.key, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithIssuer(ticketIssuer),
		jwt.WithAudience(t.audience),
		jwt.WithExpirationRequired(),
		jwt.WithTimeFunc(t.now),
	)
	if err != nil {
		return "", fmt.Errorf("%w: %w", errTicket, err)
	}
	if claims.Subject == "" {
		return "", fmt.Errorf("%w: no session named", errTicket)
	}
	return claims.Subject, nil
}

// ticketSubject reads the session a ticket names without checking it: only
// to find the instance that signed it, which checks it.
func ticketSubject(ticket string) (string, error) {
	var claims jwt.RegisteredClaims
	if _, _, err := jwt.NewParser().ParseUnverified(ticket, &claims); err != nil {
		return "", fmt.Errorf("%w: %w", errTicket, err)
	}
	if claims.Subject == "" {
		return "", fmt.Errorf("%w: no session named", errTicket)
	}
	return claims.Subject, nil
}

package session

import (
	"crypto/rand"
	"errors"
	"fmt"
	"strconv"
	"sync"
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

// issue returns the n-th ticket of session id, good until expires.
func (t *tickets) issue(id string, n int64, expires time.Time) (string, error) {
	claims := jwt.RegisteredClaims{
		Issuer:    ticketIssuer,
		Subject:   id,
		ID:        strconv.FormatInt(n, 10),
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

// check returns the session id a ticket names and which of its tickets it
// is, when the ticket is ours, for this environment, and not expired.
func (t *tickets) check(ticket string) (id string, n int64, err error) {
	var claims jwt.RegisteredClaims
	_, err = jwt.ParseWithClaims(ticket, &claims, func(*jwt.Token) (any, error) { return t.key, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithIssuer(ticketIssuer),
		jwt.WithAudience(t.audience),
		jwt.WithExpirationRequired(),
		jwt.WithTimeFunc(t.now),
	)
	if err != nil {
		return "", 0, fmt.Errorf("%w: %w", errTicket, err)
	}
	if claims.Subject == "" {
		return "", 0, fmt.Errorf("%w: no session named", errTicket)
	}
	if n, err = strconv.ParseInt(claims.ID, 10, 64); err != nil || n < 1 {
		return "", 0, fmt.Errorf("%w: no ticket number", errTicket)
	}
	return claims.Subject, n, nil
}

// ticketTurns follows the tickets a session has issued, one each time a
// connection attaches: only the latest resumes it, so that a ticket seen
// earlier in its life (in a log, on a device that has been replaced)
// cannot take it over. The one before it still does for an idle timeout
// after its successor was issued: the connection it went to may have
// dropped before it read it, and the client still holds the one before.
type ticketTurns struct {
	mu       sync.Mutex // protects the fields below
	latest   int64
	issuedAt time.Time
}

// next numbers the ticket issued at now.
func (t *ticketTurns) next(now time.Time) int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.latest++
	t.issuedAt = now
	return t.latest
}

// current reports whether ticket n resumes the session at now.
func (t *ticketTurns) current(n int64, now time.Time, grace time.Duration) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return n == t.latest || n == t.latest-1 && now.Sub(t.issuedAt) < grace
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

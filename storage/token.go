package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// MaxTokenDuration is the longest life of an access token.
const MaxTokenDuration = 48 * time.Hour

// ErrTokenDuration: a token's duration, resolved on the calendar of the
// configured time zone, is not in (0, MaxTokenDuration]. Validation counts a
// day as 24 h; the calendar may not (a daylight-saving fall-back day lasts
// 25 h), so a duration validation accepted can still be refused here.
var ErrTokenDuration = errors.New("storage: token duration out of bounds on the calendar")

// TokenDuration is a token's life as the client wrote it, one field per unit.
// Days are calendar days of the configured time zone; the other units are
// fixed lengths.
type TokenDuration struct {
	Days, Hours, Minutes, Seconds int64
}

// maxUnits is the largest count any one unit may hold: the ceiling in
// seconds. It keeps the arithmetic below far from overflow.
const maxUnits = int64(MaxTokenDuration / time.Second)

// Nominal is the duration with a day counted as 24 h, the reading validation
// uses. Counts above maxUnits saturate to just over the ceiling.
func (d TokenDuration) Nominal() time.Duration {
	if !d.inRange() {
		return MaxTokenDuration + time.Second
	}
	return time.Duration(d.Days)*24*time.Hour + d.clock()
}

// ExpiresAt is created plus the duration: days added on loc's calendar (same
// wall-clock time, n dates later), then the fixed units.
func (d TokenDuration) ExpiresAt(created time.Time, loc *time.Location) time.Time {
	return created.In(loc).AddDate(0, 0, int(d.Days)).Add(d.clock()).UTC()
}

// clock is the part of the duration made of fixed-length units.
func (d TokenDuration) clock() time.Duration {
	return time.Duration(d.Hours)*time.Hour + time.Duration(d.Minutes)*time.Minute + time.Duration(d.Seconds)*time.Second
}

func (d TokenDuration) inRange() bool {
	for _, n := range []int64{d.Days, d.Hours, d.Minutes, d.Seconds} {
		if n < 0 || n > maxUnits {
			return false
		}
	}
	return true
}

// Permission names what a token opens and how many sessions it may open.
type Permission struct {
	Name        string
	MaxSessions *int64 // nil: no limit
}

// NewToken is what CreateToken stores.
type NewToken struct {
	ValueHash   []byte  // SHA-256 of the ivat- value; the value is never stored
	Description *string // nil: none sent
	Permissions []Permission
	Duration    TokenDuration
}

// Token is a stored access token, without its value.
type Token struct {
	ID          string
	Description *string
	Permissions []Permission
	CreatedAt   time.Time
	ExpiresAt   time.Time
}

// CreateToken stores a token of c. createdAt is this store's clock (to the
// millisecond) and expiresAt is exactly createdAt plus the duration on the
// configured calendar; a duration outside (0, MaxTokenDuration] there is
// ErrTokenDuration and nothing is stored.
func (db *DB) CreateToken(ctx context.Context, c Client, n NewToken) (Token, error) {
	t := Token{
		ID:          uuid.NewString(),
		Description: n.Description,
		Permissions: n.Permissions,
		CreatedAt:   db.stamp(),
	}
	if !n.Duration.inRange() {
		return Token{}, ErrTokenDuration
	}
	t.ExpiresAt = n.Duration.ExpiresAt(t.CreatedAt, db.loc)
	if life := t.ExpiresAt.Sub(t.CreatedAt); life <= 0 || life > MaxTokenDuration {
		return Token{}, fmt.Errorf("%w: %s lasts %s from %s in %s", ErrTokenDuration,
			formatDuration(n.Duration), life, t.CreatedAt.In(db.loc).Format(time.RFC3339), db.loc)
	}
	err := db.inWrite(ctx, func(tx dbtx) error {
		var key int64
		err := tx.QueryRow(ctx,
			`INSERT INTO access_tokens (id, client, value_hash, description, created_at, expires_at)
			 VALUES (?, ?, ?, ?, ?, ?) RETURNING key`,
			t.ID, c.key, n.ValueHash, n.Description, millis(t.CreatedAt), millis(t.ExpiresAt)).Scan(&key)
		if err != nil {
			return err
		}
		for i, p := range n.Permissions {
			if _, err := tx.Exec(ctx,
				`INSERT INTO token_permissions (token, name, position, max_sessions) VALUES (?, ?, ?, ?)`,
				key, p.Name, i, nullInt(p.MaxSessions)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return Token{}, fmt.Errorf("create token: %w", err)
	}
	return t, nil
}

func formatDuration(d TokenDuration) string {
	return fmt.Sprintf("%dd %dh %dm %ds", d.Days, d.Hours, d.Minutes, d.Seconds)
}

// RevokeToken revokes c's token id for good. A token that does not exist, is
// already revoked or belongs to another client is ErrNotFound; an expired
// token can still be revoked. Of concurrent revocations exactly one succeeds:
// the UPDATE only matches a token not yet revoked.
func (db *DB) RevokeToken(ctx context.Context, c Client, id string) error {
	err := expectOne(db.writer().Exec(ctx,
		`UPDATE access_tokens SET revoked_at = ? WHERE id = ? AND client = ? AND revoked_at IS NULL`,
		millis(db.stamp()), id, c.key))
	if err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("revoke token %s: %w", id, err)
	}
	return err
}

// ErrSessionRefused: a token cannot open a session. The wrapped message
// names the cause for the server log, and a refusal for one of the causes
// below also matches that cause (errors.Is), for counting; the caller must
// answer every cause the same way.
var ErrSessionRefused = errors.New("storage: session refused")

// The causes of a session refusal that the token's state decides; the
// other cause is the account's opening rate (ErrOpeningRate).
var (
	ErrTokenUnknown      = errors.New("unknown token")
	ErrTokenLacksChain   = errors.New("token lacks the permission")
	ErrTokenRevoked      = errors.New("token revoked")
	ErrTokenExpired      = errors.New("token expired")
	ErrTokenSpent        = errors.New("token spent")
	ErrClientDeactivated = errors.New("client deactivated")
)

// Refused is a session refusal for cause: its message is ErrSessionRefused's
// and the details, and it matches both ErrSessionRefused and cause.
func Refused(cause error, format string, args ...any) error {
	return refusal{cause, fmt.Errorf("%w: "+format, append([]any{ErrSessionRefused}, args...)...)}
}

// refusal carries the cause beside the message, without repeating it there.
type refusal struct{ cause, err error }

func (r refusal) Error() string   { return r.err.Error() }
func (r refusal) Unwrap() []error { return []error{r.err, r.cause} }

// TokenSession is a session a token just opened.
type TokenSession struct {
	TokenID    string
	Client     Client
	Permission string
	// Opened is how many sessions the permission has opened, this one
	// included; MaxSessions is its limit (nil: none).
	Opened      int64
	MaxSessions *int64
	ExpiresAt   time.Time
}

// Rate bounds how often something may happen: at most N times (N >= 1) in
// any span of Per.
type Rate struct {
	N   int
	Per time.Duration
}

// TokenRevoked reports whether the token whose value hashes to valueHash
// has been revoked (a token unknown is, too: no value of it can serve).
// It reads what has committed, on any instance.
func (db *DB) TokenRevoked(ctx context.Context, valueHash []byte) (bool, error) {
	var revoked sql.NullInt64
	err := db.reader().QueryRow(ctx, `SELECT revoked_at FROM access_tokens WHERE value_hash = ?`, valueHash).Scan(&revoked)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("token revoked: %w", err)
	}
	return revoked.Valid, nil
}

// OpenTokenSession finds the token whose value hashes to valueHash and counts
// one session against its permission, in one transaction: the token must
// exist, carry permission, be neither revoked nor expired nor spent, and
// belong to an active client whose session openings stay within every rate
// of openings (counted over sliding windows, for every instance at once). A
// refusal counts nothing: an opening over the rate does not spend the token.
// The count is a conditional UPDATE under the client's lock, so N
// concurrent openings of a token with maxSessions 1, on any number of
// instances, open exactly one.
func (db *DB) OpenTokenSession(ctx context.Context, valueHash []byte, permission string, openings []Rate) (TokenSession, error) {
	var s TokenSession
	err := db.inWrite(ctx, func(tx dbtx) error {
		var (
			key, clientKey, expiresAt, opened int64
			revoked, maxSessions              sql.NullInt64
		)
		now := millis(db.now())
		err := tx.QueryRow(ctx,
			`SELECT key, id, client, expires_at, revoked_at FROM access_tokens WHERE value_hash = ?`, valueHash).
			Scan(&key, &s.TokenID, &clientKey, &expiresAt, &revoked)
		if errors.Is(err, sql.ErrNoRows) {
			return Refused(ErrTokenUnknown, "unknown token")
		}
		if err != nil {
			return err
		}
		err = tx.QueryRow(ctx, `SELECT max_sessions, sessions_opened FROM token_permissions WHERE token = ? AND name = ?`,
			key, permission).Scan(&maxSessions, &opened)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return Refused(ErrTokenLacksChain, "token %s lacks permission %s", s.TokenID, permission)
		case err != nil:
			return err
		case revoked.Valid:
			return Refused(ErrTokenRevoked, "token %s is revoked", s.TokenID)
		case now >= expiresAt:
			return Refused(ErrTokenExpired, "token %s expired", s.TokenID)
		}
		if err := lockClient(ctx, tx, clientKey); err != nil {
			return err
		}
		if s.Client, err = findClient(ctx, tx, "key", clientKey); err != nil {
			return err
		}
		switch {
		case !s.Client.Active:
			return Refused(ErrClientDeactivated, "client %s is deactivated", s.Client.ID)
		case maxSessions.Valid && opened >= maxSessions.Int64:
			return Refused(ErrTokenSpent, "token %s is spent for %s", s.TokenID, permission)
		}
		switch err := admitOpening(ctx, tx, clientKey, now, openings); {
		case errors.Is(err, ErrOpeningRate):
			return Refused(ErrOpeningRate, "client %s: %v", s.Client.ID, err)
		case err != nil:
			return err
		}
		// Still conditional: the limit holds whatever slipped in between.
		err = expectOne(tx.Exec(ctx,
			`UPDATE token_permissions SET sessions_opened = sessions_opened + 1
			 WHERE token = ? AND name = ? AND (max_sessions IS NULL OR sessions_opened < max_sessions)`, key, permission))
		if errors.Is(err, ErrNotFound) {
			return Refused(ErrTokenSpent, "token %s is spent for %s", s.TokenID, permission)
		}
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO session_openings (client, opened_at) VALUES (?, ?)`, clientKey, now); err != nil {
			return err
		}
		s.Permission, s.Opened, s.ExpiresAt = permission, opened+1, fromMillis(expiresAt)
		s.MaxSessions = nil
		if maxSessions.Valid {
			s.MaxSessions = &maxSessions.Int64
		}
		return nil
	})
	if err != nil {
		return TokenSession{}, fmt.Errorf("open session: %w", err)
	}
	return s, nil
}

// UncountTokenSession gives back the session ts counted, for a session that
// did not open after all (its measure was refused, or the server failed
// before it opened): the token opens as many sessions as opened. The
// opening still counts against the client's rate of openings, which
// bounds attempts.
func (db *DB) UncountTokenSession(ctx context.Context, ts TokenSession) error {
	err := db.inWrite(ctx, func(tx dbtx) error {
		_, err := tx.Exec(ctx, `UPDATE token_permissions SET sessions_opened = sessions_opened - 1
			WHERE token = (SELECT key FROM access_tokens WHERE id = ?) AND name = ? AND sessions_opened > 0`,
			ts.TokenID, ts.Permission)
		return err
	})
	if err != nil {
		return fmt.Errorf("uncount session of token %s: %w", ts.TokenID, err)
	}
	return nil
}

// ErrOpeningRate: a client opened as many sessions as a rate of openings
// allows in its window.
var ErrOpeningRate = errors.New("over the opening rate of the account")

// admitOpening refuses an opening at now (Unix ms) of the client with key
// when any rate is full: when, for a rate of N per Per, the client's N-th
// latest opening is less than Per ago. Exact at the edges: a third opening
// 999 ms after two is refused by 2 per second, at 1000 ms it is not. It
// also forgets the openings older than the longest window.
func admitOpening(ctx context.Context, tx dbtx, client, now int64, rates []Rate) error {
	if len(rates) == 0 {
		return nil
	}
	var keep int
	var longest time.Duration
	for _, r := range rates {
		keep, longest = max(keep, r.N), max(longest, r.Per)
	}
	cutoff := now - longest.Milliseconds()
	if _, err := tx.Exec(ctx, `DELETE FROM session_openings WHERE client = ? AND opened_at <= ?`, client, cutoff); err != nil {
		return err
	}
	rows, err := tx.Query(ctx, `SELECT opened_at FROM session_openings WHERE client = ? ORDER BY opened_at DESC LIMIT ?`, client, keep)
	if err != nil {
		return err
	}
	defer rows.Close()
	var latest []int64 // newest first
	for rows.Next() {
		var at int64
		if err := rows.Scan(&at); err != nil {
			return err
		}
		latest = append(latest, at)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for _, r := range rates {
		if r.N <= 0 || len(latest) >= r.N && now-latest[r.N-1] < r.Per.Milliseconds() {
			return ErrOpeningRate
		}
	}
	return nil
}

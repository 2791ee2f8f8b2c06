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
	err := db.inWrite(ctx, func(tx *sql.Tx) error {
		var key int64
		err := tx.QueryRowContext(ctx,
			`INSERT INTO access_tokens (id, client, value_hash, description, created_at, expires_at)
			 VALUES (?, ?, ?, ?, ?, ?) RETURNING key`,
			t.ID, c.key, n.ValueHash, n.Description, millis(t.CreatedAt), millis(t.ExpiresAt)).Scan(&key)
		if err != nil {
			return err
		}
		for i, p := range n.Permissions {
			if _, err := tx.ExecContext(ctx,
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
	err := expectOne(db.write.ExecContext(ctx,
		`UPDATE access_tokens SET revoked_at = ? WHERE id = ? AND client = ? AND revoked_at IS NULL`,
		millis(db.stamp()), id, c.key))
	if err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("revoke token %s: %w", id, err)
	}
	return err
}

// ErrSessionRefused: a token cannot open a session. The wrapped message
// names the cause for the server log; the caller must answer every cause the
// same way.
var ErrSessionRefused = errors.New("storage: session refused")

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

// Admit is the last word on a session opening, given the token's client once
// every check of the token has passed: an error refuses the opening and
// nothing is counted. The session server's opening rate per account is one.
// It runs inside the opening's write transaction, so it must be quick and
// must not use the database.
type Admit func(Client) error

// OpenTokenSession finds the token whose value hashes to valueHash and counts
// one session against its permission, in one transaction: the token must
// exist, carry permission, be neither revoked nor expired nor spent, belong
// to an active client, and be admitted by admit (nil admits every opening).
// The count is a conditional UPDATE, so N concurrent openings of a token
// with maxSessions 1 open exactly one.
func (db *DB) OpenTokenSession(ctx context.Context, valueHash []byte, permission string, admit Admit) (TokenSession, error) {
	var s TokenSession
	err := db.inWrite(ctx, func(tx *sql.Tx) error {
		var (
			key, clientKey, expiresAt, opened int64
			revoked, maxSessions              sql.NullInt64
		)
		err := tx.QueryRowContext(ctx,
			`SELECT key, id, client, expires_at, revoked_at FROM access_tokens WHERE value_hash = ?`, valueHash).
			Scan(&key, &s.TokenID, &clientKey, &expiresAt, &revoked)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: unknown token", ErrSessionRefused)
		}
		if err != nil {
			return err
		}
		err = tx.QueryRowContext(ctx, `SELECT max_sessions, sessions_opened FROM token_permissions WHERE token = ? AND name = ?`,
			key, permission).Scan(&maxSessions, &opened)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("%w: token %s lacks permission %s", ErrSessionRefused, s.TokenID, permission)
		case err != nil:
			return err
		case revoked.Valid:
			return fmt.Errorf("%w: token %s is revoked", ErrSessionRefused, s.TokenID)
		case millis(db.now()) >= expiresAt:
			return fmt.Errorf("%w: token %s expired", ErrSessionRefused, s.TokenID)
		}
		if s.Client, err = findClient(ctx, tx, "key", clientKey); err != nil {
			return err
		}
		switch {
		case !s.Client.Active:
			return fmt.Errorf("%w: client %s is deactivated", ErrSessionRefused, s.Client.ID)
		case maxSessions.Valid && opened >= maxSessions.Int64:
			return fmt.Errorf("%w: token %s is spent for %s", ErrSessionRefused, s.TokenID, permission)
		}
		if admit != nil {
			if err := admit(s.Client); err != nil {
				return fmt.Errorf("%w: client %s not admitted: %w", ErrSessionRefused, s.Client.ID, err)
			}
		}
		// Still conditional: the limit holds even if another writer
		// slipped in between.
		err = expectOne(tx.ExecContext(ctx,
			`UPDATE token_permissions SET sessions_opened = sessions_opened + 1
			 WHERE token = ? AND name = ? AND (max_sessions IS NULL OR sessions_opened < max_sessions)`, key, permission))
		if errors.Is(err, ErrNotFound) {
			return fmt.Errorf("%w: token %s is spent for %s", ErrSessionRefused, s.TokenID, permission)
		}
		s.Permission, s.Opened, s.ExpiresAt = permission, opened+1, fromMillis(expiresAt)
		if maxSessions.Valid {
			s.MaxSessions = &maxSessions.Int64
		}
		return err
	})
	if err != nil {
		return TokenSession{}, fmt.Errorf("open session: %w", err)
	}
	return s, nil
}

package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// SpendRequest spends one request of c's limit name: a token bucket that
// holds rate.N requests and earns them back evenly over rate.Per, so a
// client may spend N at once and then one every Per/N. When none is left it
// spends nothing and says how long until one is. The bucket lives in the
// database and is updated under its row's lock, so the limit holds for all
// instances together. Its writes do not wait for the disk: a power cut may
// give a client back a few requests, nothing more.
func (db *DB) SpendRequest(ctx context.Context, c Client, name string, rate Rate) (ok bool, retryAfter time.Duration, err error) {
	now := millis(db.now())
	perToken := float64(rate.Per.Milliseconds()) / float64(rate.N) // ms to earn one back
	err = db.inLightWrite(ctx, func(tx dbtx) error {
		ok, retryAfter = false, 0
		read := func() (tokens float64, at int64, err error) {
			err = tx.QueryRow(ctx, `SELECT tokens, at FROM request_buckets WHERE client = ? AND name = ?`+tx.e.forUpdate,
				c.key, name).Scan(&tokens, &at)
			return tokens, at, err
		}
		tokens, at, err := read()
		if errors.Is(err, sql.ErrNoRows) {
			// A new bucket is full. Of two instances creating it at once,
			// one inserts and the other reads what it inserted.
			if _, err := tx.Exec(ctx, `INSERT INTO request_buckets (client, name, tokens, at) VALUES (?, ?, ?, ?)
			   ON CONFLICT (client, name) DO NOTHING`, c.key, name, float64(rate.N), now); err != nil {
				return err
			}
			tokens, at, err = read()
		}
		if err != nil {
			return err
		}
		// Instances' clocks may differ a little: time never runs back.
		now := max(now, at)
		tokens = min(float64(rate.N), tokens+float64(now-at)/perToken)
		if tokens < 1 {
			retryAfter = time.Duration((1 - tokens) * perToken * float64(time.Millisecond))
			return nil
		}
		ok = true
		_, err = tx.Exec(ctx, `UPDATE request_buckets SET tokens = ?, at = ? WHERE client = ? AND name = ?`,
			tokens-1, now, c.key, name)
		return err
	})
	if err != nil {
		return false, 0, fmt.Errorf("spend request %s: %w", name, err)
	}
	return ok, retryAfter, nil
}

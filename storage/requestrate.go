package storage

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// SpendWindow spends one request of c's limit name: at most rate.N
// requests in any span of rate.Per. (SpendBucket lets a client spend N at
// once and N-1 more as it earns them back, nearly 2N within one span.)
// The limit keeps the
// times of the client's requests of the last span, at most N, oldest
// first, in one row; a request is admitted when fewer than N are that
// recent. When refused it spends nothing and says how long until
// the oldest is Per old: exact at the edge, as the session openings'
// windows are. The row is updated under its lock, so the limit holds for
// all instances together. Its writes do not wait for the disk: a power cut
// may give a client back a few requests, nothing more.
func (db *DB) SpendWindow(ctx context.Context, c Client, name string, rate Rate) (ok bool, retryAfter time.Duration, err error) {
	start := millis(db.now())
	per := rate.Per.Milliseconds()
	err = db.inLightWrite(ctx, func(tx dbtx) error {
		ok, retryAfter = false, 0
		var stored []byte
		read := func() error {
			return tx.QueryRow(ctx, `SELECT times FROM request_windows WHERE client = ? AND name = ?`+tx.e.forUpdate,
				c.key, name).Scan(&stored)
		}
		err := read()
		if errors.Is(err, sql.ErrNoRows) {
			// The client's first request of this limit creates its row. Of
			// two instances creating it at once, one inserts and the other
			// reads what it inserted.
			res, ierr := tx.Exec(ctx, `INSERT INTO request_windows (client, name, times) VALUES (?, ?, ?)
			   ON CONFLICT (client, name) DO NOTHING`, c.key, name, encodeTimes([]int64{start}))
			if ierr != nil {
				return ierr
			}
			if inserted, ierr := res.RowsAffected(); ierr != nil || inserted == 1 {
				ok = ierr == nil
				return ierr
			}
			err = read()
		}
		if err != nil {
			return err
		}
		times := decodeTimes(stored)
		now := start
		if len(times) > 0 {
			now = max(now, times[len(times)-1]) // instances' clocks may differ a little: time never runs back
		}
		for len(times) > 0 && now-times[0] >= per { // out of the window
			times = times[1:]
		}
		if len(times) > rate.N { // a limit lowered since: its newest N count
			times = times[len(times)-rate.N:]
		}
		if len(times) == rate.N {
			retryAfter = time.Duration(times[0]+per-now) * time.Millisecond
			return nil
		}
		ok = true
		_, err = tx.Exec(ctx, `UPDATE request_windows SET times = ? WHERE client = ? AND name = ?`,
			encodeTimes(append(times, now)), c.key, name)
		return err
	})
	if err != nil {
		return false, 0, fmt.Errorf("spend request %s: %w", name, err)
	}
	return ok, retryAfter, nil
}

// SpendBucket spends one request of c's limit name: a token bucket that
// holds rate.N requests and earns them back evenly over rate.Per, so a
// client may spend N at once and then one every Per/N. When none is left it
// spends nothing and says how long until one is. The bucket lives in the
// database and is updated under its row's lock, so the limit holds for all
// instances together. Its writes do not wait for the disk: a power cut may
// give a client back a few requests, nothing more.
func (db *DB) SpendBucket(ctx context.Context, c Client, name string, rate Rate) (ok bool, retryAfter time.Duration, err error) {
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

// encodeTimes writes Unix milliseconds as request_windows keeps them.
func encodeTimes(times []int64) []byte {
	b := make([]byte, 0, 8*len(times))
	for _, t := range times {
		b = binary.LittleEndian.AppendUint64(b, uint64(t))
	}
	return b
}

// decodeTimes reads what encodeTimes wrote; a trailing partial time, which
// no version writes, is left out.
func decodeTimes(b []byte) []int64 {
	times := make([]int64, len(b)/8)
	for i := range times {
		times[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return times
}

package storage

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"errors"
	"slices"
)

// tagSetWriter files measures under their tag set (see tag_sets in the
// schema) within one write transaction.
type tagSetWriter struct {
	ctx                        context.Context
	tx                         dbtx
	client                     int64
	find, insert, member, bump *sql.Stmt
	err                        error
}

func newTagSetWriter(ctx context.Context, tx dbtx, c Client) *tagSetWriter {
	w := &tagSetWriter{ctx: ctx, tx: tx, client: c.key}
	w.find = w.prepare(`SELECT key FROM tag_sets WHERE client = ? AND digest = ?`)
	w.insert = w.prepare(`INSERT INTO tag_sets (client, digest, size, measures) VALUES (?, ?, ?, 0) RETURNING key`)
	w.member = w.prepare(`INSERT INTO tag_set_members (client, tag, tag_set, size) VALUES (?, ?, ?, ?)`)
	w.bump = w.prepare(`UPDATE tag_sets SET measures = measures + 1 WHERE key = ?`)
	return w
}

func (w *tagSetWriter) prepare(query string) *sql.Stmt {
	if w.err != nil {
		return nil
	}
	st, err := w.tx.Prepare(w.ctx, query)
	w.err = err
	return st
}

func (w *tagSetWriter) close() {
	for _, st := range []*sql.Stmt{w.find, w.insert, w.member, w.bump} {
		if st != nil {
			st.Close()
		}
	}
}

// add counts one more measure carrying tags and returns the key of its tag
// set, creating the set on first use.
func (w *tagSetWriter) add(tags []string) (int64, error) {
	if w.err != nil {
		return 0, w.err
	}
	set := canonicalTags(tags)
	digest := tagSetDigest(set)
	var key int64
	err := w.find.QueryRowContext(w.ctx, w.client, digest).Scan(&key)
	if errors.Is(err, sql.ErrNoRows) {
		if err = w.insert.QueryRowContext(w.ctx, w.client, digest, len(set)).Scan(&key); err != nil {
			return 0, err
		}
		for _, tag := range set {
			if _, err := w.member.ExecContext(w.ctx, w.client, tag, key, len(set)); err != nil {
				return 0, err
			}
		}
	} else if err != nil {
		return 0, err
	}
	_, err = w.bump.ExecContext(w.ctx, key)
	return key, err
}

// removeFromTagSet counts one measure less in tag set key and drops the set
// with its last measure, so that every stored set has a measure: a filter
// never matches more tag sets than measures.
func removeFromTagSet(ctx context.Context, tx dbtx, key int64) error {
	if _, err := tx.Exec(ctx, `UPDATE tag_sets SET measures = measures - 1 WHERE key = ?`, key); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `DELETE FROM tag_sets WHERE key = ? AND measures = 0`, key)
	return err
}

// canonicalTags is the set of tags: distinct and sorted.
func canonicalTags(tags []string) []string {
	set := slices.Clone(tags)
	slices.Sort(set)
	return slices.Compact(set)
}

// tagSetDigest names a canonical tag set: SHA-256 over the tags, each
// preceded by its length so that no two sets share an encoding.
func tagSetDigest(set []string) []byte {
	h := sha256.New()
	for _, tag := range set {
		h.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(tag))))
		h.Write([]byte(tag))
	}
	return h.Sum(nil)
}

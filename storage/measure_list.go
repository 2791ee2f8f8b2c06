package storage

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// TagOperator is how a tag filter compares a measure's tags with its values.
type TagOperator string

// The tag operators.
const (
	// TagsContain keeps a measure whose tags include every value.
	TagsContain TagOperator = "contains"
	// TagsOverlap keeps a measure whose tags include at least one value.
	TagsOverlap TagOperator = "overlaps"
	// TagsContainedBy keeps a measure with no tag outside the values; a
	// measure without tags is kept.
	TagsContainedBy TagOperator = "contained-by"
)

// TagFilter narrows a list by tags. Values is not empty.
type TagFilter struct {
	Operator TagOperator
	Values   []string
}

// MeasureQuery selects a page of a client's measures.
type MeasureQuery struct {
	Kind Kind       // empty: every kind, measures not yet run included
	Tags *TagFilter // nil: no filter
	Take int        // page size, > 0
	Skip int        // measures to pass over, >= 0
}

// MeasurePage is one page of a list and the size of the whole list.
type MeasurePage struct {
	Items []Measure
	Total int
}

// Measures lists c's measures newest first (creation order, so the order is
// stable), one page of them, and counts all that match, from one snapshot.
//
// A tag filter is decided per tag set (see tag_sets in the schema): the
// matching sets come from the member lists of the filter's tags, and the
// total is the sum of their measure counts, so counting never reads the
// client's measures. The page is then read one of two ways, whichever reads
// fewer rows: gathering every match through measures_by_tag_set and sorting
// them reads total rows; walking the client's measures newest first and
// testing each one's tag set reads about want*all/total rows, where want is
// skip+take and all the client's measure count. Gathering is chosen when
// total^2 <= want*all, so near the switch neither reads more than
// sqrt(want*all) rows.
func (db *DB) Measures(ctx context.Context, c Client, q MeasureQuery) (MeasurePage, error) {
	page := MeasurePage{Items: []Measure{}}
	err := db.inRead(ctx, func(tx dbtx) error {
		scope, args := `client = ?`, []any{c.key}
		if q.Kind != "" {
			scope, args = scope+` AND kind = ?`, append(args, q.Kind)
		}
		var all int
		if err := tx.QueryRow(ctx, `SELECT measures FROM clients WHERE key = ?`, c.key).Scan(&all); err != nil {
			return err
		}
		page.Total = all
		// With a tag filter, the measures of the matching tag sets are
		// kept. When walking, the test is wrapped in IS TRUE: it keeps
		// SQLite off measures_by_tag_set, so that it follows
		// measures_by_client in list order, and PostgreSQL from turning
		// it into a join that scans the sets once per measure; both then
		// run the set query once and test each measure against its
		// result in a hash.
		where := func(walk bool) string { return scope }
		if q.Tags != nil {
			sets, setArgs := matchingTagSets(c, *q.Tags)
			err := tx.QueryRow(ctx, `SELECT CAST(coalesce(sum(measures), 0) AS BIGINT) FROM tag_sets
			   WHERE client = ? AND key IN (`+sets+`)`, append([]any{c.key}, setArgs...)...).Scan(&page.Total)
			if err != nil {
				return err
			}
			where = func(walk bool) string {
				if walk {
					return scope + ` AND (tag_set IN (` + sets + `)) IS TRUE`
				}
				return scope + ` AND tag_set IN (` + sets + `)`
			}
			args = append(args, setArgs...)
		}
		if q.Kind != "" { // the tag sets do not count measures per kind
			if err := tx.QueryRow(ctx, `SELECT count(*) FROM measures WHERE `+where(false), args...).Scan(&page.Total); err != nil {
				return err
			}
		}
		if q.Skip >= page.Total {
			return nil
		}
		// Gathering reads total rows, walking about want*all/total (want <
		// total+take here, so no overflow).
		want, total := int64(q.Take+q.Skip), int64(page.Total)
		read := `SELECT seq FROM measures WHERE ` + where(true) + ` ORDER BY seq DESC LIMIT ? OFFSET ?`
		if total <= want || total*total <= want*int64(all) {
			// Gathering: the matches first, then their order. Left to
			// itself, PostgreSQL's planner bets that a LIMIT is met soon
			// by walking, which a rare tag loses.
			read = `WITH matches AS MATERIALIZED (SELECT seq FROM measures WHERE ` + where(false) + `)
			  SELECT seq FROM matches ORDER BY seq DESC LIMIT ? OFFSET ?`
		}
		seqs, err := querySeqs(ctx, tx, read, append(args, q.Take, q.Skip)...)
		if err != nil {
			return err
		}
		page.Items, err = measuresBySeq(ctx, tx, seqs)
		return err
	})
	if err != nil {
		return MeasurePage{}, fmt.Errorf("list measures: %w", err)
	}
	return page, nil
}

// matchingTagSets returns a SELECT of the keys of c's tag sets that f keeps,
// with its arguments.
func matchingTagSets(c Client, f TagFilter) (string, []any) {
	values := canonicalTags(f.Values)
	var args []any
	switch f.Operator {
	case TagsContain, TagsOverlap:
		// Each member list is ordered by tag set, so the engine merges them.
		parts := make([]string, len(values))
		for i, v := range values {
			parts[i] = `SELECT tag_set FROM tag_set_members WHERE client = ? AND tag = ?`
			args = append(args, c.key, v)
		}
		if f.Operator == TagsContain {
			return strings.Join(parts, " INTERSECT "), args
		}
		return strings.Join(parts, " UNION "), args
	default:
		// A set lies within the values when it is empty, or when it holds
		// as many of them as it has members; only members of sets no larger
		// than the values are read (tag_set_members_by_size).
		args = append(args, c.key, c.key)
		for _, v := range values {
			args = append(args, v)
		}
		return `SELECT key FROM tag_sets WHERE client = ? AND size = 0
		  UNION ALL
		  SELECT tag_set FROM tag_set_members
		  WHERE client = ? AND tag IN (?` + strings.Repeat(", ?", len(values)-1) + `) AND size <= ` + strconv.Itoa(len(values)) + `
		  GROUP BY tag_set HAVING count(*) = max(size)`, args
	}
}

func querySeqs(ctx context.Context, tx dbtx, query string, args ...any) ([]any, error) {
	rows, err := tx.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var seqs []any
	for rows.Next() {
		var seq int64
		if err := rows.Scan(&seq); err != nil {
			return nil, err
		}
		seqs = append(seqs, seq)
	}
	return seqs, rows.Err()
}

// measuresBySeq reads the measures seqs names, in list order.
func measuresBySeq(ctx context.Context, tx dbtx, seqs []any) ([]Measure, error) {
	ms := make([]Measure, 0, len(seqs))
	if len(seqs) == 0 {
		return ms, nil
	}
	rows, err := tx.Query(ctx, `SELECT `+measureColumns+` FROM measures WHERE seq IN (?`+
		strings.Repeat(", ?", len(seqs)-1)+`) ORDER BY seq DESC`, seqs...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		m, err := scanMeasure(rows)
		if err != nil {
			return nil, err
		}
		ms = append(ms, m)
	}
	return ms, rows.Err()
}

package storage

import (
	"context"
	"database/sql"
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
func (db *DB) Measures(ctx context.Context, c Client, q MeasureQuery) (MeasurePage, error) {
	page := MeasurePage{Items: []Measure{}}
	err := db.inRead(ctx, func(tx dbtx) error {
		var (
			seqs []any
			err  error
		)
		if q.Tags == nil {
			seqs, page.Total, err = untaggedPage(ctx, tx, c, q)
		} else {
			seqs, page.Total, err = taggedPage(ctx, tx, c, q)
		}
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

// untaggedPage returns the seqs of a page without a tag filter and the size
// of the whole list: the client's count of measures, or a count by kind.
func untaggedPage(ctx context.Context, tx dbtx, c Client, q MeasureQuery) ([]any, int, error) {
	var total int
	if err := tx.QueryRow(ctx, `SELECT measures FROM clients WHERE key = ?`, c.key).Scan(&total); err != nil {
		return nil, 0, err
	}
	scope, args := `client = ?`, []any{c.key}
	if q.Kind != "" {
		scope, args = scope+` AND kind = ?`, append(args, q.Kind)
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM measures WHERE `+scope, args...).Scan(&total); err != nil {
			return nil, 0, err
		}
	}
	if q.Skip >= total {
		return nil, total, nil
	}
	seqs, err := querySeqs(ctx, tx, `SELECT seq FROM measures WHERE `+scope+` ORDER BY seq DESC LIMIT ? OFFSET ?`,
		append(args, q.Take, q.Skip)...)
	return seqs, total, err
}

// taggedPage returns the seqs of a page under a tag filter and the size of
// the whole list, in one statement that finds the matching tag sets once.
//
// A tag filter is decided per tag set (see tag_sets in the schema): the
// matching sets come from the member lists of the filter's tags, and the
// total is the sum of their measure counts, so counting never reads the
// client's measures (but for a count by kind, which the sets do not keep).
// The page is then read one of two ways, whichever reads fewer rows:
// gathering every match through measures_by_tag_set and sorting them reads
// total rows; walking the client's measures newest first and testing each
// one's tag set reads about want*all/total rows, where want is skip+take
// and all the client's measure count. Gathering is chosen when total <= want
// or total^2 <= want*all, so near the switch neither reads more than
// sqrt(want*all) rows. Both ways are written in the statement, and the
// total sets the LIMIT of the one not chosen to 0 (of both when skip passes
// the total): both engines evaluate a LIMIT once, before reading a row, and
// a LIMIT of 0 reads none. (SQLite would test a condition in WHERE on every
// row.)
//
// The walk's test is wrapped in IS TRUE: it keeps SQLite off
// measures_by_tag_set, so that it follows measures_by_client in list
// order, and PostgreSQL from turning it into a join that scans the sets
// once per measure; both test each measure against the matching sets in a
// hash. The gathered matches are MATERIALIZED: left to itself,
// PostgreSQL's planner bets that a LIMIT is met soon by walking, which a
// rare tag loses.
func taggedPage(ctx context.Context, tx dbtx, c Client, q MeasureQuery) ([]any, int, error) {
	matches, args := matchingTagSets(c, *q.Tags)
	scope, scopeArgs := `client = ?`, []any{c.key}
	total := `SELECT CAST(coalesce(sum(measures), 0) AS BIGINT) AS n FROM matches`
	var totalArgs []any
	if q.Kind != "" {
		scope, scopeArgs = scope+` AND kind = ?`, append(scopeArgs, q.Kind)
		total = `SELECT CAST(count(*) AS BIGINT) AS n FROM measures WHERE ` + scope + ` AND tag_set IN (SELECT tag_set FROM matches)`
		totalArgs = scopeArgs
	}
	// The LIMIT of each way: the page size when the total chooses it
	// (and skip does not pass the total), else 0.
	n := `(SELECT n FROM total)`
	gather := `(` + n + ` <= ? OR ` + n + ` * ` + n + ` <= ? * (SELECT measures FROM clients WHERE key = ?))`
	limit := func(way string) string {
		return `LIMIT (CASE WHEN ` + n + ` > ? AND ` + way + ` THEN ? ELSE 0 END) OFFSET ?`
	}
	want := int64(q.Take + q.Skip)
	limitArgs := []any{q.Skip, want, want, c.key, q.Take, q.Skip}
	read := `WITH matches (tag_set, measures) AS MATERIALIZED (` + matches + `),
	  total AS MATERIALIZED (` + total + `),
	  gathered AS MATERIALIZED (SELECT seq FROM measures WHERE ` + scope + ` AND tag_set IN (SELECT tag_set FROM matches)),
	  gathered_page AS (SELECT seq FROM gathered ORDER BY seq DESC ` + limit(gather) + `),
	  walked_page AS (SELECT seq FROM measures WHERE ` + scope + ` AND (tag_set IN (SELECT tag_set FROM matches)) IS TRUE
	    ORDER BY seq DESC ` + limit(`NOT `+gather) + `)
	  SELECT n, CAST(NULL AS BIGINT) FROM total
	  UNION ALL SELECT CAST(NULL AS BIGINT), seq FROM gathered_page
	  UNION ALL SELECT CAST(NULL AS BIGINT), seq FROM walked_page`
	args = append(args, totalArgs...)
	args = append(args, scopeArgs...) // gathered
	args = append(args, limitArgs...)
	args = append(args, scopeArgs...) // walked_page
	args = append(args, limitArgs...)
	rows, err := tx.Query(ctx, read, args...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var (
		seqs []any
		size int
	)
	for rows.Next() {
		var n, seq sql.NullInt64
		if err := rows.Scan(&n, &seq); err != nil {
			return nil, 0, err
		}
		if n.Valid {
			size = int(n.Int64)
		} else {
			seqs = append(seqs, seq.Int64)
		}
	}
	return seqs, size, rows.Err()
}

// matchingTagSets returns a SELECT of the tag sets of c that f keeps, one
// row each, with its arguments. A row is (tag_set, measures): the set's key
// and its count of measures, read from the member rows that decide the
// match (which repeat the count), so that neither the match nor the total
// reads tag_sets but for the empty set.
func matchingTagSets(c Client, f TagFilter) (string, []any) {
	values := canonicalTags(f.Values)
	var args []any
	switch f.Operator {
	case TagsContain, TagsOverlap:
		// Each member list is ordered by tag set, and every member row
		// of a set carries the same count: the rows of a set that holds
		// every value (contains) or at least one (overlaps) come out once.
		parts := make([]string, len(values))
		for i, v := range values {
			parts[i] = `SELECT tag_set, measures FROM tag_set_members WHERE client = ? AND tag = ?`
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
		return `SELECT key, measures FROM tag_sets WHERE client = ? AND size = 0
		  UNION ALL
		  SELECT tag_set, max(measures) FROM tag_set_members
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

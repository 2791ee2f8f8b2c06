package control

import (
	"net/url"
	"strconv"

	"github.com/pulsewire/pulsewire/storage"
)

// Paging bounds of a list.
const (
	defaultTake = 100
	maxTake     = 1000
)

// ParseListQuery reads take, skip and filters of a list of measures of kind
// (empty: every measure). The kind lists (/measures/rppg, /measures/cppg)
// check filters but do not apply them, as the API says (docs/api.md).
func ParseListQuery(q url.Values, kind storage.Kind) (storage.MeasureQuery, error) {
	var p problems
	mq := storage.MeasureQuery{Kind: kind, Take: defaultTake}
	if n, ok := queryInt(q, "take", &p); ok {
		if n < 1 || n > maxTake {
			p.addf("take must be an integer from 1 to %d", maxTake)
		}
		mq.Take = int(n)
	}
	if n, ok := queryInt(q, "skip", &p); ok {
		if n < 0 {
			p.addf("skip must be an integer of at least 0")
		}
		mq.Skip = int(n)
	}
	if err := p.err(); err != nil {
		return mq, err
	}
	f, err := ParseFilters(q)
	if err != nil {
		return mq, err
	}
	if kind == "" {
		mq.Tags = f
	}
	return mq, nil
}

// queryInt reads an integer query parameter given at most once; ok is false
// when it is absent or malformed (then p says so).
func queryInt(q url.Values, name string, p *problems) (int64, bool) {
	values, given := q[name]
	if !given {
		return 0, false
	}
	if len(values) != 1 {
		p.addf("%s must be given once", name)
		return 0, false
	}
	n, err := strconv.ParseInt(values[0], 10, 64)
	if err != nil {
		p.addf("%s must be an integer", name)
		return 0, false
	}
	return n, true
}

package session

import (
	"errors"
	"sync"
	"time"
)

// The opening rate of an account: at most this many session
// openings in any window of this length, for each window.
var openingLimits = []struct {
	n   int
	per time.Duration
}{{2, time.Second}, {20, time.Minute}}

// errOpeningRate refuses an opening over the rate, for the log.
var errOpeningRate = errors.New("over the opening rate of the account")

// openingRate counts the session openings of each account over sliding
// windows: exact at every edge (a third opening 999 ms after two is
// refused, at 1000 ms it is not), which a token bucket is not. It keeps, per
// account, the times of its latest openings, as many as the largest limit.
type openingRate struct {
	now func() time.Time

	mu    sync.Mutex // protects the fields below
	times map[string][]time.Time
	swept time.Time
}

func newOpeningRate(now func() time.Time) *openingRate {
	return &openingRate{now: now, times: map[string][]time.Time{}}
}

// admit records an opening of account, or refuses it (errOpeningRate) and
// records nothing when any window is full.
func (o *openingRate) admit(account string) error {
	now := o.now()
	o.mu.Lock()
	defer o.mu.Unlock()
	o.sweep(now)
	ts := o.times[account]
	for _, l := range openingLimits {
		if len(ts) >= l.n && now.Sub(ts[len(ts)-l.n]) < l.per {
			return errOpeningRate
		}
	}
	keep := openingLimits[len(openingLimits)-1].n
	if len(ts) >= keep {
		ts = append(ts[:0], ts[len(ts)-keep+1:]...)
	}
	o.times[account] = append(ts, now)
	return nil
}

// sweep forgets, once per longest window, the accounts with no opening in
// it: the map stays as small as the set of recently active accounts.
func (o *openingRate) sweep(now time.Time) {
	longest := openingLimits[len(openingLimits)-1].per
	if now.Sub(o.swept) < longest {
		return
	}
	o.swept = now
	for account, ts := range o.times {
		if now.Sub(ts[len(ts)-1]) >= longest {
			delete(o.times, account)
		}
	}
}

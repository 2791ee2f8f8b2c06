package control

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// rateLimiter allows n requests per period for each key: a token bucket of
// n tokens refilled evenly (golang.org/x/time/rate), so a key may spend n at
// once and then earns one back every period/n.
type rateLimiter struct {
	n   int
	per time.Duration
	now func() time.Time

	mu      sync.Mutex // protects the fields below
	buckets map[string]*rate.Limiter
	swept   time.Time
}

func newRateLimiter(n int, per time.Duration, now func() time.Time) *rateLimiter {
	return &rateLimiter{n: n, per: per, now: now, buckets: map[string]*rate.Limiter{}}
}

// allow spends one request of key. When none is left it spends nothing and
// says how long until one is.
func (l *rateLimiter) allow(key string) (ok bool, retryAfter time.Duration) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweep(now)
	b := l.buckets[key]
	if b == nil {
		b = rate.NewLimiter(rate.Every(l.per/time.Duration(l.n)), l.n)
		l.buckets[key] = b
	}
	r := b.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}

// sweep forgets, once per period, the buckets that have filled up again:
// a full bucket is the same as a new one, and the map stays as small as the
// set of keys active in the last period.
func (l *rateLimiter) sweep(now time.Time) {
	if now.Sub(l.swept) < l.per {
		return
	}
	l.swept = now
	for key, b := range l.buckets {
		if b.TokensAt(now) >= float64(l.n) {
			delete(l.buckets, key)
		}
	}
}

// retryAfterSeconds is the Retry-After header for a wait of d: whole
// seconds, rounded up, at least 1.
func retryAfterSeconds(d time.Duration) int {
	return max(1, int(math.Ceil(d.Seconds())))
}

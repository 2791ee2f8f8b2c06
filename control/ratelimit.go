package control

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/pulsewire/pulsewire/control/metrics"
	"github.com/pulsewire/pulsewire/storage"
)

// requestLimit is a rate limit on a client's API requests, of rate.N per
// rate.Per: the general one a token bucket, which a key may spend at once
// and earns back evenly (one every Per/N), lenient to a client that works
// in bursts; the token mints' an exact window, at most N in any span of
// Per, as that limit is stated. The counts are in the environment's
// database, so that a limit holds for every instance of the server
// together, not for each.
type requestLimit struct {
	name  string // the limit's name in the database
	rate  storage.Rate
	exact bool          // a window, not a bucket
	cause metrics.Cause // what a refusal counts as
}

// The limits: per API key, over all routes, and again for
// minting tokens.
var (
	generalLimit = requestLimit{"general", storage.Rate{N: requestsPerMinute, Per: time.Minute}, false, metrics.CauseRequestRate}
	mintLimit    = requestLimit{"access-tokens", storage.Rate{N: tokensPerMinute, Per: time.Minute}, true, metrics.CauseMintRate}
)

// spendRequest spends one request of c under l, or refuses it with
// RateLimited and the wait until one is back, and counts the refusal.
func (s *Service) spendRequest(ctx context.Context, c storage.Client, l requestLimit) error {
	spend := s.db.SpendBucket
	if l.exact {
		spend = s.db.SpendWindow
	}
	ok, wait, err := spend(ctx, c, l.name, l.rate)
	switch {
	case err != nil:
		return err
	case !ok:
		s.metrics.Refused(string(s.env), l.cause)
		return &Error{Code: RateLimited, RetryAfter: wait}
	}
	return nil
}

// SetRetryAfter sets the Retry-After header of an answer that asks the
// client to wait d: whole seconds, rounded up, at least 1, since a client
// that reads 0 comes back at once. Every answer of the server that says
// when to retry sets it here, so that they all round alike.
func SetRetryAfter(h http.Header, d time.Duration) {
	h.Set("Retry-After", strconv.Itoa(max(1, int(math.Ceil(d.Seconds())))))
}

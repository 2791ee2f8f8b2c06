package control

import (
	"context"
	"math"
	"time"

	"github.com/pulsewire/pulsewire/control/metrics"
	"github.com/pulsewire/pulsewire/storage"
)

// requestLimit is a rate limit on a client's API requests: at most
// rate.N in any span of rate.Per, so a key that spends N at once waits
// until they are Per old. The counts are in the environment's database, so
// that a limit holds for every instance of the server together, not for
// each.
type requestLimit struct {
	name  string // the limit's name in the database
	rate  storage.Rate
	cause metrics.Cause // what a refusal counts as
}

// The limits: per API key, over all routes, and again for
// minting tokens.
var (
	generalLimit = requestLimit{"general", storage.Rate{N: requestsPerMinute, Per: time.Minute}, metrics.CauseRequestRate}
	mintLimit    = requestLimit{"access-tokens", storage.Rate{N: tokensPerMinute, Per: time.Minute}, metrics.CauseMintRate}
)

// spendRequest spends one request of c under l, or refuses it with
// RateLimited and the wait until one is back, and counts the refusal.
func (s *Service) spendRequest(ctx context.Context, c storage.Client, l requestLimit) error {
	ok, wait, err := s.db.SpendRequest(ctx, c, l.name, l.rate)
	switch {
	case err != nil:
		return err
	case !ok:
		s.metrics.Refused(string(s.env), l.cause)
		return &Error{Code: RateLimited, RetryAfter: wait}
	}
	return nil
}

// retryAfterSeconds is the Retry-After header for a wait of d: whole
// seconds, rounded up, at least 1.
func retryAfterSeconds(d time.Duration) int {
	return max(1, int(math.Ceil(d.Seconds())))
}

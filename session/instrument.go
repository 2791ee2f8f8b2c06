package session

import (
	"errors"

	"github.com/pulsewire/pulsewire/control/metrics"
	"github.com/pulsewire/pulsewire/storage"
)

// This file reports the session server to the environment's metrics
// (control.WithMetrics): sessions open by chain and transport, frames
// dropped, each session's run by outcome, and refusals by cause.

// report counts a session whose loop ends in st: no longer open, and its
// run by how it ended.
func (s *session) report(st *loopState) {
	s.counted.Closed()
	source := metrics.SourceScanSession
	if chainMetric(s.chain) == metrics.ChainRealtime {
		source = metrics.SourceRealtimeSession
	}
	outcome := metrics.OutcomeAbandoned
	switch {
	case st.ended:
		outcome = metrics.OutcomeEnded
	case s.unstored:
		outcome = metrics.OutcomeFailed
	}
	s.srv.svc.Metrics().Run(string(s.srv.svc.Env()), source, outcome)
}

// chainMetric is a chain's label: one of two constants, whatever c holds.
func chainMetric(c Chain) metrics.Chain {
	if c == Scan {
		return metrics.ChainScan
	}
	return metrics.ChainRealtime
}

// countRefusal counts a handshake refused with err by its cause, which
// only the server's operator sees.
func (s *Server) countRefusal(err error) {
	s.svc.Metrics().Refused(string(s.svc.Env()), refusalCause(err))
}

// refusalCauses map the errors of a refused handshake to their causes, the
// first that matches winning; anything else is a malformed request.
var refusalCauses = []struct {
	err   error
	cause metrics.Cause
}{
	{errTooManyHandshakes, metrics.CauseHandshakes},
	{errHandshakeMemory, metrics.CauseHandshakes}, // wrapped in errBusy
	{errBusy, metrics.CauseCapacity},
	{errClosing, metrics.CauseClosing},
	{errNoResume, metrics.CauseResume},
	{storage.ErrOpeningRate, metrics.CauseOpeningRate},
	{storage.ErrTokenUnknown, metrics.CauseUnknownToken},
	{storage.ErrTokenLacksChain, metrics.CauseWrongChain},
	{storage.ErrTokenRevoked, metrics.CauseRevoked},
	{storage.ErrTokenExpired, metrics.CauseExpired},
	{storage.ErrTokenSpent, metrics.CauseSpent},
	{storage.ErrClientDeactivated, metrics.CauseDeactivated},
}

func refusalCause(err error) metrics.Cause {
	for _, c := range refusalCauses {
		if errors.Is(err, c.err) {
			return c.cause
		}
	}
	return metrics.CauseBadRequest
}

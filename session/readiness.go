package session

import "context"

// Ready is the session server's readiness check: it takes new sessions,
// neither shutting down nor holding as many sessions as it may (a place
// both environments share).
func (s *Server) Ready(context.Context) error {
	select {
	case <-s.closing:
		return errClosing
	default:
	}
	if len(s.capacity.places) == cap(s.capacity.places) {
		return errBusy
	}
	return nil
}

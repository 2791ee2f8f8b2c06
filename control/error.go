package control

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pulsewire/pulsewire/storage"
)

// Code classifies an error by what the caller did wrong, or by the fact that
// nothing they did was wrong (Internal). The HTTP layer maps each code to a
// status and a body in one table (errorStatus).
type Code string

// The error codes.
const (
	Invalid      Code = "invalid"      // the request breaks a rule; Messages say which
	Unauthorized Code = "unauthorized" // no valid API key
	NotFound     Code = "not_found"    // no such thing for this caller
	TooLarge     Code = "too_large"    // the body exceeds its limit
	TooSlow      Code = "too_slow"     // the body arrived too slowly and was cut off
	RateLimited  Code = "rate_limited" // too many requests; RetryAfter says for how long
	Unavailable  Code = "unavailable"  // the server is too busy now; RetryAfter says when to try again
	NoSpace      Code = "no_space"     // our fault: the disk is full; details only in the server log
	Internal     Code = "internal"     // our fault; details only in the server log
)

// Error is an error the API answers deliberately.
type Error struct {
	Code Code
	// Messages are readable, one per problem (Invalid only).
	Messages []string
	// RetryAfter is how long to wait before trying again (RateLimited and
	// Unavailable only).
	RetryAfter time.Duration
	// Err is the cause, for the server log; never shown to the caller.
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(string(e.Code))
	if len(e.Messages) > 0 {
		b.WriteString(": " + strings.Join(e.Messages, "; "))
	}
	// The wrapped error adds its own words, unless a message already
	// quotes them (a reason said twice reads as two).
	if e.Err != nil && !strings.Contains(strings.Join(e.Messages, "; "), e.Err.Error()) {
		b.WriteString(": " + e.Err.Error())
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// invalidf is a validation error with one message.
func invalidf(format string, args ...any) *Error {
	return &Error{Code: Invalid, Messages: []string{fmt.Sprintf(format, args...)}}
}

// ErrorCode returns the code of err: its own when it is (or wraps) an
// *Error, NotFound for storage.ErrNotFound, and Internal for anything else,
// storage.ErrTokenDuration included: the request was valid, so it is 500, not 400.
func ErrorCode(err error) Code {
	var e *Error
	switch {
	case err == nil:
		return ""
	case errors.As(err, &e):
		return e.Code
	case errors.Is(err, storage.ErrNotFound):
		return NotFound
	default:
		return Internal
	}
}

// problems collects the validation failures of one request, so that the
// caller learns every problem at once.
type problems []string

func (p *problems) addf(format string, args ...any) {
	*p = append(*p, fmt.Sprintf(format, args...))
}

// err is nil when nothing was found, or an Invalid error with every message.
func (p problems) err() error {
	if len(p) == 0 {
		return nil
	}
	return &Error{Code: Invalid, Messages: p}
}

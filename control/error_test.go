package control

import (
	"errors"
	"testing"
)

// TestErrorSaysEachReasonOnce: an error's text carries its cause after its
// messages, unless a message already quotes the cause.
func TestErrorSaysEachReasonOnce(t *testing.T) {
	cause := errors.New("invalid character '}' after object key")
	for _, tc := range []struct {
		name string
		err  *Error
		want string
	}{
		{"message quotes the cause", &Error{Code: Invalid, Messages: []string{"the body is not valid JSON: " + cause.Error()}, Err: cause},
			"invalid: the body is not valid JSON: invalid character '}' after object key"},
		{"message and another cause", &Error{Code: Invalid, Messages: []string{"captures.3 cannot be decoded"}, Err: cause},
			"invalid: captures.3 cannot be decoded: invalid character '}' after object key"},
		{"cause alone", &Error{Code: TooLarge, Err: cause}, "too_large: invalid character '}' after object key"},
		{"message alone", invalidf("take must be 1 to 1000"), "invalid: take must be 1 to 1000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.err.Error(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			if tc.err.Err != nil && !errors.Is(tc.err, tc.err.Err) {
				t.Error("the cause is no longer wrapped")
			}
		})
	}
}

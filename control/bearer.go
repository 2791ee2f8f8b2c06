package control

import (
	"net/http"
	"strings"
)

// Bearer is the credential a request presents in its Authorization header
// with the Bearer scheme (RFC 6750 section 2.1), or "" when it presents
// none: no header, more than one, another scheme, no credential, or more
// than one word after the scheme.
//
// The scheme's name is case-insensitive (RFC 7235 section 2.1: "bearer x"
// and "BEARER x" are "Bearer x"), and any run of spaces and tabs may surround
// it and separate it from the credential, which is one word (a token68).
// Two headers are refused rather than one picked: which one a proxy or a
// client library meant is not ours to guess. The API key of the REST
// routes and the access token of the session server's WHIP routes are
// both read here, so that the two accept and refuse the same headers.
func Bearer(h http.Header) string {
	values := h.Values("Authorization")
	if len(values) != 1 {
		return ""
	}
	// Only the blanks of HTTP (SP and HTAB, RFC 9110 section 5.6.3):
	// strings.Fields would also split on U+00A0, U+0085, U+3000 and
	// others, which a proxy in front does not.
	words := strings.FieldsFunc(values[0], func(r rune) bool { return r == ' ' || r == '\t' })
	if len(words) != 2 || !strings.EqualFold(words[0], "Bearer") {
		return ""
	}
	return words[1]
}

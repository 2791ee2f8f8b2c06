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
// and "BEARER x" are "Bearer x"), and any run of white space may surround
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
	words := strings.Fields(values[0])
	if len(words) != 2 || !strings.EqualFold(words[0], "Bearer") {
		return ""
	}
	return words[1]
}

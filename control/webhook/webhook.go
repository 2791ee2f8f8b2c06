// Package webhook signs PulseWire's webhook deliveries and verifies them:
// the server signs with Sign, and a receiver written in Go checks a delivery
// with Verify before trusting it.
//
// A delivery is a POST of a JSON event. Its PulseWire-Signature header is
//
//	t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>" with the endpoint's secret>
//
// Signing the time with the body lets a receiver refuse a delivery replayed
// later: Verify refuses one whose time is more than a tolerance (Tolerance
// by default) away from its clock. A header may carry several v1 values
// (one per secret, should secrets ever roll); one that matches is enough.
package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"
)

// The headers of a delivery.
const (
	// SignatureHeader carries the signature (see the package's doc).
	SignatureHeader = "PulseWire-Signature"
	// EventIDHeader carries the event's id, the same on every attempt and
	// redelivery of the event: a receiver that has seen it has nothing to do.
	EventIDHeader = "PulseWire-Event-Id"
)

// Tolerance is how far a delivery's signed time may be from the receiver's
// clock: attempts are signed when they are sent, so a genuine one is
// seconds old.
const Tolerance = 5 * time.Minute

// Signature is the value of SignatureHeader for body, sent at t, signed
// with secret.
func Signature(secret string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac(secret, ts, body))
}

func mac(secret, ts string, body []byte) []byte {
	h := hmac.New(sha256.New, []byte(secret))
	h.Write([]byte(ts))
	h.Write([]byte{'.'})
	h.Write(body)
	return h.Sum(nil)
}

// Why Verify refuses a delivery.
var (
	ErrMalformed = errors.New("webhook: the signature header is malformed")
	ErrTooOld    = errors.New("webhook: the signature's time is outside the tolerance")
	ErrMismatch  = errors.New("webhook: no signature matches the body")
)

// Verify checks header, the value of SignatureHeader, against body as
// received (the raw bytes, before any JSON decoding), with the endpoint's
// secret, at time now: nil when a v1 signature matches and its time is
// within tolerance of now (Tolerance when tolerance is 0).
func Verify(secret, header string, body []byte, now time.Time, tolerance time.Duration) error {
	if tolerance <= 0 {
		tolerance = Tolerance
	}
	var (
		ts   string
		sigs [][]byte
	)
	for part := range strings.SplitSeq(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return ErrMalformed
		}
		switch k {
		case "t":
			ts = v
		case "v1":
			sig, err := hex.DecodeString(v)
			if err != nil {
				return ErrMalformed
			}
			sigs = append(sigs, sig)
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || len(sigs) == 0 {
		return ErrMalformed
	}
	if d := now.Sub(time.Unix(sec, 0)); d > tolerance || d < -tolerance {
		return ErrTooOld
	}
	want := mac(secret, ts, body)
	for _, sig := range sigs {
		if hmac.Equal(sig, want) {
			return nil
		}
	}
	return ErrMismatch
}

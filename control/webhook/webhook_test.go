package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestSignatureVerifies(t *testing.T) {
	at := time.Unix(1780000000, 0)
	body := []byte(`{"id":"e1","type":"measure.ended"}`)
	sig := Signature("whsec_a", at, body)
	// The scheme by hand: HMAC-SHA256 of "<t>.<body>".
	h := hmac.New(sha256.New, []byte("whsec_a"))
	h.Write([]byte("1780000000." + string(body)))
	if want := "t=1780000000,v1=" + hex.EncodeToString(h.Sum(nil)); sig != want {
		t.Fatalf("signature %q, want %q", sig, want)
	}
	if err := Verify("whsec_a", sig, body, at.Add(Tolerance), 0); err != nil {
		t.Fatalf("at the edge of the tolerance: %v", err)
	}
	if err := Verify("whsec_a", sig, body, at.Add(-Tolerance), 0); err != nil {
		t.Fatalf("at the edge of the tolerance, before: %v", err)
	}
	// Several v1 values: one that matches is enough.
	if err := Verify("whsec_a", sig+",v1=00ff", body, at, 0); err != nil {
		t.Fatalf("with a second signature: %v", err)
	}
	for _, c := range []struct {
		name, secret, header string
		body                 []byte
		now                  time.Time
		want                 error
	}{
		{"past the tolerance", "whsec_a", sig, body, at.Add(Tolerance + time.Second), ErrTooOld},
		{"from the future", "whsec_a", sig, body, at.Add(-Tolerance - time.Second), ErrTooOld},
		{"another secret", "whsec_b", sig, body, at, ErrMismatch},
		{"another body", "whsec_a", sig, []byte(`{"id":"e2"}`), at, ErrMismatch},
		{"another time", "whsec_a", strings.Replace(sig, "t=1780000000", "t=1780000001", 1), body, at, ErrMismatch},
		{"no time", "whsec_a", sig[strings.Index(sig, ",")+1:], body, at, ErrMalformed},
		{"no signature", "whsec_a", "t=1780000000", body, at, ErrMalformed},
		{"not hex", "whsec_a", "t=1780000000,v1=zz", body, at, ErrMalformed},
		{"empty", "whsec_a", "", body, at, ErrMalformed},
	} {
		if err := Verify(c.secret, c.header, c.body, c.now, 0); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
}

// TestVerifyOwnTolerance: a receiver that asks for a tighter tolerance than
// the default gets it, at its edge and past it; the default would let a
// delivery replayed minutes later through.
func TestVerifyOwnTolerance(t *testing.T) {
	at := time.Unix(1780000000, 0)
	body := []byte(`{"id":"e1","type":"measure.ended"}`)
	sig := Signature("whsec_a", at, body)
	tolerance := 30 * time.Second
	for _, now := range []time.Time{at.Add(tolerance), at.Add(-tolerance)} {
		if err := Verify("whsec_a", sig, body, now, tolerance); err != nil {
			t.Errorf("%v from the signed time: %v", now.Sub(at), err)
		}
	}
	for _, now := range []time.Time{at.Add(tolerance + time.Second), at.Add(-tolerance - time.Second), at.Add(Tolerance)} {
		if err := Verify("whsec_a", sig, body, now, tolerance); !errors.Is(err, ErrTooOld) {
			t.Errorf("%v from the signed time, with a tolerance of %v: %v, want %v", now.Sub(at), tolerance, err, ErrTooOld)
		}
	}
}

package control

import (
	"net/http"
	"strings"
	"testing"
)

func TestBearer(t *testing.T) {
	for _, tc := range []struct {
		name   string
		header []string
		want   string
	}{
		{"scheme as RFC 6750 writes it", []string{"Bearer x"}, "x"},
		{"scheme in lower case", []string{"bearer x"}, "x"},
		{"scheme in upper case", []string{"BEARER x"}, "x"},
		{"scheme in mixed case", []string{"bEaReR x"}, "x"},
		{"spaces between", []string{"Bearer   x"}, "x"},
		{"a tab between", []string{"Bearer\tx"}, "x"},
		{"spaces around", []string{"  Bearer x  "}, "x"},
		{"no header", nil, ""},
		{"empty header", []string{""}, ""},
		{"blank header", []string{"   "}, ""},
		{"scheme only", []string{"Bearer"}, ""},
		{"scheme and a space", []string{"Bearer "}, ""},
		{"no space after the scheme", []string{"Bearerx"}, ""},
		{"credential only", []string{"x"}, ""},
		{"another scheme", []string{"Basic x"}, ""},
		{"two words after the scheme", []string{"Bearer x y"}, ""},
		{"two headers", []string{"Bearer x", "Bearer x"}, ""},
		{"an empty header and a good one", []string{"", "Bearer x"}, ""},
		{"a no-break space between", []string{"Bearer\u00a0x"}, ""},
		{"an ideographic space between", []string{"Bearer\u3000x"}, ""},
		{"a no-break space after: part of the credential", []string{"Bearer x\u00a0"}, "x\u00a0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			for _, v := range tc.header {
				h.Add("Authorization", v)
			}
			if got := Bearer(h); got != tc.want {
				t.Fatalf("Bearer(%q) = %q, want %q", tc.header, got, tc.want)
			}
		})
	}
}

// FuzzBearer: no header value makes Bearer panic, and a credential it
// accepts holds no space or tab and reads back the same after a plain
// "Bearer ".
func FuzzBearer(f *testing.F) {
	for _, s := range []string{"Bearer x", "bearer x", "BEARER  x ", "Bearer", "Bearer x y", "Basic x", "", "\tBearer\tx\t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, value string) {
		got := Bearer(http.Header{"Authorization": {value}})
		if got == "" {
			return
		}
		if strings.ContainsAny(got, " \t") || !strings.Contains(value, got) {
			t.Fatalf("Bearer(%q) = %q", value, got)
		}
		if again := Bearer(http.Header{"Authorization": {"Bearer " + got}}); again != got {
			t.Fatalf("Bearer(%q) = %q, but Bearer of %q is %q", value, got, "Bearer "+got, again)
		}
	})
}

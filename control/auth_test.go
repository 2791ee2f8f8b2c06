package control

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestAuthentication(t *testing.T) {
	prod := newTestEnv(t, Production)
	test := newTestEnv(t, Test)
	_, key := prod.client("acme")
	gone, goneKey := prod.client("gone")
	_, testKey := test.client("acme-test")
	if _, err := prod.svc.DeactivateClient(context.Background(), gone.ID); err != nil {
		t.Fatal(err)
	}
	const target = "/measures/00000000-0000-4000-8000-000000000000" // 404 once admitted
	for _, tc := range []struct {
		name   string
		header []string
		status int
	}{
		{"valid key", []string{"Bearer " + key}, http.StatusNotFound},
		{"scheme in lower case", []string{"bearer " + key}, http.StatusNotFound},
		{"scheme in upper case", []string{"BEARER " + key}, http.StatusNotFound},
		{"spaces between scheme and key", []string{"Bearer   " + key}, http.StatusNotFound},
		{"no header", nil, http.StatusUnauthorized},
		{"empty header", []string{""}, http.StatusUnauthorized},
		{"no scheme", []string{key}, http.StatusUnauthorized},
		{"no space after the scheme", []string{"Bearer" + key}, http.StatusUnauthorized},
		{"a word after the key", []string{"Bearer " + key + " x"}, http.StatusUnauthorized},
		{"basic scheme", []string{"Basic " + key}, http.StatusUnauthorized},
		{"unknown key", []string{"Bearer pwk_live_" + strings.Repeat("A", 43)}, http.StatusUnauthorized},
		{"key cut short", []string{"Bearer " + key[:len(key)-1]}, http.StatusUnauthorized},
		{"key of the test environment", []string{"Bearer " + testKey}, http.StatusUnauthorized},
		{"deactivated client", []string{"Bearer " + goneKey}, http.StatusUnauthorized},
		{"two headers", []string{"Bearer " + key, "Bearer " + key}, http.StatusUnauthorized},
		{"an access token", []string{"Bearer ivat-" + strings.Repeat("A", 43)}, http.StatusUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, target, nil)
			for _, h := range tc.header {
				req.Header.Add("Authorization", h)
			}
			w := httptest.NewRecorder()
			prod.api.ServeHTTP(w, req)
			r := response{w.Code, w.Header(), w.Body.Bytes()}
			wantStatus(t, r, tc.status)
			// Answers of the keyed routes, a refusal too, are for no cache.
			if r.header.Get("Cache-Control") != "no-store" || r.header.Get("X-Content-Type-Options") != "nosniff" {
				t.Fatalf("headers %v", r.header)
			}
			if tc.status == http.StatusUnauthorized {
				wantBody(t, r, `{"statusCode":401,"message":"Unauthorized"}`)
			}
		})
	}
}

func TestDeactivationCountsOnTheNextRequest(t *testing.T) {
	e := newTestEnv(t, Production)
	c, key := e.client("acme")
	wantStatus(t, e.do("GET", "/measures", key, nil), http.StatusOK)
	if _, err := e.svc.DeactivateClient(context.Background(), c.ID); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, e.do("GET", "/measures", key, nil), http.StatusUnauthorized)
}

func TestUnknownRouteAndOpenAPINeedNoKey(t *testing.T) {
	e := newTestEnv(t, Production)
	r := e.do("GET", "/nothing-here", "", nil)
	wantStatus(t, r, http.StatusNotFound)
	wantBody(t, r, notFoundJSON)
	r = e.do("GET", "/openapi.json", "", nil)
	wantStatus(t, r, http.StatusOK)
	if doc := r.json(t); doc["openapi"] != "3.1.0" {
		t.Fatalf("openapi field %v", doc["openapi"])
	}
}

package control

import (
	"net/http"
	"testing"
)

// TestEnvironmentsShareNothing: a key, token id or measure id of one
// environment is unknown to the other.
func TestEnvironmentsShareNothing(t *testing.T) {
	prod, test := newTestEnv(t, Production), newTestEnv(t, Test)
	_, prodKey := prod.client("acme")
	_, testKey := test.client("acme")
	measure := prod.do("POST", "/measures", prodKey, `{"userData":{"externalId":"p-1"}}`).json(t)["id"].(string)
	token := prod.do("POST", "/access-tokens", prodKey, `{"permissions":[{"name":"measurement.scan"}],"duration":"1m"}`).json(t)["id"].(string)

	wantStatus(t, test.do("GET", "/measures", prodKey, nil), http.StatusUnauthorized)
	wantStatus(t, prod.do("GET", "/measures", testKey, nil), http.StatusUnauthorized)
	wantStatus(t, test.do("GET", "/measures/"+measure, testKey, nil), http.StatusNotFound)
	wantStatus(t, test.do("DELETE", "/measures/"+measure, testKey, nil), http.StatusNotFound)
	wantStatus(t, test.do("DELETE", "/access-tokens/"+token, testKey, nil), http.StatusNotFound)
	wantStatus(t, test.do("GET", "/external-users/p-1", testKey, nil), http.StatusNotFound)
	if got := test.do("GET", "/measures", testKey, nil).json(t)["total"]; got != 0.0 {
		t.Fatalf("test lists %v measures", got)
	}
	wantStatus(t, prod.do("GET", "/measures/"+measure, prodKey, nil), http.StatusOK)
}

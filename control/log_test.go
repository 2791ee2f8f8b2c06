package control

import (
	"net/http"
	"strings"
	"testing"
)

// TestLogsHoldNoSecretsOrPersonData drives requests that carry an API key,
// mint a token and name a person, then reads every log line.
func TestLogsHoldNoSecretsOrPersonData(t *testing.T) {
	e := newTestEnv(t, Production)
	_, key := e.client("acme")
	tok := e.do("POST", "/access-tokens", key, `{"permissions":[{"name":"measurement.scan"}],"duration":"1m"}`).json(t)
	m := e.do("POST", "/measures", key, `{"userData":{"externalId":"jane-doe-1984","weight":71},"tags":["ward-7"]}`).json(t)
	e.do("GET", "/external-users/jane-doe-1984", key, nil)
	e.do("GET", `/measures?filters={"operator":"contains","name":"tags","values":["ward-7"]}`, key, nil)
	e.do("DELETE", "/access-tokens/"+tok["id"].(string), key, nil)
	e.do("GET", "/measures/"+m["id"].(string), "pwk_live_wrong", nil)

	logs := e.logs.String()
	if strings.Count(logs, `"msg":"request"`) != 6 {
		t.Fatalf("want one line per request:\n%s", logs)
	}
	for _, secret := range []string{key, key[len("pwk_live_"):], tok["value"].(string)[5:], "jane-doe-1984", "ward-7", "pwk_live_wrong"} {
		if strings.Contains(logs, secret) {
			t.Errorf("the logs hold %q:\n%s", secret, logs)
		}
	}
	for _, want := range []string{`"request_id":`, `"route":"/external-users/:externalId"`, `"status":401`} {
		if !strings.Contains(logs, want) {
			t.Errorf("the logs lack %s:\n%s", want, logs)
		}
	}
}

func TestRequestIDs(t *testing.T) {
	e := newTestEnv(t, Production)
	first := e.do("GET", "/openapi.json", "", nil).header.Get("X-Request-Id")
	second := e.do("GET", "/openapi.json", "", nil).header.Get("X-Request-Id")
	if len(first) != 16 || first == second {
		t.Fatalf("request ids %q and %q", first, second)
	}
}

func TestPanicIsA500AndTheServerGoesOn(t *testing.T) {
	boom := http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") })
	e := newTestEnv(t, Production, withRoutes(Route{Method: "GET", Path: "/boom", Handler: boom, Internal: true}))
	r := e.do("GET", "/boom", "", nil)
	wantStatus(t, r, http.StatusInternalServerError)
	wantBody(t, r, `{"statusCode":500,"message":"Internal server error"}`)
	wantStatus(t, e.do("GET", "/openapi.json", "", nil), http.StatusOK)
	if !strings.Contains(e.logs.String(), `"msg":"panic"`) {
		t.Fatal("the panic was not logged")
	}
}

func TestMountedRouteGetsPathValues(t *testing.T) {
	var got string
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.PathValue("id")
		RequestLogger(r.Context()).Info("mounted")
	})
	e := newTestEnv(t, Production, withRoutes(Route{Method: "DELETE", Path: "/sessions/whip/:id", Handler: h, Internal: true}))
	wantStatus(t, e.do("DELETE", "/sessions/whip/abc", "", nil), http.StatusOK)
	if got != "abc" || !strings.Contains(e.logs.String(), `"msg":"mounted","env":"production","request_id"`) {
		t.Fatalf("path value %q; logs %s", got, e.logs.String())
	}
}

// TestPageFilesLogAtDebug: a page load asks for a dozen files of an
// internal route; they log at debug, so that an info log shows the API's
// requests, and a failure among them still logs at info.
func TestPageFilesLogAtDebug(t *testing.T) {
	file := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("file") == "missing.js" {
			http.NotFound(w, r)
		}
	})
	e := newTestEnv(t, Production, withRoutes(Route{Method: "GET", Path: "/widget/:file", Handler: file, Internal: true}))
	e.do("GET", "/widget/view.js", "", nil)
	e.do("GET", "/widget/missing.js", "", nil)
	e.do("GET", "/openapi.json", "", nil)
	logs := e.logs.String()
	for _, want := range []string{
		`"level":"DEBUG","msg":"request","env":"production","request_id":`,
		`"route":"/widget/:file","status":200`,
		`"route":"/widget/:file","status":404`,
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("the logs lack %s:\n%s", want, logs)
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(logs), "\n") {
		debug := strings.Contains(line, `"level":"DEBUG"`)
		if want := strings.Contains(line, `"status":200`) && strings.Contains(line, "/widget/"); debug != want {
			t.Errorf("debug %v for %s", debug, line)
		}
	}
}

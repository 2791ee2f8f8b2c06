package control

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/pulsewire/pulsewire/storage"
)

func TestCreateTokenValidation(t *testing.T) {
	e := newTestEnv(t, Production)
	_, key := e.client("acme")
	scan := `[{"name":"measurement.scan","maxSessions":1}]`
	body := func(fields string) string { return "{" + fields + "}" }
	for _, tc := range []struct {
		name   string
		body   string
		status int
		msg    string // part of a 400 message
	}{
		{"minimal", body(`"permissions":` + scan + `,"duration":"1h"`), 201, ""},
		{"description of 255 characters", body(`"description":"` + strings.Repeat("é", 255) + `","permissions":` + scan + `,"duration":"1h"`), 201, ""},
		{"description of 256 characters", body(`"description":"` + strings.Repeat("é", 256) + `","permissions":` + scan + `,"duration":"1h"`), 400, "description must be shorter than or equal to 255"},
		{"description null", body(`"description":null,"permissions":` + scan + `,"duration":"1h"`), 201, ""},
		{"description a number", body(`"description":5,"permissions":` + scan + `,"duration":"1h"`), 400, "description must be a string"},
		{"permissions missing", body(`"duration":"1h"`), 400, "permissions should not be empty"},
		{"permissions null", body(`"permissions":null,"duration":"1h"`), 400, "permissions should not be empty"},
		{"permissions empty", body(`"permissions":[],"duration":"1h"`), 400, "permissions should not be empty"},
		{"permissions an object", body(`"permissions":{"name":"measurement.scan"},"duration":"1h"`), 400, "permissions must be an array"},
		{"both permissions", body(`"permissions":[{"name":"measurement.scan"},{"name":"measurement.realtime","maxSessions":null}],"duration":"1h"`), 201, ""},
		{"a member twice", body(`"permissions":` + scan + `,"duration":"48h","duration":"1h"`), 400, "duration is given twice"},
		{"a permission's name twice", body(`"permissions":[{"name":"measurement.scan","name":"measurement.realtime"}],"duration":"1h"`), 400, "permissions.0.name is given twice"},
		{"description not UTF-8", body(`"description":"a` + "\xff" + `b","permissions":` + scan + `,"duration":"1h"`), 400, "the body must be UTF-8 text"},
		{"permission named twice", body(`"permissions":[{"name":"measurement.scan"},{"name":"measurement.scan","maxSessions":2}],"duration":"1h"`), 400, "measurement.scan is given twice"},
		{"unknown permission", body(`"permissions":[{"name":"measurement.all"}],"duration":"1h"`), 400, "permissions.0.name must be one of"},
		{"permission without name", body(`"permissions":[{"maxSessions":1}],"duration":"1h"`), 400, "permissions.0.name must be one of"},
		{"permission not an object", body(`"permissions":["measurement.scan"],"duration":"1h"`), 400, "permissions.0 must be an object"},
		{"permission with an unknown field", body(`"permissions":[{"name":"measurement.scan","max":1}],"duration":"1h"`), 400, "permissions.0.property max should not exist"},
		{"maxSessions 1", body(`"permissions":[{"name":"measurement.scan","maxSessions":1}],"duration":"1h"`), 201, ""},
		{"maxSessions 0", body(`"permissions":[{"name":"measurement.scan","maxSessions":0}],"duration":"1h"`), 400, "maxSessions must be an integer of at least 1, or null"},
		{"maxSessions -1", body(`"permissions":[{"name":"measurement.scan","maxSessions":-1}],"duration":"1h"`), 400, "maxSessions"},
		{"maxSessions 2.0, an integer to JSON Schema", body(`"permissions":[{"name":"measurement.scan","maxSessions":2.0}],"duration":"1h"`), 201, ""},
		{"maxSessions 1.5", body(`"permissions":[{"name":"measurement.scan","maxSessions":1.5}],"duration":"1h"`), 400, "maxSessions"},
		{"maxSessions a string", body(`"permissions":[{"name":"measurement.scan","maxSessions":"1"}],"duration":"1h"`), 400, "maxSessions"},
		{"maxSessions huge", body(`"permissions":[{"name":"measurement.scan","maxSessions":1e30}],"duration":"1h"`), 400, "maxSessions"},
		{"duration missing", body(`"permissions":` + scan), 400, "duration should not be empty"},
		{"duration a number", body(`"permissions":` + scan + `,"duration":3600`), 400, "duration must be a string"},
		{"duration 48h", body(`"permissions":` + scan + `,"duration":"48h"`), 201, ""},
		{"duration 48h 1s", body(`"permissions":` + scan + `,"duration":"48h 1s"`), 400, "at most 48h"},
		{"duration 0s", body(`"permissions":` + scan + `,"duration":"0s"`), 400, "greater than 0"},
		{"duration unit twice", body(`"permissions":` + scan + `,"duration":"1d 1day"`), 400, "days given twice"},
		{"duration in months", body(`"permissions":` + scan + `,"duration":"1mon"`), 400, "months"},
		{"duration of 64 characters", body(`"permissions":` + scan + `,"duration":"` + strings.Repeat("0", 62) + `1h"`), 201, ""},
		{"duration of 65 characters", body(`"permissions":` + scan + `,"duration":"` + strings.Repeat("0", 63) + `1h"`), 400, "64 characters"},
		{"unknown field", body(`"permissions":` + scan + `,"duration":"1h","scope":"all"`), 400, "property scope should not exist"},
		{"malformed JSON", `{"permissions":`, 400, "the body must be a JSON object"},
		{"an array", `[]`, 400, "the body must be a JSON object"},
		{"empty body", ``, 400, "the body must be a JSON object"},
		{"every problem at once", body(`"description":5,"duration":"0s"`), 400, "description must be a string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.clock.advance(time.Minute) // stay under 20 per minute
			r := e.do("POST", "/access-tokens", key, tc.body)
			wantStatus(t, r, tc.status)
			if tc.status == 400 {
				v := r.json(t)
				if v["statusCode"] != 400.0 || v["error"] != "Bad Request" || !strings.Contains(fmt.Sprint(v["message"]), tc.msg) {
					t.Fatalf("body %s, want a message with %q", r.body, tc.msg)
				}
			}
		})
	}
	e.clock.advance(time.Minute)
	r := e.do("POST", "/access-tokens", key, body(`"description":5,"duration":"0s"`))
	if n := len(r.json(t)["message"].([]any)); n != 3 {
		t.Fatalf("%d messages for three problems: %s", n, r.body)
	}
	wantStatus(t, e.do("POST", "/access-tokens", key, strings.Repeat(" ", maxJSONBody+1)), http.StatusRequestEntityTooLarge)
}

func TestCreateTokenAnswer(t *testing.T) {
	e := newTestEnv(t, Production)
	_, key := e.client("acme")
	e.clock.advance(123 * time.Millisecond)
	r := e.do("POST", "/access-tokens", key, `{"permissions":[{"name":"measurement.realtime"},{"name":"measurement.scan","maxSessions":3}],"duration":"1h 30m"}`)
	wantStatus(t, r, http.StatusCreated)
	if r.header.Get("Cache-Control") != "no-store" { // a credential (RFC 6749 section 5.1)
		t.Fatalf("Cache-Control %q", r.header.Get("Cache-Control"))
	}
	v := r.json(t)
	if len(v) != 6 {
		t.Fatalf("fields %v", v)
	}
	if _, err := uuid.Parse(v["id"].(string)); err != nil {
		t.Fatalf("id %v", v["id"])
	}
	value := v["value"].(string)
	if !strings.HasPrefix(value, "ivat-") || len(value) < len("ivat-")+43 { // 256 bits in base64url
		t.Fatalf("value %q", value)
	}
	if v["description"] != nil {
		t.Fatalf("description %v, want null", v["description"])
	}
	if got := fmt.Sprint(v["permissions"]); got != "[map[maxSessions:<nil> name:measurement.realtime] map[maxSessions:3 name:measurement.scan]]" {
		t.Fatalf("permissions %s", got)
	}
	if v["createdAt"] != "2026-06-01T12:00:00.123Z" || v["expiresAt"] != "2026-06-01T13:30:00.123Z" {
		t.Fatalf("createdAt %v expiresAt %v", v["createdAt"], v["expiresAt"])
	}
	// Only a hash is stored: the value is nowhere in the database files.
	e.db.Close()
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(e.file + suffix)
		if err == nil && bytes.Contains(b, []byte(value[len("ivat-"):])) {
			t.Fatalf("the token value is stored in %s", e.file+suffix)
		}
	}
}

func TestTokenDaysOverflowOnTheCalendarIs500(t *testing.T) {
	newYork, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	e := newTestEnv(t, Production, withLocation(newYork))
	_, key := e.client("acme")
	// 2026-10-31 12:00 in New York: the next day lasts 25 h (fall-back).
	e.clock.advance(time.Date(2026, 10, 31, 16, 0, 0, 0, time.UTC).Sub(e.clock.now()))
	r := e.do("POST", "/access-tokens", key, `{"permissions":[{"name":"measurement.scan"}],"duration":"2d"}`)
	wantStatus(t, r, http.StatusInternalServerError)
	wantBody(t, r, `{"statusCode":500,"message":"Internal server error"}`)
	r = e.do("POST", "/access-tokens", key, `{"permissions":[{"name":"measurement.scan"}],"duration":"1d"}`)
	wantStatus(t, r, http.StatusCreated)
	if v := r.json(t); v["expiresAt"] != "2026-11-01T17:00:00.000Z" { // 25 h later
		t.Fatalf("expiresAt %v", v["expiresAt"])
	}
}

func TestRevokeToken(t *testing.T) {
	e := newTestEnv(t, Production)
	_, key := e.client("acme")
	_, otherKey := e.client("other")
	mint := func() string {
		t.Helper()
		r := e.do("POST", "/access-tokens", key, `{"permissions":[{"name":"measurement.scan","maxSessions":1}],"duration":"10m"}`)
		wantStatus(t, r, http.StatusCreated)
		return r.json(t)["id"].(string)
	}
	id := mint()
	for _, tc := range []struct {
		name   string
		key    string
		id     string
		status int
		body   string
	}{
		{"malformed id", key, "not-a-uuid", 400, ""},
		{"id too long", key, id + "0", 400, ""},
		{"never existed", key, uuid.NewString(), 404, notFoundJSON},
		{"another client's", otherKey, id, 404, notFoundJSON},
		{"own, upper case", key, strings.ToUpper(id), 200, ""},
		{"already revoked", key, id, 404, notFoundJSON},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do("DELETE", "/access-tokens/"+tc.id, tc.key, nil)
			wantStatus(t, r, tc.status)
			if tc.status == 200 && len(r.body) != 0 {
				t.Fatalf("body %q, want none", r.body)
			}
			if tc.body != "" {
				wantBody(t, r, tc.body)
			}
		})
	}

	expired := mint()
	e.clock.advance(time.Hour)
	wantStatus(t, e.do("DELETE", "/access-tokens/"+expired, key, nil), http.StatusOK)

	// Concurrent revocations of one token: exactly one 200, the rest 404.
	id = mint()
	statuses := concurrently(8, func() int { return e.do("DELETE", "/access-tokens/"+id, key, nil).status })
	if statuses[200] != 1 || statuses[404] != 7 {
		t.Fatalf("statuses %v, want one 200 and seven 404", statuses)
	}
}

// FuzzParseTokenRequest: no body panics the parser, and an accepted one
// obeys every rule of a token request.
func FuzzParseTokenRequest(f *testing.F) {
	for _, s := range []string{
		`{"permissions":[{"name":"measurement.scan","maxSessions":1}],"duration":"10m"}`,
		`{"description":"x","permissions":[{"name":"measurement.realtime","maxSessions":null}],"duration":"2 days"}`,
		`{"permissions":[],"duration":"1h"}`, `[]`, `null`, `{"duration":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := ParseTokenRequest(body)
		if err != nil {
			if ErrorCode(err) != Invalid {
				t.Fatalf("error %v is not Invalid", err)
			}
			return
		}
		if len(req.Permissions) == 0 || req.Duration.Nominal() <= 0 || req.Description != nil && chars(*req.Description) > 255 {
			t.Fatalf("accepted %+v", req)
		}
		seen := map[string]bool{}
		for _, p := range req.Permissions {
			if seen[p.Name] || p.Name != PermissionScan && p.Name != PermissionRealtime || p.MaxSessions != nil && *p.MaxSessions < 1 {
				t.Fatalf("accepted permissions %+v", req.Permissions)
			}
			seen[p.Name] = true
		}
	})
}

func TestOpenSession(t *testing.T) {
	e := newTestEnv(t, Production)
	_, key := e.client("acme")
	r := e.do("POST", "/access-tokens", key, `{"permissions":[{"name":"measurement.scan","maxSessions":1}],"duration":"1m"}`)
	v := r.json(t)
	value, id := v["value"].(string), v["id"].(string)
	ctx := t.Context()
	if _, err := e.svc.OpenSession(ctx, id, PermissionScan, nil); !errors.Is(err, storage.ErrSessionRefused) {
		t.Fatalf("the id opened a session: %v", err)
	}
	if _, err := e.svc.OpenSession(ctx, value, PermissionRealtime, nil); !errors.Is(err, storage.ErrSessionRefused) {
		t.Fatalf("a scan token opened a realtime session: %v", err)
	}
	s, err := e.svc.OpenSession(ctx, value, PermissionScan, nil)
	if err != nil || s.TokenID != id || s.Opened != 1 {
		t.Fatalf("open: %+v, %v", s, err)
	}
	if _, err := e.svc.OpenSession(ctx, value, PermissionScan, nil); !errors.Is(err, storage.ErrSessionRefused) {
		t.Fatalf("a spent token opened a session: %v", err)
	}
}

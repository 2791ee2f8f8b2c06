package control

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/pulsewire/pulsewire/storage"
)

// ids lists the ids of a list answer's items, in order.
func ids(t *testing.T, r response) []string {
	t.Helper()
	var out []string
	for _, item := range r.json(t)["items"].([]any) {
		out = append(out, item.(map[string]any)["id"].(string))
	}
	return out
}

func TestListPaging(t *testing.T) {
	e := newTestEnv(t, Production)
	_, key := e.client("acme")
	_, otherKey := e.client("other")
	var made []string // newest first
	for range 5 {
		made = append([]string{e.do("POST", "/measures", key, `{}`).json(t)["id"].(string)}, made...)
	}
	e.do("POST", "/measures", otherKey, `{}`)
	for _, tc := range []struct {
		query  string
		status int
		want   []string
	}{
		{"", 200, made},
		{"take=1", 200, made[:1]},
		{"take=1000", 200, made},
		{"take=2&skip=1", 200, made[1:3]},
		{"skip=0", 200, made},
		{"skip=5", 200, nil},
		{"skip=4000000000000", 200, nil},
		{"take=0", 400, nil},
		{"take=1001", 400, nil},
		{"take=-1", 400, nil},
		{"take=abc", 400, nil},
		{"take=1.5", 400, nil},
		{"take=1&take=2", 400, nil},
		{"skip=-1", 400, nil},
		{"skip=x", 400, nil},
		{"take=1;skip=2", 400, nil},
	} {
		t.Run(tc.query, func(t *testing.T) {
			r := e.do("GET", "/measures?"+tc.query, key, nil)
			wantStatus(t, r, tc.status)
			if tc.status != 200 {
				return
			}
			if got := ids(t, r); !slices.Equal(got, tc.want) {
				t.Fatalf("items %v, want %v", got, tc.want)
			}
			v := r.json(t)
			if v["total"] != 5.0 || len(v) != 4 {
				t.Fatalf("answer %s", r.body)
			}
		})
	}
	// The message reads the same raw as decoded: nothing in it is escaped.
	if r := e.do("GET", "/measures?skip=-1", key, nil); !strings.Contains(string(r.body), `"skip must be an integer of at least 0"`) {
		t.Fatalf("skip=-1 answered %s", r.body)
	}
	v := e.do("GET", "/measures?skip=2", key, nil).json(t)
	if v["take"] != 100.0 || v["skip"] != 2.0 {
		t.Fatalf("take %v skip %v, want the defaults and what was sent", v["take"], v["skip"])
	}
	// Every list, the kind lists too, pages within the same bounds and
	// shows take 100 and skip 0 when none is sent.
	for _, list := range []string{"/measures", "/measures/rppg", "/measures/cppg"} {
		for _, tc := range []struct {
			query  string
			status int
		}{
			{"take=1", 200},
			{"take=1000", 200},
			{"skip=0", 200},
			{"take=0", 400},
			{"take=1001", 400},
			{"skip=-1", 400},
		} {
			if r := e.do("GET", list+"?"+tc.query, key, nil); r.status != tc.status {
				t.Errorf("%s?%s: status %d, want %d", list, tc.query, r.status, tc.status)
			}
		}
		if v := e.do("GET", list, key, nil).json(t); v["take"] != 100.0 || v["skip"] != 0.0 {
			t.Fatalf("%s: take %v skip %v, want the defaults 100 and 0", list, v["take"], v["skip"])
		}
	}
}

func TestListFilters(t *testing.T) {
	e := newTestEnv(t, Production)
	_, key := e.client("acme")
	_, otherKey := e.client("other")
	made := map[string]string{} // tags -> id
	for _, tags := range []string{"", "a", "b", "a,b", "a,c", "c"} {
		body := `{"tags":[]}`
		if tags != "" {
			body = `{"tags":["` + strings.ReplaceAll(tags, ",", `","`) + `"]}`
		}
		made[tags] = e.do("POST", "/measures", key, body).json(t)["id"].(string)
		e.do("POST", "/measures", otherKey, body)
	}
	for _, tc := range []struct {
		operator string
		values   []string
		want     []string // tag sets, newest first
	}{
		{"contains", []string{"a"}, []string{"a,c", "a,b", "a"}},
		{"contains", []string{"a", "b"}, []string{"a,b"}},
		{"overlaps", []string{"b", "c"}, []string{"c", "a,c", "a,b", "b"}},
		{"contained-by", []string{"a", "b"}, []string{"a,b", "b", "a", ""}},
		{"contained-by", []string{"z"}, []string{""}},
	} {
		var want []string
		for _, tags := range tc.want {
			want = append(want, made[tags])
		}
		values := string(mustJSON(t, tc.values))
		asJSON := "filters=" + url.QueryEscape(fmt.Sprintf(`{"operator":%q,"name":"tags","values":%s}`, tc.operator, values))
		spread := "filters[operator]=" + tc.operator + "&filters[name]=tags"
		for i, v := range tc.values {
			spread += fmt.Sprintf("&filters[values][%d]=%s", i, v)
		}
		for _, query := range []string{asJSON, spread} {
			r := e.do("GET", "/measures?"+query, key, nil)
			wantStatus(t, r, http.StatusOK)
			if got := ids(t, r); !slices.Equal(got, want) || r.json(t)["total"] != float64(len(want)) {
				t.Errorf("%s %v (%s): %v, want %v", tc.operator, tc.values, query[:12], got, want)
			}
		}
	}
	for _, query := range []string{
		`filters={"operator":"contains","name":"status","values":["a"]}`,
		`filters={"operator":"near","name":"tags","values":["a"]}`,
		`filters={"operator":"and","operands":[]}`,
		`filters={"operator":"and","operands":[{"operator":"contains","name":"tags","values":["a"]},{"operator":"contains","name":"tags","values":["b"]}]}`,
		`filters={`,
	} {
		for _, path := range []string{"/measures", "/measures/rppg"} {
			r := e.do("GET", path+"?"+url.PathEscape(query), key, nil)
			wantStatus(t, r, http.StatusBadRequest)
		}
	}

	// The kind lists accept a filter and do not apply it.
	e.endMeasure(made["a"], storage.KindRPPG)
	e.endMeasure(made["b"], storage.KindRPPG)
	e.endMeasure(made["c"], storage.KindCPPG)
	r := e.do("GET", "/measures/rppg?filters="+url.QueryEscape(`{"operator":"contains","name":"tags","values":["a"]}`), key, nil)
	wantStatus(t, r, http.StatusOK)
	if got := ids(t, r); !slices.Equal(got, []string{made["b"], made["a"]}) {
		t.Fatalf("rppg list %v", got)
	}
	if got := ids(t, e.do("GET", "/measures/cppg", key, nil)); !slices.Equal(got, []string{made["c"]}) {
		t.Fatalf("cppg list %v", got)
	}
	if got := ids(t, e.do("GET", "/measures/rppg", otherKey, nil)); len(got) != 0 {
		t.Fatalf("another client sees %v", got)
	}
}

package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/pulsewire/pulsewire/storage"
)

func TestCreateMeasureValidation(t *testing.T) {
	e := newTestEnv(t, Production)
	_, key := e.client("acme")
	// The test clock reads 2026-06-01: born on 2008-06-01 is 18 today,
	// on 2008-06-02 still 17.
	ud := func(fields string) string { return `{"userData":{` + fields + `}}` }
	tags := func(n int) string { return `{"tags":["` + strings.Repeat(`t","`, n-1) + `t"]}` }
	for _, tc := range []struct {
		name string
		body string
		msg  string // "" when accepted
	}{
		{"empty body", ``, ""},
		{"empty object", `{}`, ""},
		{"everything null", `{"userData":null,"desiredVariables":null,"unwantedVariables":null,"tags":null,"computeOptions":null}`, ""},
		{"externalId of 300", ud(`"externalId":"` + strings.Repeat("é", 300) + `"`), ""},
		{"externalId of 301", ud(`"externalId":"` + strings.Repeat("é", 301) + `"`), "externalId must be shorter than or equal to 300"},
		{"externalId empty", ud(`"externalId":""`), "externalId must not be empty"},
		{"externalId a number", ud(`"externalId":42`), "externalId must be a string"},
		{"sex M", ud(`"sex":"M"`), ""},
		{"sex F", ud(`"sex":"F"`), ""},
		{"sex lower case", ud(`"sex":"f"`), "sex must be one of"},
		{"age 18", ud(`"age":18`), ""},
		{"age 17", ud(`"age":17`), "age must be an integer from 18 to 110"},
		{"age 110", ud(`"age":110`), ""},
		{"age 111", ud(`"age":111`), "age must be an integer from 18 to 110"},
		{"age 40.5", ud(`"age":40.5`), "age must be an integer"},
		{"age 40.0, an integer to JSON Schema", ud(`"age":40.0`), ""},
		{"age 4e1", ud(`"age":4e1`), ""},
		{"age 4.0e1", ud(`"age":4.0E+1`), ""},
		{"age 1e20", ud(`"age":1e20`), "age must be an integer from 18 to 110"},
		{"age -0.0", ud(`"age":-0.0`), "age must be an integer from 18 to 110"},
		{"age a string", ud(`"age":"40"`), "age must be an integer"},
		{"weight 20", ud(`"weight":20`), ""},
		{"weight 19", ud(`"weight":19`), "weight must be an integer from 20 to 200"},
		{"weight 200", ud(`"weight":200`), ""},
		{"weight 201", ud(`"weight":201`), "weight must be an integer from 20 to 200"},
		{"height 100", ud(`"height":100`), ""},
		{"height 99", ud(`"height":99`), "height must be an integer from 100 to 250"},
		{"height 250", ud(`"height":250`), ""},
		{"height 251", ud(`"height":251`), "height must be an integer from 100 to 250"},
		{"smoker", ud(`"smokingStatus":"smoker"`), ""},
		{"non-smoker", ud(`"smokingStatus":"non-smoker"`), ""},
		{"smoking unknown", ud(`"smokingStatus":"sometimes"`), "smokingStatus must be one of"},
		{"born 18 years ago today", ud(`"dateOfBirth":"2008-06-01"`), ""},
		{"born a day short of 18", ud(`"dateOfBirth":"2008-06-02"`), "dateOfBirth must give an age from 18 to 110 (it gives 17)"},
		{"born 110 years ago", ud(`"dateOfBirth":"1915-06-02"`), ""},
		{"born 111 years ago", ud(`"dateOfBirth":"1915-06-01"`), "(it gives 111)"},
		{"born as a timestamp", ud(`"dateOfBirth":"1990-01-01T00:00:00.000Z"`), ""},
		// A later month of the same year is not yet the birthday, whatever
		// the day; an earlier month is past it.
		{"born in a later month, 18 years ago", ud(`"dateOfBirth":"2008-07-01"`), "dateOfBirth must give an age from 18 to 110 (it gives 17)"},
		{"born in an earlier month, 18 years ago", ud(`"dateOfBirth":"2008-05-31"`), ""},
		// A timestamp's date is taken as written, not moved to UTC: the
		// person was born on June 1st where they were.
		{"born as a timestamp west of UTC", ud(`"dateOfBirth":"2008-06-01T23:30:00-05:00"`), ""},
		{"born as a timestamp east of UTC", ud(`"dateOfBirth":"2008-06-02T01:30:00+05:00"`), "dateOfBirth must give an age from 18 to 110 (it gives 17)"},
		{"born in the future", ud(`"dateOfBirth":"2030-01-01"`), "dateOfBirth must give an age"},
		{"date of birth malformed", ud(`"dateOfBirth":"01/02/1990"`), "dateOfBirth must be a date"},
		{"age and date of birth", ud(`"age":40,"dateOfBirth":"1990-01-01"`), "give age or dateOfBirth, not both"},
		{"userData unknown field", ud(`"name":"Ada"`), "userData.property name should not exist"},
		{"userData not an object", `{"userData":"x"}`, "userData must be an object"},
		{"1000 tags", tags(1000), ""},
		{"1001 tags", tags(1001), "tags must contain no more than 1000 elements"},
		{"tag of 255", `{"tags":["` + strings.Repeat("é", 255) + `"]}`, ""},
		{"tag of 256", `{"tags":["` + strings.Repeat("é", 256) + `"]}`, "tags.0 must be shorter than or equal to 255"},
		{"empty tag", `{"tags":[""]}`, "tags.0 must not be empty"},
		{"tag a number", `{"tags":[1]}`, "tags.0 must be a string"},
		{"tags a string", `{"tags":"a,b"}`, "tags must be an array"},
		{"every variable", `{"desiredVariables":["hr","br","hrv","strs","bpClass","bp","physicalAge","bmi","faceBmi","healthScore"]}`, ""},
		{"empty variable list", `{"desiredVariables":[]}`, ""},
		{"unknown variable", `{"unwantedVariables":["spo2"]}`, "unwantedVariables.0 must be one of"},
		{"variable twice", `{"desiredVariables":["hr","hr"]}`, "desiredVariables.1: hr is given twice"},
		{"scale 2", `{"computeOptions":{"bpClass":{"scale":2}}}`, ""},
		{"scale 3", `{"computeOptions":{"bpClass":{"scale":3}}}`, ""},
		{"scale 1", `{"computeOptions":{"bpClass":{"scale":1}}}`, "scale must be 2 or 3"},
		{"scale 4", `{"computeOptions":{"bpClass":{"scale":4}}}`, "scale must be 2 or 3"},
		{"scale missing", `{"computeOptions":{"bpClass":{}}}`, "scale must be 2 or 3"},
		{"empty compute options", `{"computeOptions":{}}`, ""},
		{"unknown compute option", `{"computeOptions":{"hr":{}}}`, "computeOptions.property hr should not exist"},
		{"unknown field", `{"user":{}}`, "property user should not exist"},
		{"malformed JSON", `{"tags":[}`, "the body must be a JSON object"},
		{"two objects", `{}{}`, "the body must be a JSON object"},
		{"a stray closing brace after", `{"tags":["a"]}}`, "the body must be a JSON object"},
		{"a stray bracket after", `{} ]`, "the body must be a JSON object"},
		{"blanks after", "{}\n\t ", ""},
		// What encoding/json would take but change is refused: which of two
		// values counts, and two names of a person read as one.
		{"member twice", `{"tags":["a"],"tags":["b"]}`, "tags is given twice"},
		{"member twice in userData", ud(`"externalId":"a","externalId":"b"`), "userData.externalId is given twice"},
		{"member twice deeper", `{"computeOptions":{"bpClass":{"scale":2,"scale":3}}}`, "computeOptions.bpClass.scale is given twice"},
		{"one name in two objects", `{"userData":{"age":40},"computeOptions":{"bpClass":{"scale":2}},"tags":["age"]}`, ""},
		{"a byte that is not UTF-8", ud(`"externalId":"pers` + "\xff" + `on"`), "the body must be UTF-8 text"},
		{"half a surrogate pair", ud(`"externalId":"pers\ud800on"`), "the body must be UTF-8 text"},
		{"the other half alone", `{"tags":["\udc00"]}`, "the body must be UTF-8 text"},
		{"a surrogate pair", `{"tags":["\ud83d\ude00"]}`, ""},
		{"an escaped backslash before u", `{"tags":["\\ud800"]}`, ""},
		{"U+FFFD itself", ud(`"externalId":"pers\ufffdon"`), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do("POST", "/measures", key, tc.body)
			if tc.msg == "" {
				wantStatus(t, r, http.StatusCreated)
				return
			}
			wantStatus(t, r, http.StatusBadRequest)
			if got := fmt.Sprint(r.json(t)["message"]); !strings.Contains(got, tc.msg) {
				t.Fatalf("messages %s, want one with %q", got, tc.msg)
			}
		})
	}
}

func TestMeasureAnswers(t *testing.T) {
	e := newTestEnv(t, Production)
	_, key := e.client("acme")
	_, otherKey := e.client("other")
	r := e.do("POST", "/measures", key, `{"userData":{"sex":"F","dateOfBirth":"1986-06-02","weight":60},
		"desiredVariables":["hr"],"tags":["b","a"],"computeOptions":{"bpClass":{"scale":2}}}`)
	wantStatus(t, r, http.StatusCreated)
	created := string(r.body)
	id := r.json(t)["id"].(string)
	want := `{"id":"` + id + `","status":"created","createdAt":"2026-06-01T12:00:00.000Z","desiredVariables":["hr"],` +
		`"unwantedVariables":null,"userData":{"externalId":null,"sex":"F","age":39,"weight":60,"height":null,"smokingStatus":null},"tags":["b","a"]}`
	wantBody(t, r, want)

	r = e.do("GET", "/measures/"+id, key, nil)
	wantStatus(t, r, http.StatusOK)
	wantBody(t, r, created)
	for _, tc := range []struct {
		name, target, key string
		status            int
	}{
		{"another client's", "/measures/" + id, otherKey, 404},
		{"missing", "/measures/" + uuid.NewString(), key, 404},
		{"malformed id", "/measures/123", key, 400},
		{"rppg of a created measure", "/measures/" + id + "/rppg", key, 404},
		{"cppg of a created measure", "/measures/" + id + "/cppg", key, 404},
		{"rppg of a malformed id", "/measures/x/rppg", key, 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do("GET", tc.target, tc.key, nil)
			wantStatus(t, r, tc.status)
			if tc.status == 404 {
				wantBody(t, r, notFoundJSON)
			}
		})
	}

	e.endMeasure(id, storage.KindRPPG)
	wantStatus(t, e.do("GET", "/measures/"+id+"/cppg", key, nil), http.StatusNotFound)
	r = e.do("GET", "/measures/"+id+"/rppg", key, nil)
	wantStatus(t, r, http.StatusOK)
	v := r.json(t)
	for _, field := range []string{"startedAt", "endedAt", "returnedVariables", "signal", "variables"} {
		if _, ok := v[field]; !ok {
			t.Errorf("ended measure lacks %s: %s", field, r.body)
		}
	}
	wantStatus(t, e.do("GET", "/measures/"+id+"/rppg", otherKey, nil), http.StatusNotFound)
}

// TestMeasureViewPerStatus checks the fields each status shows.
func TestMeasureViewPerStatus(t *testing.T) {
	base := storage.Measure{ID: "m", CreatedAt: noon, StartedAt: noon, EndedAt: noon, Tags: nil}
	for _, tc := range []struct {
		status storage.Status
		fields []string
	}{
		{storage.StatusCreated, []string{"createdAt", "desiredVariables", "id", "status", "tags", "unwantedVariables", "userData"}},
		{storage.StatusStarted, []string{"createdAt", "desiredVariables", "id", "startedAt", "status", "tags", "unwantedVariables", "userData"}},
		{storage.StatusEnded, []string{"createdAt", "desiredVariables", "endedAt", "id", "returnedVariables", "signal", "startedAt", "status", "tags", "unwantedVariables", "userData", "variables"}},
	} {
		m := base
		m.Status = tc.status
		v := NewMeasureView(m)
		fields := jsonFields(t, v)
		if !reflect.DeepEqual(fields, tc.fields) {
			t.Errorf("%s shows %v, want %v", tc.status, fields, tc.fields)
		}
	}
	m := base
	m.Status = storage.StatusEnded
	if got := string(mustJSON(t, NewMeasureView(m))); !strings.Contains(got, `"returnedVariables":[],"signal":null,"variables":{}`) || !strings.Contains(got, `"tags":[]`) {
		t.Errorf("an ended measure with nothing computed shows %s", got)
	}
}

type failingMedia struct {
	storage.Media
	mu    sync.Mutex // protects fails
	fails int
}

func (f *failingMedia) Remove(ctx context.Context, id string) error {
	f.mu.Lock()
	fail := f.fails > 0
	f.fails--
	f.mu.Unlock()
	if fail {
		return errors.New("disk unplugged")
	}
	return f.Media.Remove(ctx, id)
}

func TestDeleteMeasure(t *testing.T) {
	media := &failingMedia{}
	e := newTestEnv(t, Production, withMedia(func(m storage.Media) storage.Media { media.Media = m; return media }))
	_, key := e.client("acme")
	_, otherKey := e.client("other")
	id := e.do("POST", "/measures", key, `{}`).json(t)["id"].(string)
	if err := e.media.Put(context.Background(), id, "video.mp4", strings.NewReader("frames")); err != nil {
		t.Fatal(err)
	}
	folder := filepath.Join(filepath.Dir(e.file), "media", id)

	wantStatus(t, e.do("DELETE", "/measures/nope", key, nil), http.StatusBadRequest)
	wantBody(t, e.do("DELETE", "/measures/"+id, otherKey, nil), notFoundJSON)
	if _, err := os.Stat(folder); err != nil {
		t.Fatal("another client's delete touched the media")
	}

	// Interrupted: the media step fails, the record stays; issued again,
	// the deletion completes.
	media.fails = 1
	wantStatus(t, e.do("DELETE", "/measures/"+id, key, nil), http.StatusInternalServerError)
	wantStatus(t, e.do("GET", "/measures/"+id, key, nil), http.StatusOK)
	r := e.do("DELETE", "/measures/"+id, key, nil)
	wantStatus(t, r, http.StatusOK)
	if len(r.body) != 0 {
		t.Fatalf("body %q, want none", r.body)
	}
	if _, err := os.Stat(folder); !os.IsNotExist(err) {
		t.Fatalf("media folder still there: %v", err)
	}
	wantBody(t, e.do("DELETE", "/measures/"+id, key, nil), notFoundJSON)
	wantStatus(t, e.do("GET", "/measures/"+id, key, nil), http.StatusNotFound)

	// A deletion that removed the media and then stopped: the record alone
	// remains, and deleting again completes.
	id = e.do("POST", "/measures", key, `{}`).json(t)["id"].(string)
	if err := e.media.Remove(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, e.do("DELETE", "/measures/"+id, key, nil), http.StatusOK)

	// Concurrent deletions of one measure: exactly one 200.
	id = e.do("POST", "/measures", key, `{}`).json(t)["id"].(string)
	statuses := concurrently(8, func() int { return e.do("DELETE", "/measures/"+id, key, nil).status })
	if statuses[200] != 1 || statuses[404] != 7 {
		t.Fatalf("statuses %v, want one 200 and seven 404", statuses)
	}
}

func TestExternalUsers(t *testing.T) {
	e := newTestEnv(t, Production)
	_, key := e.client("acme")
	_, otherKey := e.client("other")
	for _, id := range []string{"p-1", "a/b c", strings.Repeat("x", 300)} {
		body := fmt.Sprintf(`{"userData":{"externalId":%q}}`, id)
		wantStatus(t, e.do("POST", "/measures", key, body), http.StatusCreated)
	}
	for _, tc := range []struct {
		name, path, key string
		status          int
		body            string
	}{
		{"known", "p-1", key, 200, `{"externalId":"p-1","rppgCalibrated":false,"cppgCalibrated":false}`},
		{"escaped slash and space", "a%2Fb%20c", key, 200, `{"externalId":"a/b c","rppgCalibrated":false,"cppgCalibrated":false}`},
		{"300 characters", strings.Repeat("x", 300), key, 200, ""},
		{"301 characters: no measure can carry it", strings.Repeat("x", 301), key, 404, notFoundJSON},
		{"not UTF-8: no measure can carry it", "pers%FFon", key, 404, notFoundJSON},
		{"U+FFFD, which a byte that is not UTF-8 once became", "pers%EF%BF%BDon", key, 404, notFoundJSON},
		{"unknown", "p-2", key, 404, notFoundJSON},
		{"another client's person", "p-1", otherKey, 404, notFoundJSON},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do("GET", "/external-users/"+tc.path, tc.key, nil)
			wantStatus(t, r, tc.status)
			if tc.body != "" {
				wantBody(t, r, tc.body)
			}
		})
	}
}

func TestBodyTooLarge(t *testing.T) {
	e := newTestEnv(t, Production)
	_, key := e.client("acme")
	r := e.do("POST", "/measures", key, `{"tags":["`+strings.Repeat("a", maxJSONBody)+`"]}`)
	wantStatus(t, r, http.StatusRequestEntityTooLarge)
	wantBody(t, r, `{"statusCode":413,"message":"Request Entity Too Large"}`)
}

var noon = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// jsonFields lists the members v shows in JSON, sorted.
func jsonFields(t *testing.T, v any) []string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(mustJSON(t, v), &m); err != nil {
		t.Fatal(err)
	}
	var names []string
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// TestDateOfBirthOnTheConfiguredCalendar: at 12:00 UTC on 2026-06-01 it is
// already 2026-06-02 in Kiritimati (UTC+14), where someone born on
// 2008-06-02 turns 18; in UTC they are still 17 (TestCreateMeasureValidation).
func TestDateOfBirthOnTheConfiguredCalendar(t *testing.T) {
	kiritimati, err := time.LoadLocation("Pacific/Kiritimati")
	if err != nil {
		t.Fatal(err)
	}
	e := newTestEnv(t, Production, withLocation(kiritimati))
	_, key := e.client("acme")
	r := e.do("POST", "/measures", key, `{"userData":{"dateOfBirth":"2008-06-02"}}`)
	wantStatus(t, r, http.StatusCreated)
	if age := r.json(t)["userData"].(map[string]any)["age"]; age != 18.0 {
		t.Fatalf("age %v", age)
	}
}

// TestRunFailsWithTheStoreOutOfReach: a run that fails while the media
// store cannot remove its capture still puts its measure back (a created
// one to created, a new one gone): a live instance's run is never swept,
// so a measure left started would stay so.
func TestRunFailsWithTheStoreOutOfReach(t *testing.T) {
	media := &failingMedia{}
	e := newTestEnv(t, Production, withMedia(func(m storage.Media) storage.Media { media.Media = m; return media }))
	_, key := e.client("acme")
	id := e.do("POST", "/measures", key, `{}`).json(t)["id"].(string)
	cut := `{"signal": {"timestamps": [0, 0.01, 0.02], "values": [1, 2]}}`
	media.fails = 1 << 30
	wantStatus(t, e.send("/measures/"+id+"/cppg/signal", key, "application/json", strings.NewReader(cut)), http.StatusBadRequest)
	wantStatus(t, e.send("/measures/cppg/signal", key, "application/json", strings.NewReader(cut)), http.StatusBadRequest)
	if status := e.do("GET", "/measures/"+id, key, nil).json(t)["status"]; status != "created" {
		t.Fatalf("the created measure after a failed run: %v", status)
	}
	if total := e.do("GET", "/measures", key, nil).json(t)["total"]; total != 1.0 {
		t.Fatalf("%v measures, want the created one alone", total)
	}
	// The store back, the measure runs.
	media.fails = 0
	body, _ := json.Marshal(pulseSignal("cppg", 1.2, 12))
	wantStatus(t, e.send("/measures/"+id+"/cppg/signal", key, "application/json", strings.NewReader(string(body))), http.StatusOK)
}

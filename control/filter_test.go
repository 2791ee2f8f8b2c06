package control

import (
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/pulsewire/pulsewire/storage"
)

func TestParseFilters(t *testing.T) {
	contains := &storage.TagFilter{Operator: storage.TagsContain, Values: []string{"a", "b"}}
	for _, tc := range []struct {
		name  string
		query string
		want  *storage.TagFilter
		err   string // part of the 400 message; "" when accepted
	}{
		{"none", "take=5", nil, ""},
		{"json", `filters={"operator":"contains","name":"tags","values":["a","b"]}`, contains, ""},
		{"json percent-encoded", "filters=" + url.QueryEscape(`{"operator":"contains","name":"tags","values":["a","b"]}`), contains, ""},
		{"json and", `filters={"operator":"and","operands":[{"operator":"contains","name":"tags","values":["a","b"]}]}`, contains, ""},
		{"spread", "filters[operator]=contains&filters[name]=tags&filters[values][0]=a&filters[values][1]=b", contains, ""},
		{"spread encoded brackets", "filters%5Boperator%5D=contains&filters%5Bname%5D=tags&filters%5Bvalues%5D%5B0%5D=a&filters%5Bvalues%5D%5B1%5D=b", contains, ""},
		{"spread indexes give the order", "filters[operator]=contains&filters[name]=tags&filters[values][7]=b&filters[values][3]=a", contains, ""},
		{"spread appended", "filters[operator]=contains&filters[name]=tags&filters[values][]=a&filters[values][]=b", contains, ""},
		{"spread repeated key", "filters[operator]=contains&filters[name]=tags&filters[values]=a&filters[values]=b", contains, ""},
		{"spread one value", "filters[operator]=overlaps&filters[name]=tags&filters[values]=a", &storage.TagFilter{Operator: storage.TagsOverlap, Values: []string{"a"}}, ""},
		{"spread and", "filters[operator]=and&filters[operands][0][operator]=contains&filters[operands][0][name]=tags&filters[operands][0][values][0]=a&filters[operands][0][values][1]=b", contains, ""},
		{"contained-by", `filters={"operator":"contained-by","name":"tags","values":["x"]}`, &storage.TagFilter{Operator: storage.TagsContainedBy, Values: []string{"x"}}, ""},
		{"1000 values", `filters={"operator":"overlaps","name":"tags","values":["` + strings.Repeat(`v","`, 999) + `v"]}`, nil, "-"},
		{"1001 values", `filters={"operator":"overlaps","name":"tags","values":["` + strings.Repeat(`v","`, 1000) + `v"]}`, nil, "no more than 1000"},
		{"unknown field", `filters={"operator":"contains","name":"status","values":["a"]}`, nil, `unknown field "status"`},
		{"no field", `filters={"operator":"contains","values":["a"]}`, nil, "name must name a field"},
		{"unknown operator", `filters={"operator":"equals","name":"tags","values":["a"]}`, nil, "operator must be one of"},
		{"no operator", `filters={"name":"tags","values":["a"]}`, nil, "operator must be one of"},
		{"empty and", `filters={"operator":"and","operands":[]}`, nil, "at least one condition"},
		{"and without operands", `filters={"operator":"and"}`, nil, "at least one condition"},
		{"two conditions on tags", `filters={"operator":"and","operands":[{"operator":"contains","name":"tags","values":["a"]},{"operator":"overlaps","name":"tags","values":["b"]}]}`, nil, "more than one condition"},
		{"nested and", `filters={"operator":"and","operands":[{"operator":"and","operands":[]}]}`, nil, "may only hold conditions"},
		{"malformed json", `filters={"operator":`, nil, "must be a JSON object"},
		{"json not an object", `filters=["a"]`, nil, "must be an object"},
		{"no values", `filters={"operator":"contains","name":"tags","values":[]}`, nil, "at least one tag"},
		{"values not strings", `filters={"operator":"contains","name":"tags","values":[1]}`, nil, "must be a string"},
		{"empty value", `filters={"operator":"contains","name":"tags","values":[""]}`, nil, "must not be empty"},
		{"unknown member", `filters={"operator":"contains","name":"tags","values":["a"],"not":true}`, nil, "property not should not exist"},
		{"both transports", `filters={}&filters[operator]=contains`, nil, "not both"},
		{"json twice", `filters={}&filters={}`, nil, "given 2 times"},
		{"spread malformed key", "filters[operator=contains", nil, "malformed key"},
		{"spread value and object", "filters[operator]=contains&filters[operator][x]=y", nil, "mixes"},
		{"spread index twice", "filters[operator]=contains&filters[name]=tags&filters[values][0]=a&filters[values][0]=b", nil, "given twice"},
		{"spread too deep", "filters[a][b][c][d][e]=x", nil, "malformed key"},
		{"spread index at the top", "filters[0]=x", nil, "malformed key"},
		// An index has at most six digits: [1000000] is a member's name, and
		// values an object rather than a list.
		{"spread index 999999", "filters[operator]=contains&filters[name]=tags&filters[values][999999]=a", &storage.TagFilter{Operator: storage.TagsContain, Values: []string{"a"}}, ""},
		{"spread index 1000000", "filters[operator]=contains&filters[name]=tags&filters[values][1000000]=a", nil, "filters.values must hold at least one tag"},
		// The spread form stops at its 1001st value as it reads the query,
		// before any filter is built, however the values are written.
		{"spread 1000 values appended", "filters[operator]=overlaps&filters[name]=tags" + strings.Repeat("&filters[values][]=v", 1000), nil, "-"},
		{"spread 1001 values appended", "filters[operator]=overlaps&filters[name]=tags" + strings.Repeat("&filters[values][]=v", 1001), nil, "too many values"},
		{"spread 1000 values repeated", "filters[operator]=overlaps&filters[name]=tags" + strings.Repeat("&filters[values]=v", 1000), nil, "-"},
		{"spread 1001 values repeated", "filters[operator]=overlaps&filters[name]=tags" + strings.Repeat("&filters[values]=v", 1001), nil, "too many values"},
		// Both forms refuse alike what one of them cannot say.
		{"json member twice", `filters={"operator":"contains","operator":"overlaps","name":"tags","values":["a"]}`, nil, "filters.operator is given twice"},
		{"spread member twice", "filters[operator]=contains&filters[operator]=overlaps&filters[name]=tags&filters[values][0]=a", nil, "filters.operator"},
		{"json not UTF-8", "filters=" + url.QueryEscape(`{"operator":"contains","name":"tags","values":["t`+"\xff"+`ag"]}`), nil, "filters must be UTF-8 text"},
		{"json half a surrogate pair", `filters={"operator":"contains","name":"tags","values":["\ud800"]}`, nil, "filters must be UTF-8 text"},
		{"spread not UTF-8", "filters[operator]=contains&filters[name]=tags&filters[values][0]=t%FFag", nil, "filters must be UTF-8 text"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, err := url.ParseQuery(tc.query)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseFilters(q)
			switch {
			case tc.err == "-":
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
			case tc.err != "":
				if ErrorCode(err) != Invalid || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %+v, %v; want an Invalid error with %q", got, err, tc.err)
				}
			case err != nil || !reflect.DeepEqual(got, tc.want):
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

// FuzzParseFilters: no query string panics the parser; an accepted filter
// is one condition on tags with 1 to 1000 valid values.
func FuzzParseFilters(f *testing.F) {
	for _, s := range []string{
		`filters={"operator":"contains","name":"tags","values":["a","b"]}`,
		`filters={"operator":"and","operands":[{"operator":"overlaps","name":"tags","values":["a"]}]}`,
		"filters[operator]=contained-by&filters[name]=tags&filters[values][0]=a&filters[values][]=b",
		"filters[operator]=and&filters[operands][0][operator]=contains&filters[operands][0][name]=tags&filters[operands][0][values]=a",
		"filters[operands][1][values][2]=x&filters[operands][0]=y", `filters={"operator":"and","operands":[]}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, query string) {
		q, err := url.ParseQuery(query)
		if err != nil {
			return
		}
		got, err := ParseFilters(q)
		if err != nil {
			if ErrorCode(err) != Invalid {
				t.Fatalf("error %v is not Invalid", err)
			}
			return
		}
		if got == nil {
			return
		}
		switch got.Operator {
		case storage.TagsContain, storage.TagsOverlap, storage.TagsContainedBy:
		default:
			t.Fatalf("operator %q", got.Operator)
		}
		if len(got.Values) == 0 || len(got.Values) > maxFilterValues {
			t.Fatalf("%d values", len(got.Values))
		}
		for _, v := range got.Values {
			if checkTag(v, true) != "" {
				t.Fatalf("value %q", v)
			}
		}
	})
}

// FuzzParseMeasureInput: no body panics the parser; accepted userData is
// within every bound of userData.
func FuzzParseMeasureInput(f *testing.F) {
	for _, s := range []string{
		`{"userData":{"externalId":"p","sex":"M","age":18,"weight":20,"height":250,"smokingStatus":"smoker"}}`,
		`{"userData":{"dateOfBirth":"1990-02-28"},"tags":["a"],"desiredVariables":["hr"]}`,
		`{"userData":{"dateOfBirth":"1990-02-28T10:00:00Z"},"computeOptions":{"bpClass":{"scale":3}}}`,
		`{"userData":{"age":40.0}}`, `{"userData":null}`, ``, `{"userData":{"age":1e2}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		n, err := ParseMeasureInput(body, noon)
		if err != nil {
			if ErrorCode(err) != Invalid {
				t.Fatalf("error %v is not Invalid", err)
			}
			return
		}
		if u := n.UserData; u != nil {
			within := func(p *int64, lo, hi int64) bool { return p == nil || *p >= lo && *p <= hi }
			if !within(u.Age, 18, 110) || !within(u.Weight, 20, 200) || !within(u.Height, 100, 250) ||
				u.ExternalID != nil && (*u.ExternalID == "" || chars(*u.ExternalID) > 300) ||
				u.Sex != nil && *u.Sex != "M" && *u.Sex != "F" ||
				u.SmokingStatus != nil && *u.SmokingStatus != "smoker" && *u.SmokingStatus != "non-smoker" {
				t.Fatalf("accepted userData %+v", *u)
			}
		}
		if n.Tags == nil || len(n.Tags) > maxTags {
			t.Fatalf("tags %v", n.Tags)
		}
	})
}

// TestParseFiltersIsDeterministic: the same query gives the same answer
// every time, whatever order Go's maps visit its keys in.
func TestParseFiltersIsDeterministic(t *testing.T) {
	q, _ := url.ParseQuery("filters[operator]=overlaps&filters[name]=tags&filters[values]=b&filters[values][0]=a")
	first, firstErr := ParseFilters(q)
	for range 50 {
		got, err := ParseFilters(q)
		if !reflect.DeepEqual(got, first) || (err == nil) != (firstErr == nil) {
			t.Fatalf("%+v, %v then %+v, %v", first, firstErr, got, err)
		}
	}
}

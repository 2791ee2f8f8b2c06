package control

import (
	"bytes"
	"encoding/json"
	"mime/multipart"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

func TestFormInputs(t *testing.T) {
	for _, tc := range []struct {
		name  string
		parts [][2]string
		want  string // the JSON object, "" for none
		err   string
	}{
		{"nothing", nil, "", ""},
		{"userData fields", [][2]string{{"userData[weight]", "70"}, {"userData[sex]", "F"}, {"userData[externalId]", "42"}},
			`{"userData":{"externalId":"42","sex":"F","weight":70}}`, ""},
		{"a number field that is no number stays text", [][2]string{{"userData[age]", "forty"}}, `{"userData":{"age":"forty"}}`, ""},
		{"lists comma-separated and repeated", [][2]string{{"tags", "a, b,,"}, {"tags", "c"}, {"desiredVariables", "hr"}},
			`{"desiredVariables":["hr"],"tags":["a","b","c"]}`, ""},
		{"an empty list", [][2]string{{"unwantedVariables", ""}}, `{"unwantedVariables":[]}`, ""},
		{"computeOptions", [][2]string{{"computeOptions", `{"bpClass":{"scale":2}}`}}, `{"computeOptions":{"bpClass":{"scale":2}}}`, ""},
		{"computeOptions not JSON", [][2]string{{"computeOptions", `scale=2`}}, `{"computeOptions":"scale=2"}`, ""},
		{"userData as JSON", [][2]string{{"userData", `{"age":40}`}}, "", "a single userData part is refused"},
		{"a field twice", [][2]string{{"userData[age]", "40"}, {"userData[age]", "41"}}, "", "userData[age] is given twice"},
		{"computeOptions twice", [][2]string{{"computeOptions", "{}"}, {"computeOptions", "{}"}}, "", "computeOptions is given twice"},
		{"no name", [][2]string{{"", "x"}}, "", "every part needs a name"},
		{"unknown", [][2]string{{"userdata[age]", "40"}}, "", `part "userdata[age]" should not exist`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var f formInputs
			var err error
			for _, p := range tc.parts {
				if err = f.add(p[0], p[1]); err != nil {
					break
				}
			}
			switch {
			case tc.err != "":
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
			case err != nil:
				t.Fatal(err)
			case string(f.json()) != tc.want:
				t.Fatalf("inputs %s, want %s", f.json(), tc.want)
			}
		})
	}
}

// FuzzFormInputs feeds input parts to formInputs and the result to the
// checks of POST /measures: no panic, and what is gathered is one JSON
// object.
func FuzzFormInputs(f *testing.F) {
	f.Add("userData[weight]", "70", "tags", "a,b")
	f.Add("userData", `{"age":40}`, "computeOptions", `{"bpClass":{"scale":2}}`)
	f.Add("desiredVariables", "hr, br", "userData[dateOfBirth]", "1990-01-01")
	f.Add("userData[age]", "1e400", "computeOptions", "[")
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, name1, value1, name2, value2 string) {
		var in formInputs
		if in.add(name1, value1) != nil || in.add(name2, value2) != nil {
			return
		}
		raw := in.json()
		if raw != nil && !json.Valid(raw) {
			t.Fatalf("not JSON: %s", raw)
		}
		if _, err := ParseMeasureInput(raw, now); err != nil && ErrorCode(err) != Invalid {
			t.Fatalf("error %v is not a validation error", err)
		}
	})
}

// TestFormCutShort: a multipart body is taken only with its closing
// delimiter, wherever it was cut and however it was read (one byte at a
// time: the delimiter across reads); what follows the delimiter (an
// epilogue) is no matter.
func TestFormCutShort(t *testing.T) {
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	w.WriteField("tags", "a")
	w.WriteField("userData[weight]", "70")
	w.Close()
	whole := b.String()
	closing := strings.Index(whole, "\r\n--"+w.Boundary()+"--") + len("\r\n--"+w.Boundary()+"--")
	for _, body := range []string{whole + "an epilogue", "--" + w.Boundary() + "--"} {
		r := httptest.NewRequest("POST", "/", iotest.OneByteReader(strings.NewReader(body)))
		r.Header.Set("Content-Type", w.FormDataContentType())
		if _, err := readForm(r, nil); err != nil {
			t.Fatalf("%q: %v", body, err)
		}
	}
	for cut := range len(whole) {
		r := httptest.NewRequest("POST", "/", iotest.OneByteReader(strings.NewReader(whole[:cut])))
		r.Header.Set("Content-Type", w.FormDataContentType())
		_, err := readForm(r, nil)
		if complete := cut >= closing; complete != (err == nil) {
			t.Fatalf("cut at %d of %d (closing delimiter ends at %d): %v", cut, len(whole), closing, err)
		}
	}
}

package control

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestCheckText(t *testing.T) {
	for _, tc := range []struct {
		name, text, msg string // msg "" when taken
	}{
		{"plain", `{"a":1,"b":[1,2],"c":{"a":1}}`, ""},
		{"the same name in sibling objects", `{"p":[{"name":"a"},{"name":"b"}]}`, ""},
		{"the same name at two depths", `{"a":{"a":{"a":1}}}`, ""},
		{"twice at the top", `{"a":1,"b":2,"a":3}`, "a is given twice"},
		{"twice after a nested object", `{"a":{"x":1},"a":2}`, "a is given twice"},
		{"twice in an array's element", `{"p":[{"name":"a"},{"name":"b","name":"c"}]}`, "p.1.name is given twice"},
		{"twice in nested arrays", `{"a":[[{"x":1}],[1,{"x":1,"x":2}]]}`, "a.1.1.x is given twice"},
		{"twice after empty values", `{"a":{},"b":[],"c":{"d":[],"d":{}}}`, "c.d is given twice"},
		{"a name that is an escape of another", `{"a":1,"\u0061":2}`, "a is given twice"},
		{"a number beyond float64", `{"a":1e999,"a":2}`, "a is given twice"},
		{"not UTF-8", "{\"a\":\"\xc3\"}", "the body must be UTF-8 text"},
		{"not UTF-8 in a name", "{\"\xff\":1}", "the body must be UTF-8 text"},
		{"a high half at the end", `{"a":"\ud800"}`, "the body must be UTF-8 text"},
		{"a high half before another escape", `{"a":"\ud800\n"}`, "the body must be UTF-8 text"},
		{"two high halves", `{"a":"\ud800\ud800"}`, "the body must be UTF-8 text"},
		{"a low half first", `{"a":"\udfff\ud800"}`, "the body must be UTF-8 text"},
		{"a pair", `{"a":"\uD83D\uDE00"}`, ""},
		{"a pair, then a low half", `{"a":"\ud83d\ude00\ude00"}`, "the body must be UTF-8 text"},
		{"escaped backslashes", `{"a":"\\ud800\\\\"}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkText([]byte(tc.text), "")
			switch {
			case tc.msg == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.msg != "" && (err == nil || ErrorCode(err) != Invalid || err.(*Error).Messages[0] != tc.msg):
				t.Fatalf("got %v, want %q", err, tc.msg)
			}
		})
	}
}

// FuzzCheckText checks memberTwice against a count: a text with no member
// given twice decodes into as many members as it writes, and one with a
// member twice into fewer (encoding/json keeps the last).
func FuzzCheckText(f *testing.F) {
	for _, s := range []string{`{"a":1,"a":2}`, `{"p":[{"n":1},{"n":2,"n":3}]}`, `[{"a":{"b":[]}},{"a":1}]`, `{"\u0061":1,"a":2}`, `{"a":"\ud800"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		raw := []byte(s)
		var v any
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if dec.Decode(&v) != nil || dec.More() {
			return // not one JSON text: the decoder refuses it before checkText counts
		}
		path, twice := memberTwice(raw)
		if written, kept := membersWritten(t, raw), membersKept(v); twice != (written != kept) {
			t.Fatalf("memberTwice %q %v, but %d members written and %d kept", path, twice, written, kept)
		}
	})
}

// membersWritten counts the members of every object in raw, one level at a
// time.
func membersWritten(t *testing.T, raw json.RawMessage) int {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	if tok != json.Delim('{') && tok != json.Delim('[') {
		return 0
	}
	for dec.More() {
		if tok == json.Delim('{') {
			if _, err := dec.Token(); err != nil {
				t.Fatal(err)
			}
			n++
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		n += membersWritten(t, v)
	}
	return n
}

// membersKept counts the members of every object of a decoded value.
func membersKept(v any) int {
	n := 0
	switch v := v.(type) {
	case map[string]any:
		n = len(v)
		for _, e := range v {
			n += membersKept(e)
		}
	case []any:
		for _, e := range v {
			n += membersKept(e)
		}
	}
	return n
}

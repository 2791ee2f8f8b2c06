package control

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// object is a JSON object split into its members, so that each can be
// checked on its own and a member nobody asked for can be refused.
type object map[string]json.RawMessage

// decodeBody reads raw, a request's whole body, as one JSON object
// (decodeObject) whose text means what it says (checkText: no member
// given twice, at any depth, and UTF-8 throughout).
func decodeBody(raw []byte) (object, error) {
	o, ok := decodeObject(raw)
	if !ok {
		return nil, invalidf("the body must be a JSON object")
	}
	if err := checkText(raw, ""); err != nil {
		return nil, err
	}
	return o, nil
}

// decodeObject reads raw as one JSON object, with nothing after it but
// blanks: a body, or a member of a body decodeBody has checked.
func decodeObject(raw []byte) (object, bool) {
	var o object
	if err := DecodeOne(json.NewDecoder(bytes.NewReader(raw)), &o); err != nil || o == nil {
		return nil, false
	}
	return o, true
}

// DecodeOne decodes one JSON value from dec into v, and refuses anything
// after it but blanks, so that a second value or a stray byte after the
// first is no less an error than a broken first value.
func DecodeOne(dec *json.Decoder, v any) error {
	if err := dec.Decode(v); err != nil {
		return err
	}
	if !ended(dec) {
		return errors.New("more after the JSON value")
	}
	return nil
}

// ended reports whether dec holds nothing more but blanks: the end of the
// input, not !dec.More(), which is false before a stray closing } or ] too.
func ended(dec *json.Decoder) bool {
	_, err := dec.Token()
	return errors.Is(err, io.EOF)
}

// nested reads raw, the member at path, as an object whose members should
// all be among known; any other member is reported in p. ok is false when
// raw is absent or null (nothing to read) or not an object (p says so).
func nested(raw json.RawMessage, path string, p *problems, known ...string) (object, bool) {
	if raw == nil || IsNull(raw) {
		return nil, false
	}
	o, ok := decodeObject(raw)
	if !ok {
		p.addf("%s must be an object", path)
		return nil, false
	}
	o.unknown(p, path+".", known...)
	return o, true
}

// unknown reports, under path, every member of o that is not in known.
func (o object) unknown(p *problems, path string, known ...string) {
	var extra []string
	for name := range o {
		if !slices.Contains(known, name) {
			extra = append(extra, name)
		}
	}
	slices.Sort(extra) // one order for the messages, whatever the map's
	for _, name := range extra {
		p.addf("%sproperty %s should not exist", path, name)
	}
}

// given reports whether member name is present and not null.
func (o object) given(name string) bool {
	raw, ok := o[name]
	return ok && !IsNull(raw)
}

// IsNull reports whether raw, a member's JSON value, is null, which every
// body and message reads as the member's absence.
func IsNull(raw json.RawMessage) bool {
	return string(bytes.TrimSpace(raw)) == "null"
}

// asString reads a JSON string.
func asString(raw json.RawMessage) (string, bool) {
	var s string
	if !bytes.HasPrefix(bytes.TrimSpace(raw), []byte(`"`)) {
		return "", false
	}
	return s, json.Unmarshal(raw, &s) == nil
}

// asInt reads a JSON number whose value is an integer, as JSON Schema
// counts one (and so our OpenAPI document): 30, and also 30.0 and 3e1,
// which some JSON writers make of a whole number; not 30.5, a string, or
// a number too large for a float64 to hold exactly (2^53 and over).
func asInt(raw json.RawMessage) (int64, bool) {
	t := bytes.TrimSpace(raw)
	if n, err := strconv.ParseInt(string(t), 10, 64); err == nil {
		return n, true
	}
	x, ok := asNumber(t)
	if !ok || x != math.Trunc(x) || math.Abs(x) >= 1<<53 {
		return 0, false
	}
	return int64(x), true
}

// asNumber reads a JSON number (not a string holding one).
func asNumber(raw json.RawMessage) (float64, bool) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || t[0] != '-' && (t[0] < '0' || t[0] > '9') {
		return 0, false
	}
	var x float64
	return x, json.Unmarshal(t, &x) == nil
}

// asArray reads a JSON array into its elements.
func asArray(raw json.RawMessage) ([]json.RawMessage, bool) {
	var a []json.RawMessage
	if !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("[")) {
		return nil, false
	}
	return a, json.Unmarshal(raw, &a) == nil
}

// chars counts characters (Unicode code points), the unit of every length
// limit of the API.
func chars(s string) int { return utf8.RuneCountInString(s) }

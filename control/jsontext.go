package control

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// checkText refuses the JSON text raw when encoding/json would take it but
// change what it says: a member given twice in one object, of which it
// keeps the last, so that which one counts would be a guess; and text that
// is not UTF-8 (bytes that are not, or an escaped half of a surrogate pair
// without the other), which it turns into U+FFFD, so that two different
// names of a person would read as one. name prefixes the members' paths in
// the messages and names the text; "" is a request's body. raw must be
// valid JSON; what is not is left for the decoder to refuse.
func checkText(raw []byte, name string) error {
	if !utf8.Valid(raw) || loneSurrogate(raw) {
		what := name
		if what == "" {
			what = "the body"
		}
		return invalidf("%s must be UTF-8 text", what)
	}
	if path, twice := memberTwice(raw); twice {
		return invalidf("%s is given twice", joinPath(name, path))
	}
	return nil
}

// memberTwice finds the first member given twice in an object of raw, at
// any depth, and says where: its path, members by name and array elements
// by index (userData.externalId, permissions.0.name).
func memberTwice(raw []byte) (path string, twice bool) {
	// A frame is an object or an array being read. An object's next token
	// is a member's name when wantName is set, its value otherwise.
	type frame struct {
		path     string
		names    map[string]bool // the names read so far; nil for an array
		name     string          // the member whose value comes next
		index    int             // the next element of an array
		wantName bool
	}
	var stack []*frame
	valuePath := func() string {
		if len(stack) == 0 {
			return ""
		}
		top := stack[len(stack)-1]
		if top.names != nil {
			return joinPath(top.path, top.name)
		}
		return joinPath(top.path, strconv.Itoa(top.index))
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // a number too large for a float64 is no error here
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		if len(stack) > 0 {
			if top := stack[len(stack)-1]; top.names != nil && top.wantName && tok != json.Delim('}') {
				name, _ := tok.(string)
				if top.names[name] {
					return joinPath(top.path, name), true
				}
				top.names[name], top.name, top.wantName = true, name, false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{path: valuePath(), names: map[string]bool{}, wantName: true})
			continue
		case json.Delim('['):
			stack = append(stack, &frame{path: valuePath()})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		// A value has ended.
		if len(stack) == 0 {
			return "", false
		}
		if top := stack[len(stack)-1]; top.names != nil {
			top.wantName = true
		} else {
			top.index++
		}
	}
}

// loneSurrogate reports whether the JSON text raw escapes half of a
// surrogate pair without the other (a \ud800 alone, or a \udc00 first),
// which stands for no character.
func loneSurrogate(raw []byte) bool {
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		i++ // the escaped byte: a backslash escaped is no escape
		r, ok := escapedUnit(raw, i)
		if !ok {
			continue
		}
		i += 4
		switch {
		case 0xdc00 <= r && r <= 0xdfff:
			return true
		case 0xd800 <= r && r <= 0xdbff:
			low, ok := rune(0), i+2 < len(raw) && raw[i+1] == '\\'
			if ok {
				low, ok = escapedUnit(raw, i+2)
			}
			if !ok || low < 0xdc00 || low > 0xdfff {
				return true
			}
			i += 6
		}
	}
	return false
}

// escapedUnit reads the UTF-16 unit of the escape uXXXX at raw[i:].
func escapedUnit(raw []byte, i int) (rune, bool) {
	if i+5 > len(raw) || raw[i] != 'u' {
		return 0, false
	}
	n, err := strconv.ParseUint(string(raw[i+1:i+5]), 16, 16)
	return rune(n), err == nil
}

// joinPath is a member's path: name under path.
func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

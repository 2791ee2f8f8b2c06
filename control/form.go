package control

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxFormFields bounds the input parts of a multipart request together, as
// maxJSONBody bounds a JSON body; each part's name and headers count as
// partOverhead bytes, so that many tiny parts cannot cost more.
const (
	maxFormFields = maxJSONBody
	partOverhead  = 64
)

// partFunc receives one file part of a multipart request as it arrives.
type partFunc func(p *multipart.Part) error

// readForm reads a multipart/form-data request part by part, never holding
// the body in memory: the parts named in files go to their function as they
// arrive, and the input parts of the multipart routes are gathered (formInputs) into
// the JSON object that ParseMeasureInput checks, the same checks as
// POST /measures. inputs is nil when no input part was sent. A body over the
// limit of r's http.MaxBytesReader is TooLarge.
func readForm(r *http.Request, files map[string]partFunc) (inputs json.RawMessage, err error) {
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return nil, invalidf("the body must be multipart/form-data")
	}
	body := newClosingWatch(r.Body, params["boundary"])
	mr := multipart.NewReader(body, params["boundary"])
	var in formInputs
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) && !body.closed {
			return nil, invalidf("the body is cut short: the multipart body has no closing boundary")
		}
		if errors.Is(err, io.EOF) {
			return in.json(), nil
		}
		if err != nil {
			return nil, bodyError(err, "the multipart body is malformed")
		}
		name := p.FormName()
		if fn, ok := files[name]; ok {
			err = fn(p)
		} else if err = checkName(name); err == nil {
			var value []byte
			value, err = readField(p, maxFormFields-in.size-partOverhead)
			in.size += partOverhead + len(value)
			if err == nil {
				err = in.add(name, string(value))
			}
		}
		p.Close()
		if err != nil {
			return nil, err
		}
	}
}

// readField reads a whole input part of at most limit bytes.
func readField(p *multipart.Part, limit int) ([]byte, error) {
	if limit < 0 {
		return nil, &Error{Code: TooLarge}
	}
	b, err := io.ReadAll(io.LimitReader(p, int64(limit)+1))
	if err != nil {
		return nil, bodyError(err, "the multipart body is malformed")
	}
	if len(b) > limit {
		return nil, &Error{Code: TooLarge}
	}
	return b, nil
}

// bodyError is the answer to a failed read of a request body: TooLarge past
// the body's limit, otherwise Invalid with msg.
func bodyError(err error, msg string) error {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return &Error{Code: TooLarge}
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		msg = "the body is cut short: it ends before its length"
	}
	return &Error{Code: Invalid, Messages: []string{msg}, Err: err}
}

// formInputs gathers the input parts of a multipart run request: one part
// per userData field (userData[weight]), the variable lists and tags
// comma-separated in one part or one part per value, and computeOptions as
// JSON.
type formInputs struct {
	userData       map[string]json.RawMessage
	lists          map[string][]string // desiredVariables, unwantedVariables, tags
	computeOptions json.RawMessage
	size           int // bytes read so far, for maxFormFields
}

// numericUserData are the userData fields the API types as integers: a
// part holding a JSON number is passed on as that number, anything else as
// a string, which the checks then refuse with the same message as in JSON.
var numericUserData = []string{"age", "weight", "height"}

// checkName refuses a part that is no input, before its value is read: a
// misnamed file part is told so, not read as a text or refused for its
// size. A single userData part (the whole object as JSON) is refused: the
// API asks for one part per field, and a request that breaks the rule
// measures nothing.
func checkName(name string) error {
	switch name {
	case "userData":
		return invalidf("userData must be sent as one part per field, such as userData[weight]: a single userData part is refused")
	case "desiredVariables", "unwantedVariables", "tags", "computeOptions":
		return nil
	case "":
		return invalidf("every part needs a name")
	}
	field, isUserData := strings.CutPrefix(name, "userData[")
	if _, closed := strings.CutSuffix(field, "]"); !isUserData || !closed {
		return invalidf("part %s should not exist", strconv.Quote(name))
	}
	return nil
}

// add takes one input part.
func (f *formInputs) add(name, value string) error {
	if err := checkName(name); err != nil {
		return err
	}
	if !utf8.ValidString(value) { // which the JSON the inputs become would turn into U+FFFD
		return invalidf("part %s must be UTF-8 text", strconv.Quote(name))
	}
	switch name {
	case "desiredVariables", "unwantedVariables", "tags":
		if f.lists == nil {
			f.lists = map[string][]string{}
		}
		items := f.lists[name]
		if items == nil {
			items = []string{}
		}
		for item := range strings.SplitSeq(value, ",") {
			if item = strings.TrimSpace(item); item != "" {
				items = append(items, item)
			}
		}
		f.lists[name] = items
		return nil
	case "computeOptions":
		if f.computeOptions != nil {
			return invalidf("computeOptions is given twice")
		}
		f.computeOptions = jsonOrString(value)
		return nil
	}
	field := strings.TrimSuffix(strings.TrimPrefix(name, "userData["), "]")
	if f.userData == nil {
		f.userData = map[string]json.RawMessage{}
	}
	if _, twice := f.userData[field]; twice {
		return invalidf("userData[%s] is given twice", field)
	}
	if slices.Contains(numericUserData, field) {
		f.userData[field] = jsonOrString(value)
	} else {
		f.userData[field], _ = json.Marshal(value)
	}
	return nil
}

// jsonOrString passes value on as JSON when it is JSON, and as a JSON
// string otherwise.
func jsonOrString(value string) json.RawMessage {
	if json.Valid([]byte(value)) {
		return json.RawMessage(value)
	}
	b, _ := json.Marshal(value)
	return b
}

// json is the gathered inputs as one JSON object; nil when no input part
// was sent.
func (f *formInputs) json() json.RawMessage {
	o := map[string]any{}
	if f.userData != nil {
		o["userData"] = f.userData
	}
	for name, items := range f.lists {
		o[name] = items
	}
	if f.computeOptions != nil {
		o["computeOptions"] = f.computeOptions
	}
	if len(o) == 0 {
		return nil
	}
	b, _ := json.Marshal(o)
	return b
}

// closingWatch passes a multipart body through and notes whether its
// closing delimiter came: mime/multipart takes a body that ends after any
// delimiter as complete, so a body cut at a part's boundary would lose the
// parts after it unnoticed.
type closingWatch struct {
	r      io.Reader
	delim  []byte // CRLF "--" boundary "--"
	tail   []byte // the last len(delim)-1 bytes read, a CRLF before the first
	closed bool
}

func newClosingWatch(r io.Reader, boundary string) *closingWatch {
	return &closingWatch{r: r, delim: []byte("\r\n--" + boundary + "--"), tail: []byte("\r\n")}
}

func (w *closingWatch) Read(p []byte) (int, error) {
	n, err := w.r.Read(p)
	if w.closed || n == 0 {
		return n, err
	}
	read, keep := p[:n], len(w.delim)-1
	// The delimiter lies within what was read, or across its start.
	joint := append(w.tail, read[:min(n, keep)]...)
	w.closed = bytes.Contains(read, w.delim) || bytes.Contains(joint, w.delim)
	if n >= keep {
		w.tail = append(w.tail[:0], read[n-keep:]...)
	} else {
		w.tail = append(w.tail[:0], joint[max(0, len(joint)-keep):]...)
	}
	return n, err
}

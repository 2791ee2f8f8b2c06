package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/pulsewire/pulsewire/dsp"
	"github.com/pulsewire/pulsewire/storage"
)

// maxSignalBytes bounds a signal body, as a video is bounded; dsp.MaxSamples
// bounds the samples in it.
const maxSignalBytes = maxVideoBytes

// signalFile is the media file of a signal body, kept as sent.
const signalFile = "signal.json"

// SignalBody is the body of the signal routes: a camera
// trace, the mean skin colour of each frame,
//
//	{"signal": {"timestamps": [ms, ...], "r": [...], "g": [...], "b": [...]}, ...inputs}
//
// or a contact trace
//
//	{"signal": {"timestamps": [ms, ...], "values": [...]}, ...inputs}
//
// where the inputs are the members of POST /measures.
type SignalBody struct {
	Trace *dsp.Trace // a camera trace; nil for a contact trace
	PPG   *dsp.PPG   // a contact trace; nil for a camera trace
	// Inputs are the members other than signal, as one JSON object; nil
	// when there are none.
	Inputs json.RawMessage
}

// signalMembers are the arrays a signal object may hold.
var signalMembers = []string{"timestamps", "r", "g", "b", "values"}

// Windows of the signal body's decoder (jsonWindow): a sample is a number
// of a few bytes, and the blanks around it few, so 64 KiB is generous;
// the inputs beside the signal may together take what a POST /measures
// body may (maxJSONBody).
const sampleWindow = 64 << 10

// DecodeSignal reads a signal body from r token by token: the numbers go
// straight into their arrays, the inputs are checked for their bounds as
// they stream, and the body is never held in memory: no single value may
// be larger than its window, so the decoder's buffer stays small. It stops
// at the first bound passed. Every structural problem is an Invalid error
// that names the member: a body that is not one JSON object, no signal, an
// unknown or repeated member, an element that is not a number (NaN and
// Infinity are not JSON), more than dsp.MaxSamples samples, a contact trace
// mixed with a camera one, or a missing channel; inputs over maxJSONBody
// together (from the comma before each to the end of its value), more than
// 1000 tags, or a value over its window. The inputs'
// own rules, and the arrays' lengths and order, are checked later
// (ParseMeasureInput, Validate).
func DecodeSignal(r io.Reader) (SignalBody, error) {
	var b SignalBody
	win := newWindowedDecoder(r, sampleWindow)
	dec := win.dec
	if err := expectDelim(win, '{', "the body"); err != nil {
		return b, windowError(err)
	}
	in := signalInputs{object: object{}, left: maxJSONBody}
	var arrays map[string][]float64
	for dec.More() {
		start := dec.InputOffset()
		key, err := memberName(win)
		if err != nil {
			return b, windowError(err)
		}
		if key == "signal" {
			if arrays != nil {
				return b, invalidf("signal is given twice")
			}
			win.window = sampleWindow
			if arrays, err = decodeSignalObject(win); err != nil {
				return b, windowError(err)
			}
			continue
		}
		if err := in.member(win, key, start); err != nil {
			return b, windowError(err)
		}
	}
	win.window = sampleWindow
	if _, err := dec.Token(); err != nil { // the closing brace
		return b, windowError(syntaxError(win, err))
	}
	if !ended(dec) {
		return b, invalidf("the body must hold one JSON object and nothing after it")
	}
	if arrays == nil {
		return b, invalidf("signal is required: {\"timestamps\":[...],\"values\":[...]} or {\"timestamps\":[...],\"r\":[...],\"g\":[...],\"b\":[...]}")
	}
	if len(in.object) > 0 {
		b.Inputs, _ = json.Marshal(in.object)
	}
	return b, b.assemble(arrays)
}

// signalInputs gathers the members of a signal body beside signal: the
// inputs of POST /measures, within that body's bound (left bytes more).
type signalInputs struct {
	object
	left int64
}

// listBounds are the inputs that are lists, each with the most elements a
// valid one can hold: the 1000 tags a measure may carry, and each variable
// once.
var listBounds = map[string]int{
	"tags":              maxTags,
	"desiredVariables":  len(dsp.AllVariables),
	"unwantedVariables": len(dsp.AllVariables),
}

// member reads the input member key, whose comma or name began at offset
// start: from there to the end of its value, it counts against what is left
// of the inputs' bound, and no read goes past what is left. A list streams
// element by element and stops at the first element past its bound;
// another member is read whole; an unknown member is refused before its
// value is read.
func (in *signalInputs) member(win *jsonWindow, key string, start int64) error {
	if _, ok := in.object[key]; ok {
		return invalidf("%s is given twice", key)
	}
	bound, list := listBounds[key]
	if !list && key != "userData" && key != "computeOptions" {
		return invalidf("property %s should not exist", key)
	}
	dec := win.dec
	end := start + in.left
	win.window = end - dec.InputOffset()
	var raw json.RawMessage
	var err error
	if list {
		raw, err = decodeList(win, key, bound, end)
	} else if err = dec.Decode(&raw); err != nil {
		err = syntaxError(win, err)
	}
	in.left -= dec.InputOffset() - start
	in.object[key] = raw
	if errors.As(err, new(errWindow)) || err == nil && in.left < 0 {
		return &Error{Code: Invalid, Messages: []string{fmt.Sprintf("the members beside signal must hold at most %d bytes together", maxJSONBody)}, Err: err}
	}
	return err
}

// decodeList reads the list at key, or null, element by element, reading
// nothing past offset end; more than bound elements is refused at the first
// one past. Anything but an array or null is passed on for
// ParseMeasureInput to refuse in its own words.
func decodeList(win *jsonWindow, key string, bound int, end int64) (json.RawMessage, error) {
	dec := win.dec
	if !dec.More() {
		return nil, syntaxError(win, io.ErrUnexpectedEOF)
	}
	var items []json.RawMessage
	tok, err := dec.Token()
	if err != nil {
		return nil, syntaxError(win, err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		if d == '{' {
			return nil, invalidf("%s must be an array", key)
		}
		raw, _ := json.Marshal(tok)
		return raw, nil
	}
	items = []json.RawMessage{}
	for dec.More() {
		if len(items) == bound {
			return nil, invalidf("%s must contain no more than %d elements", key, bound)
		}
		win.window = end - dec.InputOffset()
		var item json.RawMessage
		if err := dec.Decode(&item); err != nil {
			return nil, syntaxError(win, err)
		}
		items = append(items, item)
	}
	if _, err := dec.Token(); err != nil {
		return nil, syntaxError(win, err)
	}
	return json.Marshal(items)
}

// windowError names a value over its window; other errors pass unchanged.
func windowError(err error) error {
	var w errWindow
	if errors.As(err, &w) {
		return &Error{Code: Invalid, Messages: []string{fmt.Sprintf("the body is refused where it passes a bound: %v", w)}, Err: err}
	}
	return err
}

// assemble makes the trace the arrays describe.
func (b *SignalBody) assemble(a map[string][]float64) error {
	_, contact := a["values"]
	var rgb []string
	for _, c := range []string{"r", "g", "b"} {
		if _, ok := a[c]; ok {
			rgb = append(rgb, c)
		}
	}
	switch {
	case contact && len(rgb) > 0:
		return invalidf("signal: give values (a contact trace) or r, g and b (a camera trace), not both")
	case !contact && len(rgb) == 0:
		return invalidf("signal must hold values (a contact trace) or r, g and b (a camera trace)")
	case a["timestamps"] == nil:
		return invalidf("signal.timestamps is required")
	case contact:
		b.PPG = &dsp.PPG{TimestampsMs: a["timestamps"], Values: a["values"]}
	case len(rgb) < 3:
		for _, c := range []string{"r", "g", "b"} {
			if !slices.Contains(rgb, c) {
				return invalidf("signal.%s is required with %s", c, strings.Join(rgb, " and "))
			}
		}
	default:
		b.Trace = &dsp.Trace{TimestampsMs: a["timestamps"], R: a["r"], G: a["g"], B: a["b"]}
	}
	return nil
}

// Kind is the sensor the trace comes from: rppg for a camera trace, cppg
// for a contact one.
func (b SignalBody) Kind() storage.Kind {
	if b.PPG != nil {
		return storage.KindCPPG
	}
	return storage.KindRPPG
}

// Validate checks the trace before any analysis (dsp's Validate): channels
// as long as the timestamps, timestamps strictly increasing (no repeat, no
// step back). The problem is an Invalid error.
func (b SignalBody) Validate() error {
	var err error
	switch {
	case b.PPG != nil:
		err = b.PPG.Validate()
	case b.Trace != nil:
		err = b.Trace.Validate()
	}
	if err != nil {
		// The message says all the error does: wrapped as well, it would
		// be said twice wherever the error is printed whole.
		return invalidf("signal: %s", strings.TrimPrefix(err.Error(), dsp.ErrInvalidSignal.Error()+": "))
	}
	return nil
}

// Analyze measures the trace (dsp.AnalyzeTrace or dsp.AnalyzePPG).
func (b SignalBody) Analyze(in dsp.Inputs) dsp.Result {
	if b.PPG != nil {
		return dsp.AnalyzePPG(*b.PPG, in)
	}
	return dsp.AnalyzeTrace(*b.Trace, in)
}

// decodeSignalObject reads the signal member's object into its arrays.
func decodeSignalObject(win *jsonWindow) (map[string][]float64, error) {
	dec := win.dec
	if err := expectDelim(win, '{', "signal"); err != nil {
		return nil, err
	}
	arrays := map[string][]float64{}
	for dec.More() {
		key, err := memberName(win)
		if err != nil {
			return nil, err
		}
		switch {
		case !slices.Contains(signalMembers, key):
			return nil, invalidf("signal.property %s should not exist", key)
		case arrays[key] != nil:
			return nil, invalidf("signal.%s is given twice", key)
		}
		if arrays[key], err = decodeNumbers(win, "signal."+key); err != nil {
			return nil, err
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, syntaxError(win, err)
	}
	return arrays, nil
}

// decodeNumbers reads an array of at most dsp.MaxSamples numbers; never
// nil, so that an empty array is told apart from a missing one.
func decodeNumbers(win *jsonWindow, path string) ([]float64, error) {
	dec := win.dec
	if err := expectDelim(win, '[', path); err != nil {
		return nil, err
	}
	xs := []float64{}
	for dec.More() {
		if len(xs) == dsp.MaxSamples {
			return nil, invalidf("%s.%d: at most %d samples", path, len(xs), dsp.MaxSamples)
		}
		tok, err := dec.Token()
		if win.cutShort(err) || errors.As(err, new(errWindow)) {
			return nil, syntaxError(win, err) // cut short, or over its window
		}
		x, ok := tok.(float64)
		if err != nil || !ok {
			return nil, invalidf("%s.%d must be a finite number", path, len(xs))
		}
		xs = append(xs, x)
	}
	if _, err := dec.Token(); err != nil {
		return nil, syntaxError(win, err)
	}
	return xs, nil
}

// expectDelim reads the opening delimiter of what is at path.
func expectDelim(win *jsonWindow, want json.Delim, path string) error {
	tok, err := win.dec.Token()
	if err != nil {
		return syntaxError(win, err)
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		kind := map[json.Delim]string{'{': "an object", '[': "an array"}[want]
		return invalidf("%s must be %s", path, kind)
	}
	return nil
}

// memberName reads the name of an object member.
func memberName(win *jsonWindow) (string, error) {
	tok, err := win.dec.Token()
	if err != nil {
		return "", syntaxError(win, err)
	}
	key, _ := tok.(string) // a decoder only yields strings here
	return key, nil
}

// syntaxError answers a body that is not JSON, or that ends too early.
func syntaxError(win *jsonWindow, err error) error {
	if win.cutShort(err) {
		return invalidf("the body is not valid JSON: it ends too early")
	}
	return &Error{Code: Invalid, Messages: []string{fmt.Sprintf("the body is not valid JSON: %v", err)}, Err: err}
}

// signalSource: POST /measures/rppg/signal, /measures/cppg/signal and
// their runs of an existing measure. The body is stored as sent; it is
// parsed on a worker, so that a large one costs memory only there.
type signalSource struct {
	k    storage.Kind
	body SignalBody
}

func (s *signalSource) kind() storage.Kind { return s.k }

func (*signalSource) maxBody() int64 { return maxSignalBytes }

func (s *signalSource) receive(ctx context.Context, r *http.Request, store mediaStore) error {
	if err := store.put(ctx, signalFile, r.Body); err != nil {
		return bodyError(err, "the body could not be read")
	}
	return nil
}

func (s *signalSource) inputs(ctx context.Context, store mediaStore) (json.RawMessage, error) {
	rc, err := store.open(ctx, signalFile)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	if s.body, err = DecodeSignal(rc); err != nil {
		return nil, err
	}
	if k := s.body.Kind(); k != s.k {
		want := map[storage.Kind]string{storage.KindRPPG: "r, g and b (a camera trace)", storage.KindCPPG: "values (a contact trace)"}[s.k]
		return nil, invalidf("the %s signal route takes %s", s.k, want)
	}
	if err := s.body.Validate(); err != nil {
		return nil, err
	}
	return s.body.Inputs, nil
}

func (s *signalSource) analyze(_ context.Context, _ tools, _ mediaStore, in dsp.Inputs) (dsp.Result, error) {
	return s.body.Analyze(in), nil
}

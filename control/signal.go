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

// DecodeSignal reads a signal body from r token by token: the numbers go
// straight into their arrays and the body is never held in memory. Every
// structural problem is an Invalid error that names the member: a body that
// is not one JSON object, no signal, an unknown or repeated member, an
// element that is not a number (NaN and Infinity are not JSON), more than
// dsp.MaxSamples samples, a contact trace mixed with a camera one, or a
// missing channel. The arrays' lengths and order are checked by Validate.
func DecodeSignal(r io.Reader) (SignalBody, error) {
	var b SignalBody
	dec := json.NewDecoder(r)
	if err := expectDelim(dec, '{', "the body"); err != nil {
		return b, err
	}
	inputs := object{}
	var arrays map[string][]float64
	for dec.More() {
		key, err := memberName(dec)
		if err != nil {
			return b, err
		}
		if key == "signal" {
			if arrays != nil {
				return b, invalidf("signal is given twice")
			}
			if arrays, err = decodeSignalObject(dec); err != nil {
				return b, err
			}
			continue
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return b, syntaxError(err)
		}
		inputs[key] = raw
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return b, syntaxError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return b, invalidf("the body must hold one JSON object and nothing after it")
	}
	if arrays == nil {
		return b, invalidf("signal is required: {\"timestamps\":[...],\"values\":[...]} or {\"timestamps\":[...],\"r\":[...],\"g\":[...],\"b\":[...]}")
	}
	if len(inputs) > 0 {
		b.Inputs, _ = json.Marshal(inputs)
	}
	return b, b.assemble(arrays)
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
		return &Error{Code: Invalid, Messages: []string{"signal: " + strings.TrimPrefix(err.Error(), dsp.ErrInvalidSignal.Error()+": ")}, Err: err}
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
func decodeSignalObject(dec *json.Decoder) (map[string][]float64, error) {
	if err := expectDelim(dec, '{', "signal"); err != nil {
		return nil, err
	}
	arrays := map[string][]float64{}
	for dec.More() {
		key, err := memberName(dec)
		if err != nil {
			return nil, err
		}
		switch {
		case !slices.Contains(signalMembers, key):
			return nil, invalidf("signal.property %s should not exist", key)
		case arrays[key] != nil:
			return nil, invalidf("signal.%s is given twice", key)
		}
		if arrays[key], err = decodeNumbers(dec, "signal."+key); err != nil {
			return nil, err
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, syntaxError(err)
	}
	return arrays, nil
}

// decodeNumbers reads an array of at most dsp.MaxSamples numbers; never
// nil, so that an empty array is told apart from a missing one.
func decodeNumbers(dec *json.Decoder, path string) ([]float64, error) {
	if err := expectDelim(dec, '[', path); err != nil {
		return nil, err
	}
	xs := []float64{}
	for dec.More() {
		if len(xs) == dsp.MaxSamples {
			return nil, invalidf("%s.%d: at most %d samples", path, len(xs), dsp.MaxSamples)
		}
		tok, err := dec.Token()
		if isEOF(err) {
			return nil, syntaxError(err)
		}
		x, ok := tok.(float64)
		if err != nil || !ok {
			return nil, invalidf("%s.%d must be a finite number", path, len(xs))
		}
		xs = append(xs, x)
	}
	if _, err := dec.Token(); err != nil {
		return nil, syntaxError(err)
	}
	return xs, nil
}

// expectDelim reads the opening delimiter of what is at path.
func expectDelim(dec *json.Decoder, want json.Delim, path string) error {
	tok, err := dec.Token()
	if err != nil {
		return syntaxError(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		kind := map[json.Delim]string{'{': "an object", '[': "an array"}[want]
		return invalidf("%s must be %s", path, kind)
	}
	return nil
}

// memberName reads the name of an object member.
func memberName(dec *json.Decoder) (string, error) {
	tok, err := dec.Token()
	if err != nil {
		return "", syntaxError(err)
	}
	key, _ := tok.(string) // a decoder only yields strings here
	return key, nil
}

// syntaxError answers a body that is not JSON.
func syntaxError(err error) error {
	if isEOF(err) {
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

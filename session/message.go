package session

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/pulsewire/pulsewire/control"
	"github.com/pulsewire/pulsewire/dsp"
)

// Chain is what a session measures: a scan gives one result at the
// end, a realtime session gives vitals as it runs.
type Chain string

// The chains.
const (
	Scan     Chain = "scan"
	Realtime Chain = "realtime"
)

// permission is the token permission that opens the chain.
func (c Chain) permission() string {
	if c == Scan {
		return control.PermissionScan
	}
	return control.PermissionRealtime
}

func parseChain(s string) (Chain, bool) {
	switch Chain(s) {
	case Scan, Realtime:
		return Chain(s), true
	}
	return "", false
}

// Client message types (PROTOCOL.md).
const (
	typeOpen        = "open"
	typeResume      = "resume"
	typeStop        = "stop"
	typeCalibration = "calibration"
)

// clientMessage is one JSON message from a client. Which fields are set
// depends on Type.
type clientMessage struct {
	Type string
	// open
	Token     string
	Chain     Chain
	Measure   json.RawMessage // nil when absent
	MeasureID string          // "" when absent
	// resume
	Ticket string
	// calibration: the message without its type, the body of the REST
	// calibration route, checked by the control plane.
	Calibration json.RawMessage
}

// members lists, per type, the members a message may hold besides type.
var members = map[string][]string{
	typeOpen:        {"token", "chain", "measure", "measureId"},
	typeResume:      {"ticket"},
	typeStop:        {},
	typeCalibration: {"systole", "diastole"},
}

// errMessage is a client message that breaks the protocol.
var errMessage = errors.New("malformed message")

// parseClientMessage reads one text message. Anything but a JSON object
// whose type is known and whose members are those of its type is
// errMessage; the values of an open message are checked here too, except
// the measure inputs (the control plane's) and the token (the store's).
func parseClientMessage(data []byte) (clientMessage, error) {
	var m clientMessage
	var o map[string]json.RawMessage
	if err := control.DecodeOne(json.NewDecoder(bytes.NewReader(data)), &o); err != nil || o == nil {
		return m, fmt.Errorf("%w: not one JSON object", errMessage)
	}
	if err := json.Unmarshal(o["type"], &m.Type); err != nil || members[m.Type] == nil {
		return m, fmt.Errorf("%w: unknown type", errMessage)
	}
	var extra []string
	for name := range o {
		if name != "type" && !slices.Contains(members[m.Type], name) {
			extra = append(extra, name)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		return m, fmt.Errorf("%w: %s message with unknown member %s", errMessage, m.Type, strings.Join(extra, ", "))
	}
	str := func(name string, dst *string) error {
		if err := json.Unmarshal(o[name], dst); err != nil || *dst == "" {
			return fmt.Errorf("%w: %s must be a non-empty string", errMessage, name)
		}
		return nil
	}
	switch m.Type {
	case typeOpen:
		var chain string
		if err := errors.Join(str("token", &m.Token), str("chain", &chain)); err != nil {
			return m, err
		}
		var ok bool
		if m.Chain, ok = parseChain(chain); !ok {
			return m, fmt.Errorf("%w: unknown chain", errMessage)
		}
		var id string
		if raw, ok := o["measureId"]; ok && !control.IsNull(raw) {
			if err := str("measureId", &id); err != nil {
				return m, err
			}
		}
		var open opening
		if err := open.setMeasure(o["measure"], id); err != nil {
			return m, fmt.Errorf("%w: %w", errMessage, err)
		}
		m.Measure, m.MeasureID = open.measure, open.measureID
	case typeResume:
		if err := str("ticket", &m.Ticket); err != nil {
			return m, err
		}
	case typeCalibration:
		delete(o, "type")
		m.Calibration, _ = json.Marshal(o)
	}
	return m, nil
}

// setMeasure sets what the session runs from a handshake's measure and
// measureId, the same rule over WebSocket and WHIP: the inputs of a new
// measure, or a created measure's id, not both (a null measure and an
// empty id are none).
func (o *opening) setMeasure(inputs json.RawMessage, id string) error {
	given := inputs != nil && !control.IsNull(inputs)
	// o may hold an id already: WHIP's may come in its query.
	switch {
	case id != "" && o.measureID != "", given && (id != "" || o.measureID != ""):
		return errors.New("measure and measureId are exclusive")
	case id != "":
		o.measureID = id
	case given:
		o.measure = inputs
	}
	return nil
}

// commandOf is the session command a client message asks for once the
// session is open, whatever its transport; false for any other message.
func commandOf(m clientMessage) (command, bool) {
	switch m.Type {
	case typeStop:
		return command{kind: stop}, true
	case typeCalibration:
		return command{kind: calibrate, body: m.Calibration}, true
	}
	return command{}, false
}

// frameHeaderBytes is the capture time in front of every frame.
const frameHeaderBytes = 8

// parseFrame splits a binary message into the frame's capture time
// (microseconds, any origin) and its picture.
func parseFrame(data []byte) (captureUs uint64, picture []byte, err error) {
	if len(data) <= frameHeaderBytes {
		return 0, nil, fmt.Errorf("%w: a frame of %d bytes has no picture", errMessage, len(data))
	}
	return binary.BigEndian.Uint64(data), data[frameHeaderBytes:], nil
}

// Server messages (PROTOCOL.md section 3).
type (
	openedMessage struct {
		Type          string `json:"type"`
		SessionID     string `json:"sessionId"`
		ResumeTicket  string `json:"resumeTicket,omitempty"`
		Chain         Chain  `json:"chain"`
		MeasureID     string `json:"measureId"`
		DurationMs    int64  `json:"durationMs"`
		MaxDurationMs int64  `json:"maxDurationMs,omitempty"`
		MaxFrameBytes int64  `json:"maxFrameBytes"`
		Resumed       bool   `json:"resumed"`
	}
	// vitalsMessage is dsp.Vitals, whose JSON names are this message's,
	// with what the session adds: a field added to the vitals reaches
	// the widget without a copy to keep in step.
	vitalsMessage struct {
		Type string `json:"type"`
		dsp.Vitals
		Progress       float64 `json:"progress"`
		FramesReceived int64   `json:"framesReceived"`
		FramesDropped  int64   `json:"framesDropped"`
		FramesRejected int64   `json:"framesRejected"`
		// ReceivedUs is the capture time of the latest frame received,
		// in the client's clock (WebSocket frames only; absent over
		// WebRTC): how far behind its camera the link is.
		ReceivedUs uint64 `json:"receivedUs,omitempty"`
	}
	resultMessage struct {
		Type    string              `json:"type"`
		Measure control.MeasureView `json:"measure"`
	}
	errorMessage struct {
		Type    string `json:"type"`
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	typeOnly struct {
		Type string `json:"type"`
	}
)

// Codes of error messages.
const (
	codeBadFrame = "bad_frame"
	codeInvalid  = "invalid"
	codeInternal = "internal"
	// codeMeasureDeleted: the session's measure was deleted while it ran.
	codeMeasureDeleted = "measure_deleted"
)

// newVitals is the vitals message of v.
func newVitals(v dsp.Vitals, progress float64, received, dropped, rejected int64) vitalsMessage {
	return vitalsMessage{Type: "vitals", Vitals: v, Progress: progress,
		FramesReceived: received, FramesDropped: dropped, FramesRejected: rejected}
}

// share is the part of whole covered, within 0-1.
func share(covered, whole time.Duration) float64 {
	return min(1, max(0, float64(covered)/float64(whole)))
}

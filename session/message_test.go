package session

import (
	"encoding/json"
	"errors"
	"testing"
	"time"
)

func TestParseClientMessage(t *testing.T) {
	id := "3f0e5a3e-2c7d-4d1b-9d0f-2b8c1f6f4a10"
	cases := []struct {
		name string
		in   string
		want clientMessage // Type "" for a malformed message
	}{
		{"open scan", `{"type":"open","token":"ivat-x","chain":"scan"}`, clientMessage{Type: "open", Token: "ivat-x", Chain: Scan}},
		{"open with inputs", `{"type":"open","token":"ivat-x","chain":"realtime","measure":{"tags":["a"]}}`,
			clientMessage{Type: "open", Token: "ivat-x", Chain: Realtime, Measure: json.RawMessage(`{"tags":["a"]}`)}},
		{"open two-step", `{"type":"open","token":"ivat-x","chain":"scan","measureId":"` + id + `"}`, clientMessage{Type: "open", Token: "ivat-x", Chain: Scan, MeasureID: id}},
		{"null measure", `{"type":"open","token":"ivat-x","chain":"scan","measure":null}`, clientMessage{Type: "open", Token: "ivat-x", Chain: Scan}},
		{"null measureId beside a measure", `{"type":"open","token":"ivat-x","chain":"scan","measure":{},"measureId":null}`,
			clientMessage{Type: "open", Token: "ivat-x", Chain: Scan, Measure: json.RawMessage(`{}`)}},
		{"resume", `{"type":"resume","ticket":"t"}`, clientMessage{Type: "resume", Ticket: "t"}},
		{"stop", `{"type":"stop"}`, clientMessage{Type: "stop"}},
		{"calibration", `{"type":"calibration","systole":120,"diastole":80}`,
			clientMessage{Type: "calibration", Calibration: json.RawMessage(`{"diastole":80,"systole":120}`)}},
		{"calibration, its values left to the control plane", `{"type":"calibration","systole":"high"}`,
			clientMessage{Type: "calibration", Calibration: json.RawMessage(`{"systole":"high"}`)}},
		{"not JSON", `open`, clientMessage{}},
		{"an array", `[{"type":"stop"}]`, clientMessage{}},
		{"two objects", `{"type":"stop"}{"type":"stop"}`, clientMessage{}},
		{"no type", `{"token":"ivat-x"}`, clientMessage{}},
		{"unknown type", `{"type":"pause"}`, clientMessage{}},
		{"type not a string", `{"type":1}`, clientMessage{}},
		{"member of another type", `{"type":"stop","ticket":"t"}`, clientMessage{}},
		{"open without token", `{"type":"open","chain":"scan"}`, clientMessage{}},
		{"empty token", `{"type":"open","token":"","chain":"scan"}`, clientMessage{}},
		{"token not a string", `{"type":"open","token":5,"chain":"scan"}`, clientMessage{}},
		{"unknown chain", `{"type":"open","token":"ivat-x","chain":"batch"}`, clientMessage{}},
		{"measure and measureId", `{"type":"open","token":"ivat-x","chain":"scan","measure":{},"measureId":"` + id + `"}`, clientMessage{}},
		{"measureId not a string", `{"type":"open","token":"ivat-x","chain":"scan","measureId":7}`, clientMessage{}},
		{"resume without ticket", `{"type":"resume"}`, clientMessage{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseClientMessage([]byte(tc.in))
			if tc.want.Type == "" {
				if !errors.Is(err, errMessage) {
					t.Fatalf("got %+v, %v; want errMessage", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Type != tc.want.Type || got.Token != tc.want.Token || got.Chain != tc.want.Chain ||
				got.MeasureID != tc.want.MeasureID || got.Ticket != tc.want.Ticket ||
				string(got.Measure) != string(tc.want.Measure) || string(got.Calibration) != string(tc.want.Calibration) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestParseFrame(t *testing.T) {
	cases := []struct {
		name    string
		in      []byte
		us      uint64
		picture int // bytes; -1 for a refusal
	}{
		{"empty", nil, 0, -1},
		{"header only", make([]byte, 8), 0, -1},
		{"one byte of picture", []byte{0, 0, 0, 0, 0, 0, 1, 0, 0xff}, 256, 1},
		{"largest time", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1, 2}, 1<<64 - 1, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			us, pic, err := parseFrame(tc.in)
			if tc.picture < 0 {
				if !errors.Is(err, errMessage) {
					t.Fatalf("got %v, want errMessage", err)
				}
				return
			}
			if err != nil || us != tc.us || len(pic) != tc.picture {
				t.Fatalf("got %d µs, %d bytes, %v", us, len(pic), err)
			}
		})
	}
}

func TestProgress(t *testing.T) {
	for _, tc := range []struct {
		chain   Chain
		elapsed time.Duration
		want    float64
	}{
		{Scan, 0, 0},
		{Scan, 15 * time.Second, 0.5},
		{Scan, 31 * time.Second, 1},
		{Realtime, 10 * time.Second, 0.5},
		{Realtime, time.Minute, 1},
		{Realtime, -time.Second, 0},
	} {
		if got := progress(tc.chain, tc.elapsed, 30*time.Second); got != tc.want {
			t.Errorf("%s after %v: %v, want %v", tc.chain, tc.elapsed, got, tc.want)
		}
	}
}

// FuzzClientMessage: no text message makes the parser panic, and what it
// accepts is consistent.
func FuzzClientMessage(f *testing.F) {
	for _, s := range []string{
		`{"type":"open","token":"ivat-x","chain":"scan","measure":{"tags":["a"]}}`,
		`{"type":"open","token":"ivat-x","chain":"realtime","measureId":"x"}`,
		`{"type":"resume","ticket":"a.b.c"}`, `{"type":"stop"}`, `{"type":"calibration","systole":120,"diastole":80}`,
		`{"type":null}`, `[]`, `{"type":"open","measure":null,"measureId":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := parseClientMessage(data)
		if err != nil {
			return
		}
		switch m.Type {
		case typeOpen:
			if m.Token == "" || (m.Chain != Scan && m.Chain != Realtime) || (m.MeasureID != "" && m.Measure != nil) {
				t.Fatalf("accepted %q as %+v", data, m)
			}
		case typeResume:
			if m.Ticket == "" {
				t.Fatalf("accepted %q as %+v", data, m)
			}
		case typeCalibration:
			if !json.Valid(m.Calibration) {
				t.Fatalf("calibration body %q", m.Calibration)
			}
		case typeStop:
		default:
			t.Fatalf("accepted type %q", m.Type)
		}
	})
}

// FuzzFrame: any binary message is a frame with a picture or errMessage.
func FuzzFrame(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xd8})
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		_, pic, err := parseFrame(data)
		if (err == nil) != (len(data) > frameHeaderBytes) || (err == nil && len(pic) != len(data)-frameHeaderBytes) {
			t.Fatalf("%d bytes: %d of picture, %v", len(data), len(pic), err)
		}
	})
}

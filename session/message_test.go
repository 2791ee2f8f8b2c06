package session

import (
	"encoding/json"
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/pulsewire/pulsewire/dsp"
	"github.com/pulsewire/pulsewire/dsp/face"
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
		{"a stray closing brace after", `{"type":"stop"}}`, clientMessage{}},
		{"a stray bracket after", `{"type":"stop"} ]`, clientMessage{}},
		{"blanks after", "{\"type\":\"stop\"} \n", clientMessage{Type: "stop"}},
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

// TestVitalsMessageKeys: a vitals message holds the members PROTOCOL.md
// names, no more and no fewer, whichever struct each comes from.
func TestVitalsMessageKeys(t *testing.T) {
	m := newVitals(dsp.NewStream(nil, dsp.Inputs{}).Vitals(), 0.5, 3, 2, 1)
	m.ReceivedUs = 1712345679012345
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var o map[string]json.RawMessage
	if err := json.Unmarshal(b, &o); err != nil {
		t.Fatal(err)
	}
	var got []string
	for k := range o {
		got = append(got, k)
	}
	slices.Sort(got)
	want := []string{"br", "elapsedMs", "framesDropped", "framesReceived", "framesRejected", "guidance",
		"hr", "hrv", "progress", "qualityScore", "receivedUs", "type", "wave", "waveRateHz"}
	if !slices.Equal(got, want) {
		t.Fatalf("members %q, want %q (%s)", got, want, b)
	}
	if string(o["type"]) != `"vitals"` {
		t.Fatalf("type %s", o["type"])
	}
}

// TestProgress: a scan's progress and end count its duration from the
// face's arrival, and from the first frame when no face comes; realtime's
// progress is its warm-up.
func TestProgress(t *testing.T) {
	const d = 30 * time.Second
	// The last of frames 30 a second stands for 1.5 intervals more
	// (covered): a scan's share counts them.
	const last = 0.05
	for _, tc := range []struct {
		name    string
		chain   Chain
		face    time.Duration // the face's arrival; -1: none
		elapsed time.Duration
		want    float64
		end     time.Duration // a scan's end
	}{
		{"a scan at its start", Scan, 0, 0, 0, d},
		{"half a scan", Scan, 0, 15 * time.Second, (15 + last) / 30, d},
		{"a scan past its duration", Scan, 0, 31 * time.Second, 1, d},
		{"a scan before the face", Scan, -1, 5 * time.Second, 0, d},
		{"a scan without a face", Scan, -1, 31 * time.Second, 0, d},
		{"a scan whose face came at 8 s", Scan, 8 * time.Second, 23 * time.Second, (15 + last) / 30, 38 * time.Second},
		{"a scan whose face came at 8 s, at 30 s", Scan, 8 * time.Second, 30 * time.Second, (22 + last) / 30, 38 * time.Second},
		{"a scan whose face came at 29 s", Scan, 29 * time.Second, 40 * time.Second, (11 + last) / 30, 59 * time.Second},
		{"realtime", Realtime, 0, 10 * time.Second, 0.5, 0},
		{"realtime warmed up", Realtime, 0, time.Minute, 1, 0},
		{"realtime without a face", Realtime, -1, 10 * time.Second, 0.5, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &session{chain: tc.chain, srv: &Server{cfg: Config{ScanDuration: d}}}
			st := &loopState{stream: dsp.NewStream(nil, dsp.Inputs{})}
			observe(st, tc.face, tc.elapsed, 0, 0)
			if got := s.progress(st); math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("progress %v, want %v", got, tc.want)
			}
			if tc.chain == Scan {
				if got := s.scanEnd(st); got != tc.end {
					t.Errorf("scan ends at %v, want %v", got, tc.end)
				}
			}
		})
	}
}

// observe adds to a session's capture 30 observations a second up to
// capture time until, with a face from faceAt on (-1: none) whose green
// carries a 72 bpm pulse of the given relative amplitude (0: none) from
// pulseFrom on.
func observe(st *loopState, faceAt, until time.Duration, pulse float64, pulseFrom time.Duration) {
	at := func(i int) time.Duration { return time.Duration(math.Round(float64(i) * float64(time.Second) / 30)) }
	i := 0
	for st.stream.Stale(at(i)) {
		i++
	}
	for ; at(i) <= until; i++ {
		o := face.Observation{SceneLuma: 100, BackgroundLuma: 100}
		if faceAt >= 0 && at(i) >= faceAt {
			g := 110 + cameraNoise(i)
			if at(i) >= pulseFrom {
				g *= 1 + pulse/2*math.Sin(2*math.Pi*1.2*at(i).Seconds())
			}
			o = face.Observation{Face: true, FaceFraction: 0.45, CentreX: 160, CentreY: 120, Side: 100,
				R: 150, G: g, B: 90, SkinPixels: 1000, SkinFraction: 0.9, Luma: 0.299*150 + 0.587*g + 0.114*90,
				SceneLuma: 100, BackgroundLuma: 100}
		}
		st.stream.Observe(o, at(i))
		st.last = at(i)
	}
}

// cameraNoise is white noise of about 0.3 levels, the same for frame i at
// every call: a hash of i (a finaliser of MurmurHash3).
func cameraNoise(i int) float64 {
	x := uint64(i)
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return float64(x>>11)/(1<<53) - 0.5
}

// TestScanResult: a scan whose pulse is clear ends at its duration; one
// whose pulse is still too faint is analysed again every 5 s up to its
// longest from the face's arrival, its progress then counting towards the
// longest, and ends at the first two analyses in a row that answer (a
// pulse that comes late is answered at 35 s, which alone does not end the
// scan) or at its longest as it is; a scan that may not go on ends at its
// duration whatever its pulse.
func TestScanResult(t *testing.T) {
	const d = 30 * time.Second
	for _, tc := range []struct {
		name      string
		longest   time.Duration
		face      time.Duration
		pulse     float64
		pulseFrom time.Duration
		rechecks  []int    // the ends analysed after the duration's, s
		code      dsp.Code // of the result
	}{
		{"a clear pulse", 2 * d, 0, 0.01, 0, nil, ""},
		{"a pulse from 17 s", 2 * d, 0, 0.01, 17 * time.Second, []int{35, 40}, ""},
		{"a pulse from 17 s, the longest 35 s", 35 * time.Second, 0, 0.01, 17 * time.Second, []int{35}, ""},
		{"no pulse", 2 * d, 0, 0, 0, []int{35, 40, 45, 50, 55, 60}, dsp.ConformityMissingSignal},
		{"no pulse, the face at 8 s", 2 * d, 8 * time.Second, 0, 0, []int{43, 48, 53, 58, 63, 68}, dsp.ConformityMissingSignal},
		{"no pulse, the longest 42 s", 42 * time.Second, 0, 0, 0, []int{35, 40, 42}, dsp.ConformityMissingSignal},
		{"no pulse, no longer than the duration", d, 0, 0, 0, nil, dsp.ConformityMissingSignal},
		{"no face", 2 * d, -1, 0, 0, nil, dsp.ConformityFacePresence},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &session{chain: Scan, srv: &Server{cfg: Config{ScanDuration: d, ScanMaxDuration: tc.longest}}}
			st := &loopState{stream: dsp.NewStream(nil, dsp.Inputs{})}
			var ends []int
			for {
				end := s.scanEnd(st)
				observe(st, tc.face, end, tc.pulse, tc.pulseFrom)
				res, done := s.scanResult(st)
				if done {
					if res.Summary.Conformity != tc.code {
						t.Errorf("ended at %v with %q, want %q", st.last, res.Summary.Conformity, tc.code)
					}
					break
				}
				next := s.scanEnd(st)
				ends = append(ends, int(next/time.Second))
				if want := (st.covered() - max(tc.face, 0)).Seconds() / tc.longest.Seconds(); math.Abs(s.progress(st)-want) > 1e-9 {
					t.Errorf("progress %v at %v, want %v of the longest", s.progress(st), st.last, want)
				}
				if len(ends) > 20 {
					t.Fatalf("no end after %v", ends)
				}
			}
			if !slices.Equal(ends, tc.rechecks) {
				t.Errorf("analysed again at %v s, want %v", ends, tc.rechecks)
			}
		})
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

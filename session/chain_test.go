package session

import (
	"context"
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/pulsewire/pulsewire/scripts/synth/clip"
)

// measureJSON is the part of a pushed or served measure the tests read.
type measureJSON struct {
	ID        string                     `json:"id"`
	Status    string                     `json:"status"`
	Variables map[string]json.RawMessage `json:"variables"`
	Tags      []string                   `json:"tags"`
	UserData  *struct {
		ExternalID *string `json:"externalId"`
	} `json:"userData"`
}

// hrOf reads the hr variable's mean, failing when it carries an error.
func hrOf(t testing.TB, m measureJSON) float64 {
	t.Helper()
	var v struct {
		Value *struct{ Mean float64 } `json:"value"`
		Error *string                 `json:"error"`
	}
	if err := json.Unmarshal(m.Variables["hr"], &v); err != nil || v.Value == nil {
		t.Fatalf("hr: %s", m.Variables["hr"])
	}
	return v.Value.Mean
}

// faceClip is the synthetic capture of the chain tests: 320x240 at 30 fps,
// as the widget sends it.
func faceClip(hr float64, seconds float64) clip.Config {
	return clip.Config{Width: 320, Height: 240, FPS: 30, Seconds: seconds, Seed: 7, HeartRate: hr, BreathingRate: 14}
}

// TestScanChain: a scan over a real WebSocket with frames of a synthetic
// face streamed at capture pace: vitals with growing progress, a result
// whose hr is within 3 bpm of the truth and which the API serves as
// stored, then a calibration of the person.
func TestScanChain(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, Config{ScanDuration: 12 * time.Second})
	f := syntheticFrames(t, faceClip(66, 13))
	value, _ := e.mint(scanOnce())
	c := e.dial()
	o := openSession(t, c, openMessage(value, Scan, map[string]any{"measure": map[string]any{
		"userData": map[string]any{"externalId": "person-1", "age": 40, "sex": "F"}, "tags": []string{"lobby"}}}))
	done := make(chan struct{})
	defer close(done)
	go e.stream(c, o.SessionID, f, 0, len(f.times), time.Hour, 1, done)

	var vitals []vitalsMessage
	var result struct{ Measure measureJSON }
	for {
		r, err := next(c, 30*time.Second)
		if err != nil {
			t.Fatalf("after %d vitals: %v", len(vitals), err)
		}
		if r.Type == "result" {
			r.decode(t, &result)
			break
		}
		if r.Type != "vitals" {
			t.Fatalf("unexpected %s", r.raw)
		}
		var v vitalsMessage
		r.decode(t, &v)
		vitals = append(vitals, v)
	}
	if len(vitals) < 5 {
		t.Fatalf("%d vitals in a 12 s scan, want about one a second", len(vitals))
	}
	last := vitals[len(vitals)-1]
	for i, v := range vitals {
		if v.Progress < 0 || v.Progress > 1 || (i > 0 && v.Progress < vitals[i-1].Progress) {
			t.Errorf("vitals %d: progress %v after %v", i, v.Progress, vitals[max(i-1, 0)].Progress)
		}
	}
	if last.Progress < 0.8 || last.FramesReceived < 300 || last.FramesDropped != 0 || last.ElapsedMs < 10000 ||
		len(last.Wave) == 0 || last.WaveRateHz != 30 {
		t.Errorf("last vitals: progress %v, %d frames, %d ms, %d wave samples at %v Hz",
			last.Progress, last.FramesReceived-last.FramesDropped, last.ElapsedMs, len(last.Wave), last.WaveRateHz)
	}
	m := result.Measure
	if m.ID != o.MeasureID || m.Status != "ended" || len(m.Tags) != 1 {
		t.Fatalf("result: %+v", m)
	}
	if hr := hrOf(t, m); math.Abs(hr-f.truth.HeartRate) > 3 {
		t.Errorf("hr %.1f bpm, truth %.1f", hr, f.truth.HeartRate)
	}
	res, body := e.httpDo("GET", "/measures/"+m.ID, "")
	var stored measureJSON
	json.Unmarshal(body, &stored)
	if res.StatusCode != 200 || stored.Status != "ended" || string(stored.Variables["hr"]) != string(m.Variables["hr"]) {
		t.Fatalf("stored measure: %d %s", res.StatusCode, body)
	}

	send(t, c, map[string]any{"type": "calibration", "systole": 300, "diastole": 80})
	var bad errorMessage
	expect(t, c, "error", 10*time.Second).decode(t, &bad)
	if bad.Code != codeInvalid || bad.Message == "" {
		t.Fatalf("out-of-bounds calibration: %+v", bad)
	}
	send(t, c, map[string]any{"type": "calibration", "systole": 121, "diastole": 79})
	expect(t, c, "calibrated", 10*time.Second)
	expectClose(t, c, websocket.StatusNormalClosure, "")
	_, body = e.httpDo("GET", "/external-users/person-1", "")
	var user struct{ RPPGCalibrated bool }
	if json.Unmarshal(body, &user); !user.RPPGCalibrated {
		t.Fatalf("external user after calibration: %s", body)
	}
}

// TestRealtimeChain: the two-step form, a realtime session running a
// measure created over REST: vitals with hr once 10 s are captured, a
// calibration before the result is refused, and stop stores the measure.
func TestRealtimeChain(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, Config{})
	f := syntheticFrames(t, faceClip(84, 13))
	res, body := e.httpDo("POST", "/measures", `{"tags":["two-step"]}`)
	var created measureJSON
	if json.Unmarshal(body, &created); res.StatusCode != 201 {
		t.Fatalf("POST /measures: %d %s", res.StatusCode, body)
	}
	value, _ := e.mint(realtimeOnce())
	c := e.dial()
	o := openSession(t, c, openMessage(value, Realtime, map[string]any{"measureId": created.ID}))
	if o.MeasureID != created.ID {
		t.Fatalf("opened %+v for measure %s", o, created.ID)
	}
	send(t, c, map[string]any{"type": "calibration", "systole": 120, "diastole": 80})
	var early errorMessage
	expect(t, c, "error", 10*time.Second).decode(t, &early)
	if early.Code != codeInvalid {
		t.Fatalf("calibration before the result: %+v", early)
	}
	streamed := make(chan struct{})
	go func() {
		defer close(streamed)
		e.stream(c, o.SessionID, f, 0, len(f.times), 0, 1, nil)
	}()
	var interim []float64
	for {
		r, err := next(c, 30*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		var v vitalsMessage
		r.decode(t, &v)
		if r.Type != "vitals" {
			t.Fatalf("unexpected %s", r.raw)
		}
		if v.HR.Error == "" {
			interim = append(interim, v.HR.Value.(map[string]any)["mean"].(float64))
		} else if v.ElapsedMs > 11500 {
			t.Errorf("no hr after %d ms: %s", v.ElapsedMs, v.HR.Error)
		}
		if v.ElapsedMs >= 12500 {
			break
		}
	}
	if len(interim) == 0 || math.Abs(interim[len(interim)-1]-f.truth.HeartRate) > 5 {
		t.Errorf("interim hr %v, truth %.1f", interim, f.truth.HeartRate)
	}
	<-streamed
	send(t, c, map[string]any{"type": "stop"})
	var result struct{ Measure measureJSON }
	expect(t, c, "result", 30*time.Second).decode(t, &result)
	if result.Measure.ID != created.ID || result.Measure.Status != "ended" {
		t.Fatalf("result %+v", result.Measure)
	}
	if hr := hrOf(t, result.Measure); math.Abs(hr-f.truth.HeartRate) > 3 {
		t.Errorf("hr %.1f bpm, truth %.1f", hr, f.truth.HeartRate)
	}
	// No externalId: a calibration is refused, and the session waits on.
	send(t, c, map[string]any{"type": "calibration", "systole": 120, "diastole": 80})
	var bad errorMessage
	expect(t, c, "error", 10*time.Second).decode(t, &bad)
	if bad.Code != codeInvalid {
		t.Fatalf("calibration without externalId: %+v", bad)
	}
	c.Close(websocket.StatusNormalClosure, "")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for e.srv.session(o.SessionID) != nil && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	if e.srv.session(o.SessionID) != nil {
		t.Fatal("the session outlived its client after its result")
	}
}

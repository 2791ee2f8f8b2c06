package session

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/jpeg"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/pulsewire/pulsewire/control"
	"github.com/pulsewire/pulsewire/dsp"
	"github.com/pulsewire/pulsewire/scripts/synth/clip"
	"github.com/pulsewire/pulsewire/storage"
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

// untilResult reads a session's pushes up to its result: the measure, and
// the vitals before it.
func untilResult(t *testing.T, c *websocket.Conn) (measureJSON, []vitalsMessage) {
	t.Helper()
	var vitals []vitalsMessage
	for {
		r, err := next(c, 30*time.Second)
		if err != nil {
			t.Fatalf("after %d vitals: %v", len(vitals), err)
		}
		switch r.Type {
		case "vitals":
			var v vitalsMessage
			r.decode(t, &v)
			vitals = append(vitals, v)
			continue
		case "result":
			var result struct{ Measure measureJSON }
			r.decode(t, &result)
			return result.Measure, vitals
		}
		t.Fatalf("unexpected %s", r.raw)
	}
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
	// Entitlements and credits apply as to a REST run: three variables,
	// narrowed by the inputs to two; one credit, which the scan spends.
	one := int64(1)
	oneCredit := &one
	client, err := e.svc.UpdateClient(context.Background(), e.client.ID, control.ClientUpdate{Variables: []string{dsp.HR, dsp.BR, dsp.HRV}, MonthlyCredits: &oneCredit})
	if err != nil {
		t.Fatal(err)
	}
	value, _ := e.mint(scanOnce())
	c := e.dial()
	o := openSession(t, c, openMessage(value, Scan, map[string]any{"measure": map[string]any{
		"userData": map[string]any{"externalId": "person-1", "age": 40, "sex": "F"}, "tags": []string{"lobby"},
		"desiredVariables": []string{dsp.HR, dsp.HRV, dsp.BMI}}}))
	done := make(chan struct{})
	defer close(done)
	go e.stream(c, o.SessionID, f, 0, len(f.times), time.Hour, 1, done)

	m, vitals := untilResult(t, c)
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
	if m.ID != o.MeasureID || m.Status != "ended" || len(m.Tags) != 1 {
		t.Fatalf("result: %+v", m)
	}
	if hr := hrOf(t, m); math.Abs(hr-f.truth.HeartRate) > 3 {
		t.Errorf("hr %.1f bpm, truth %.1f", hr, f.truth.HeartRate)
	}
	if names := slices.Sorted(maps.Keys(m.Variables)); !slices.Equal(names, []string{dsp.HR, dsp.HRV}) {
		t.Errorf("variables %v, want the entitled and desired hr and hrv", names)
	}
	if used, err := e.db.CreditsUsed(context.Background(), client, e.clock.now()); err != nil || used != 1 {
		t.Errorf("credits used %d, %v; want the scan's 1", used, err)
	}
	if _, err := e.svc.MeasureOfKind(context.Background(), client, m.ID, storage.KindRPPG); err != nil {
		t.Errorf("the measure is no ended rppg measure of the token's client: %v", err)
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
			if v.QualityScore <= 0 || v.QualityScore > 1 {
				t.Errorf("hr without a quality score in (0, 1]: %v", v.QualityScore)
			}
		} else if v.ElapsedMs > 11500 {
			t.Errorf("no hr after %d ms: %s", v.ElapsedMs, v.HR.Error)
		}
		// br and hrv come when enough data exists: until then each
		// says why it is missing.
		for name, x := range map[string]dsp.Variable{"br": v.BR, "hrv": v.HRV} {
			if (x.Value == nil) == (x.Error == "") {
				t.Errorf("%s at %d ms is neither a value nor an error: %+v", name, v.ElapsedMs, x)
			}
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
	if _, err := e.svc.MeasureOfKind(context.Background(), e.client, created.ID, storage.KindRPPG); err != nil {
		t.Errorf("the measure is no ended rppg measure of the token's client: %v", err)
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

// TestGuidance: while a face is filmed the vitals give no face-presence
// guidance; once the face has left the picture for a few seconds they do,
// with a message for the person; once it is back, they stop.
func TestGuidance(t *testing.T) {
	t.Parallel()
	f := syntheticFrames(t, faceClip(84, 13))
	e, c, o := realtimeSession(t, Config{})
	absent := func(v vitalsMessage) bool {
		return slices.ContainsFunc(v.Guidance, func(g dsp.Guidance) bool {
			return g.Code == dsp.ConformityFacePresence && g.Message != ""
		})
	}
	// 3 s of a face, at four times the capture pace.
	const faced = 90
	e.stream(c, o.SessionID, f, 0, faced, 0, 4, nil)
	var v vitalsMessage
	for v.ElapsedMs < f.times[faced-1].Milliseconds() {
		expect(t, c, "vitals", 10*time.Second).decode(t, &v)
	}
	if absent(v) {
		t.Fatalf("face-presence guidance with a face in the picture: %+v", v.Guidance)
	}
	// The vitals say how far the frames received go, in the client's clock.
	if want := uint64(f.times[faced-1] / time.Microsecond); v.ReceivedUs != want {
		t.Fatalf("receivedUs %d, want the last frame's %d", v.ReceivedUs, want)
	}
	// Then 6 s of an empty grey picture, longer than the guidance looks
	// back.
	empty := greyFrames(t, 180)
	origin := f.times[faced-1] + time.Second/30
	e.stream(c, o.SessionID, empty, 0, len(empty.times), origin, 4, nil)
	for v.ElapsedMs < (origin + empty.times[len(empty.times)-1]).Milliseconds() {
		expect(t, c, "vitals", 10*time.Second).decode(t, &v)
	}
	if !absent(v) {
		t.Fatalf("no face-presence guidance after 6 s without a face: %+v", v.Guidance)
	}
	// The face back for 6 s: the guidance says so, though the last 30 s
	// still hold the gap.
	back := origin + empty.times[len(empty.times)-1] + time.Second/30
	e.stream(c, o.SessionID, f, faced, faced+180, back-f.times[faced], 4, nil)
	for v.ElapsedMs < (back + f.times[faced+179] - f.times[faced]).Milliseconds() {
		expect(t, c, "vitals", 10*time.Second).decode(t, &v)
	}
	if absent(v) {
		t.Fatalf("face-presence guidance 6 s after the face came back: %+v", v.Guidance)
	}
	send(t, c, map[string]any{"type": "stop"})
	expect(t, c, "result", 10*time.Second)
}

// TestCreditExhaustion: an account with one monthly credit measures twice
// through scan sessions of the same capture. The first computes hr and
// spends the credit; the second is still stored and pushed as ended, but
// every returned variable and signal.qualityScore is CREDIT_EXCEEDED and
// nothing more is charged.
func TestCreditExhaustion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newTestEnv(t, Config{ScanDuration: 12 * time.Second})
	f := syntheticFrames(t, faceClip(84, 13))
	one := int64(1)
	oneCredit := &one
	client, err := e.svc.UpdateClient(ctx, e.client.ID, control.ClientUpdate{Variables: []string{dsp.HR, dsp.BR}, MonthlyCredits: &oneCredit})
	if err != nil {
		t.Fatal(err)
	}
	type measure struct {
		ID                string                  `json:"id"`
		Status            string                  `json:"status"`
		ReturnedVariables []string                `json:"returnedVariables"`
		Signal            map[string]dsp.Variable `json:"signal"`
		Variables         map[string]dsp.Variable `json:"variables"`
	}
	scan := func() measure {
		e.clock.advance(time.Second) // past the opening rate
		value, _ := e.mint(scanOnce())
		c := e.dial()
		o := openSession(t, c, openMessage(value, Scan, nil))
		done := make(chan struct{})
		defer close(done)
		go e.stream(c, o.SessionID, f, 0, len(f.times), 0, 4, done)
		var result struct{ Measure measure }
		expect(t, c, "result", 60*time.Second).decode(t, &result)
		c.Close(websocket.StatusNormalClosure, "")
		m := result.Measure
		if m.ID != o.MeasureID || m.Status != "ended" || !slices.Equal(m.ReturnedVariables, []string{dsp.HR, dsp.BR}) {
			t.Fatalf("result %+v", m)
		}
		return m
	}
	used := func() int64 {
		n, err := e.db.CreditsUsed(ctx, client, e.clock.now())
		if err != nil {
			t.Fatal(err)
		}
		return n
	}

	if m := scan(); m.Variables[dsp.HR].Error != "" || used() != 1 {
		t.Fatalf("first scan: hr %+v, %d credits used; want a value and the one credit", m.Variables[dsp.HR], used())
	}
	m := scan()
	for _, name := range m.ReturnedVariables {
		if v := m.Variables[name]; v.Value != nil || v.Error != dsp.CreditExceeded {
			t.Errorf("second scan: %s %+v, want %s", name, v, dsp.CreditExceeded)
		}
	}
	if q := m.Signal["qualityScore"]; q.Value != nil || q.Error != dsp.CreditExceeded {
		t.Errorf("second scan: qualityScore %+v, want %s", q, dsp.CreditExceeded)
	}
	if n := used(); n != 1 {
		t.Errorf("%d credits used after the second scan, want 1", n)
	}
	res, body := e.httpDo("GET", "/measures/"+m.ID, "")
	var stored measure
	if err := json.Unmarshal(body, &stored); err != nil || res.StatusCode != 200 || !reflect.DeepEqual(stored.Variables, m.Variables) {
		t.Fatalf("stored measure: %d %s", res.StatusCode, body)
	}
}

// greyFrames is n frames of an empty grey picture at 30 fps, the size of
// faceClip's.
func greyFrames(t *testing.T, n int) *frames {
	t.Helper()
	var grey bytes.Buffer
	img := image.NewGray(image.Rect(0, 0, 320, 240))
	for i := range img.Pix {
		img.Pix[i] = 128
	}
	if err := jpeg.Encode(&grey, img, nil); err != nil {
		t.Fatal(err)
	}
	empty := &frames{}
	for i := range n {
		empty.jpegs = append(empty.jpegs, grey.Bytes())
		empty.times = append(empty.times, time.Duration(i)*time.Second/30)
	}
	return empty
}

// TestScanFaintPulse: a scan whose pulse is still too faint at its
// duration goes on. Its person's pulse shows only from 7 s on (the frames
// before are the same face without one), so at 12 s it is refused; the
// scan says how long it may go on (27 s), its progress then counts
// towards that, and its result, before the longest, is the person's heart
// rate.
func TestScanFaintPulse(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, Config{ScanDuration: 12 * time.Second, ScanMaxDuration: 27 * time.Second})
	quiet := faceClip(66, 30)
	quiet.PulseAmplitude = 1e-5
	late := *syntheticFrames(t, quiet)
	pulse := syntheticFrames(t, faceClip(66, 30))
	late.jpegs = slices.Concat(late.jpegs[:7*30], pulse.jpegs[7*30:])

	value, _ := e.mint(scanOnce())
	c := e.dial()
	o := openSession(t, c, openMessage(value, Scan, nil))
	if o.DurationMs != 12000 || o.MaxDurationMs != 27000 {
		t.Errorf("opened: duration %d ms, longest %d ms; want 12000 and 27000", o.DurationMs, o.MaxDurationMs)
	}
	done := make(chan struct{})
	defer close(done)
	go e.stream(c, o.SessionID, &late, 0, len(late.times), 0, 2, done)
	m, vitals := untilResult(t, c)
	if hr := hrOf(t, m); math.Abs(hr-pulse.truth.HeartRate) > 3 {
		t.Errorf("hr %.1f bpm, truth %.1f", hr, pulse.truth.HeartRate)
	}
	longer := 0
	for _, v := range vitals {
		// Of the duration, then of the longest; near 12 s either, as the
		// face came in the first frame or a few frames later.
		of12, of27 := min(float64(v.ElapsedMs)/12000, 1), float64(v.ElapsedMs)/27000
		near := func(want float64) bool { return math.Abs(v.Progress-want) <= 0.05 }
		switch {
		case v.ElapsedMs > 12500:
			longer++
			if !near(of27) {
				t.Errorf("progress %v at %d ms, want %.2f of the longest", v.Progress, v.ElapsedMs, of27)
			}
		case v.ElapsedMs < 11500 && !near(of12), !near(of12) && !near(of27):
			t.Errorf("progress %v at %d ms, want %.2f of the duration", v.Progress, v.ElapsedMs, of12)
		}
		if v.ElapsedMs > 27050 {
			t.Errorf("vitals at %d ms, past the scan's longest", v.ElapsedMs)
		}
	}
	if longer == 0 {
		t.Errorf("no vitals after the scan's duration: %+v", vitals)
	}
	if !strings.Contains(e.logs.String(), `"faint_pulse":true`) {
		t.Error("the log does not say that the scan was given more time")
	}
}

// TestScanCountedFrames: a client that sends its duration's count of
// frames (360 at 30 a second for 12 s, the last 11.967 s after the
// first) and waits has covered the duration: the scan is measured then,
// with its progress at 1, not left to go idle.
func TestScanCountedFrames(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, Config{ScanDuration: 12 * time.Second})
	f := syntheticFrames(t, faceClip(72, 13))
	m, vitals := scanFrames(t, e, f, 12*30, 4)
	if hr := hrOf(t, m); math.Abs(hr-f.truth.HeartRate) > 3 {
		t.Errorf("hr %.1f bpm, truth %.1f", hr, f.truth.HeartRate)
	}
	if len(vitals) > 0 && vitals[len(vitals)-1].Progress > 1 {
		t.Errorf("progress %v", vitals[len(vitals)-1].Progress)
	}
}

// scanFrames opens a scan, streams the first n frames of f at speed
// times their pace, and waits for its result.
func scanFrames(t *testing.T, e *testEnv, f *frames, n int, speed float64) (measureJSON, []vitalsMessage) {
	t.Helper()
	value, _ := e.mint(scanOnce())
	c := e.dial()
	defer c.Close(websocket.StatusNormalClosure, "")
	o := openSession(t, c, openMessage(value, Scan, nil))
	done := make(chan struct{})
	defer close(done)
	go e.stream(c, o.SessionID, f, 0, n, 0, speed, done)
	return untilResult(t, c)
}

// TestScanLateFace: a scan counts its duration from the face's arrival.
// A person who sits down 5 s after the camera starts is measured for the
// whole duration (ended at the duration from the first frame, the 7 s of
// face were refused as a face missing); a client that stops sending at its
// own count of the duration still gets its capture measured as it is.
func TestScanLateFace(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, Config{ScanDuration: 12 * time.Second})
	f := syntheticFrames(t, faceClip(84, 13))
	late := greyFrames(t, 150)
	for i, at := range f.times {
		late.jpegs = append(late.jpegs, f.jpegs[i])
		late.times = append(late.times, 5*time.Second+at)
	}
	scan := func(frames int) (measureJSON, []vitalsMessage) {
		e.clock.advance(time.Second) // past the opening rate
		return scanFrames(t, e, late, frames, 2)
	}

	m, vitals := scan(len(late.times))
	if hr := hrOf(t, m); math.Abs(hr-f.truth.HeartRate) > 3 {
		t.Errorf("hr %.1f bpm, truth %.1f", hr, f.truth.HeartRate)
	}
	for _, v := range vitals {
		if v.ElapsedMs < 4500 && v.Progress != 0 {
			t.Errorf("progress %v at %d ms, before the face", v.Progress, v.ElapsedMs)
		}
		if want := float64(v.ElapsedMs-5000) / 12000; v.ElapsedMs > 6000 && math.Abs(v.Progress-min(want, 1)) > 0.05 {
			t.Errorf("progress %v at %d ms, want %.2f: the face came at 5 s of a 12 s scan", v.Progress, v.ElapsedMs, want)
		}
	}

	// The client stops at 13 s: the scan is measured once the frames have
	// stopped for a moment, over its 8 s of face, too few for a pulse.
	m, _ = scan(13 * 30)
	if m.Status != "ended" {
		t.Fatalf("result %+v", m)
	}
	var hr dsp.Variable
	if err := json.Unmarshal(m.Variables[dsp.HR], &hr); err != nil || hr.Error != dsp.ConformityFacePresence {
		t.Errorf("hr %s, want a face missing from the capture", m.Variables[dsp.HR])
	}
}

package control

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pulsewire/pulsewire/dsp/media"
)

// TestRunExisting runs measures made by POST /measures through each source
// route: 200 with the measure's own inputs; a second run is 400; inputs sent
// with the capture are refused and leave the measure as it was; a measure
// that does not exist or is another client's is 404 with the usual body.
func TestRunExisting(t *testing.T) {
	e := newTestEnv(t, Production)
	_, key := e.client("acme")
	_, otherKey := e.client("other")
	others := e.measureOf(e.do("POST", "/measures", otherKey, `{}`)).ID
	grey, err := os.ReadFile(lavfi(t, "grey-1s.mp4", 1))
	if err != nil {
		t.Fatal(err)
	}
	crops, times := clipFrames(t, 3)
	stamps := strings.Trim(strings.Join(strings.Fields(fmt.Sprint(times)), ","), "[]")
	signal := func(kind string) []byte { b, _ := json.Marshal(pulseSignal(kind, 1.2, 12)); return b }
	type send func(target string) response
	multipartRoute := func(parts func() []part) send {
		return func(target string) response { r, _ := e.upload(target, key, parts()...); return r }
	}
	jsonRoute := func(body []byte) send {
		return func(target string) response {
			return e.send(target, key, "application/json", bytes.NewReader(body))
		}
	}
	for _, tc := range []struct {
		route      string
		send       send
		withInputs send
	}{
		{"rppg/video",
			multipartRoute(func() []part { return []part{file("video", "video/mp4", grey)} }),
			multipartRoute(func() []part { return []part{field("tags", "x"), file("video", "video/mp4", grey)} })},
		{"rppg/images",
			multipartRoute(func() []part { return []part{file("images", "image/jpeg", facePhoto(t))} }),
			multipartRoute(func() []part {
				return []part{field("userData[weight]", "70"), file("images", "image/jpeg", facePhoto(t))}
			})},
		{"rppg/captures",
			multipartRoute(func() []part {
				return []part{file("captures", "image/jpeg", crops[0]), file("captures", "image/jpeg", crops[1]), file("captures", "image/jpeg", crops[2]), field("timestamps", stamps)}
			}),
			multipartRoute(func() []part {
				return []part{field("userData", `{"weight":70}`), file("captures", "image/jpeg", crops[0]), field("timestamps", "0")}
			})},
		{"rppg/signal", jsonRoute(signal("rppg")), jsonRoute([]byte(`{"signal":{"timestamps":[0],"r":[1],"g":[1],"b":[1]},"tags":["x"]}`))},
		{"cppg/signal", jsonRoute(signal("cppg")), jsonRoute([]byte(`{"signal":{"timestamps":[0],"values":[1]},"desiredVariables":["hr"]}`))},
	} {
		t.Run(tc.route, func(t *testing.T) {
			// A measure that does not exist and another client's answer
			// the same 404.
			for _, missing := range []string{"0d4a8c5e-0000-4000-8000-000000000000", others} {
				r := tc.send("/measures/" + missing + "/" + tc.route)
				wantStatus(t, r, http.StatusNotFound)
				wantBody(t, r, notFoundJSON)
			}
			created := e.do("POST", "/measures", key, `{"userData":{"weight":70,"height":175},"desiredVariables":["hr","bmi"],"tags":["two-step"]}`)
			wantStatus(t, created, http.StatusCreated)
			id := e.measureOf(created).ID

			r := tc.withInputs("/measures/" + id + "/" + tc.route)
			wantStatus(t, r, http.StatusBadRequest)
			if got := e.measureOf(e.do("GET", "/measures/"+id, key, nil)); got.Status != "created" || got.StartedAt != nil {
				t.Fatalf("after a refused run: %+v", got)
			}
			if ids := e.mediaFolders(); len(ids) != 0 {
				t.Fatalf("media after a refused run: %v", ids)
			}

			r = tc.send("/measures/" + id + "/" + tc.route)
			wantStatus(t, r, http.StatusOK)
			m := e.measureOf(r)
			if m.ID != id || m.Status != "ended" || strings.Join(m.ReturnedVariables, ",") != "hr,bmi" || string(m.Variables["bmi"].Value) != "22.9" {
				t.Fatalf("run of an existing measure: %s", r.body)
			}
			wantMessage(t, tc.send("/measures/"+id+"/"+tc.route), "the measure has already run")
			wantStatus(t, e.do("DELETE", "/measures/"+id, key, nil), http.StatusOK)
		})
	}
	t.Run("refusals", func(t *testing.T) {
		wantMessage(t, e.send("/measures/nope/cppg/signal", key, "application/json", bytes.NewReader(signal("cppg"))), "id must be a UUID")
	})
}

// TestConcurrentRunsOfOneMeasure: of eight runs of one measure at once,
// exactly one measures; the others are refused.
func TestConcurrentRunsOfOneMeasure(t *testing.T) {
	e := newTestEnv(t, Production)
	_, key := e.client("acme")
	id := e.measureOf(e.do("POST", "/measures", key, `{}`)).ID
	body, _ := json.Marshal(pulseSignal("cppg", 1.2, 12))
	statuses := concurrently(8, func() int {
		return e.send("/measures/"+id+"/cppg/signal", key, "application/json", bytes.NewReader(body)).status
	})
	if statuses[http.StatusOK] != 1 || statuses[http.StatusBadRequest] != 7 {
		t.Fatalf("statuses %v, want one 200 and seven 400", statuses)
	}
}

// TestCreditsOverHTTP: ten runs at once with three credits left: three
// measure, seven are CREDIT_EXCEEDED, three credits are spent.
func TestCreditsOverHTTP(t *testing.T) {
	e := newTestEnv(t, Production)
	c, key, err := e.svc.CreateClient(context.Background(), NewClient{Name: "acme", MonthlyCredits: ptr(int64(3))})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(pulseSignal("cppg", 1.2, 12))
	bodies := make(chan []byte, 10)
	concurrently(10, func() int {
		r := e.send("/measures/cppg/signal", key, "application/json", bytes.NewReader(body))
		bodies <- r.body
		return r.status
	})
	close(bodies)
	exceeded, measured := 0, 0
	for b := range bodies {
		switch {
		case strings.Contains(string(b), `"hr":{"value":null,"error":"CREDIT_EXCEEDED"}`):
			exceeded++
		case strings.Contains(string(b), `"hr":{"value":{"mean"`):
			measured++
		}
	}
	if measured != 3 || exceeded != 7 {
		t.Fatalf("%d measured, %d CREDIT_EXCEEDED; want 3 and 7", measured, exceeded)
	}
	if used, _ := e.db.CreditsUsed(context.Background(), c, e.clock.now()); used != 3 {
		t.Fatalf("used %d credits, want 3", used)
	}
}

// TestPoolFull: with every upload place taken, a run is refused at once
// with 503 and Retry-After, and stores nothing; an upload holds no place
// of the pool, so a run whose body is in still runs; once an upload place
// frees, runs go on.
func TestPoolFull(t *testing.T) {
	az := NewAnalyzer(1, 0, 1, media.VideoOptions{})
	e := newTestEnv(t, Production, withAnalyzer(az))
	_, key := e.client("acme")
	body, _ := json.Marshal(pulseSignal("cppg", 1.2, 12))

	// A slow upload holds the only upload place.
	finish := e.holdPlace(az, key, body)
	if len(az.admitted) != 0 {
		t.Fatal("an upload in progress holds a place of the pool")
	}
	r := e.send("/measures/cppg/signal", key, "application/json", bytes.NewReader(body))
	wantStatus(t, r, http.StatusServiceUnavailable)
	wantBody(t, r, `{"statusCode":503,"message":"Service Unavailable"}`)
	if s, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || s < 1 || s > 60 {
		t.Fatalf("Retry-After %q", r.header.Get("Retry-After"))
	}
	// A full pool is the load, not a fault of the server: a warning.
	if logs := e.logs.String(); !strings.Contains(logs, `"level":"WARN","msg":"request"`) || strings.Contains(logs, `"level":"ERROR"`) {
		t.Fatalf("logs of a 503:\n%s", logs)
	}

	wantStatus(t, finish(), http.StatusCreated)
	wantStatus(t, e.send("/measures/cppg/signal", key, "application/json", bytes.NewReader(body)), http.StatusCreated)
	if total := e.do("GET", "/measures", key, nil).json(t)["total"]; total != 2.0 {
		t.Fatalf("%v measures, want the 2 that ran", total)
	}
}

// TestUploadsHoldNoWorker: bodies trickling in on every upload place but
// one leave the only worker free: a run whose body is in is analysed at
// once. And with the worker busy and no queue, a received run is refused
// with 503 and leaves no media.
func TestUploadsHoldNoWorker(t *testing.T) {
	az := NewAnalyzer(1, 0, 4, media.VideoOptions{})
	e := newTestEnv(t, Production, withAnalyzer(az))
	_, key := e.client("acme")
	body, _ := json.Marshal(pulseSignal("cppg", 1.2, 12))
	var writers []*io.PipeWriter
	var done []chan response
	for range 3 {
		pr, pw := io.Pipe()
		d := make(chan response, 1)
		go func() { d <- e.send("/measures/cppg/signal", key, "application/json", pr) }()
		writers, done = append(writers, pw), append(done, d)
	}
	for len(az.uploads) < 3 {
		time.Sleep(time.Millisecond)
	}
	wantStatus(t, e.send("/measures/cppg/signal", key, "application/json", bytes.NewReader(body)), http.StatusCreated)

	// The worker busy: a received run finds no place.
	release := make(chan struct{})
	busy, err := az.admit()
	if err != nil {
		t.Fatal(err)
	}
	worked := make(chan struct{})
	go func() {
		busy.work(context.Background(), func() error { <-release; return nil })
		close(worked)
	}()
	r := e.send("/measures/cppg/signal", key, "application/json", bytes.NewReader(body))
	wantStatus(t, r, http.StatusServiceUnavailable)
	close(release)
	<-worked
	busy.release()
	if ids, _ := e.svc.media.List(context.Background()); len(ids) != 4 {
		t.Fatalf("media of %d measures, want those of the one that ran and the three arriving", len(ids))
	}
	for i, pw := range writers {
		pw.Write(body)
		pw.Close()
		wantStatus(t, <-done[i], http.StatusCreated)
	}
}

func TestAnalyzerQueue(t *testing.T) {
	az := NewAnalyzer(1, 1, 1, media.VideoOptions{})
	first, err := az.admit()
	if err != nil {
		t.Fatal(err)
	}
	second, err := az.admit()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := az.admit(); ErrorCode(err) != Unavailable {
		t.Fatalf("a third run with one worker and a queue of one: %v", err)
	}
	// The first holds the worker; the second waits for it and gives up
	// when its request ends.
	working, release := make(chan struct{}), make(chan struct{})
	go first.work(context.Background(), func() error { close(working); <-release; return nil })
	<-working
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := second.work(ctx, func() error { t.Error("ran without a worker"); return nil }); err != context.DeadlineExceeded {
		t.Fatalf("waiting run: %v", err)
	}
	close(release)
	ran := false
	if err := second.work(context.Background(), func() error { ran = true; return nil }); err != nil || !ran {
		t.Fatalf("after the worker freed: %v %v", ran, err)
	}
	first.release()
	second.release()
	third, err := az.admit()
	if err != nil {
		t.Fatalf("after both left: %v", err)
	}
	third.release()
}

// TestDisconnectKillsFFmpeg: a client that goes away during the analysis
// of its video cancels the run: ffmpeg is killed, and the measure and its
// media are removed.
func TestDisconnectKillsFFmpeg(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc to see child processes")
	}
	video := faceVideoBytes(t)
	e := newTestEnv(t, Production)
	_, key := e.client("acme")
	srv := httptest.NewServer(e.api)
	defer srv.Close()

	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	w, _ := mw.CreatePart(map[string][]string{
		"Content-Disposition": {`form-data; name="video"; filename="face.mp4"`}, "Content-Type": {"video/mp4"}})
	w.Write(video)
	mw.Close()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/measures/rppg/video", &body)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	answered := make(chan error, 1)
	go func() {
		resp, err := srv.Client().Do(req)
		if err == nil {
			resp.Body.Close()
		}
		answered <- err
	}()

	waitFor(t, 30*time.Second, "ffmpeg to start", func() bool { return len(ffmpegChildren(t)) > 0 })
	cancel()
	if err := <-answered; err == nil {
		t.Fatal("the cancelled request was answered")
	}
	waitFor(t, 10*time.Second, "ffmpeg to end", func() bool { return len(ffmpegChildren(t)) == 0 })
	waitFor(t, 10*time.Second, "the run to be undone", func() bool {
		r := e.do("GET", "/measures", key, nil)
		return r.json(t)["total"] == 0.0 && len(e.mediaFolders()) == 0
	})
	// The handler logs after it has undone the run, so the lines may come
	// a moment after the measure is gone.
	abandoned := func() bool {
		logs := e.logs.String()
		return strings.Contains(logs, "run abandoned: the client went away") && strings.Contains(logs, `"status":499`)
	}
	waitFor(t, 10*time.Second, "the logs to tell the run was abandoned", abandoned)
}

// ffmpegChildren lists the ffmpeg processes this test process started.
func ffmpegChildren(t *testing.T) []int {
	t.Helper()
	var pids []int
	for _, c := range children() {
		if c.command == "ffmpeg" {
			pids = append(pids, c.pid)
		}
	}
	return pids
}

// waitFor polls cond until it holds, or fails the test after d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s after %v", what, d)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestCalibrationFlow: a reference pressure entered after a measure of a
// person calibrates that person's later measures of the same kind.
func TestCalibrationFlow(t *testing.T) {
	e := newTestEnv(t, Production)
	_, key := e.client("acme")
	_, otherKey := e.client("other")
	measure := func(kind string, hz float64, externalID string) measureOf {
		t.Helper()
		body := pulseSignal(kind, hz, 12)
		body["userData"] = map[string]any{"externalId": externalID}
		r := e.sendJSON("/measures/"+kind+"/signal", key, body)
		wantStatus(t, r, http.StatusCreated)
		return e.measureOf(r)
	}
	first := measure("cppg", 1.2, "person-5")
	if c := first.Variables["bp"].code(); c != "NOT_CALIBRATED" {
		t.Fatalf("bp before a calibration: %s", c)
	}
	wantBody(t, e.do("GET", "/external-users/person-5", key, nil), `{"externalId":"person-5","rppgCalibrated":false,"cppgCalibrated":false}`)

	created := e.measureOf(e.do("POST", "/measures", key, `{"userData":{"externalId":"person-5"}}`)).ID
	anonymous := e.measureOf(e.sendJSON("/measures/cppg/signal", key, pulseSignal("cppg", 1.2, 12))).ID
	for _, tc := range []struct {
		name, id, key, body string
		status              int
		msg                 string
	}{
		{"not ended", created, key, `{"systole":125,"diastole":82}`, 400, "the measure has not ended"},
		{"no externalId", anonymous, key, `{"systole":125,"diastole":82}`, 400, "has no userData.externalId"},
		{"out of bounds", first.ID, key, `{"systole":300,"diastole":82}`, 400, "systole must be a number from 60 to 260"},
		{"malformed id", "x", key, `{"systole":125,"diastole":82}`, 400, "id must be a UUID"},
		{"another client's", first.ID, otherKey, `{"systole":125,"diastole":82}`, 404, "Not Found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do("POST", "/measures/"+tc.id+"/calibration", tc.key, tc.body)
			wantStatus(t, r, tc.status)
			if !strings.Contains(string(r.body), tc.msg) {
				t.Fatalf("body %s, want %q", r.body, tc.msg)
			}
		})
	}

	r := e.do("POST", "/measures/"+first.ID+"/calibration", key, `{"systole":125,"diastole":82}`)
	wantStatus(t, r, http.StatusCreated)
	var cal map[string]any
	json.Unmarshal(r.body, &cal)
	if cal["measureId"] != first.ID || cal["externalId"] != "person-5" || cal["kind"] != "cppg" || cal["systole"] != 125.0 || cal["diastole"] != 82.0 || cal["createdAt"] == nil {
		t.Fatalf("calibration %s", r.body)
	}
	wantBody(t, e.do("GET", "/external-users/person-5", key, nil), `{"externalId":"person-5","rppgCalibrated":false,"cppgCalibrated":true}`)

	// A later measure at a faster pulse: the pressure moves up from the
	// cuff's, within the model's bounds.
	later := measure("cppg", 1.5, "person-5")
	var bp struct{ Systole, Diastole float64 }
	if v := later.Variables["bp"]; v.Error != nil || json.Unmarshal(v.Value, &bp) != nil {
		t.Fatalf("bp after a calibration: %s %s", v.Value, v.code())
	}
	if bp.Systole <= 125 || bp.Systole > 140 || bp.Diastole <= 82 || bp.Diastole > 97 {
		t.Fatalf("bp %+v from a 125/82 calibration at a faster pulse", bp)
	}
	// The calibration is the person's and the kind's.
	if c := measure("rppg", 1.5, "person-5").Variables["bp"].code(); c != "NOT_CALIBRATED" {
		t.Fatalf("rppg bp from a cppg calibration: %s", c)
	}
	if c := measure("cppg", 1.5, "person-6").Variables["bp"].code(); c != "NOT_CALIBRATED" {
		t.Fatalf("bp of another person: %s", c)
	}
}

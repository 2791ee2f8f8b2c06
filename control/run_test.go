package control

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/pulsewire/pulsewire/dsp"
	"github.com/pulsewire/pulsewire/storage"
)

func TestReturnedVariables(t *testing.T) {
	all := dsp.AllVariables
	for _, tc := range []struct {
		name                        string
		entitled, desired, unwanted []string
		want                        []string
	}{
		{"neither list: everything entitled", []string{"br", "hr"}, nil, nil, []string{"hr", "br"}},
		{"desired narrows", all, []string{"bp", "hr"}, nil, []string{"hr", "bp"}},
		{"desired cannot grant", []string{"hr"}, []string{"hr", "bp"}, nil, []string{"hr"}},
		{"unwanted excludes", all, nil, []string{"bp", "bmi", "faceBmi", "healthScore", "bpClass", "physicalAge", "strs"}, []string{"hr", "br", "hrv"}},
		{"unwanted of something not entitled", []string{"hr"}, nil, []string{"bp"}, []string{"hr"}},
		{"both", all, []string{"hr", "br"}, []string{"br"}, []string{"hr"}},
		{"desired empty: none", all, []string{}, nil, []string{}},
		{"nothing entitled", []string{}, nil, nil, []string{}},
		{"nothing left", []string{"hr"}, []string{"br"}, nil, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ReturnedVariables(tc.entitled, tc.desired, tc.unwanted)
			if got == nil || !slices.Equal(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// newClient creates a client entitled to variables (nil: all) with
// credits (nil: unlimited).
func (e *testEnv) newClient(name string, variables []string, credits *int64) storage.Client {
	e.t.Helper()
	c, _, err := e.svc.CreateClient(context.Background(), NewClient{Name: name, Variables: variables, MonthlyCredits: credits})
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

func TestStartRunClaimsOnce(t *testing.T) {
	ctx := context.Background()
	e := newTestEnv(t, Production)
	acme, other := e.newClient("acme", nil, nil), e.newClient("other", nil, nil)
	m, err := e.svc.CreateMeasure(ctx, acme, storage.NewMeasure{})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var runs []*Run
	statuses := concurrently(8, func() int {
		r, err := e.svc.StartRun(ctx, acme, RunOf{MeasureID: m.ID}, storage.KindRPPG)
		if err != nil {
			return map[Code]int{Invalid: 400, NotFound: 404}[ErrorCode(err)]
		}
		mu.Lock()
		runs = append(runs, r)
		mu.Unlock()
		return 200
	})
	if statuses[200] != 1 || statuses[400] != 7 {
		t.Fatalf("statuses %v, want one run and seven 400", statuses)
	}
	if got := runs[0].Measure(); got.Status != storage.StatusStarted || got.Kind != "" || got.StartedAt.IsZero() {
		t.Fatalf("started %+v", got)
	}
	for _, tc := range []struct {
		name   string
		client storage.Client
		id     string
		code   Code
	}{
		{"started", acme, m.ID, Invalid},
		{"another client's", other, m.ID, NotFound},
		{"missing", acme, uuid.NewString(), NotFound},
		{"malformed id", acme, "42", Invalid},
		{"upper case id", acme, strings.ToUpper(m.ID), Invalid}, // the same measure, already started
	} {
		if _, err := e.svc.StartRun(ctx, tc.client, RunOf{MeasureID: tc.id}, storage.KindRPPG); ErrorCode(err) != tc.code {
			t.Errorf("%s: %v, want %s", tc.name, err, tc.code)
		}
	}
	if ended, err := runs[0].End(ctx, dsp.Result{}); err != nil || ended.Kind != storage.KindRPPG {
		t.Fatalf("ended %+v %v: the kind comes with the end", ended, err)
	}
	if _, err := e.svc.StartRun(ctx, acme, RunOf{MeasureID: m.ID}, storage.KindRPPG); ErrorCode(err) != Invalid {
		t.Fatalf("run of an ended measure: %v", err)
	}
}

func TestRunInputs(t *testing.T) {
	ctx := context.Background()
	e := newTestEnv(t, Production)
	acme := e.newClient("acme", []string{"hr", "bp", "bpClass", "bmi"}, nil)
	ext := "person-7"
	n := storage.NewMeasure{
		UserData: &storage.UserData{ExternalID: &ext, Sex: ptr("F"), Age: ptr(int64(52)), Weight: ptr(int64(70)),
			Height: ptr(int64(165)), SmokingStatus: ptr("smoker")},
		UnwantedVariables: []string{"bmi"},
		ComputeOptions:    &storage.ComputeOptions{BPClass: &storage.BPClassOptions{Scale: 2}},
	}
	r, err := e.svc.StartRun(ctx, acme, RunOf{New: n}, storage.KindCPPG)
	if err != nil {
		t.Fatal(err)
	}
	in := r.Inputs()
	want := dsp.Inputs{
		Variables:    []string{"hr", "bpClass", "bp"},
		Person:       dsp.Person{AgeYears: 52, Sex: "F", WeightKg: 70, HeightCm: 165, Smoking: "smoker", HasExternalID: true},
		BPClassScale: 2,
	}
	if !slices.Equal(in.Variables, want.Variables) || in.Person != want.Person || in.BPClassScale != 2 || in.Calibration != nil {
		t.Fatalf("inputs %+v, want %+v", in, want)
	}
	if !slices.Equal(r.returned, want.Variables) {
		t.Fatalf("returned %q", r.returned)
	}

	// After a calibration of this person and kind, a later run carries it,
	// anchored to the features of the calibrated measure.
	if _, err := r.End(ctx, dsp.Result{Features: &dsp.Features{HeartRateBpm: 64.5}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Calibrate(ctx, acme, r.Measure().ID, Reference{Systole: 128, Diastole: 84}); err != nil {
		t.Fatal(err)
	}
	later, err := e.svc.StartRun(ctx, acme, RunOf{New: n}, storage.KindCPPG)
	if err != nil {
		t.Fatal(err)
	}
	cal := later.Inputs().Calibration
	if cal == nil || cal.SystoleMmHg != 128 || cal.DiastoleMmHg != 84 || cal.Features.HeartRateBpm != 64.5 {
		t.Fatalf("calibration %+v", cal)
	}
	other, err := e.svc.StartRun(ctx, acme, RunOf{New: n}, storage.KindRPPG)
	if err != nil {
		t.Fatal(err)
	}
	if other.Inputs().Calibration != nil {
		t.Fatal("a cppg calibration reached an rppg run")
	}

	// A client entitled to nothing asks dsp for the signal alone.
	none := e.newClient("none", []string{}, nil)
	r, err = e.svc.StartRun(ctx, none, RunOf{}, storage.KindRPPG)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.returned) != 0 || !slices.Equal(r.Inputs().Variables, signalOnly) {
		t.Fatalf("entitled to nothing: returned %q, inputs %q", r.returned, r.Inputs().Variables)
	}
	res := dsp.AnalyzePPG(dsp.PPG{}, r.Inputs())
	if len(res.Variables) != 0 || res.Signal == nil {
		t.Fatalf("dsp computed %v with signal %v for the signal alone", res.Variables, res.Signal)
	}
}

// result is an analysis with hr, br and hrv, and a variable beyond them.
func result() dsp.Result {
	return dsp.Result{
		Variables: map[string]dsp.Variable{
			"hr":  {Value: dsp.Mean{Mean: 71.5}},
			"br":  {Error: dsp.ConformityInitialisation},
			"bmi": {Value: 22.1},
		},
		Signal:   &dsp.Signal{QualityScore: dsp.Variable{Value: 0.81}},
		Features: &dsp.Features{HeartRateBpm: 71.5},
	}
}

func TestRunEnd(t *testing.T) {
	ctx := context.Background()
	e := newTestEnv(t, Production)
	acme := e.newClient("acme", []string{"hr", "br", "hrv"}, nil)
	r, err := e.svc.StartRun(ctx, acme, RunOf{New: storage.NewMeasure{Tags: []string{"a"}}}, storage.KindRPPG)
	if err != nil {
		t.Fatal(err)
	}
	m, err := r.End(ctx, result())
	if err != nil {
		t.Fatal(err)
	}
	v, _ := json.Marshal(NewMeasureView(m))
	var got map[string]any
	json.Unmarshal(v, &got)
	want := map[string]any{
		"status":            "ended",
		"returnedVariables": []any{"hr", "br", "hrv"},
		"signal":            map[string]any{"qualityScore": map[string]any{"value": 0.81, "error": nil}},
		"variables": map[string]any{
			"hr":  map[string]any{"value": map[string]any{"mean": 71.5}, "error": nil},
			"br":  map[string]any{"value": nil, "error": "CONFORMITY_INITIALISATION"},
			"hrv": map[string]any{"value": nil, "error": "UNKNOWN"}, // asked of dsp, not answered
		},
	}
	for k, w := range want {
		if g, w := mustJSON(t, got[k]), mustJSON(t, w); string(g) != string(w) {
			t.Errorf("%s: %s, want %s", k, g, w)
		}
	}
	if got["startedAt"] == nil || got["endedAt"] == nil {
		t.Errorf("times missing: %s", v)
	}
	if used, _ := e.db.CreditsUsed(ctx, acme, e.clock.now()); used != 1 {
		t.Fatalf("used %d credits, want 1", used)
	}
	// The run has ended: it cannot end again.
	if _, err := r.End(ctx, result()); ErrorCode(err) != NotFound {
		t.Fatalf("second end: %v", err)
	}
}

func TestRunCreditsUnderConcurrency(t *testing.T) {
	ctx := context.Background()
	e := newTestEnv(t, Production)
	acme := e.newClient("acme", []string{"hr", "br"}, ptr(int64(3)))

	// A run that computed nothing costs nothing.
	r, err := e.svc.StartRun(ctx, acme, RunOf{}, storage.KindCPPG)
	if err != nil {
		t.Fatal(err)
	}
	failed := dsp.Result{Variables: map[string]dsp.Variable{"hr": {Error: dsp.MissingSignal}, "br": {Error: dsp.MissingSignal}}}
	if m, err := r.End(ctx, failed); err != nil || !strings.Contains(string(m.Variables), "MISSING_SIGNAL") {
		t.Fatalf("free run: %s %v", m.Variables, err)
	}

	// Ten runs end at once with three credits left: three keep their
	// values, seven are CREDIT_EXCEEDED, three are charged.
	const n = 10
	var mu sync.Mutex
	var ended []storage.Measure
	concurrently(n, func() int {
		r, err := e.svc.StartRun(ctx, acme, RunOf{}, storage.KindCPPG)
		if err != nil {
			t.Error(err)
			return 0
		}
		m, err := r.End(ctx, result())
		if err != nil {
			t.Error(err)
			return 0
		}
		mu.Lock()
		ended = append(ended, m)
		mu.Unlock()
		return 0
	})
	exceeded := 0
	for _, m := range ended {
		if strings.Contains(string(m.Variables), "CREDIT_EXCEEDED") {
			exceeded++
			if string(m.Variables) != `{"br":{"value":null,"error":"CREDIT_EXCEEDED"},"hr":{"value":null,"error":"CREDIT_EXCEEDED"}}` ||
				string(m.Signal) != `{"qualityScore":{"value":null,"error":"CREDIT_EXCEEDED"}}` {
				t.Errorf("no credit: variables %s, signal %s", m.Variables, m.Signal)
			}
		}
	}
	if len(ended) != n || exceeded != n-3 {
		t.Fatalf("%d ended, %d CREDIT_EXCEEDED; want %d and %d", len(ended), exceeded, n, n-3)
	}
	if used, _ := e.db.CreditsUsed(ctx, acme, e.clock.now()); used != 3 {
		t.Fatalf("used %d credits, want 3", used)
	}
}

func TestRunAbandon(t *testing.T) {
	ctx := context.Background()
	e := newTestEnv(t, Production)
	acme := e.newClient("acme", nil, nil)
	media := e.media.(*storage.MediaDir)

	// A new measure goes, with its media.
	r, err := e.svc.StartRun(ctx, acme, RunOf{New: storage.NewMeasure{Tags: []string{"x"}}}, storage.KindRPPG)
	if err != nil {
		t.Fatal(err)
	}
	id := r.Measure().ID
	if err := e.media.Put(ctx, id, "video", strings.NewReader("frames")); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel() // a client that went away: the clean-up still runs
	if err := r.Abandon(cancelled); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Measure(ctx, acme, id); ErrorCode(err) != NotFound {
		t.Fatalf("abandoned new measure: %v", err)
	}
	if _, err := os.Stat(filepath.Join(media.Root, id)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("media of an abandoned run: %v", err)
	}

	// An existing measure goes back to created and can run again.
	m, err := e.svc.CreateMeasure(ctx, acme, storage.NewMeasure{})
	if err != nil {
		t.Fatal(err)
	}
	r, err = e.svc.StartRun(ctx, acme, RunOf{MeasureID: m.ID}, storage.KindRPPG)
	if err != nil {
		t.Fatal(err)
	}
	e.media.Put(ctx, m.ID, "video", strings.NewReader("frames"))
	if err := r.Abandon(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := e.svc.Measure(ctx, acme, m.ID)
	if err != nil || got.Status != storage.StatusCreated || !got.StartedAt.IsZero() || got.Kind != "" {
		t.Fatalf("abandoned run of an existing measure: %+v %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(media.Root, m.ID)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("media of an abandoned run: %v", err)
	}
	if _, err := e.svc.StartRun(ctx, acme, RunOf{MeasureID: m.ID}, storage.KindRPPG); err != nil {
		t.Fatalf("run after an abandoned one: %v", err)
	}
}

// instance is another instance of the server on e's database, named
// name, joined with u.
func (e *testEnv) instance(t *testing.T, name string, u Upkeep) *Service {
	t.Helper()
	db, err := storage.Open(context.Background(), e.file, storage.Options{Now: e.clock.now, Instance: name})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	svc := NewService(Production, db, e.media)
	if err := svc.Join(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	return svc
}

// TestSweepRuns: runs of an instance gone for longer than the run limit
// end with PROCESSOR_FAIL on every returned variable and no charge; runs
// of a live instance, and of one gone for less, are left alone.
func TestSweepRuns(t *testing.T) {
	ctx := context.Background()
	e := newTestEnv(t, Production)
	limit := 10 * time.Minute
	acme := e.newClient("acme", []string{"hr", "br"}, ptr(int64(5)))
	// Another instance on the same database, which dies.
	dead := e.instance(t, "dead", Upkeep{Address: "127.0.0.1:1", RunLimit: limit})
	if err := e.svc.Join(ctx, Upkeep{Address: "127.0.0.1:2", RunLimit: limit}); err != nil {
		t.Fatal(err)
	}
	hook, err := e.db.CreateWebhookEndpoint(ctx, acme, "https://hooks.example/", []string{storage.EventMeasureEnded}, "s", MaxWebhookEndpoints)
	if err != nil {
		t.Fatal(err)
	}
	twoStep, _ := e.svc.CreateMeasure(ctx, acme, storage.NewMeasure{DesiredVariables: []string{"hr"}})
	cut, err := dead.StartRun(ctx, acme, RunOf{MeasureID: twoStep.ID}, storage.KindCPPG)
	if err != nil {
		t.Fatal(err)
	}
	newCut, err := dead.StartRun(ctx, acme, RunOf{}, storage.KindRPPG)
	if err != nil {
		t.Fatal(err)
	}
	live, err := e.svc.StartRun(ctx, acme, RunOf{}, storage.KindRPPG)
	if err != nil {
		t.Fatal(err)
	}
	// What the cut runs stored: an upload, and one cut short.
	if err := e.media.Put(ctx, cut.Measure().ID, "signal.json", strings.NewReader("{}")); err != nil {
		t.Fatal(err)
	}
	partial := filepath.Join(e.media.(*storage.MediaDir).Root, newCut.Measure().ID, ".put-1") // a crash's, mid-upload
	if err := os.MkdirAll(filepath.Dir(partial), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(partial, []byte("fra"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Within the limit nothing is swept, however long the runs have been
	// going.
	e.clock.advance(limit)
	if n, err := e.svc.SweepRuns(ctx, limit); err != nil || n != 0 {
		t.Fatalf("swept %d (%v) within the limit", n, err)
	}
	// The live instance beats; the dead one does not.
	e.clock.advance(time.Millisecond)
	if err := e.db.Heartbeat(ctx, "127.0.0.1:2"); err != nil {
		t.Fatal(err)
	}
	if n, err := e.svc.SweepRuns(ctx, limit); err != nil || n != 2 {
		t.Fatalf("swept %d (%v), want the dead instance's 2", n, err)
	}
	for _, tc := range []struct {
		id       string
		kind     storage.Kind
		returned []string
	}{{cut.Measure().ID, storage.KindCPPG, []string{"hr"}}, {newCut.Measure().ID, storage.KindRPPG, []string{"hr", "br"}}} {
		m, err := e.svc.Measure(ctx, acme, tc.id)
		if err != nil || m.Status != storage.StatusEnded || m.Kind != tc.kind || !slices.Equal(m.ReturnedVariables, tc.returned) || m.Signal != nil {
			t.Fatalf("swept measure %+v %v", m, err)
		}
		// What a cut run stored is no capture: gone, and said so.
		if m.MediaKept == nil || *m.MediaKept || slices.Contains(e.mediaFolders(), tc.id) {
			t.Fatalf("swept measure's media: kept %v, folders %v", m.MediaKept, e.mediaFolders())
		}
		var vars map[string]dsp.Variable
		json.Unmarshal(m.Variables, &vars)
		for _, name := range tc.returned {
			if v := vars[name]; v.Error != dsp.ProcessorFail {
				t.Fatalf("%s of a swept run: %+v", name, v)
			}
		}
	}
	if used, _ := e.db.CreditsUsed(ctx, acme, e.clock.now()); used != 0 {
		t.Fatalf("a swept run cost %d credits", used)
	}
	if m, _ := e.svc.Measure(ctx, acme, live.Measure().ID); m.Status != storage.StatusStarted {
		t.Fatalf("the live instance's run was swept: %+v", m)
	}
	// The live run still ends; the swept ones cannot.
	if _, err := live.End(ctx, result()); err != nil {
		t.Fatal(err)
	}
	if _, err := cut.End(ctx, result()); ErrorCode(err) != NotFound {
		t.Fatalf("end of a swept run: %v", err)
	}
	// A swept run ends its measure like any other: the client's webhook
	// learns of all three ends, once each.
	ds, err := e.db.WebhookDeliveries(ctx, acme, hook.ID)
	ended := map[string]bool{}
	for _, d := range ds {
		ended[d.Event.MeasureID] = d.Event.Type == storage.EventMeasureEnded
	}
	if err != nil || len(ds) != 3 || !ended[cut.Measure().ID] || !ended[newCut.Measure().ID] || !ended[live.Measure().ID] {
		t.Fatalf("webhook deliveries %+v %v, want one measure.ended for each of the 3 runs", ds, err)
	}
}

// TestOutage: the sweep judges no instance gone while the database is out
// of reach, nor until two beats after it is back; without an outage it
// always may.
func TestOutage(t *testing.T) {
	beat := 5 * time.Second
	at := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	var o outage
	down := errors.New("connection refused")
	for _, step := range []struct {
		after time.Duration
		err   error
		over  bool
	}{
		{0, nil, true},
		{beat, nil, true},
		{beat, down, false}, // every heartbeat fails from here
		{20 * time.Minute, down, false},
		{beat, nil, false}, // back: the others have not beaten yet
		{beat, nil, false},
		{beat, nil, true}, // two beats since
		{beat, down, false},
		{beat, nil, false},
	} {
		at = at.Add(step.after)
		o.beat(step.err, at)
		if got := o.over(at, beat); got != step.over {
			t.Fatalf("at %s after a beat that failed with %v: over %v, want %v", at.Format(time.TimeOnly), step.err, got, step.over)
		}
	}
}

// TestJoinAlone: a server alone on its database (SQLite) that starts
// after a crash ends the runs the crash cut short and removes the uploads
// it left of no measure at once, however recent, where an instance among
// others waits for the run limit.
func TestJoinAlone(t *testing.T) {
	ctx := context.Background()
	e := newTestEnv(t, Production)
	acme := e.newClient("acme", []string{"hr"}, nil)
	// The process before the crash: its runs stay started.
	crashed := e.instance(t, "crashed", Upkeep{Address: "127.0.0.1:1", Alone: true})
	twoStep, _ := crashed.CreateMeasure(ctx, acme, storage.NewMeasure{})
	cut, err := crashed.StartRun(ctx, acme, RunOf{MeasureID: twoStep.ID}, storage.KindRPPG)
	if err != nil {
		t.Fatal(err)
	}
	orphan := uuid.NewString() // a create-and-run's upload, stored before its measure
	if err := e.media.Put(ctx, orphan, "video", strings.NewReader("half an upload")); err != nil {
		t.Fatal(err)
	}
	// Restarted a second later, as one server among others would be: the
	// run and the upload might be another's, and stay.
	e.clock.advance(time.Second)
	if err := e.svc.Join(ctx, Upkeep{Address: "127.0.0.1:2"}); err != nil {
		t.Fatal(err)
	}
	if m, _ := e.svc.Measure(ctx, acme, cut.Measure().ID); m.Status != storage.StatusStarted || !slices.Contains(e.mediaFolders(), orphan) {
		t.Fatalf("among others, within the run limit: %s, media %v", m.Status, e.mediaFolders())
	}
	// Alone, it knows they are the crash's.
	if err := e.svc.Join(ctx, Upkeep{Address: "127.0.0.1:2", Alone: true}); err != nil {
		t.Fatal(err)
	}
	m, err := e.svc.Measure(ctx, acme, cut.Measure().ID)
	if err != nil || m.Status != storage.StatusEnded || !strings.Contains(string(m.Variables), string(dsp.ProcessorFail)) {
		t.Fatalf("the run the crash cut short: %+v %v", m, err)
	}
	if slices.Contains(e.mediaFolders(), orphan) {
		t.Fatalf("the upload the crash left: media %v", e.mediaFolders())
	}
	// This server's own runs are its own, however young.
	live, err := e.svc.StartRun(ctx, acme, RunOf{}, storage.KindRPPG)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := e.svc.SweepRuns(ctx, DefaultRunLimit); err != nil || n != 0 {
		t.Fatalf("swept %d (%v) after the start", n, err)
	}
	if _, err := live.End(ctx, result()); err != nil {
		t.Fatal(err)
	}
}

// TestSweepMedia: media of no measure go once older than the grace, media
// of a measure in any state stay.
func TestSweepMedia(t *testing.T) {
	ctx := context.Background()
	e := newTestEnv(t, Production)
	acme := e.newClient("acme", nil, nil)
	media := e.media.(*storage.MediaDir)
	put := func(id string, age time.Duration) {
		t.Helper()
		if err := e.media.Put(ctx, id, "video", strings.NewReader("frames")); err != nil {
			t.Fatal(err)
		}
		at := time.Now().Add(-age)
		os.Chtimes(filepath.Join(media.Root, id), at, at)
	}
	const grace = time.Hour
	created, _ := e.svc.CreateMeasure(ctx, acme, storage.NewMeasure{})
	started, err := e.svc.StartRun(ctx, acme, RunOf{}, storage.KindRPPG)
	if err != nil {
		t.Fatal(err)
	}
	orphan, young := uuid.NewString(), uuid.NewString()
	put(created.ID, 2*grace)
	put(started.Measure().ID, 2*grace)
	put(orphan, 2*grace)
	put(young, grace/2) // an upload whose measure another instance is about to store
	if n, err := e.svc.SweepMedia(ctx, grace); err != nil || n != 1 {
		t.Fatalf("swept %d (%v), want the orphan", n, err)
	}
	left := e.mediaFolders()
	slices.Sort(left)
	want := []string{created.ID, started.Measure().ID, young}
	slices.Sort(want)
	if !slices.Equal(left, want) {
		t.Fatalf("media left %v, want %v", left, want)
	}
}

func TestParseReference(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		msg        string // "" when accepted
	}{
		{"typical", `{"systole":120,"diastole":80}`, ""},
		{"decimals", `{"systole":120.5,"diastole":79.5}`, ""},
		{"lowest", `{"systole":60,"diastole":30}`, ""},
		{"highest", `{"systole":260,"diastole":160}`, ""},
		{"systole too low", `{"systole":59.9,"diastole":40}`, "systole must be a number from 60 to 260"},
		{"systole too high", `{"systole":260.1,"diastole":80}`, "systole must be a number from 60 to 260"},
		{"diastole too low", `{"systole":120,"diastole":29.9}`, "diastole must be a number from 30 to 160"},
		{"diastole too high", `{"systole":200,"diastole":160.1}`, "diastole must be a number from 30 to 160"},
		{"equal", `{"systole":100,"diastole":100}`, "systole must be higher than diastole"},
		{"inverted", `{"systole":80,"diastole":120}`, "systole must be higher than diastole"},
		{"a string", `{"systole":"120","diastole":80}`, "systole must be a number"},
		{"missing", `{"systole":120}`, "diastole must be a number"},
		{"unknown member", `{"systole":120,"diastole":80,"pulse":60}`, "property pulse should not exist"},
		{"not an object", `[120,80]`, "must be a JSON object"},
		{"empty", ``, "must be a JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseReference([]byte(tc.body))
			switch {
			case tc.msg == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.msg != "" && (ErrorCode(err) != Invalid || !strings.Contains(err.Error(), tc.msg)):
				t.Fatalf("error %v, want %q", err, tc.msg)
			}
		})
	}
}

func TestCalibrate(t *testing.T) {
	ctx := context.Background()
	e := newTestEnv(t, Production)
	acme, other := e.newClient("acme", nil, nil), e.newClient("other", nil, nil)
	ext := "person-9"
	ref := Reference{Systole: 121, Diastole: 78}
	withID := storage.NewMeasure{UserData: &storage.UserData{ExternalID: &ext}}

	created, _ := e.svc.CreateMeasure(ctx, acme, withID)
	run := func(n storage.NewMeasure) string {
		r, err := e.svc.StartRun(ctx, acme, RunOf{New: n}, storage.KindRPPG)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.End(ctx, result()); err != nil {
			t.Fatal(err)
		}
		return r.Measure().ID
	}
	anonymous, ended := run(storage.NewMeasure{}), run(withID)
	for _, tc := range []struct {
		name   string
		client storage.Client
		id     string
		code   Code
	}{
		{"not ended", acme, created.ID, Invalid},
		{"no externalId", acme, anonymous, Invalid},
		{"another client's", other, ended, NotFound},
		{"missing", acme, uuid.NewString(), NotFound},
		{"malformed id", acme, "x", Invalid},
	} {
		if _, err := e.svc.Calibrate(ctx, tc.client, tc.id, ref); ErrorCode(err) != tc.code {
			t.Errorf("%s: %v, want %s", tc.name, err, tc.code)
		}
	}
	cal, err := e.svc.Calibrate(ctx, acme, ended, ref)
	if err != nil || cal.ExternalID != ext || cal.Kind != storage.KindRPPG || string(cal.Features) != `{"hr":71.5}` {
		t.Fatalf("calibration %+v %v", cal, err)
	}
	u, err := e.svc.ExternalUser(ctx, acme, ext)
	if err != nil || !u.RPPGCalibrated || u.CPPGCalibrated {
		t.Fatalf("external user %+v %v", u, err)
	}
}

func ptr[T any](v T) *T { return &v }

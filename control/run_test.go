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
	if !slices.Equal(r.ReturnedVariables(), want.Variables) {
		t.Fatalf("returned %q", r.ReturnedVariables())
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
	if len(r.ReturnedVariables()) != 0 || !slices.Equal(r.Inputs().Variables, signalOnly) {
		t.Fatalf("entitled to nothing: returned %q, inputs %q", r.ReturnedVariables(), r.Inputs().Variables)
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

func TestRecover(t *testing.T) {
	ctx := context.Background()
	e := newTestEnv(t, Production)
	acme := e.newClient("acme", nil, nil)
	media := e.media.(*storage.MediaDir)
	put := func(id string) {
		if err := e.media.Put(ctx, id, "video", strings.NewReader("frames")); err != nil {
			t.Fatal(err)
		}
	}
	// What a crash leaves: a create-and-run and a two-step run cut short
	// (with their media), an upload whose measure was never stored, and a
	// half-written file; beside an ended measure and a created one.
	cut, err := e.svc.StartRun(ctx, acme, RunOf{}, storage.KindRPPG)
	if err != nil {
		t.Fatal(err)
	}
	put(cut.Measure().ID)
	twoStep, _ := e.svc.CreateMeasure(ctx, acme, storage.NewMeasure{})
	if _, err := e.svc.StartRun(ctx, acme, RunOf{MeasureID: twoStep.ID}, storage.KindRPPG); err != nil {
		t.Fatal(err)
	}
	put(twoStep.ID)
	orphan := uuid.NewString()
	put(orphan)
	os.WriteFile(filepath.Join(media.Root, orphan, ".put-123"), []byte("half"), 0o600)
	done, err := e.svc.StartRun(ctx, acme, RunOf{}, storage.KindRPPG)
	if err != nil {
		t.Fatal(err)
	}
	put(done.Measure().ID)
	if _, err := done.End(ctx, result()); err != nil {
		t.Fatal(err)
	}
	created, _ := e.svc.CreateMeasure(ctx, acme, storage.NewMeasure{})

	rec, err := e.svc.Recover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rec != (Recovery{Reset: 1, Removed: 1, Orphans: 3}) {
		t.Fatalf("recovery %+v", rec)
	}
	if _, err := e.svc.Measure(ctx, acme, cut.Measure().ID); ErrorCode(err) != NotFound {
		t.Fatalf("create-and-run cut short: %v", err)
	}
	for _, id := range []string{twoStep.ID, created.ID} {
		if m, err := e.svc.Measure(ctx, acme, id); err != nil || m.Status != storage.StatusCreated {
			t.Fatalf("after recovery %+v %v", m, err)
		}
	}
	ids, _ := e.media.List(ctx)
	if !slices.Equal(ids, []string{done.Measure().ID}) {
		t.Fatalf("media left %v, want only the ended measure's", ids)
	}
	if again, err := e.svc.Recover(ctx); err != nil || again != (Recovery{}) {
		t.Fatalf("second recovery %+v %v", again, err)
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

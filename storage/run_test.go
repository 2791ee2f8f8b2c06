package storage

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
)

func TestStartMeasure(t *testing.T) {
	engines(t, func(t *testing.T, e *testEngine) {
		ctx := context.Background()
		db := e.open(t, Options{})
		acme, other := newTestClient(t, db, "acme"), newTestClient(t, db, "other")
		m, err := db.CreateMeasure(ctx, acme, NewMeasure{Tags: []string{"x"}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.StartMeasure(ctx, other, m.ID, KindRPPG); !errors.Is(err, ErrNotFound) {
			t.Fatalf("another client started it: %v", err)
		}
		if _, err := db.StartMeasure(ctx, acme, uuid.NewString(), KindRPPG); !errors.Is(err, ErrNotFound) {
			t.Fatalf("start of a missing measure: %v", err)
		}
		// Of concurrent starts exactly one wins; the others are told the
		// measure has run.
		if n := succeeded(t, 8, ErrAlreadyRun, func(int) error {
			_, err := db.StartMeasure(ctx, acme, m.ID, KindRPPG)
			return err
		}); n != 1 {
			t.Fatalf("%d starts succeeded, want 1", n)
		}
		got, err := db.Measure(ctx, acme, m.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != StatusStarted || got.Kind != "" || got.StartedAt.IsZero() || !got.EndedAt.IsZero() {
			t.Fatalf("started measure %+v", got)
		}
		// Another client can neither end nor reset the run, and is charged
		// nothing for trying.
		if _, err := db.EndMeasure(ctx, other, m.ID, end(true)); !errors.Is(err, ErrNotFound) {
			t.Fatalf("another client ended it: %v", err)
		}
		if err := db.ResetMeasure(ctx, other, m.ID); !errors.Is(err, ErrNotFound) {
			t.Fatalf("another client reset it: %v", err)
		}
		if got, err := db.Measure(ctx, acme, m.ID); err != nil || got.Status != StatusStarted {
			t.Fatalf("after another client's end and reset: %+v %v", got, err)
		}
		if used, err := db.CreditsUsed(ctx, other, time.Now()); err != nil || used != 0 {
			t.Fatalf("another client charged %d credits (%v) for acme's run", used, err)
		}

		// A failed run puts it back; it can then run again.
		if err := db.ResetMeasure(ctx, acme, m.ID); err != nil {
			t.Fatal(err)
		}
		if err := db.ResetMeasure(ctx, acme, m.ID); !errors.Is(err, ErrNotFound) {
			t.Fatalf("reset of a created measure: %v", err)
		}
		got, _ = db.Measure(ctx, acme, m.ID)
		if got.Status != StatusCreated || got.Kind != "" || !got.StartedAt.IsZero() {
			t.Fatalf("reset measure %+v", got)
		}
		if _, err := db.StartMeasure(ctx, acme, m.ID, KindRPPG); err != nil {
			t.Fatal(err)
		}
	})
}

func TestStartNewMeasure(t *testing.T) {
	engines(t, func(t *testing.T, e *testEngine) {
		ctx := context.Background()
		clock := &testClock{t: time.Date(2026, 5, 4, 3, 2, 1, 0, time.UTC)}
		db := e.open(t, Options{Now: clock.now})
		acme := newTestClient(t, db, "acme")
		id := uuid.NewString()
		m, err := db.StartNewMeasure(ctx, acme, id, NewMeasure{Tags: []string{"a"}, UserData: &UserData{Age: ptr(int64(30))}}, KindRPPG)
		if err != nil {
			t.Fatal(err)
		}
		got, err := db.Measure(ctx, acme, id)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != StatusStarted || got.Kind != "" || !got.StartedAt.Equal(got.CreatedAt) || *got.UserData.Age != 30 {
			t.Fatalf("stored %+v, returned %+v", got, m)
		}
		if _, err := db.StartNewMeasure(ctx, acme, id, NewMeasure{}, KindRPPG); err == nil {
			t.Fatal("a second measure with the same id was stored")
		}
		page, err := db.Measures(ctx, acme, MeasureQuery{Take: 10, Tags: &TagFilter{Operator: TagsContain, Values: []string{"a"}}})
		if err != nil || page.Total != 1 {
			t.Fatalf("tag index after a started insert: %+v %v", page, err)
		}
	})
}

// end is a MeasureEnd of a contact run whose outcome and no-credit outcome
// are told apart by their variables.
func end(chargeable bool) MeasureEnd {
	return MeasureEnd{
		Kind:              KindCPPG,
		ReturnedVariables: []string{"hr"},
		Outcome: Outcome{
			Signal:    json.RawMessage(`{"qualityScore":{"value":0.8,"error":null}}`),
			Variables: json.RawMessage(`{"hr":{"value":{"mean":70},"error":null}}`),
			Features:  json.RawMessage(`{"hr":70}`),
		},
		Chargeable: chargeable,
		NoCredit: Outcome{
			Signal:    json.RawMessage(`{"qualityScore":{"value":null,"error":"CREDIT_EXCEEDED"}}`),
			Variables: json.RawMessage(`{"hr":{"value":null,"error":"CREDIT_EXCEEDED"}}`),
		},
	}
}

func TestEndMeasureChargesExactlyTheCreditsLeft(t *testing.T) {
	engines(t, func(t *testing.T, e *testEngine) {
		ctx := context.Background()
		clock := &testClock{t: time.Date(2026, 5, 31, 23, 59, 0, 0, time.UTC)}
		db := e.open(t, Options{Now: clock.now})
		acme := newTestClient(t, db, "acme")
		if _, err := db.UpdateClient(ctx, acme.ID, ClientUpdate{MonthlyCredits: ptr(ptr(int64(3)))}); err != nil {
			t.Fatal(err)
		}
		start := func(n int) []string {
			ids := make([]string, n)
			for i := range ids {
				ids[i] = uuid.NewString()
				if _, err := db.StartNewMeasure(ctx, acme, ids[i], NewMeasure{}, KindRPPG); err != nil {
					t.Fatal(err)
				}
			}
			return ids
		}
		// A run that computed nothing costs nothing.
		free := start(1)[0]
		if _, err := db.EndMeasure(ctx, acme, free, end(false)); err != nil {
			t.Fatal(err)
		}
		// Ten runs end at once with three credits: three are charged and keep
		// their outcome; seven carry the no-credit outcome.
		ids := start(10)
		next := make(chan string, len(ids))
		for _, id := range ids {
			next <- id
		}
		if n := succeeded(t, len(ids), nil, func(int) error {
			_, err := db.EndMeasure(ctx, acme, <-next, end(true))
			return err
		}); n != len(ids) {
			t.Fatalf("%d of %d ends succeeded", n, len(ids))
		}
		counted := map[string]int{}
		for _, id := range ids {
			m, err := db.Measure(ctx, acme, id)
			if err != nil {
				t.Fatal(err)
			}
			if m.Status != StatusEnded || m.Kind != KindCPPG || m.EndedAt.IsZero() || !slices.Equal(m.ReturnedVariables, []string{"hr"}) {
				t.Fatalf("ended %+v", m)
			}
			counted[string(m.Variables)]++
		}
		if counted[string(end(true).Outcome.Variables)] != 3 || counted[string(end(true).NoCredit.Variables)] != 7 {
			t.Fatalf("outcomes %v", counted)
		}
		if used, err := db.CreditsUsed(ctx, acme, clock.now()); err != nil || used != 3 {
			t.Fatalf("used %d (%v), want 3", used, err)
		}
		// With no credit left even a run that computed nothing shows the
		// no-credit outcome.
		if m, err := db.EndMeasure(ctx, acme, start(1)[0], end(false)); err != nil || string(m.Variables) != string(end(false).NoCredit.Variables) {
			t.Fatalf("free run without credit: %s %v", m.Variables, err)
		}

		// The next calendar month (UTC) starts afresh.
		clock.set(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC))
		m, err := db.EndMeasure(ctx, acme, start(1)[0], end(true))
		if err != nil || string(m.Variables) != string(end(true).Outcome.Variables) {
			t.Fatalf("first run of June: %s %v", m.Variables, err)
		}
		if used, _ := db.CreditsUsed(ctx, acme, clock.now()); used != 1 {
			t.Fatalf("June used %d, want 1", used)
		}
		if used, _ := db.CreditsUsed(ctx, acme, time.Date(2026, 5, 15, 0, 0, 0, 0, time.UTC)); used != 3 {
			t.Fatalf("May used %d, want 3", used)
		}
		// Deleting a charged measure gives no credit back.
		if err := db.DeleteMeasure(ctx, acme, m.ID); err != nil {
			t.Fatal(err)
		}
		if used, _ := db.CreditsUsed(ctx, acme, clock.now()); used != 1 {
			t.Fatalf("June used %d after a deletion, want 1", used)
		}
	})
}

func TestEndMeasureUnlimitedAndGone(t *testing.T) {
	engines(t, func(t *testing.T, e *testEngine) {
		ctx := context.Background()
		db := e.open(t, Options{})
		acme := newTestClient(t, db, "acme")
		for range 3 {
			id := uuid.NewString()
			if _, err := db.StartNewMeasure(ctx, acme, id, NewMeasure{}, KindRPPG); err != nil {
				t.Fatal(err)
			}
			m, err := db.EndMeasure(ctx, acme, id, end(true))
			if err != nil || string(m.Variables) != string(end(true).Outcome.Variables) || string(m.Signal) != string(end(true).Outcome.Signal) {
				t.Fatalf("unlimited client: %+v %v", m, err)
			}
			// An ended measure cannot end again.
			if _, err := db.EndMeasure(ctx, acme, id, end(true)); !errors.Is(err, ErrNotFound) {
				t.Fatalf("second end: %v", err)
			}
		}
		if used, _ := db.CreditsUsed(ctx, acme, time.Now()); used != 3 {
			t.Fatalf("unlimited client used %d, want 3 counted", used)
		}
		// A measure deleted during its run ends nowhere and costs nothing.
		id := uuid.NewString()
		if _, err := db.StartNewMeasure(ctx, acme, id, NewMeasure{}, KindRPPG); err != nil {
			t.Fatal(err)
		}
		if err := db.DeleteMeasure(ctx, acme, id); err != nil {
			t.Fatal(err)
		}
		if _, err := db.EndMeasure(ctx, acme, id, end(true)); !errors.Is(err, ErrNotFound) {
			t.Fatalf("end of a deleted measure: %v", err)
		}
		if used, _ := db.CreditsUsed(ctx, acme, time.Now()); used != 3 {
			t.Fatalf("used %d after a lost run, want 3", used)
		}
		// Nor does a measure that was never started, or whose failed run
		// put it back in the created state: only a run ends a measure.
		created, err := db.CreateMeasure(ctx, acme, NewMeasure{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.EndMeasure(ctx, acme, created.ID, end(true)); !errors.Is(err, ErrNotFound) {
			t.Fatalf("end of a measure never started: %v", err)
		}
		if _, err := db.StartMeasure(ctx, acme, created.ID, KindRPPG); err != nil {
			t.Fatal(err)
		}
		if err := db.ResetMeasure(ctx, acme, created.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := db.EndMeasure(ctx, acme, created.ID, end(true)); !errors.Is(err, ErrNotFound) {
			t.Fatalf("end of a measure reset after its run failed: %v", err)
		}
		if m, err := db.Measure(ctx, acme, created.ID); err != nil || m.Status != StatusCreated || m.Variables != nil {
			t.Fatalf("after refused ends: %+v, %v; want it created and without variables", m, err)
		}
		if used, _ := db.CreditsUsed(ctx, acme, time.Now()); used != 3 {
			t.Fatalf("used %d after ends of a measure not started, want 3", used)
		}
	})
}

// TestStaleRuns: of two instances on one database, the runs of the one
// gone for longer than the limit are stale, the other's are not, and
// neither are runs in any other state.
func TestStaleRuns(t *testing.T) {
	engines(t, func(t *testing.T, e *testEngine) {
		ctx := context.Background()
		start := time.Date(2026, 5, 4, 3, 0, 0, 0, time.UTC)
		clock := &testClock{t: start}
		a := e.openNamed(t, "shared", Options{Now: clock.now, Instance: "a"})
		b := e.openNamed(t, "shared", Options{Now: clock.now, Instance: "b"})
		for _, db := range []*DB{a, b} {
			if err := db.Heartbeat(ctx, db.Instance()+":8080"); err != nil {
				t.Fatal(err)
			}
		}
		acme := newTestClient(t, a, "acme")
		created, err := a.CreateMeasures(ctx, acme, []NewMeasure{{Tags: []string{"t"}}, {}, {}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.StartMeasure(ctx, acme, created[0].ID, KindCPPG); err != nil {
			t.Fatal(err)
		}
		ofA, ofB, legacy, ended := uuid.NewString(), uuid.NewString(), uuid.NewString(), uuid.NewString()
		for _, s := range []struct {
			db *DB
			id string
		}{{a, ofA}, {b, ofB}, {a, legacy}, {b, ended}} {
			if _, err := s.db.StartNewMeasure(ctx, acme, s.id, NewMeasure{}, KindRPPG); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := b.EndMeasure(ctx, acme, ended, end(true)); err != nil {
			t.Fatal(err)
		}
		// A run started before runs named their instance.
		if _, err := a.writer().Exec(ctx, `UPDATE measures SET run_owner = NULL, run_kind = NULL WHERE id = ?`, legacy); err != nil {
			t.Fatal(err)
		}
		const limit = 5 * time.Minute
		stale := func() map[string]Kind {
			t.Helper()
			runs, err := b.StaleRuns(ctx, clock.now().Add(-limit))
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]Kind{}
			for _, r := range runs {
				if r.Client.ID != acme.ID || r.Measure.Status != StatusStarted {
					t.Fatalf("stale run %+v", r)
				}
				got[r.Measure.ID] = r.Kind
			}
			return got
		}
		clock.advance(limit - time.Second)
		if got := stale(); len(got) != 1 || got[legacy] != "" {
			t.Fatalf("stale within the limit: %v, want only the run of no instance", got)
		}
		// b is alive, a is not heard of again.
		clock.advance(2 * time.Second)
		if err := b.Heartbeat(ctx, "b:8080"); err != nil {
			t.Fatal(err)
		}
		want := map[string]Kind{created[0].ID: KindCPPG, ofA: KindRPPG, legacy: ""}
		if got := stale(); !maps.Equal(got, want) {
			t.Fatalf("stale past the limit: %v, want %v", got, want)
		}
		if n, err := b.ForgetInstances(ctx, clock.now().Add(-limit)); err != nil || n != 1 {
			t.Fatalf("forgot %d instances (%v), want a", n, err)
		}
		if got := stale(); !maps.Equal(got, want) {
			t.Fatalf("stale once a is forgotten: %v, want %v", got, want)
		}
	})
}

// TestLiveSessions: a session held by one instance is found by another,
// with the address it is reached at, until it is released or its instance
// leaves.
func TestLiveSessions(t *testing.T) {
	engines(t, func(t *testing.T, e *testEngine) {
		ctx := context.Background()
		a := e.openNamed(t, "shared", Options{Instance: "a"})
		b := e.openNamed(t, "shared", Options{Instance: "b"})
		if err := a.Heartbeat(ctx, "10.0.0.1:8080"); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"s1", "s2"} {
			if err := a.HoldSession(ctx, id); err != nil {
				t.Fatal(err)
			}
		}
		if in, err := b.SessionHolder(ctx, "s1"); err != nil || in.ID != "a" || in.Address != "10.0.0.1:8080" {
			t.Fatalf("holder of s1: %+v %v", in, err)
		}
		if _, err := b.SessionHolder(ctx, "nope"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("holder of an unknown session: %v", err)
		}
		// Only the holder releases a session.
		if err := b.ReleaseSession(ctx, "s1"); err != nil {
			t.Fatal(err)
		}
		if _, err := b.SessionHolder(ctx, "s1"); err != nil {
			t.Fatalf("released by another instance: %v", err)
		}
		if err := a.ReleaseSession(ctx, "s1"); err != nil {
			t.Fatal(err)
		}
		if _, err := b.SessionHolder(ctx, "s1"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("after release: %v", err)
		}
		if err := a.Leave(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := b.SessionHolder(ctx, "s2"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("after its instance left: %v", err)
		}
	})
}

func TestExistingAmong(t *testing.T) {
	engines(t, func(t *testing.T, e *testEngine) {
		ctx := context.Background()
		db := e.open(t, Options{})
		acme := newTestClient(t, db, "acme")
		created, err := db.CreateMeasures(ctx, acme, []NewMeasure{{}, {}})
		if err != nil {
			t.Fatal(err)
		}
		ids := []string{created[0].ID, created[1].ID}
		for range 600 { // more than one batch
			ids = append(ids, uuid.NewString())
		}
		found, err := db.ExistingAmong(ctx, ids)
		if err != nil || len(found) != 2 || !found[created[0].ID] || !found[created[1].ID] {
			t.Fatalf("existing among: %v %v", found, err)
		}
	})
}

func TestCalibrate(t *testing.T) {
	engines(t, func(t *testing.T, e *testEngine) {
		ctx := context.Background()
		clock := &testClock{t: time.Date(2026, 5, 4, 3, 2, 1, 0, time.UTC)}
		db := e.open(t, Options{Now: clock.now})
		acme, other := newTestClient(t, db, "acme"), newTestClient(t, db, "other")
		person := &UserData{ExternalID: ptr("p-1")}
		run := func(c Client, ud *UserData, kind Kind) string {
			id := uuid.NewString()
			if _, err := db.StartNewMeasure(ctx, c, id, NewMeasure{UserData: ud}, KindRPPG); err != nil {
				t.Fatal(err)
			}
			e := end(true)
			e.Kind = kind
			if _, err := db.EndMeasure(ctx, c, id, e); err != nil {
				t.Fatal(err)
			}
			return id
		}
		first := run(acme, person, KindRPPG)
		anonymous := run(acme, nil, KindRPPG)
		created, err := db.CreateMeasure(ctx, acme, NewMeasure{UserData: person})
		if err != nil {
			t.Fatal(err)
		}
		for name, id := range map[string]string{"no externalId": anonymous, "not ended": created.ID, "missing": uuid.NewString()} {
			if _, err := db.Calibrate(ctx, acme, id, 120, 80); !errors.Is(err, ErrNotFound) {
				t.Errorf("%s: %v", name, err)
			}
		}
		if _, err := db.Calibrate(ctx, other, first, 120, 80); !errors.Is(err, ErrNotFound) {
			t.Fatalf("another client calibrated: %v", err)
		}
		if _, err := db.LatestCalibration(ctx, acme, "p-1", KindRPPG); !errors.Is(err, ErrNotFound) {
			t.Fatalf("calibration before any: %v", err)
		}
		cal, err := db.Calibrate(ctx, acme, first, 121, 79)
		if err != nil {
			t.Fatal(err)
		}
		if cal.ExternalID != "p-1" || cal.Kind != KindRPPG || cal.MeasureID != first || cal.Systole != 121 || cal.Diastole != 79 ||
			string(cal.Features) != `{"hr":70}` || !cal.CreatedAt.Equal(clock.now()) {
			t.Fatalf("calibration %+v", cal)
		}
		// A second reference for the same measure replaces the first; a later
		// measure's reference is the newest.
		clock.set(clock.now().Add(time.Minute))
		if _, err := db.Calibrate(ctx, acme, first, 125, 82); err != nil {
			t.Fatal(err)
		}
		clock.set(clock.now().Add(time.Minute))
		second := run(acme, person, KindRPPG)
		if _, err := db.Calibrate(ctx, acme, second, 130, 85); err != nil {
			t.Fatal(err)
		}
		latest, err := db.LatestCalibration(ctx, acme, "p-1", KindRPPG)
		if err != nil || latest.MeasureID != second || latest.Systole != 130 {
			t.Fatalf("latest %+v %v", latest, err)
		}
		u, err := db.ExternalUser(ctx, acme, "p-1")
		if err != nil || !u.RPPGCalibrated || u.CPPGCalibrated {
			t.Fatalf("external user %+v %v", u, err)
		}
		if _, err := db.LatestCalibration(ctx, acme, "p-1", KindCPPG); !errors.Is(err, ErrNotFound) {
			t.Fatalf("cppg calibration from an rppg measure: %v", err)
		}
		// Another client's p-1 is another person: acme's references
		// neither calibrate its measures nor show in its answers.
		run(other, person, KindRPPG)
		if _, err := db.LatestCalibration(ctx, other, "p-1", KindRPPG); !errors.Is(err, ErrNotFound) {
			t.Fatalf("another client's calibration of its p-1: %v", err)
		}
		if u, err := db.ExternalUser(ctx, other, "p-1"); err != nil || u.RPPGCalibrated || u.CPPGCalibrated {
			t.Fatalf("another client's p-1: %+v %v", u, err)
		}
		// The calibration outlives the measure it came from.
		if err := db.DeleteMeasure(ctx, acme, second); err != nil {
			t.Fatal(err)
		}
		if latest, err := db.LatestCalibration(ctx, acme, "p-1", KindRPPG); err != nil || latest.MeasureID != second {
			t.Fatalf("after deleting its measure: %+v %v", latest, err)
		}
	})
}

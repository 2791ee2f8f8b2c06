package storage

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"
)

func TestMeasureRoundTrip(t *testing.T) {
	engines(t, func(t *testing.T, e *testEngine) {
		ctx := context.Background()
		clock := &testClock{t: time.Date(2026, 5, 4, 3, 2, 1, 987_654_321, time.UTC)}
		db := e.open(t, Options{Now: clock.now})
		acme, other := newTestClient(t, db, "acme"), newTestClient(t, db, "other")
		for _, n := range []NewMeasure{
			{},
			{UserData: &UserData{}, Tags: []string{}},
			{
				UserData: &UserData{ExternalID: ptr("p-1"), Sex: ptr("F"), Age: ptr(int64(40)), Weight: ptr(int64(60)),
					Height: ptr(int64(170)), SmokingStatus: ptr("non-smoker")},
				DesiredVariables:  []string{"hr", "br"},
				UnwantedVariables: []string{},
				Tags:              []string{"b", "a", "b"},
				ComputeOptions:    &ComputeOptions{BPClass: &BPClassOptions{Scale: 2}},
			},
		} {
			m, err := db.CreateMeasure(ctx, acme, n)
			if err != nil {
				t.Fatal(err)
			}
			if m.Status != StatusCreated || m.Kind != "" || !m.StartedAt.IsZero() || m.CreatedAt.Nanosecond()%1e6 != 0 {
				t.Fatalf("created %+v", m)
			}
			got, err := db.Measure(ctx, acme, m.ID)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, m) {
				t.Fatalf("read back\n%+v\nwant\n%+v", got, m)
			}
			if _, err := db.Measure(ctx, other, m.ID); !errors.Is(err, ErrNotFound) {
				t.Fatalf("another client read it: %v", err)
			}
		}
	})
}

func TestDeleteMeasure(t *testing.T) {
	engines(t, func(t *testing.T, e *testEngine) {
		ctx := context.Background()
		db := e.open(t, Options{})
		acme, other := newTestClient(t, db, "acme"), newTestClient(t, db, "other")
		m, err := db.CreateMeasure(ctx, acme, NewMeasure{Tags: []string{"x"}})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.DeleteMeasure(ctx, other, m.ID); !errors.Is(err, ErrNotFound) {
			t.Fatalf("another client deleted it: %v", err)
		}
		if n := succeeded(t, 8, ErrNotFound, func(int) error { return db.DeleteMeasure(ctx, acme, m.ID) }); n != 1 {
			t.Fatalf("%d deletions succeeded, want 1", n)
		}
		// The tag index lets go of the measure with it.
		var sets, members, count int
		db.reader().QueryRow(ctx, `SELECT count(*) FROM tag_sets`).Scan(&sets)
		db.reader().QueryRow(ctx, `SELECT count(*) FROM tag_set_members`).Scan(&members)
		db.reader().QueryRow(ctx, `SELECT measures FROM clients WHERE key = ?`, acme.key).Scan(&count)
		if sets != 0 || members != 0 || count != 0 {
			t.Fatalf("after delete: %d tag sets, %d members, client count %d", sets, members, count)
		}
	})
}

func TestExternalUser(t *testing.T) {
	engines(t, func(t *testing.T, e *testEngine) {
		ctx := context.Background()
		db := e.open(t, Options{})
		acme, other := newTestClient(t, db, "acme"), newTestClient(t, db, "other")
		if _, err := db.CreateMeasure(ctx, acme, NewMeasure{UserData: &UserData{ExternalID: ptr("p-1")}}); err != nil {
			t.Fatal(err)
		}
		got, err := db.ExternalUser(ctx, acme, "p-1")
		if err != nil || got != (ExternalUser{ExternalID: "p-1"}) {
			t.Fatalf("got %+v, %v", got, err)
		}
		if _, err := db.writer().Exec(ctx, `INSERT INTO calibrations (client, external_id, kind, measure_id, systole, diastole, created_at)
		VALUES (?, 'p-1', 'cppg', 'm', 120, 80, 0)`, acme.key); err != nil {
			t.Fatal(err)
		}
		if got, _ := db.ExternalUser(ctx, acme, "p-1"); !got.CPPGCalibrated || got.RPPGCalibrated {
			t.Fatalf("after a cppg calibration: %+v", got)
		}
		for _, tc := range []struct {
			name string
			c    Client
			id   string
		}{{"another client", other, "p-1"}, {"unknown id", acme, "p-2"}} {
			if _, err := db.ExternalUser(ctx, tc.c, tc.id); !errors.Is(err, ErrNotFound) {
				t.Errorf("%s: %v", tc.name, err)
			}
		}
	})
}

func TestMeasureJSONColumnsStayArrays(t *testing.T) {
	engines(t, func(t *testing.T, e *testEngine) {
		// An empty tag list is stored as [] and never as null: the API always
		// answers an array.
		ctx := context.Background()
		db := e.open(t, Options{})
		acme := newTestClient(t, db, "acme")
		m, err := db.CreateMeasure(ctx, acme, NewMeasure{})
		if err != nil {
			t.Fatal(err)
		}
		var tags string
		db.reader().QueryRow(ctx, `SELECT tags FROM measures WHERE id = ?`, m.ID).Scan(&tags)
		var v []string
		if err := json.Unmarshal([]byte(tags), &v); err != nil || v == nil {
			t.Fatalf("tags column %q", tags)
		}
	})
}

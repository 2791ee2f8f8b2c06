package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/pulsewire/pulsewire/dsp"
	"github.com/pulsewire/pulsewire/storage"
)

// An instance of the server keeps up with the others that share its
// environment's database (one on SQLite, any number on PostgreSQL): it
// says it is alive with a heartbeat, and it sweeps what an instance that
// died left, so that no measure stays started for ever and no upload of a
// run that never got its record stays in the media. A dead instance is one
// not heard of for longer than the run limit: by then any run it could
// still have ended is over, so the sweep never ends a live run.

// DefaultRunLimit is the longest a run may last, from its start to its
// end: above a session's longest life (10 minutes by default) and a run's
// upload limit (10 minutes) with its analysis.
const DefaultRunLimit = 15 * time.Minute

// Upkeep configures KeepUp.
type Upkeep struct {
	// Address is where the other instances reach this instance's listener
	// of the environment (host:port), to hand on a session's request.
	Address string
	// RunLimit is the longest a run lasts (DefaultRunLimit when 0). A run
	// whose instance has not been heard of for longer is ended with
	// PROCESSOR_FAIL; media of no measure that have not changed for longer
	// are removed.
	RunLimit time.Duration
	// Alone says that no other instance can be working on the database
	// (SQLite, whose one server holds a lock of its folder): at Join,
	// every instance recorded before is gone, so the runs a crash cut
	// short are ended and the uploads it left of no measure removed at
	// once, not after the run limit.
	Alone bool
	// Logger receives what a sweep did; nil: nothing.
	Logger *slog.Logger
}

func (u Upkeep) withDefaults() Upkeep {
	if u.RunLimit <= 0 {
		u.RunLimit = DefaultRunLimit
	}
	if u.Logger == nil {
		u.Logger = slog.New(slog.DiscardHandler)
	}
	return u
}

// period is how often an instance says it is alive and sweeps the runs:
// a quarter of the run limit, at most every 5 seconds for the heartbeat
// and every minute for the sweep.
func (u Upkeep) period() (heartbeat, sweep time.Duration) {
	return min(u.RunLimit/4, 5*time.Second), min(u.RunLimit/4, time.Minute)
}

// Join records this instance in the database and sweeps once, media
// included: call it at start-up, before serving. Media are swept only here:
// listing an object store is long, and what it finds is rare.
func (s *Service) Join(ctx context.Context, u Upkeep) error {
	u = u.withDefaults()
	gone := u.RunLimit
	if u.Alone {
		gone = 0 // every instance recorded so far: swept before this one beats
	}
	if _, err := s.sweepRuns(ctx, u, gone); err != nil {
		return err
	}
	if err := s.db.Heartbeat(ctx, u.Address); err != nil {
		return err
	}
	n, err := s.SweepMedia(ctx, gone)
	if n > 0 {
		u.Logger.Warn("removed media of measures that do not exist (uploads a crash cut off)", "env", string(s.env), "measures", n)
	}
	if err != nil {
		return err
	}
	// The scratch folder is this instance's own: whatever is in it at
	// start-up belongs to runs a crash of this instance cut short.
	n, err = s.clearScratch(ctx)
	if n > 0 {
		u.Logger.Warn("removed the scratch files of runs a crash cut short", "env", string(s.env), "measures", n)
	}
	return err
}

// KeepUp beats and sweeps until ctx ends, then takes the instance out of
// the database: what it held is then handed on to nobody. Errors (a
// database out of reach) are logged, and the next beat tries again.
func (s *Service) KeepUp(ctx context.Context, u Upkeep) {
	u = u.withDefaults()
	beat, sweep := u.period()
	beats, sweeps := time.NewTicker(beat), time.NewTicker(sweep)
	defer beats.Stop()
	defer sweeps.Stop()
	var db outage
	for {
		select {
		case <-ctx.Done():
			stop, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			if err := s.db.Leave(stop); err != nil {
				u.Logger.Warn("leave", "env", string(s.env), "err", err)
			}
			return
		case <-beats.C:
			err := s.db.Heartbeat(ctx, u.Address)
			if err != nil && ctx.Err() == nil {
				u.Logger.Warn("heartbeat", "env", string(s.env), "err", err)
			}
			db.beat(err, time.Now())
		case <-sweeps.C:
			if !db.over(time.Now(), beat) {
				continue
			}
			if _, err := s.sweepRuns(ctx, u, u.RunLimit); err != nil && ctx.Err() == nil {
				u.Logger.Error("sweep runs", "env", string(s.env), "err", err)
			}
		}
	}
}

// outage follows, through this instance's heartbeats, whether the
// database is out of reach. While it is, every instance's heartbeat fails
// with this one's, so once it is back no instance may be judged gone by
// the time it was last heard of until each has had two beats to be heard
// again: an outage longer than the run limit must not end the runs of
// instances that live.
type outage struct {
	failing bool
	back    time.Time // when a heartbeat went through after failing
}

// beat records how a heartbeat at now went.
func (o *outage) beat(err error, now time.Time) {
	if err == nil && o.failing {
		o.back = now
	}
	o.failing = err != nil
}

// over reports whether, at now, the database is in reach and has been for
// two beats: the sweep may judge which instances are gone.
func (o *outage) over(now time.Time, beat time.Duration) bool {
	return !o.failing && now.Sub(o.back) >= 2*beat
}

// sweepRuns ends the runs of the instances not heard of for longer than
// gone, and logs it.
func (s *Service) sweepRuns(ctx context.Context, u Upkeep, gone time.Duration) (int, error) {
	n, err := s.SweepRuns(ctx, gone)
	if n > 0 {
		u.Logger.Warn("ended runs of an instance that is gone (a crash cut them short)", "env", string(s.env), "runs", n,
			"gone_for_over", gone.String())
	}
	return n, err
}

// SweepRuns ends the runs whose instance has not been heard of for longer
// than runLimit, and forgets such instances. A swept measure ends as a run
// ends, with every returned variable PROCESSOR_FAIL and no signal, and
// costs no credit; what its run stored is removed, and it says it kept no
// media. It returns how
// many runs it ended; of instances sweeping at once, each run is ended by
// one.
func (s *Service) SweepRuns(ctx context.Context, runLimit time.Duration) (int, error) {
	gone := s.db.Now().Add(-runLimit)
	runs, err := s.db.StaleRuns(ctx, gone)
	if err != nil {
		return 0, err
	}
	ended := 0
	for _, r := range runs {
		m := r.Measure
		returned := ReturnedVariables(r.Client.Variables, m.DesiredVariables, m.UnwantedVariables)
		failed := make(map[string]dsp.Variable, len(returned))
		for _, name := range returned {
			failed[name] = dsp.Variable{Error: dsp.ProcessorFail}
		}
		variables, err := json.Marshal(failed)
		if err != nil {
			return ended, err
		}
		// What a cut run stored is no capture of the measure (an upload
		// cut short, or one never analysed): it goes before the measure
		// ends, which says it kept none.
		if err := s.captureMedia().Remove(ctx, m.ID); err != nil {
			return ended, fmt.Errorf("sweep run of %s: %w", m.ID, err)
		}
		out := storage.Outcome{Variables: variables}
		kept := false
		_, err = s.db.EndMeasure(ctx, r.Client, m.ID, storage.MeasureEnd{
			Kind: r.Kind, ReturnedVariables: returned, Outcome: out, NoCredit: out, MediaKept: &kept,
		})
		switch {
		case errors.Is(err, storage.ErrNotFound): // ended or deleted meanwhile
		case err != nil:
			return ended, fmt.Errorf("sweep run of %s: %w", m.ID, err)
		default:
			ended++
			s.wakeWebhooks()
		}
	}
	_, err = s.db.ForgetInstances(ctx, gone)
	return ended, err
}

// SweepMedia removes the media of measures that do not exist and have not
// changed for grace: what a crash left of an upload whose measure was never
// stored. An upload younger than grace may belong to a run in progress on
// another instance, which stores the measure after its media, and is left
// alone. It returns how many measures' media it removed.
func (s *Service) SweepMedia(ctx context.Context, grace time.Duration) (int, error) {
	stored, err := s.media.List(ctx)
	if err != nil {
		return 0, fmt.Errorf("sweep media: %w", err)
	}
	before := time.Now().Add(-grace) // the media's own clock: the wall's
	var old []string
	for _, m := range stored {
		if m.Modified.Before(before) {
			old = append(old, m.ID)
		}
	}
	exists, err := s.db.ExistingAmong(ctx, old)
	if err != nil {
		return 0, fmt.Errorf("sweep media: %w", err)
	}
	removed := 0
	for _, id := range old {
		if exists[id] {
			continue
		}
		if err := s.media.Remove(ctx, id); err != nil {
			return removed, fmt.Errorf("sweep media: %w", err)
		}
		removed++
	}
	return removed, nil
}

// Instance names this instance, as the other instances know it.
func (s *Service) Instance() string { return s.db.Instance() }

// HoldSession records that this instance holds the live session id, so
// that another instance can hand its requests on (SessionHolder); release
// it with ReleaseSession when the session ends.
func (s *Service) HoldSession(ctx context.Context, id string) error { return s.db.HoldSession(ctx, id) }

// ReleaseSession forgets that this instance holds the session id.
func (s *Service) ReleaseSession(ctx context.Context, id string) error {
	return s.db.ReleaseSession(ctx, id)
}

// SessionHolder returns the instance that holds the live session id;
// NotFound when none does.
func (s *Service) SessionHolder(ctx context.Context, id string) (storage.Instance, error) {
	return s.db.SessionHolder(ctx, id)
}

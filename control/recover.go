package control

import (
	"context"
	"fmt"
)

// Recovery says what Recover repaired.
type Recovery struct {
	// Reset counts measures whose two-step run a crash cut short: back to
	// created, they can run again.
	Reset int
	// Removed counts measures a create-and-run inserted and a crash cut
	// short: removed, as a failed run removes them.
	Removed int
	// Orphans counts media folders removed because no ended measure owns
	// them: what a crash left of an upload.
	Orphans int
}

// Recover repairs what a crash left, so that no partial state survives a
// restart: a run cut short is undone as Run.Abandon would have undone it
// (measures back to created, or removed), and every media folder that does
// not belong to an ended measure is removed. Call it once at start-up,
// before serving: a run in progress would look cut short.
func (s *Service) Recover(ctx context.Context) (Recovery, error) {
	var rec Recovery
	var err error
	if rec.Reset, rec.Removed, err = s.db.RecoverRuns(ctx); err != nil {
		return rec, err
	}
	ids, err := s.media.List(ctx)
	if err != nil {
		return rec, fmt.Errorf("recover: %w", err)
	}
	ended, err := s.db.EndedAmong(ctx, ids)
	if err != nil {
		return rec, fmt.Errorf("recover: %w", err)
	}
	for _, id := range ids {
		if ended[id] {
			continue
		}
		if err := s.media.Remove(ctx, id); err != nil {
			return rec, fmt.Errorf("recover: %w", err)
		}
		rec.Orphans++
	}
	n, err := s.clearScratch(ctx)
	rec.Orphans += n
	return rec, err
}

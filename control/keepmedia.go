package control

import (
	"context"
	"fmt"

	"github.com/pulsewire/pulsewire/storage"
)

// A server may keep no media (KeepNoMedia): an upload is then written to a
// scratch folder only for its analysis, and removed before its measure
// ends, which records that it kept none (Measure.MediaKept). Media kept
// before are left as they are, until their measures are deleted.

// KeepNoMedia keeps no capture as a measure's media: a run stores its
// upload in scratch, which holds it only while the run lasts, and nothing
// of it is in the measures' media. What a crash leaves in scratch is
// removed by Join, at the next start.
func KeepNoMedia(scratch storage.Media) ServiceOption {
	return func(s *Service) { s.scratch = scratch }
}

// captureMedia is where a run stores its capture: the measures' media, or
// the scratch folder when none are kept.
func (s *Service) captureMedia() storage.Media {
	if s.scratch != nil {
		return s.scratch
	}
	return s.media
}

// settleMedia readies the run's media for its end and reports whether they
// stay as the measure's: when none are kept, the capture is removed before
// the measure ends, so an ended measure that says it kept none never has
// any, even after a crash between the two steps.
func (r *Run) settleMedia(ctx context.Context) (kept bool, err error) {
	if !r.media {
		return false, nil
	}
	if r.svc.scratch == nil {
		return true, nil
	}
	if err := r.svc.scratch.Remove(ctx, r.measure.ID); err != nil {
		return false, fmt.Errorf("remove the capture of %s: %w", r.measure.ID, err)
	}
	return false, nil
}

// clearScratch removes whatever runs a crash cut short left in the scratch
// folder, and says how many measures' files it removed.
func (s *Service) clearScratch(ctx context.Context) (int, error) {
	if s.scratch == nil {
		return 0, nil
	}
	ids, err := s.scratch.List(ctx)
	if err != nil {
		return 0, fmt.Errorf("clear scratch: %w", err)
	}
	for _, id := range ids {
		if err := s.scratch.Remove(ctx, id.ID); err != nil {
			return 0, fmt.Errorf("clear scratch: %w", err)
		}
	}
	return len(ids), nil
}

package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/pulsewire/pulsewire/dsp"
	"github.com/pulsewire/pulsewire/storage"
)

// Run is one measurement of a measure, whatever carried the
// capture: the REST run routes and the session server's scan and realtime
// chains all measure through it. StartRun claims the measure (it is then
// started); the caller analyses the capture with Inputs and either ends
// the run with End, or undoes it with Abandon. A Run belongs to one
// goroutine. A live session, for instance:
//
//	run, err := svc.StartRun(ctx, client, control.RunOf{New: inputs}, storage.KindRPPG) // or RunOf{MeasureID: id}
//	stream := dsp.NewStream(cascade, run.Inputs())
//	// ... stream.Push(frame, at) for each frame ...
//	m, err := run.End(ctx, stream.Result()) // control.NewMeasureView(m) is what the client sees
//	// and, when the session fails before the end: run.Abandon(ctx)
type Run struct {
	svc      *Service
	client   storage.Client
	measure  storage.Measure
	kind     storage.Kind
	byRun    bool     // a new measure, which a failed run removes
	media    bool     // the capture is stored as media (a run route's upload)
	returned []string // returnedVariables: what the client is entitled to here
	inputs   dsp.Inputs
}

// RunOf says which measure a run measures.
type RunOf struct {
	// MeasureID names an existing measure of the client, in the created
	// state: the two-step form. Empty for a new
	// measure.
	MeasureID string
	// New holds the inputs of a new measure (a create-and-run), used when
	// MeasureID is empty.
	New storage.NewMeasure
	// NewID is the id of the new measure, when the caller chose it in
	// advance (the REST routes store an upload under it before the record
	// exists); empty means a fresh UUID.
	NewID string
}

// StartRun claims a measure of c for a run from kind (the measure gets the
// kind when the run ends) and works out what the run computes. An existing
// measure goes from created to started in one conditional update, so of two
// concurrent runs exactly one proceeds; the other, like a run of a measure
// already started or ended, is Invalid (400). A malformed id is Invalid, and
// a measure that does not exist or is another client's is NotFound. A new
// measure is stored already started.
func (s *Service) StartRun(ctx context.Context, c storage.Client, of RunOf, kind storage.Kind) (*Run, error) {
	r := &Run{svc: s, client: c, kind: kind}
	var err error
	if of.MeasureID != "" {
		id, perr := parseID(of.MeasureID)
		if perr != nil {
			return nil, perr
		}
		r.measure, err = s.db.StartMeasure(ctx, c, id, kind)
		if errors.Is(err, storage.ErrAlreadyRun) {
			return nil, invalidf("the measure has already run or is running: a measure runs once")
		}
	} else {
		id := of.NewID
		if id == "" {
			id = uuid.NewString()
		}
		r.byRun = true
		r.measure, err = s.db.StartNewMeasure(ctx, c, id, of.New, kind)
	}
	if err != nil {
		return nil, err
	}
	if err := r.plan(ctx); err != nil {
		r.Abandon(ctx)
		return nil, err
	}
	return r, nil
}

// Measure is the measure being run, as it was when the run started.
func (r *Run) Measure() storage.Measure { return r.measure }

// StoredMedia says that the run stored its capture as the measure's media
// (an upload), which End then keeps or removes as the server keeps media.
func (r *Run) StoredMedia() { r.media = true }

// Inputs says what the analysis computes and gives it the person's data
// and calibration.
func (r *Run) Inputs() dsp.Inputs { return r.inputs }

// signalOnly is the variable list that asks dsp for no variable at all: dsp
// reads an empty list as "every variable", so a run whose client is
// entitled to none names something that is no variable, and gets the
// signal alone, which the measure still shows.
var signalOnly = []string{"-"}

// PersonOf is what the analysis reads of a measure's userData.
func PersonOf(u *storage.UserData) dsp.Person {
	if u == nil {
		return dsp.Person{}
	}
	return dsp.Person{
		AgeYears: intOf(u.Age), Sex: stringOf(u.Sex), WeightKg: intOf(u.Weight), HeightCm: intOf(u.Height),
		Smoking: stringOf(u.SmokingStatus), HasExternalID: u.ExternalID != nil,
	}
}

// plan works out the run's returnedVariables and dsp inputs from the
// measure, the client's entitlements and the person's calibration.
func (r *Run) plan(ctx context.Context) error {
	m := r.measure
	r.returned = ReturnedVariables(r.client.Variables, m.DesiredVariables, m.UnwantedVariables)
	in := dsp.Inputs{Variables: r.returned, BPClassScale: 3}
	if len(r.returned) == 0 {
		in.Variables = signalOnly
	}
	if o := m.ComputeOptions; o != nil && o.BPClass != nil {
		in.BPClassScale = int(o.BPClass.Scale)
	}
	if u := m.UserData; u != nil {
		in.Person = PersonOf(u)
		// bp needs the calibration, and bpClass and healthScore use the
		// pressure it gives when there is one.
		if u.ExternalID != nil {
			cal, err := r.svc.db.LatestCalibration(ctx, r.client, *u.ExternalID, r.kind)
			switch {
			case err == nil:
				in.Calibration = &dsp.Calibration{SystoleMmHg: cal.Systole, DiastoleMmHg: cal.Diastole}
				if cal.Features != nil {
					if err := json.Unmarshal(cal.Features, &in.Calibration.Features); err != nil {
						return fmt.Errorf("calibration features: %w", err)
					}
				}
			case !errors.Is(err, storage.ErrNotFound):
				return err
			}
		}
	}
	r.inputs = in
	return nil
}

// ReturnedVariables is the measure's returnedVariables: the variables the
// client is entitled to, narrowed to desired when it is not nil and less
// unwanted, in the order of dsp.AllVariables. Both lists only narrow: a
// variable the client is not entitled to is never returned, and an empty
// result is a valid outcome, not a failure.
func ReturnedVariables(entitled, desired, unwanted []string) []string {
	returned := []string{}
	for _, v := range dsp.AllVariables {
		if slices.Contains(entitled, v) && (desired == nil || slices.Contains(desired, v)) && !slices.Contains(unwanted, v) {
			returned = append(returned, v)
		}
	}
	return returned
}

// End stores the analysis res as the measure's outcome and ends the run,
// in one transaction (storage.EndMeasure): the kind, returnedVariables,
// signal, the variables it lists and no other, endedAt, and the month's
// credit. A measure that computed anything (one returned variable with a
// value) costs one credit; with none left this month every returned
// variable is CREDIT_EXCEEDED, and so is signal.qualityScore, and nothing
// is charged. End returns the ended measure.
func (r *Run) End(ctx context.Context, res dsp.Result) (storage.Measure, error) {
	variables := make(map[string]dsp.Variable, len(r.returned))
	noCredit := make(map[string]dsp.Variable, len(r.returned))
	chargeable := false
	for _, name := range r.returned {
		v, ok := res.Variables[name]
		if !ok {
			// dsp answers every variable it is asked for; should one be
			// missing, say so rather than drop it.
			v = dsp.Variable{Error: dsp.Unknown}
		}
		variables[name] = v
		noCredit[name] = dsp.Variable{Error: dsp.CreditExceeded}
		chargeable = chargeable || v.Error == ""
	}
	e := storage.MeasureEnd{Kind: r.kind, ReturnedVariables: r.returned, Chargeable: chargeable}
	kept, err := r.settleMedia(ctx)
	if err != nil {
		return storage.Measure{}, fmt.Errorf("end run: %w", err)
	}
	e.MediaKept = &kept
	if e.Outcome.Variables, err = json.Marshal(variables); err != nil {
		return storage.Measure{}, fmt.Errorf("end run: %w", err)
	}
	if e.NoCredit.Variables, err = json.Marshal(noCredit); err != nil {
		return storage.Measure{}, fmt.Errorf("end run: %w", err)
	}
	if res.Signal != nil {
		if e.Outcome.Signal, err = json.Marshal(res.Signal); err != nil {
			return storage.Measure{}, fmt.Errorf("end run: %w", err)
		}
		e.NoCredit.Signal, _ = json.Marshal(dsp.Signal{QualityScore: dsp.Variable{Error: dsp.CreditExceeded}})
	}
	if res.Features != nil {
		e.Outcome.Features, _ = json.Marshal(res.Features)
	}
	m, err := r.svc.db.EndMeasure(ctx, r.client, r.measure.ID, e)
	if err == nil {
		r.svc.wakeWebhooks()
	}
	if err == nil && creditRefused(m) {
		r.svc.metrics.CreditRefused(string(r.svc.env))
	}
	return m, err
}

// abandonTimeout bounds the clean-up of a run that failed; it runs even
// when the request that carried the run has ended.
const abandonTimeout = 30 * time.Second

// Abandon undoes a run that cannot end, leaving no partial state: the
// run's media are removed, then a new measure is removed and an existing
// one goes back to created, as if it had never run. It works on after ctx
// has ended (a client that went away). A run a crash prevents from ending
// or being abandoned is ended by the sweep of another instance, or of this
// one once it restarts (Service.SweepRuns).
func (r *Run) Abandon(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abandonTimeout)
	defer cancel()
	id := r.measure.ID
	// The media first; but a store out of reach must not leave the
	// measure started for as long as this instance lives (no sweep ends
	// a live instance's runs), so the record is undone whatever the store
	// answered. What a new measure leaves then belongs to no measure,
	// and the start-up sweep removes it; what a created measure keeps is
	// replaced by its next run's files of the same name, and removed
	// with it.
	rerr := r.svc.captureMedia().Remove(ctx, id)
	var err error
	if r.byRun {
		err = r.svc.db.DiscardRun(ctx, r.client, id)
	} else {
		err = r.svc.db.ResetMeasure(ctx, r.client, id)
	}
	if errors.Is(err, storage.ErrNotFound) { // deleted meanwhile: nothing to undo
		err = nil
	}
	if err = errors.Join(rerr, err); err != nil {
		return fmt.Errorf("abandon run of %s: %w", id, err)
	}
	return nil
}

// deleted reports whether c's measure id no longer exists: a run that
// fails checks it, since a measure deleted during its run is not found
// rather than failed. It asks even when ctx has ended.
func (s *Service) deleted(ctx context.Context, c storage.Client, id string) bool {
	_, err := s.db.Measure(context.WithoutCancel(ctx), c, id)
	return errors.Is(err, storage.ErrNotFound)
}

func intOf(p *int64) int {
	if p == nil {
		return 0
	}
	return int(*p)
}

func stringOf(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

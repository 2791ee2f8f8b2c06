package control

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pulsewire/pulsewire/dsp"
	"github.com/pulsewire/pulsewire/storage"
)

// Bounds of the measure inputs. The API bounds the number of
// tags; the length of one tag is our own bound, so that a list filter or an
// index entry stays small.
const (
	maxTags     = 1000
	maxTagChars = 255
)

// MaxMeasureInputBytes bounds the measure inputs as JSON, wherever they
// come from: the body of POST /measures, or the measure of a session's
// open message.
const MaxMeasureInputBytes = maxJSONBody

// ParseMeasureInput checks the inputs of a new measure, a JSON object
// {userData, desiredVariables, unwantedVariables, tags, computeOptions},
// every member optional; an empty input is an empty object.
// now (in the configured time zone) turns a dateOfBirth into an age. Every
// problem is reported at once, as one Invalid error.
func ParseMeasureInput(raw []byte, now time.Time) (storage.NewMeasure, error) {
	var n storage.NewMeasure
	var p problems
	if len(raw) == 0 {
		raw = []byte("{}")
	}
	o, err := decodeBody(raw)
	if err != nil {
		return n, err
	}
	o.unknown(&p, "", "userData", "desiredVariables", "unwantedVariables", "tags", "computeOptions")
	n.UserData = parseUserData(o["userData"], now, &p)
	n.DesiredVariables = parseVariables(o, "desiredVariables", &p)
	n.UnwantedVariables = parseVariables(o, "unwantedVariables", &p)
	n.Tags = parseTags(o, &p)
	n.ComputeOptions = parseComputeOptions(o, &p)
	return n, p.err()
}

// parseVariables reads a list of variable names: nil when absent or null.
func parseVariables(o object, name string, p *problems) []string {
	if !o.given(name) {
		return nil
	}
	items, ok := asArray(o[name])
	if !ok {
		p.addf("%s must be an array of variable names", name)
		return nil
	}
	names := make([]string, 0, len(items))
	for i, item := range items {
		v, ok := asString(item)
		switch {
		case !ok || !dsp.IsVariable(v):
			p.addf("%s.%d must be one of the following values: %s", name, i, strings.Join(dsp.AllVariables, ", "))
		case slices.Contains(names, v):
			p.addf("%s.%d: %s is given twice", name, i, v)
		default:
			names = append(names, v)
		}
	}
	return names
}

// parseTags reads the tags: never nil; repeats are kept as sent.
func parseTags(o object, p *problems) []string {
	tags := []string{}
	if !o.given("tags") {
		return tags
	}
	items, ok := asArray(o["tags"])
	if !ok {
		p.addf("tags must be an array of strings")
		return tags
	}
	if len(items) > maxTags {
		p.addf("tags must contain no more than %d elements", maxTags)
		return tags
	}
	for i, item := range items {
		tag, ok := asString(item)
		if msg := checkTag(tag, ok); msg != "" {
			p.addf("tags.%d %s", i, msg)
			continue
		}
		tags = append(tags, tag)
	}
	return tags
}

// checkTag says what is wrong with one tag, or "" when nothing is.
func checkTag(tag string, isString bool) string {
	switch {
	case !isString:
		return "must be a string"
	case tag == "":
		return "must not be empty"
	case chars(tag) > maxTagChars:
		return fmt.Sprintf("must be shorter than or equal to %d characters", maxTagChars)
	}
	return ""
}

// parseComputeOptions reads {bpClass: {scale: 2|3}}; nil when absent.
func parseComputeOptions(o object, p *problems) *storage.ComputeOptions {
	opts, ok := nested(o["computeOptions"], "computeOptions", p, "bpClass")
	if !ok {
		return nil
	}
	c := &storage.ComputeOptions{}
	bp, ok := nested(opts["bpClass"], "computeOptions.bpClass", p, "scale")
	if !ok {
		return c
	}
	if scale, ok := asInt(bp["scale"]); ok && (scale == 2 || scale == 3) {
		c.BPClass = &storage.BPClassOptions{Scale: scale}
	} else {
		p.addf("computeOptions.bpClass.scale must be 2 or 3")
	}
	return c
}

// CreateMeasure stores a new measure of c, not run (status created).
func (s *Service) CreateMeasure(ctx context.Context, c storage.Client, n storage.NewMeasure) (storage.Measure, error) {
	return s.db.CreateMeasure(ctx, c, n)
}

// Measure returns c's measure id; a malformed id is Invalid, and a measure
// that does not exist or is another client's is NotFound alike.
func (s *Service) Measure(ctx context.Context, c storage.Client, id string) (storage.Measure, error) {
	id, err := parseID(id)
	if err != nil {
		return storage.Measure{}, err
	}
	return s.db.Measure(ctx, c, id)
}

// MeasureOfKind returns c's measure id only when it has ended and is of
// kind (GET /measures/{id}/rppg|cppg); otherwise NotFound.
func (s *Service) MeasureOfKind(ctx context.Context, c storage.Client, id string, kind storage.Kind) (storage.Measure, error) {
	m, err := s.Measure(ctx, c, id)
	if err == nil && (m.Status != storage.StatusEnded || m.Kind != kind) {
		return storage.Measure{}, storage.ErrNotFound
	}
	return m, err
}

// DeleteMeasure removes c's measure id: its media first, then its record.
// Media already gone is no error, so a deletion interrupted
// between the two steps completes when issued again; after that the measure
// is NotFound. Of concurrent deletions exactly one succeeds.
func (s *Service) DeleteMeasure(ctx context.Context, c storage.Client, id string) error {
	m, err := s.Measure(ctx, c, id)
	if err != nil {
		return err
	}
	if err := s.media.Remove(ctx, m.ID); err != nil {
		return err
	}
	if err := s.db.DeleteMeasure(ctx, c, m.ID); err != nil {
		return err
	}
	s.wakeWebhooks()
	return nil
}

// Measures lists a page of c's measures.
func (s *Service) Measures(ctx context.Context, c storage.Client, q storage.MeasureQuery) (storage.MeasurePage, error) {
	return s.db.Measures(ctx, c, q)
}

// ExternalUser reports the calibration status of the person c knows as
// externalID; NotFound when none of c's measures carries it, as none can
// carry an externalId that is empty, too long or not UTF-8.
func (s *Service) ExternalUser(ctx context.Context, c storage.Client, externalID string) (storage.ExternalUser, error) {
	if externalID == "" || !utf8.ValidString(externalID) || chars(externalID) > maxExternalIDChars {
		return storage.ExternalUser{}, storage.ErrNotFound
	}
	return s.db.ExternalUser(ctx, c, externalID)
}

package control

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/pulsewire/pulsewire/storage"
)

// The permissions a token may carry: which session chain it opens.
const (
	PermissionScan     = "measurement.scan"
	PermissionRealtime = "measurement.realtime"
)

// TokenPrefix starts every access token value.
const TokenPrefix = "ivat-"

const maxDescriptionChars = 255

// ParseTokenRequest checks the body of POST /access-tokens
// and returns what to store, without the value hash. Every problem is
// reported at once, as one Invalid error.
func ParseTokenRequest(raw []byte) (storage.NewToken, error) {
	var t storage.NewToken
	var p problems
	o, err := decodeBody(raw)
	if err != nil {
		return t, err
	}
	o.unknown(&p, "", "description", "permissions", "duration")
	if o.given("description") {
		d, ok := asString(o["description"])
		switch {
		case !ok:
			p.addf("description must be a string")
		case chars(d) > maxDescriptionChars:
			p.addf("description must be shorter than or equal to %d characters", maxDescriptionChars)
		default:
			t.Description = &d
		}
	}
	t.Permissions = parsePermissions(o["permissions"], &p)
	d, isString := asString(o["duration"])
	switch {
	case !o.given("duration"):
		p.addf("duration should not be empty")
	case !isString:
		p.addf("duration must be a string")
	default:
		var err error
		if t.Duration, err = ParseDuration(d); err != nil {
			p.addf("%s", err)
		}
	}
	return t, p.err()
}

func parsePermissions(raw json.RawMessage, p *problems) []storage.Permission {
	if raw == nil || IsNull(raw) {
		p.addf("permissions should not be empty")
		return nil
	}
	items, ok := asArray(raw)
	switch {
	case !ok:
		p.addf("permissions must be an array")
		return nil
	case len(items) == 0:
		p.addf("permissions should not be empty")
		return nil
	}
	perms := make([]storage.Permission, 0, len(items))
	var names []string
	for i, item := range items {
		o, ok := decodeObject(item)
		if !ok {
			p.addf("permissions.%d must be an object", i)
			continue
		}
		o.unknown(p, "permissions."+strconv.Itoa(i)+".", "name", "maxSessions")
		name, _ := asString(o["name"])
		switch {
		case name != PermissionScan && name != PermissionRealtime:
			p.addf("permissions.%d.name must be one of the following values: %s, %s", i, PermissionScan, PermissionRealtime)
		case slices.Contains(names, name):
			p.addf("permissions.%d.name: %s is given twice", i, name)
		}
		names = append(names, name)
		perm := storage.Permission{Name: name}
		if o.given("maxSessions") {
			n, ok := asInt(o["maxSessions"])
			if !ok || n < 1 {
				p.addf("permissions.%d.maxSessions must be an integer of at least 1, or null", i)
			}
			perm.MaxSessions = &n
		}
		perms = append(perms, perm)
	}
	return perms
}

// CreatedToken is a stored token with its value, which exists only in this
// answer.
type CreatedToken struct {
	storage.Token
	Value string
}

// CreateToken mints a token for c: an ivat- value of 256 random bits, of
// which only the SHA-256 is stored. The store stamps createdAt and computes
// expiresAt; a duration in days that exceeds the ceiling on the calendar
// fails there (storage.ErrTokenDuration, answered 500: the request itself was valid).
func (s *Service) CreateToken(ctx context.Context, c storage.Client, t storage.NewToken) (CreatedToken, error) {
	value, hash := newSecret(TokenPrefix)
	t.ValueHash = hash
	stored, err := s.db.CreateToken(ctx, c, t)
	if err != nil {
		return CreatedToken{}, err
	}
	return CreatedToken{Token: stored, Value: value}, nil
}

// RevokeToken revokes c's token id: a malformed id is Invalid; a
// token that never existed, is already revoked or is another client's is
// NotFound, alike; an expired token can be revoked.
func (s *Service) RevokeToken(ctx context.Context, c storage.Client, id string) error {
	id, err := parseID(id)
	if err != nil {
		return err
	}
	return s.db.RevokeToken(ctx, c, id)
}

// TokenRevoked reports whether the token whose value hashes to valueHash
// (SHA-256) has been revoked, by any instance: a session it opened runs on,
// but no longer resumes.
func (s *Service) TokenRevoked(ctx context.Context, valueHash []byte) (bool, error) {
	return s.db.TokenRevoked(ctx, valueHash)
}

// UncountSession gives back the session OpenSession counted, when the
// session does not open after all: a session is counted when it opens.
func (s *Service) UncountSession(ctx context.Context, ts storage.TokenSession) error {
	return s.db.UncountTokenSession(ctx, ts)
}

// OpenSession counts one session of the token whose value is presented,
// for the session server: the value, never the id, opens a
// session, and only for a permission the token carries, while it is neither
// expired, revoked nor spent, its client is active and the client's
// openings stay within every rate of openings (counted in the database, for
// every instance together), so that a refusal for the rate spends nothing.
// Every refusal wraps storage.ErrSessionRefused with its cause, for the
// server log only.
func (s *Service) OpenSession(ctx context.Context, value, permission string, openings []storage.Rate) (storage.TokenSession, error) {
	if !strings.HasPrefix(value, TokenPrefix) {
		return storage.TokenSession{}, storage.Refused(storage.ErrTokenUnknown, "not an access token value")
	}
	return s.db.OpenTokenSession(ctx, hashSecret(value), permission, openings)
}

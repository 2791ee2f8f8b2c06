package control

import (
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/pulsewire/pulsewire/control/metrics"
	"github.com/pulsewire/pulsewire/storage"
)

// Env is one of the two environments. They share nothing: each has its own
// database, media folder, clients, keys, tokens and measures.
type Env string

// The environments.
const (
	Production Env = "production"
	Test       Env = "test"
)

// ParseEnv reads an environment name.
func ParseEnv(s string) (Env, error) {
	switch Env(s) {
	case Production, Test:
		return Env(s), nil
	}
	return "", fmt.Errorf("unknown environment %q (production or test)", s)
}

// keyPrefix starts every API key of the environment, so that a key names
// where it belongs and a key of the other one is refused before any lookup.
func (e Env) keyPrefix() string {
	if e == Production {
		return "pwk_live_"
	}
	return "pwk_test_"
}

// Service is the control plane of one environment: the rules around
// clients, access tokens and measures, above its store. The HTTP API and the
// session server both work through it.
type Service struct {
	env     Env
	db      *storage.DB
	media   storage.Media
	scratch storage.Media    // non-nil: no media are kept (KeepNoMedia)
	metrics *metrics.Metrics // nil: nothing is counted
	// allowPrivateWebhooks lets webhooks reach loopback and private
	// addresses (AllowPrivateWebhooks).
	allowPrivateWebhooks bool
	// webhookWake tells the dispatcher that a delivery may be due now.
	webhookWake chan struct{}
}

// ServiceOption adjusts a Service as NewService makes it.
type ServiceOption func(*Service)

// NewService returns the control plane of env over db and media. Its clock
// and calendar are the store's (storage.Options).
func NewService(env Env, db *storage.DB, media storage.Media, opts ...ServiceOption) *Service {
	s := &Service{env: env, db: db, media: media, webhookWake: make(chan struct{}, 1)}
	for _, o := range opts {
		o(s)
	}
	return s
}

// WithMetrics counts what the environment's API, runs and sessions do in m.
func WithMetrics(m *metrics.Metrics) ServiceOption {
	return func(s *Service) { s.metrics = m }
}

// AllowPrivateWebhooks lets webhook endpoints be on loopback, private,
// link-local and other internal addresses, which are refused by default so
// that a client cannot make the server call into its own network: for a
// server whose clients' backends are on its own network, and for tests.
func AllowPrivateWebhooks() ServiceOption {
	return func(s *Service) { s.allowPrivateWebhooks = true }
}

// Metrics is where the environment is counted; nil (which counts nothing)
// without WithMetrics.
func (s *Service) Metrics() *metrics.Metrics { return s.metrics }

// Env is the service's environment.
func (s *Service) Env() Env { return s.env }

// Now is the store's time on its calendar, which turns a date of birth
// into an age.
func (s *Service) Now() time.Time { return s.db.Now() }

// parseID checks a resource id: a UUID in its canonical 36-character form
// (any case). A malformed id is Invalid, before any lookup.
func parseID(id string) (string, error) {
	u, err := uuid.Parse(id)
	if err != nil || len(id) != 36 {
		return "", invalidf("id must be a UUID")
	}
	return strings.ToLower(u.String()), nil
}

package control

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"

	"github.com/pulsewire/pulsewire/dsp"
	"github.com/pulsewire/pulsewire/storage"
)

// secretBytes is the size of every secret we mint (API keys, token values):
// 256 bits from crypto/rand.
const secretBytes = 32

// newSecret returns prefix followed by 256 random bits in unpadded
// base64url, and the SHA-256 of the whole string, the only form stored.
func newSecret(prefix string) (secret string, hash []byte) {
	b := make([]byte, secretBytes)
	rand.Read(b) // never fails (crypto/rand, Go 1.24+)
	secret = prefix + base64.RawURLEncoding.EncodeToString(b)
	return secret, hashSecret(secret)
}

// SecretHash is the only form in which a secret (an API key, a token's
// value) is stored and looked up: its SHA-256. Whoever keeps a token to
// compare it later keeps this, so that every comparison follows the store.
func SecretHash(secret string) [sha256.Size]byte {
	return sha256.Sum256([]byte(secret))
}

func hashSecret(secret string) []byte {
	h := SecretHash(secret)
	return h[:]
}

const maxClientNameChars = 200

// NewClient is what an operator asks for when creating a client.
type NewClient struct {
	Name string
	// Variables the client is entitled to; nil means all of dsp.AllVariables.
	Variables []string
	// MonthlyCredits; nil means unlimited.
	MonthlyCredits *int64
}

// CreateClient creates an active client and returns it with its API key.
// The key is shown this once: only its hash is stored.
func (s *Service) CreateClient(ctx context.Context, n NewClient) (storage.Client, string, error) {
	name := strings.TrimSpace(n.Name)
	if name == "" || chars(name) > maxClientNameChars {
		return storage.Client{}, "", fmt.Errorf("name must be 1 to %d characters", maxClientNameChars)
	}
	variables := n.Variables
	if variables == nil {
		variables = slices.Clone(dsp.AllVariables)
	}
	if err := checkEntitlements(variables, n.MonthlyCredits); err != nil {
		return storage.Client{}, "", err
	}
	key, hash := newSecret(s.env.keyPrefix())
	c, err := s.db.CreateClient(ctx, storage.NewClient{Name: name, APIKeyHash: hash, Variables: variables, MonthlyCredits: n.MonthlyCredits})
	return c, key, err
}

// ClientUpdate changes a client's entitlements; nil fields stay.
type ClientUpdate struct {
	Variables []string
	// MonthlyCredits, when not nil, replaces the credits; a nil inside
	// means unlimited.
	MonthlyCredits **int64
}

// UpdateClient changes the entitlements of client id.
func (s *Service) UpdateClient(ctx context.Context, id string, u ClientUpdate) (storage.Client, error) {
	var credits *int64
	if u.MonthlyCredits != nil {
		credits = *u.MonthlyCredits
	}
	if err := checkEntitlements(u.Variables, credits); err != nil {
		return storage.Client{}, err
	}
	return s.db.UpdateClient(ctx, id, storage.ClientUpdate{Variables: u.Variables, MonthlyCredits: u.MonthlyCredits})
}

// DeactivateClient turns client id off: its key and its tokens stop working
// on the next request.
func (s *Service) DeactivateClient(ctx context.Context, id string) (storage.Client, error) {
	return s.db.DeactivateClient(ctx, id)
}

// Client returns client id, for the operator's commands; NotFound when
// there is none.
func (s *Service) Client(ctx context.Context, id string) (storage.Client, error) {
	return s.db.ClientByID(ctx, id)
}

// Clients lists every client of the environment.
func (s *Service) Clients(ctx context.Context) ([]storage.Client, error) {
	return s.db.Clients(ctx)
}

func checkEntitlements(variables []string, credits *int64) error {
	for i, v := range variables {
		if !dsp.IsVariable(v) {
			return fmt.Errorf("unknown variable %q (known: %s)", v, strings.Join(dsp.AllVariables, ", "))
		}
		if slices.Contains(variables[:i], v) {
			return fmt.Errorf("variable %q given twice", v)
		}
	}
	if credits != nil && *credits < 0 {
		return fmt.Errorf("monthly credits must be 0 or more")
	}
	return nil
}

// Authenticate finds the active client whose API key is presented (the
// credential of the Authorization header, read by Bearer). No key, a key
// of the other environment, an unknown key and a deactivated client are
// all Unauthorized, alike. The client is read from the store on every call,
// so a deactivation made by another process counts at once.
func (s *Service) Authenticate(ctx context.Context, key string) (storage.Client, error) {
	unauthorized := &Error{Code: Unauthorized}
	if !strings.HasPrefix(key, s.env.keyPrefix()) {
		return storage.Client{}, unauthorized
	}
	c, err := s.db.ClientByKeyHash(ctx, hashSecret(key))
	switch {
	case ErrorCode(err) == NotFound || err == nil && !c.Active:
		return storage.Client{}, unauthorized
	case err != nil:
		return storage.Client{}, err
	}
	return c, nil
}

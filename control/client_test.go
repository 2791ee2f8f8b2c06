package control

import (
	"context"
	"encoding/base64"
	"slices"
	"strings"
	"testing"

	"github.com/pulsewire/pulsewire/dsp"
)

func TestCreateClient(t *testing.T) {
	ctx := context.Background()
	for _, env := range []Env{Production, Test} {
		e := newTestEnv(t, env)
		c, key, err := e.svc.CreateClient(ctx, NewClient{Name: " acme "})
		if err != nil {
			t.Fatal(err)
		}
		prefix := map[Env]string{Production: "pwk_live_", Test: "pwk_test_"}[env]
		raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(key, prefix))
		if !strings.HasPrefix(key, prefix) || err != nil || len(raw) < 32 {
			t.Fatalf("%s key %q: want %s and 256 random bits", env, key, prefix)
		}
		if c.Name != "acme" || !slices.Equal(c.Variables, dsp.AllVariables) || c.MonthlyCredits != nil {
			t.Fatalf("defaults: %+v", c)
		}
		if got, err := e.svc.Authenticate(ctx, key); err != nil || got.ID != c.ID {
			t.Fatalf("authenticate: %+v, %v", got, err)
		}
	}

	e := newTestEnv(t, Production)
	credits := int64(0)
	negative := int64(-1)
	for _, tc := range []struct {
		name string
		in   NewClient
		ok   bool
	}{
		{"some variables and no credit", NewClient{Name: "a", Variables: []string{"hr", "br"}, MonthlyCredits: &credits}, true},
		{"no variables", NewClient{Name: "a", Variables: []string{}}, true},
		{"name of 200", NewClient{Name: strings.Repeat("n", 200)}, true},
		{"name of 201", NewClient{Name: strings.Repeat("n", 201)}, false},
		{"blank name", NewClient{Name: "  "}, false},
		{"unknown variable", NewClient{Name: "a", Variables: []string{"spo2"}}, false},
		{"variable twice", NewClient{Name: "a", Variables: []string{"hr", "hr"}}, false},
		{"negative credits", NewClient{Name: "a", MonthlyCredits: &negative}, false},
	} {
		if _, _, err := e.svc.CreateClient(ctx, tc.in); (err == nil) != tc.ok {
			t.Errorf("%s: err %v", tc.name, err)
		}
	}

	c, _, _ := e.svc.CreateClient(ctx, NewClient{Name: "b"})
	unlimited := (*int64)(nil)
	up, err := e.svc.UpdateClient(ctx, c.ID, ClientUpdate{Variables: []string{"bmi"}, MonthlyCredits: &unlimited})
	if err != nil || !slices.Equal(up.Variables, []string{"bmi"}) {
		t.Fatalf("update: %+v, %v", up, err)
	}
	if _, err := e.svc.UpdateClient(ctx, c.ID, ClientUpdate{Variables: []string{"nope"}}); err == nil {
		t.Fatal("an unknown variable was accepted on update")
	}
	// An update is held to the rules of a new client: negative credits
	// are refused, and the client keeps what it had.
	negativeCredits := &negative
	if _, err := e.svc.UpdateClient(ctx, c.ID, ClientUpdate{MonthlyCredits: &negativeCredits}); err == nil {
		t.Fatal("negative credits were accepted on update")
	}
	if got, err := e.svc.Client(ctx, c.ID); err != nil || got.MonthlyCredits != nil {
		t.Fatalf("after a refused update: %+v, %v; want unlimited credits", got, err)
	}
	if _, err := e.svc.UpdateClient(ctx, c.ID, ClientUpdate{Variables: []string{"hr", "hr"}}); err == nil {
		t.Fatal("a variable given twice was accepted on update")
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// pulsewire runs the command line in process and returns its output.
func pulsewire(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err = run(context.Background(), args, &out, &errOut)
	return out.String(), errOut.String(), err
}

func TestClientCommands(t *testing.T) {
	dir := t.TempDir()
	out, _, err := pulsewire(t, "client", "create", "--data-dir", dir, "--env", "test", "--name", "acme")
	if err != nil {
		t.Fatal(err)
	}
	var created map[string]string
	if err := json.Unmarshal([]byte(out), &created); err != nil || strings.Count(out, "\n") != 1 {
		t.Fatalf("create printed %q", out)
	}
	if keys := mapKeys(created); !reflect.DeepEqual(keys, []string{"apiKey", "env", "id", "name"}) ||
		created["env"] != "test" || created["name"] != "acme" || !strings.HasPrefix(created["apiKey"], "pwk_test_") {
		t.Fatalf("create printed %v", created)
	}

	out, _, err = pulsewire(t, "client", "create", "--data-dir", dir, "--env", "test", "--name", "lite", "--variables", "hr, br", "--monthly-credits", "50")
	if err != nil {
		t.Fatal(err)
	}
	lite := map[string]string{}
	json.Unmarshal([]byte(out), &lite)

	// Positional id before or after the flags.
	out, _, err = pulsewire(t, "client", "update", lite["id"], "--data-dir", dir, "--env", "test", "--monthly-credits", "unlimited")
	if err != nil || !strings.Contains(out, `"monthlyCredits": null`) || !strings.Contains(out, `"hr",`) {
		t.Fatalf("update: %v\n%s", err, out)
	}
	out, _, err = pulsewire(t, "client", "deactivate", "--data-dir", dir, "--env", "test", lite["id"])
	if err != nil || !strings.Contains(out, `"active": false`) {
		t.Fatalf("deactivate: %v\n%s", err, out)
	}

	out, _, err = pulsewire(t, "client", "list", "--data-dir", dir, "--env", "test")
	var list []clientView
	if err != nil || json.Unmarshal([]byte(out), &list) != nil || len(list) != 2 || !list[0].Active || list[1].Active {
		t.Fatalf("list: %v\n%s", err, out)
	}
	if strings.Contains(out, created["apiKey"]) {
		t.Fatal("list shows an API key")
	}
	out, _, _ = pulsewire(t, "client", "list", "--data-dir", dir, "--env", "production")
	if strings.TrimSpace(out) != "[]" {
		t.Fatalf("production lists the test clients: %s", out)
	}

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no env", []string{"client", "create", "--data-dir", dir, "--name", "x"}, "unknown environment"},
		{"unknown env", []string{"client", "create", "--data-dir", dir, "--env", "staging", "--name", "x"}, "unknown environment"},
		{"no name", []string{"client", "create", "--data-dir", dir, "--env", "test"}, "name must be"},
		{"unknown variable", []string{"client", "create", "--data-dir", dir, "--env", "test", "--name", "x", "--variables", "hr,spo2"}, "unknown variable"},
		{"negative credits", []string{"client", "create", "--data-dir", dir, "--env", "test", "--name", "x", "--monthly-credits", "-1"}, "monthly-credits"},
		{"update nothing", []string{"client", "update", created["id"], "--data-dir", dir, "--env", "test"}, "nothing to change"},
		{"update unknown id", []string{"client", "update", "nope", "--data-dir", dir, "--env", "test", "--variables", "hr"}, "no client with that id"},
		{"create with an argument", []string{"client", "create", "extra", "--data-dir", dir, "--env", "test", "--name", "x"}, "client create takes no arguments"},
		{"list with an argument", []string{"client", "list", "--data-dir", dir, "--env", "test", "extra"}, "client list takes no arguments"},
		{"deactivate without id", []string{"client", "deactivate", "--data-dir", dir, "--env", "test"}, "takes one client id"},
		{"unknown subcommand", []string{"client", "remove"}, "usage"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, err := pulsewire(t, tc.args...)
			if err == nil || !strings.Contains(err.Error()+stderr, tc.want) {
				t.Fatalf("err %v, stderr %q; want %q", err, stderr, tc.want)
			}
		})
	}
	if _, stderr, err := pulsewire(t, "client", "create", "--help"); err != nil || !strings.Contains(stderr, "PULSEWIRE_DATA_DIR") {
		t.Fatalf("help: %v %q", err, stderr)
	}
}

func TestClientCommandsReadTheEnvironment(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PULSEWIRE_DATA_DIR", dir)
	t.Setenv("PULSEWIRE_ENV", "production")
	if _, _, err := pulsewire(t, "client", "create", "--name", "acme"); err != nil {
		t.Fatal(err)
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "production", "pulsewire.db"))
	if len(matches) != 1 {
		t.Fatal("the client was not created under PULSEWIRE_DATA_DIR/production")
	}
}

func mapKeys(m map[string]string) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

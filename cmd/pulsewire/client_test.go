package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
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
	// The first command creates the data folder, as the server does.
	out, _, err := pulsewire(t, "client", "create", "--data-dir", dir, "--env", "test", "--name", "acme", "--create-data-dir")
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
	out, _, _ = pulsewire(t, "client", "list", "--data-dir", dir, "--env", "production", "--create-data-dir")
	if strings.TrimSpace(out) != "[]" {
		t.Fatalf("production lists the test clients: %s", out)
	}

	// An empty --variables entitles a client to no variable at all, never
	// to all of them (which is what leaving the flag out means), on create
	// and on update.
	out, _, err = pulsewire(t, "client", "create", "--data-dir", dir, "--env", "test", "--name", "none", "--variables", "")
	none := map[string]string{}
	if err != nil || json.Unmarshal([]byte(out), &none) != nil {
		t.Fatalf("create without variables: %v\n%s", err, out)
	}
	out, _, err = pulsewire(t, "client", "list", "--data-dir", dir, "--env", "test")
	list = nil
	if err != nil || json.Unmarshal([]byte(out), &list) != nil {
		t.Fatalf("list: %v\n%s", err, out)
	}
	for _, c := range list {
		if c.ID == none["id"] && (c.Variables == nil || len(c.Variables) > 0) {
			t.Fatalf("created with --variables \"\": variables %v, want none", c.Variables)
		}
	}
	out, _, err = pulsewire(t, "client", "update", created["id"], "--data-dir", dir, "--env", "test", "--variables", " ")
	var updated clientView
	if err != nil || json.Unmarshal([]byte(out), &updated) != nil || updated.Variables == nil || len(updated.Variables) > 0 {
		t.Fatalf("update with --variables \" \": %v\n%s", err, out)
	}

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no env", []string{"client", "create", "--data-dir", dir, "--name", "x"}, "--env is required"},
		{"list without env", []string{"client", "list", "--data-dir", dir}, "--env is required"},
		{"unknown env", []string{"client", "create", "--data-dir", dir, "--env", "staging", "--name", "x"}, "unknown environment"},
		{"no name", []string{"client", "create", "--data-dir", dir, "--env", "test"}, "--name is required"},
		{"empty name", []string{"client", "create", "--data-dir", dir, "--env", "test", "--name", ""}, "name must be"},
		{"mistyped data folder", []string{"client", "list", "--data-dir", dir + "-typo", "--env", "test"}, "no test data in " + dir + "-typo"},
		{"unknown variable", []string{"client", "create", "--data-dir", dir, "--env", "test", "--name", "x", "--variables", "hr,spo2"}, "unknown variable"},
		{"negative credits", []string{"client", "create", "--data-dir", dir, "--env", "test", "--name", "x", "--monthly-credits", "-1"}, "monthly-credits"},
		{"update nothing", []string{"client", "update", created["id"], "--data-dir", dir, "--env", "test"}, "nothing to change"},
		{"update unknown id", []string{"client", "update", "nope", "--data-dir", dir, "--env", "test", "--variables", "hr"}, "no client with that id"},
		{"create with an argument", []string{"client", "create", "extra", "--data-dir", dir, "--env", "test", "--name", "x"}, "client create takes no arguments"},
		{"list with an argument", []string{"client", "list", "--data-dir", dir, "--env", "test", "extra"}, "client list takes no arguments"},
		{"deactivate without id", []string{"client", "deactivate", "--data-dir", dir, "--env", "test"}, "takes one client id"},
		{"deactivate two ids", []string{"client", "deactivate", created["id"], none["id"], "--data-dir", dir, "--env", "test"}, "takes one client id"},
		{"unknown subcommand", []string{"client", "remove"}, "usage"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, err := pulsewire(t, tc.args...)
			if err == nil || !strings.Contains(err.Error()+stderr, tc.want) {
				t.Fatalf("err %v, stderr %q; want %q", err, stderr, tc.want)
			}
		})
	}
	if stdout, _, err := pulsewire(t, "client", "create", "--help"); err != nil || !strings.Contains(stdout, "PULSEWIRE_DATA_DIR") {
		t.Fatalf("help: %v %q", err, stdout)
	}
}

func TestClientCommandsReadTheEnvironment(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PULSEWIRE_DATA_DIR", dir)
	t.Setenv("PULSEWIRE_ENV", "production")
	t.Setenv("PULSEWIRE_CREATE_DATA_DIR", "true")
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

// TestMistypedDataFolderIsNotCreated: a data folder that does not exist is
// refused, by its absolute path, and left uncreated.
func TestMistypedDataFolderIsNotCreated(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "dta")
	_, _, err := pulsewire(t, "client", "create", "--data-dir", dir, "--env", "test", "--name", "acme")
	if err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "--create-data-dir") {
		t.Fatalf("err %v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the mistyped folder was created: %v", err)
	}
	// A folder with the other environment's data only is not this one's.
	if _, _, err := pulsewire(t, "client", "list", "--data-dir", dir, "--env", "production", "--create-data-dir"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := pulsewire(t, "client", "list", "--data-dir", dir, "--env", "test"); err == nil ||
		!strings.Contains(err.Error(), "no test data in "+dir+" (no test/pulsewire.db there)") {
		t.Fatalf("err %v", err)
	}
	// Relative paths are named absolute, so that the message says where.
	t.Chdir(filepath.Dir(dir))
	if _, _, err := pulsewire(t, "client", "list", "--data-dir", "dta", "--env", "test"); err == nil || !strings.Contains(err.Error(), dir) {
		t.Fatalf("err %v, want the absolute path %s", err, dir)
	}
}

func TestVersion(t *testing.T) {
	out, _, err := pulsewire(t, "version")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 4 || !strings.HasPrefix(lines[0], "pulsewire ") ||
		lines[1] != "module    github.com/pulsewire/pulsewire" || !strings.HasPrefix(lines[2], "revision  ") {
		t.Fatalf("version printed %q", out)
	}
	if flagOut, _, _ := pulsewire(t, "--version"); flagOut != out {
		t.Errorf("--version printed %q, version %q", flagOut, out)
	}
	if _, _, err := pulsewire(t, "version", "extra"); err != errUsage {
		t.Errorf("version with an argument: %v", err)
	}
	v := buildVersion{Version: "v1.2.0", Revision: "0123456789abcdef0123", Modified: true}
	if got := v.String(); got != "v1.2.0 (0123456789ab, modified)" {
		t.Errorf("String: %q", got)
	}
}

// TestServeHelpSaysWhatDevDoes: --dev is what mounts the demo page and its
// token route, and the help says so.
func TestServeHelpSaysWhatDevDoes(t *testing.T) {
	stdout, _, err := pulsewire(t, "serve", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"demo page at /", "/demo/access-tokens", "without an API key", "/docs"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("serve --help does not say %q:\n%s", want, stdout)
		}
	}
}

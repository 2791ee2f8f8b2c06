package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestLicencesListEveryModule keeps docs/licenses.md honest: every module
// the binary links is in its table, so a new dependency comes with its
// licence.
func TestLicencesListEveryModule(t *testing.T) {
	page, err := os.ReadFile("../../docs/licenses.md")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "list", "-deps", "-f", "{{with .Module}}{{if not .Main}}{{.Path}}{{end}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	seen := map[string]bool{}
	for _, m := range strings.Fields(string(out)) {
		if !seen[m] && !strings.Contains(string(page), "| `"+m+"` |") {
			t.Errorf("docs/licenses.md does not list %s, which the binary links", m)
		}
		seen[m] = true
	}
	if len(seen) < 10 {
		t.Fatalf("go list found only %d modules: %s", len(seen), out)
	}
}

package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestLicencesListEveryModule keeps docs/licenses.md honest: every module
// the binary links is in its table at the version linked, so a new
// dependency comes with its licence and an upgrade with its row.
func TestLicencesListEveryModule(t *testing.T) {
	page, err := os.ReadFile("../../docs/licenses.md")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "list", "-deps", "-f", "{{with .Module}}{{if not .Main}}{{.Path}} {{.Version}}{{end}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	seen := map[string]bool{}
	for line := range strings.Lines(string(out)) {
		path, version, _ := strings.Cut(strings.TrimSpace(line), " ")
		if path == "" || seen[path] {
			continue
		}
		seen[path] = true
		if !strings.Contains(string(page), "| `"+path+"` |") {
			t.Errorf("docs/licenses.md does not list %s, which the binary links", path)
		} else if !strings.Contains(string(page), "| `"+path+"` | "+version+" |") {
			t.Errorf("docs/licenses.md lists %s, but not at %s, the version the binary links", path, version)
		}
	}
	if len(seen) < 10 {
		t.Fatalf("go list found only %d modules: %s", len(seen), out)
	}
}

package dsp

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPurity keeps dsp pure: no package under dsp except
// dsp/media may import I/O, logging, the network, databases or processes,
// read the clock, sleep, or start goroutines; outside the standard library
// only gonum, pigo, x/image and dsp itself may be imported.
func TestPurity(t *testing.T) {
	forbidden := []string{
		"os", "os/exec", "os/signal", "net", "net/http", "log", "log/slog", "database/sql",
		"syscall", "io/ioutil", "unsafe", "runtime/debug", "plugin", "embed",
	}
	allowedModules := []string{"gonum.org/v1/gonum", "github.com/esimov/pigo", "golang.org/x/image", "github.com/pulsewire/pulsewire/dsp"}
	// The face package embeds its cascade files: embed reads nothing at
	// run time, the files are compiled in.
	embedOK := map[string]bool{"face": true}
	clock := map[string]bool{"Now": true, "Since": true, "Until": true, "Sleep": true, "After": true,
		"AfterFunc": true, "Tick": true, "NewTicker": true, "NewTimer": true}
	checked := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (path == "media" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		checked++
		dir := filepath.Base(filepath.Dir(path))
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			for _, bad := range forbidden {
				if p == bad && !(p == "embed" && embedOK[dir]) {
					t.Errorf("%s imports %s", path, p)
				}
			}
			if strings.Contains(strings.Split(p, "/")[0], ".") {
				ok := false
				for _, m := range allowedModules {
					ok = ok || p == m || strings.HasPrefix(p, m+"/")
				}
				if !ok || strings.HasPrefix(p, "github.com/pulsewire/pulsewire/dsp/media") {
					t.Errorf("%s imports %s", path, p)
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.GoStmt:
				t.Errorf("%s: starts a goroutine at %s", path, fset.Position(n.Pos()))
			case *ast.SelectorExpr:
				if id, isID := n.X.(*ast.Ident); isID && id.Name == "time" && clock[n.Sel.Name] {
					t.Errorf("%s: reads the clock (time.%s) at %s", path, n.Sel.Name, fset.Position(n.Pos()))
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 20 {
		t.Fatalf("only %d files checked: is the walk rooted at dsp?", checked)
	}
}

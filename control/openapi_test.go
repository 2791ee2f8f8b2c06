package control

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strconv"
	"testing"
)

// TestOpenAPICoversEveryRoute fails when a route is served that the
// document lacks, or documented that no route serves. Routes mounted later
// are walked the same way (API.Undocumented), so they are caught too.
func TestOpenAPICoversEveryRoute(t *testing.T) {
	e := newTestEnv(t, Production, withRoutes(sessionRoutes()...))
	diffs, err := e.api.Undocumented()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diffs {
		t.Error(d)
	}
}

// sessionRoutes stand for the routes the session server mounts, which the
// document describes as part of the API (cmd/pulsewire checks the real
// ones).
func sessionRoutes() []Route {
	noop := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	return []Route{
		{Method: "GET", Path: "/sessions", Handler: noop},
		{Method: "POST", Path: "/sessions/whip", Handler: noop},
		{Method: "DELETE", Path: "/sessions/whip/:id", Handler: noop},
	}
}

func TestUndocumentedCatchesAMountedRoute(t *testing.T) {
	noop := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	e := newTestEnv(t, Production, withRoutes(append(sessionRoutes()[1:],
		Route{Method: "GET", Path: "/sessions/stats", Handler: noop},
		Route{Method: "GET", Path: "/demo", Handler: noop, Internal: true},
	)...))
	diffs, err := e.api.Undocumented()
	if err != nil {
		t.Fatal(err)
	}
	if len(diffs) != 2 || diffs[0] != "documented but not served: GET /sessions" || diffs[1] != "not in openapi.json: GET /sessions/stats" {
		t.Fatalf("differences %q, want GET /sessions missing and GET /sessions/stats undocumented", diffs)
	}
}

func TestOpenAPIDocument(t *testing.T) {
	var doc struct {
		OpenAPI    string                     `json:"openapi"`
		Paths      map[string]json.RawMessage `json:"paths"`
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(openAPI, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Fatalf("openapi %q", doc.OpenAPI)
	}
	// Every $ref names a schema the document defines.
	var walk func(v any)
	walk = func(v any) {
		switch n := v.(type) {
		case map[string]any:
			if ref, ok := n["$ref"].(string); ok {
				const prefix = "#/components/schemas/"
				if len(ref) <= len(prefix) || doc.Components.Schemas[ref[len(prefix):]] == nil {
					t.Errorf("dangling $ref %s", ref)
				}
			}
			for _, c := range n {
				walk(c)
			}
		case []any:
			for _, c := range n {
				walk(c)
			}
		}
	}
	var all any
	json.Unmarshal(openAPI, &all)
	walk(all)
}

// TestServedServersAreTheListeners: the document names the listeners it is
// given and is otherwise served as committed.
func TestServedServersAreTheListeners(t *testing.T) {
	servers := []Server{{"http://127.0.0.1:18080", "Production"}, {"http://[::1]:18081", "Test"}}
	got, err := withServers(openAPI, servers)
	if err != nil {
		t.Fatal(err)
	}
	var served, committed map[string]json.RawMessage
	if err := json.Unmarshal(got, &served); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	json.Unmarshal(openAPI, &committed)
	var names []Server
	if err := json.Unmarshal(served["servers"], &names); err != nil || !reflect.DeepEqual(names, servers) {
		t.Fatalf("servers %s", served["servers"])
	}
	delete(served, "servers")
	delete(committed, "servers")
	if !reflect.DeepEqual(served, committed) {
		t.Error("the rest of the document changed")
	}
	// Indented as the committed file, so that it reads the same.
	if !bytes.Contains(got, []byte("  \"servers\": [\n    {\n      \"url\": \"http://127.0.0.1:18080\",")) {
		t.Errorf("servers indented differently:\n%.400s", got)
	}
	if _, err := withServers([]byte(`{"openapi":"3.1.0"}`), servers); err == nil {
		t.Error("a document without servers was accepted")
	}
}

// TestOpenAPIServesTheGivenServers: the API serves the document with the
// servers of its options.
func TestOpenAPIServesTheGivenServers(t *testing.T) {
	e := newTestEnv(t, Test)
	api := NewAPI(e.svc, Options{Servers: []Server{{"http://127.0.0.1:9", "Production"}}})
	w := httptest.NewRecorder()
	api.ServeHTTP(w, httptest.NewRequest("GET", "/openapi.json", nil))
	var doc struct{ Servers []Server }
	if err := json.Unmarshal(w.Body.Bytes(), &doc); err != nil || len(doc.Servers) != 1 || doc.Servers[0].URL != "http://127.0.0.1:9" {
		t.Fatalf("%d %v %+v", w.Code, err, doc)
	}
}

// TestOpenAPIErrorCodes: the error codes the document lists are the codes
// dsp declares, every one of them: a code added there must be documented.
func TestOpenAPIErrorCodes(t *testing.T) {
	var doc struct {
		Components struct {
			Schemas struct {
				ErrorCode struct {
					Enum []string `json:"enum"`
				} `json:"ErrorCode"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(openAPI, &doc); err != nil {
		t.Fatal(err)
	}
	f, err := parser.ParseFile(token.NewFileSet(), "../dsp/names.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var declared []string
	ast.Inspect(f, func(n ast.Node) bool {
		if v, ok := n.(*ast.ValueSpec); ok {
			if id, ok := v.Type.(*ast.Ident); ok && id.Name == "Code" {
				for _, value := range v.Values {
					if lit, ok := value.(*ast.BasicLit); ok {
						code, _ := strconv.Unquote(lit.Value)
						declared = append(declared, code)
					}
				}
			}
		}
		return true
	})
	listed := doc.Components.Schemas.ErrorCode.Enum
	slices.Sort(declared)
	slices.Sort(listed)
	if len(declared) < 20 || !slices.Equal(listed, declared) {
		t.Fatalf("ErrorCode lists %v; dsp declares %v", listed, declared)
	}
}

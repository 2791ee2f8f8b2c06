package control

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// openAPI is the OpenAPI 3.1 document of the whole API, served at
// GET /openapi.json (no API key needed) with its servers replaced by the
// listeners that serve it (Options.Servers).
//
//go:embed openapi.json
var openAPI []byte

// Server is one base URL of the API, for the servers of the OpenAPI
// document: a listener of the running server.
type Server struct {
	URL         string `json:"url"`
	Description string `json:"description"`
}

// withServers returns doc with its top-level servers array replaced by
// servers, and everything else byte for byte as it was, so that the served
// document reads as the committed one.
func withServers(doc []byte, servers []Server) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("openapi.json: not an object")
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("openapi.json: %w", err)
		}
		keyEnd := dec.InputOffset()
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, fmt.Errorf("openapi.json: %w", err)
		}
		if key != "servers" {
			continue
		}
		end := int(dec.InputOffset())
		start := end - len(value)
		if start < int(keyEnd) {
			return nil, fmt.Errorf("openapi.json: servers out of place")
		}
		// The document is indented by two spaces; so is the array.
		list, err := json.MarshalIndent(servers, "  ", "  ")
		if err != nil {
			return nil, err
		}
		return slices.Concat(doc[:start], list, doc[end:]), nil
	}
	return nil, fmt.Errorf("openapi.json: no servers")
}

// pathParam matches a parameter in a Gin path (:id, *rest) or an OpenAPI
// path ({measureId}); both are compared with parameters blanked out.
var pathParam = regexp.MustCompile(`:[^/]+|\*[^/]+|\{[^/}]+\}`)

func routeKey(method, path string) string {
	return strings.ToUpper(method) + " " + pathParam.ReplaceAllString(path, "{}")
}

// Undocumented compares the routes the API serves with the operations of
// its OpenAPI document and describes each difference: a route the document
// lacks, or an operation no route serves. Internal mounted routes are left
// out. Nothing is missing when the result is empty.
func (a *API) Undocumented() ([]string, error) {
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(openAPI, &doc); err != nil {
		return nil, fmt.Errorf("openapi.json: %w", err)
	}
	documented := map[string]bool{}
	for path, ops := range doc.Paths {
		for method := range ops {
			switch method {
			case "get", "put", "post", "delete", "options", "head", "patch", "trace":
				documented[routeKey(method, path)] = true
			}
		}
	}
	var diffs []string
	for _, r := range a.engine.Routes() {
		key := routeKey(r.Method, r.Path)
		if a.internal[key] {
			continue
		}
		if !documented[key] {
			diffs = append(diffs, "not in openapi.json: "+r.Method+" "+r.Path)
		}
		delete(documented, key)
	}
	for key := range documented {
		diffs = append(diffs, "documented but not served: "+key)
	}
	sort.Strings(diffs)
	return diffs, nil
}

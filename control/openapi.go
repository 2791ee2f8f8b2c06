package control

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strings"

	"github.com/gin-gonic/gin"
)

// openAPI is the OpenAPI 3.1 document of the whole API, served as is at
// GET /openapi.json (no API key needed).
//
//go:embed openapi.json
var openAPI []byte

func serveOpenAPI(c *gin.Context) {
	c.Data(http.StatusOK, "application/json", openAPI)
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

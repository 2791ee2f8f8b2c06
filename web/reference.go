package web

import "net/http"

// ReferencePath is where every listener serves the API reference: a page
// that draws the listener's own /openapi.json with Redoc.
const ReferencePath = "/docs"

var referenceFiles = readDir("reference")

// referencePolicy keeps the reference to its own origin. Redoc sets its
// styles at run time (style-src 'unsafe-inline') and runs its search in
// a worker made from a blob.
const referencePolicy = "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
	"worker-src 'self' blob:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

// Reference serves the API reference: GET /docs is index.html and
// GET /docs/<name> its script, style and Redoc's bundle. It holds no secret
// and needs no key, like /openapi.json.
func Reference() http.Handler {
	return page(referenceFiles, ReferencePath, http.Header{"Content-Security-Policy": {referencePolicy}})
}

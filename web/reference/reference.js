// The API reference at /docs: Redoc (web/reference/redoc.standalone.js,
// pinned in scripts/apidocs) draws this listener's /openapi.json, whose
// servers are this server's own listeners. Nothing is fetched from any
// other origin.

const target = document.getElementById('reference');

window.Redoc.init('/openapi.json', {
  expandResponses: '200,201',
  jsonSampleExpandLevel: 3,
  hideHostname: false,
  pathInMiddlePanel: true,
  theme: {
    colors: { primary: { main: '#0f766e' } },
    typography: { fontFamily: 'system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif', headings: { fontFamily: 'inherit' } },
  },
}, target, (err) => {
  if (err) {
    target.textContent = `The API reference could not be drawn (${err.message || err}). The OpenAPI document is at /openapi.json.`;
  }
});

// Package web holds the browser widget, the demo page and the API
// reference, embedded into the binary. The widget and the demo page are
// plain JavaScript, CSS and HTML with no dependency and no build step; the
// reference is Redoc's standalone bundle, copied as it is from the redoc
// package pinned in scripts/apidocs (whose check keeps the copy identical).
// Widget and Reference serve their files on every listener; Demo serves
// the demo page, which only `pulsewire serve --dev` mounts.
//
// The widget's contract with the company's page is in widget/README.md;
// its wire protocol with the session server is session/PROTOCOL.md.
package web

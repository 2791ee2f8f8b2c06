// Package web holds the browser widget and the demo page: plain JavaScript,
// CSS and HTML with no dependency and no build step, embedded into the
// binary. Widget serves the widget's files on every listener; Demo serves
// the demo page, which only `pulsewire serve --dev` mounts.
//
// The widget's contract with the company's page is in widget/README.md;
// its wire protocol with the session server is session/PROTOCOL.md.
package web

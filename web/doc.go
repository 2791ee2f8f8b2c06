// Package web holds the browser widget and the demo page, plain JavaScript,
// CSS and HTML embedded into the binary.
package web

// Package control is the control plane: the business rules for clients,
// access tokens, measures and calibration, and the Gin HTTP API that exposes
// them (SPEC.md sections 2-4, 7 and 8).
package control

// Package control is the control plane: the business rules for clients,
// access tokens, measures, measurement runs and calibration, and the Gin
// HTTP API that exposes them (docs/api.md).
//
// A measurement run (run.go) is shared by every transport: the REST run
// routes (run_http.go), which receive a video, images, face crops or a
// signal (one source file each) and analyse them on a bounded pool
// (analyzer.go), and the session server's live chains.
//
// Webhooks (webhooks.go, webhooks_http.go) tell a client's backend that a
// measure ended or was deleted; the events are written by the store in the
// transaction that makes them happen, and delivered from there, signed
// (the webhook package), by a dispatcher per environment (deliver.go).
package control

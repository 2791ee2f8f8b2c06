// Package session is the measurement session server: the ivat- token
// handshake, session counting and opening limits, the WebSocket and WebRTC
// transports, and the live pipelines that feed frames to dsp and push vitals
// back to the browser widget.
package session

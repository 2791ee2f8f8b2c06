// Errors the widget reports to the page: a stable code to branch on and a
// sentence a person can read.

/** Codes of PulseWireError, for the page to branch on. */
export const codes = Object.freeze({
  unsupported: 'unsupported', // the browser lacks a camera API, WebSocket or WebRTC
  cameraDenied: 'camera-denied', // the person or a policy refused the camera
  noCamera: 'no-camera', // no camera, or none that delivers video
  cameraBusy: 'camera-busy', // another application holds the camera
  tokenUnavailable: 'token-unavailable', // the token source failed or gave no ivat- value
  tokenRefused: 'token-refused', // the server refused the token (expired, spent, revoked, wrong chain...)
  network: 'network', // the connection to the server failed or was lost
  busy: 'busy', // the server runs its maximum of sessions: try again soon
  timeLimit: 'time-limit', // a scan not captured in full within the session's longest life (close 4003): nothing stored
  server: 'server', // the server answered something the widget cannot use
});

const messages = {
  [codes.unsupported]: 'This browser cannot measure: it lacks camera or streaming support.',
  [codes.cameraDenied]: 'Camera access was refused. Allow the camera for this page and try again.',
  [codes.noCamera]: 'No camera was found.',
  [codes.cameraBusy]: 'The camera is in use by another application. Close it and try again.',
  [codes.tokenUnavailable]: 'The measurement could not be authorised. Try again later.',
  [codes.tokenRefused]: 'The measurement was not authorised: the access token was refused.',
  [codes.network]: 'The connection to the measurement server was lost. Check the network and try again.',
  [codes.busy]: 'The measurement server is busy. Try again in a moment.',
  [codes.timeLimit]: 'The measurement took too long to complete and nothing was saved. Try again.',
  [codes.server]: 'The measurement server answered unexpectedly. Try again later.',
};

/** An error of the widget: `code` is one of `codes`; `cause` keeps the underlying error. */
export class PulseWireError extends Error {
  constructor(code, detail, cause) {
    super(messages[code] || detail || code, cause ? { cause } : undefined);
    this.name = 'PulseWireError';
    this.code = code;
    // detail says more for a developer (the console, not the person).
    this.detail = detail || '';
  }
}

/** cameraError maps a getUserMedia rejection to a PulseWireError. */
export function cameraError(err) {
  switch (err && err.name) {
    case 'NotAllowedError':
    case 'SecurityError':
      return new PulseWireError(codes.cameraDenied, err.message, err);
    case 'NotFoundError':
    case 'OverconstrainedError':
      return new PulseWireError(codes.noCamera, err.message, err);
    case 'NotReadableError':
    case 'AbortError':
      return new PulseWireError(codes.cameraBusy, err.message, err);
  }
  return new PulseWireError(codes.noCamera, String(err && err.message || err), err);
}

// The WebSocket transport: GET /sessions, JSON control messages and binary
// JPEG frames (session/PROTOCOL.md).

import { codes, PulseWireError } from './errors.js';
import { frameMessage } from './camera.js';

/** openTimeoutMs bounds the wait for `opened` after the first message. */
const openTimeoutMs = 15000;

/**
 * resumeWithinMs is how long a dropped connection is retried with the
 * resume ticket: inside the server's default idle timeout (10 s), after
 * which the session is gone anyway.
 */
const resumeWithinMs = 8000;

/** closeError turns the close of a session before its end into an error (PROTOCOL section 6). */
export function closeError(code, reason) {
  switch (code) {
    case 1008:
      return new PulseWireError(codes.tokenRefused, 'the server refused the handshake (1008)');
    case 1013:
      return new PulseWireError(codes.busy, 'the server is at its session limit (1013)');
    case 4003:
      return new PulseWireError(codes.timeLimit, 'the scan had not covered its duration at the session\'s longest life (4003)');
    case 1001:
    case 4000:
    case 4001:
    case 4002:
    case 1006:
      return new PulseWireError(codes.network, `the session was closed (${code} ${reason || ''})`.trim());
  }
  return new PulseWireError(codes.server, `the session was closed (${code} ${reason || ''})`.trim());
}

/** socketURL is the WebSocket address of the session route of the server at base. */
export function socketURL(base) {
  const u = new URL('/sessions', base);
  u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
  return u.href;
}

/**
 * queueBytes is what may still wait in the socket's buffer when a frame is
 * offered: about three 320x240 frames. The browser lowers bufferedAmount on
 * the page's thread, late when the page is busy; with nothing allowed to
 * wait, a loaded machine (a load of 12 on 2 cores) dropped 40 of 250
 * frames on loopback. A slow link still drops frames, after a third of a
 * second of queue, instead of delaying every one.
 */
const queueBytes = 40000;

/**
 * maxBehindUs is how far behind the latest frame sent the server may have
 * received, in capture time, before the widget stops sending: the
 * operating system's send buffer, which bufferedAmount does not see, holds
 * megabytes, and on a link of 60 KB/s it held 15 s of frames while the
 * scan crawled at a fifth of real time. The server says what it has
 * received once a second (vitals.receivedUs), so 3 s leaves a healthy
 * link its second of news and a round trip.
 */
const maxBehindUs = 3e6;

/**
 * SocketSession is one measurement over a WebSocket. onMessage receives
 * every server message after `opened`; onEnd(error or null) is called once,
 * when the session is over. A connection lost before the end is taken up
 * again with the resume ticket, without counting a new session.
 */
export class SocketSession {
  constructor(base, { onMessage, onEnd }) {
    this.url = socketURL(base);
    this.onMessage = onMessage;
    this.onEnd = onEnd;
    this.ws = null;
    this.ticket = '';
    this.opened = false; // a connection is attached and open
    this.finished = false; // the session's end is known: no resume
    this.ended = false;
    this.sentUs = -1; // capture time of the latest frame sent
    this.receivedUs = -1; // of the latest the server says it received
    this.connectionUs = -1; // of the first frame sent on this connection
  }

  /** open sends the opening message and resolves with `opened`. */
  open(first) {
    return new Promise((resolve, reject) => {
      let settled = false;
      const fail = (err) => {
        if (!settled) {
          settled = true;
          reject(err);
        }
      };
      const ws = this.connect(first, (opened) => {
        settled = true;
        resolve(opened);
      }, fail);
      setTimeout(() => {
        if (!settled) {
          fail(new PulseWireError(codes.network, 'no answer to the opening message'));
          ws.close();
        }
      }, openTimeoutMs);
    });
  }

  connect(first, onOpened, onFail) {
    const ws = new WebSocket(this.url);
    ws.binaryType = 'arraybuffer';
    this.ws = ws;
    let attached = false;
    ws.onopen = () => ws.send(JSON.stringify(first));
    ws.onmessage = (ev) => {
      if (typeof ev.data !== 'string') return; // the server sends no binary messages
      let msg;
      try {
        msg = JSON.parse(ev.data);
      } catch {
        return;
      }
      if (msg.type === 'opened' && !attached) {
        attached = true;
        this.opened = true;
        this.connectionUs = -1;
        if (msg.resumeTicket) this.ticket = msg.resumeTicket;
        onOpened(msg);
        return;
      }
      if (msg.type === 'result') this.resultSeen = true;
      if (msg.type === 'vitals' && msg.receivedUs) this.receivedUs = msg.receivedUs;
      this.onMessage(msg);
    };
    ws.onclose = (ev) => {
      if (this.ws === ws) this.opened = false;
      if (!attached) {
        onFail(closeError(ev.code, ev.reason));
        return;
      }
      if (this.ws !== ws || this.finished) {
        this.end(null);
        return;
      }
      // 1000 after `result` (calibrated, or the wait for one is over) is
      // the normal end; 1000 before it is a cancelled scan.
      if (ev.code === 1000) {
        this.end(null);
        return;
      }
      // 1006: the connection broke without a close from the server (a
      // network change, a sleeping phone): take the session up again.
      if (ev.code === 1006 && this.ticket && !this.resultSeen) {
        this.onMessage({ type: 'reconnecting' }); // the widget's own, never the server's
        this.resume(Date.now() + resumeWithinMs, 250);
        return;
      }
      this.end(closeError(ev.code, ev.reason));
    };
    return ws;
  }

  // resume reattaches to the session with the ticket, retrying with a
  // growing pause until the deadline.
  resume(deadline, pauseMs) {
    if (this.finished) return;
    if (Date.now() > deadline) {
      this.end(new PulseWireError(codes.network, 'the connection was lost and could not be resumed'));
      return;
    }
    setTimeout(() => {
      if (this.finished) return;
      this.connect({ type: 'resume', ticket: this.ticket }, () => {}, (err) => {
        if (err.code === codes.network) this.resume(deadline, Math.min(pauseMs * 2, 2000));
        else this.end(new PulseWireError(codes.network, 'the connection was lost and the session could not be resumed', err));
      });
    }, pauseMs);
  }

  /** ready says whether a frame may be sent now: attached, and at most queueBytes still queued. */
  ready() {
    return this.opened && this.ws.readyState === WebSocket.OPEN && this.ws.bufferedAmount <= queueBytes && !this.behind();
  }

  /**
   * behind says whether the server is more than maxBehindUs of capture
   * behind the latest frame sent: by what it last said it received, or,
   * before it has said anything on this connection, by the first frame
   * sent on it.
   */
  behind() {
    if (this.sentUs < 0) return false;
    const since = Math.max(this.receivedUs, this.connectionUs);
    return since >= 0 && this.sentUs - since > maxBehindUs;
  }

  /** sendFrame sends one JPEG with its capture time (µs). */
  sendFrame(captureUs, jpeg) {
    if (!this.ready()) return;
    this.ws.send(frameMessage(captureUs, jpeg));
    this.sentUs = captureUs;
    if (this.connectionUs < 0) this.connectionUs = captureUs;
  }

  /** send sends a control message (stop, calibration). */
  send(msg) {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(msg));
  }

  /** close ends the connection; the session is over for this client. */
  close() {
    this.finished = true;
    if (this.ws && this.ws.readyState <= WebSocket.OPEN) this.ws.close(1000);
    else this.end(null);
  }

  end(err) {
    this.finished = true;
    if (this.ended) return;
    this.ended = true;
    this.onEnd(err);
  }
}

// The WebRTC transport: a WHIP-style POST /sessions/whip with the offer,
// the camera as a VP8 track, and the server's messages on the `vitals`
// data channel (session/PROTOCOL.md, "WebRTC").

import { codes, PulseWireError } from './errors.js';

/** gatherTimeoutMs bounds ICE gathering: the offer is sent whole (no trickle). */
const gatherTimeoutMs = 3000;

/** openTimeoutMs bounds the wait for `opened` on the data channel after the answer. */
const openTimeoutMs = 15000;

/** disconnectedGraceMs: a `disconnected` connection often recovers by itself within seconds. */
const disconnectedGraceMs = 5000;

/**
 * sendHeight is the height the video is sent at: 240 lines (320x240 from a
 * 4:3 camera), enough for the face, and a bit rate at which VP8 keeps the
 * skin's colour changes.
 */
const sendHeight = 240;
const maxBitrate = 1_500_000;

/**
 * WhipSession is one measurement over WebRTC. onMessage receives every
 * server message after `opened`; onEnd(error or null) is called once.
 */
export class WhipSession {
  constructor(base, { chain, iceServers, onMessage, onEnd }) {
    this.url = new URL(`/sessions/whip?chain=${encodeURIComponent(chain)}`, base).href;
    this.base = base;
    this.iceServers = iceServers || [];
    this.onMessage = onMessage;
    this.onEnd = onEnd;
    this.pc = null;
    this.dc = null;
    this.location = '';
    this.token = '';
    this.resultSeen = false;
    this.finished = false;
    this.ended = false;
  }

  /**
   * open offers the stream's video track to the server with the token,
   * and resolves with the `opened` message of the data channel. inputs is
   * {measure} or {measureId}.
   */
  async open(token, stream, inputs) {
    if (typeof RTCPeerConnection === 'undefined') {
      throw new PulseWireError(codes.unsupported, 'RTCPeerConnection is missing');
    }
    this.token = token;
    const pc = new RTCPeerConnection({ iceServers: this.iceServers });
    this.pc = pc;
    // The channel must exist before the offer, so that the offer has it.
    const dc = pc.createDataChannel('vitals');
    this.dc = dc;
    const track = stream.getVideoTracks()[0];
    const { height = sendHeight } = track.getSettings();
    const tr = pc.addTransceiver(track, {
      direction: 'sendonly',
      streams: [stream],
      sendEncodings: [{ maxBitrate, maxFramerate: 30, scaleResolutionDownBy: Math.max(1, height / sendHeight) }],
    });
    preferVP8(tr);
    // A pulse needs regular frames more than sharp ones: under pressure,
    // lower the resolution, keep the frame rate.
    const params = tr.sender.getParameters();
    params.degradationPreference = 'maintain-framerate';
    await tr.sender.setParameters(params).catch(() => {});

    const opened = new Promise((resolve, reject) => {
      this.rejectOpen = reject;
      dc.onmessage = (ev) => {
        let msg;
        try {
          msg = JSON.parse(ev.data);
        } catch {
          return;
        }
        if (msg.type === 'opened' && !this.isOpened) {
          this.isOpened = true;
          resolve(msg);
          return;
        }
        if (msg.type === 'result') this.resultSeen = true;
        this.onMessage(msg);
      };
    });
    dc.onclose = () => {
      const over = this.resultSeen || this.finished;
      this.end(over ? null : new PulseWireError(codes.network, 'the data channel closed before the result'));
    };
    pc.onconnectionstatechange = () => this.watch();

    await pc.setLocalDescription(await pc.createOffer());
    await gathered(pc);
    const body = { offer: pc.localDescription.sdp, ...inputs };
    let resp;
    try {
      resp = await fetch(this.url, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
        cache: 'no-store',
      });
    } catch (err) {
      throw new PulseWireError(codes.network, `WHIP POST: ${err && err.message}`, err);
    }
    if (resp.status !== 201) {
      throw whipError(resp.status);
    }
    const location = resp.headers.get('Location');
    if (location) this.location = new URL(location, this.url).href;
    await pc.setRemoteDescription({ type: 'answer', sdp: await resp.text() });

    let timer;
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new PulseWireError(codes.network, 'the data channel did not open')), openTimeoutMs);
    });
    try {
      return await Promise.race([opened, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  // watch ends the session when the connection fails, or stays
  // disconnected longer than a network hiccup.
  watch() {
    const state = this.pc && this.pc.connectionState;
    clearTimeout(this.graceTimer);
    if (state === 'failed' || state === 'closed') {
      this.lost();
    } else if (state === 'disconnected') {
      this.graceTimer = setTimeout(() => this.lost(), disconnectedGraceMs);
    }
  }

  lost() {
    const err = new PulseWireError(codes.network, `the WebRTC connection is ${this.pc.connectionState}`);
    if (this.rejectOpen) this.rejectOpen(err);
    this.end(this.resultSeen ? null : err);
  }

  /** The browser sends the video by itself: there is no frame to push. */
  ready() {
    return false;
  }

  /** send sends a control message (stop, calibration) on the data channel. */
  send(msg) {
    if (this.dc && this.dc.readyState === 'open') this.dc.send(JSON.stringify(msg));
  }

  /**
   * close ends the session: DELETE on the session's Location (which a
   * server that already ended it answers 404), then the peer connection.
   */
  close() {
    this.finished = true;
    if (this.location && !this.deleted) {
      this.deleted = true;
      fetch(this.location, {
        method: 'DELETE',
        headers: { Authorization: `Bearer ${this.token}` },
        keepalive: true, // also when the page is being closed
      }).catch(() => {});
    }
    if (this.pc) this.pc.close();
    this.end(null);
  }

  end(err) {
    this.finished = true;
    if (this.ended) return;
    this.ended = true;
    clearTimeout(this.graceTimer);
    if (this.pc && this.pc.connectionState !== 'closed') this.pc.close();
    this.onEnd(err);
  }
}

/** whipError maps a refused WHIP POST to an error (PROTOCOL: 401 refusal, 503 full, 400/413 bad offer). */
export function whipError(status) {
  switch (status) {
    case 401:
      return new PulseWireError(codes.tokenRefused, 'the server refused the token (401)');
    case 503:
      return new PulseWireError(codes.busy, 'the server is at its session limit (503)');
    case 400:
    case 413:
      return new PulseWireError(codes.unsupported, `the server refused this browser's offer (${status})`);
  }
  return new PulseWireError(codes.server, `WHIP POST answered ${status}`);
}

// preferVP8 offers VP8 only: the server decodes nothing else.
function preferVP8(transceiver) {
  if (!transceiver.setCodecPreferences || !RTCRtpSender.getCapabilities) return;
  const caps = RTCRtpSender.getCapabilities('video');
  const vp8 = caps ? caps.codecs.filter((c) => c.mimeType.toLowerCase() === 'video/vp8') : [];
  if (vp8.length) transceiver.setCodecPreferences(vp8);
}

// gathered waits for the end of ICE gathering, or gatherTimeoutMs.
function gathered(pc) {
  if (pc.iceGatheringState === 'complete') return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(done, gatherTimeoutMs);
    function done() {
      clearTimeout(timer);
      pc.removeEventListener('icegatheringstatechange', check);
      resolve();
    }
    function check() {
      if (pc.iceGatheringState === 'complete') done();
    }
    pc.addEventListener('icegatheringstatechange', check);
  });
}

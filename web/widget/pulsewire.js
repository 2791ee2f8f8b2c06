// PulseWire widget: measures a person's vital signs with the camera.
//
//   import PulseWire from 'https://pulsewire.example.com/widget/pulsewire.js';
//   const widget = PulseWire.mount(document.getElementById('measure'), {
//     tokenUrl: '/api/pulsewire-token', // the company's endpoint; or token: 'ivat-...'
//     chain: 'scan',                     // or 'realtime'
//     transport: 'websocket',            // or 'webrtc'
//     measure: { userData: { externalId: 'person-42' }, tags: ['kiosk-3'] }, // or a function returning it
//     onResult: (measure) => { ... },
//   });
//
// widget/README.md documents every option, event and error code; the wire
// protocol is session/PROTOCOL.md.

import { codes, PulseWireError } from './errors.js';
import { FrameSampler, openCamera, stopCamera } from './camera.js';
import { SocketSession } from './websocket.js';
import { WhipSession } from './webrtc.js';
import { TokenSource } from './token.js';
import { View } from './view.js';
import { withText } from './text.js';

export { codes, PulseWireError };

/** version of the widget's page-facing API. */
export const version = '1.0.0';

const chains = ['scan', 'realtime'];
const transports = ['websocket', 'webrtc'];
const events = ['state', 'vitals', 'result', 'calibrated', 'error'];

/**
 * captureMarginMs: frames keep going this long past the latest end of a
 * scan, so that the server sees it covered despite the frames dropped on
 * the way. A scan counts its duration from the face's arrival, which may
 * take up to one duration (after that it ends without a face), and goes on
 * up to its longest (maxDurationMs) while the pulse is faint: frames go
 * until the result comes, and at most the duration and the longest.
 */
const captureMarginMs = 1000;

/**
 * mount draws the widget inside element and returns its handle:
 * start(), stop(), unmount(), on(event, fn), and the state and result
 * getters. Options: token | tokenUrl (+ tokenRequest), chain, transport,
 * measure | measureId, server, autoStart, iceServers, text, jpegQuality,
 * and the callbacks onState, onVitals, onResult, onCalibrated, onError.
 */
export function mount(element, options = {}) {
  if (!element || typeof element.append !== 'function') {
    throw new TypeError('PulseWire.mount: element must be a DOM element');
  }
  return new Widget(element, options).handle();
}

export default { mount, codes, version, PulseWireError };

/** Widget runs measurements, one at a time, in one mounted view. */
class Widget {
  constructor(element, options) {
    const { chain = 'scan', transport = 'websocket' } = options;
    if (!chains.includes(chain)) throw new TypeError(`PulseWire.mount: chain must be one of ${chains.join(', ')}`);
    if (!transports.includes(transport)) throw new TypeError(`PulseWire.mount: transport must be one of ${transports.join(', ')}`);
    if (options.measure && options.measureId) throw new TypeError('PulseWire.mount: give measure or measureId, not both');
    this.options = options;
    this.chain = chain;
    this.transport = transport;
    this.server = new URL(options.server || '/', import.meta.url).href;
    this.tokens = new TokenSource(options);
    this.text = withText(options.text);
    this.listeners = Object.fromEntries(events.map((e) => [e, new Set()]));
    this.current = 'idle';
    this.lastResult = null;
    this.run = null;

    this.view = new View(element, this.text, new URL('./widget.css', import.meta.url).href);
    this.view.stopLabel(chain === 'realtime' ? this.text.finish : this.text.cancel);
    this.view.onStart = () => this.start();
    this.view.onAgain = () => this.start();
    this.view.onStop = () => this.stop();
    this.view.onCalibrate = (systole, diastole) => this.calibrate(systole, diastole);
    this.view.onSkip = () => this.run && this.run.session && this.run.session.close();
    if (options.autoStart) this.start();
  }

  handle() {
    const self = this;
    return {
      start: () => this.start(),
      stop: () => this.stop(),
      unmount: () => this.unmount(),
      on: (event, fn) => this.on(event, fn),
      get state() { return self.current; },
      get result() { return self.lastResult; },
    };
  }

  on(event, fn) {
    if (!this.listeners[event]) throw new TypeError(`PulseWire: unknown event ${event} (${events.join(', ')})`);
    this.listeners[event].add(fn);
    return () => this.listeners[event].delete(fn);
  }

  emit(event, value) {
    const callback = this.options['on' + event[0].toUpperCase() + event.slice(1)];
    for (const fn of [callback, ...this.listeners[event]]) {
      if (typeof fn !== 'function') continue;
      try {
        fn(value);
      } catch (err) {
        console.error('PulseWire: a listener failed', err); // the page's error must not stop the measurement
      }
    }
  }

  setState(s) {
    this.current = s;
    this.view.state(s);
    this.emit('state', s);
  }

  get busy() {
    return ['camera', 'connecting', 'measuring', 'finishing'].includes(this.current);
  }

  get canRepeat() {
    return this.tokens.canRepeat && !(this.options.measureId && this.lastResult);
  }

  /** start begins a measurement: camera, a fresh token, the session. */
  async start() {
    if (this.busy || this.unmounted) return;
    if (this.run) this.teardown(this.run);
    const run = { abort: new AbortController(), stream: null, session: null, sampler: null, firstUs: -1, cancelled: false };
    this.run = run;
    this.lastResult = null;
    this.view.resetLive();
    try {
      this.setState('camera');
      run.stream = await openCamera();
      if (this.gone(run)) return stopCamera(run.stream);
      this.view.preview(run.stream);

      this.setState('connecting');
      const token = await this.tokens.next(run.abort.signal);
      if (this.gone(run)) return;
      const opened = await this.connect(run, token);
      if (this.gone(run)) return;
      run.lastFrameMs = opened.durationMs + (opened.maxDurationMs || opened.durationMs) + captureMarginMs;
      run.measureId = opened.measureId;
      this.setState('measuring');
      if (this.transport === 'websocket') this.sendFrames(run);
    } catch (err) {
      if (run === this.run && !run.cancelled) this.fail(err);
    }
  }

  // gone says whether run was cancelled or replaced while it waited.
  gone(run) {
    return run !== this.run || run.cancelled;
  }

  // connect opens the session on the chosen transport and resolves with
  // its `opened` message.
  connect(run, token) {
    const handlers = {
      onMessage: (msg) => run === this.run && this.message(run, msg),
      onEnd: (err) => run === this.run && this.ended(run, err),
    };
    const { measureId } = this.options;
    const measure = typeof this.options.measure === 'function' ? this.options.measure() : this.options.measure;
    const inputs = measureId ? { measureId } : measure ? { measure } : {};
    if (this.transport === 'webrtc') {
      run.session = new WhipSession(this.server, { chain: this.chain, iceServers: this.options.iceServers, ...handlers });
      return run.session.open(token, run.stream, inputs);
    }
    run.session = new SocketSession(this.server, handlers);
    return run.session.open({ type: 'open', token, chain: this.chain, ...inputs });
  }

  // sendFrames streams the camera over the WebSocket until the scan's
  // result (or, in realtime, until the end).
  sendFrames(run) {
    const video = this.view.video;
    run.sampler = new FrameSampler(video, run.stream.getVideoTracks()[0], { quality: this.options.jpegQuality || 0.85 });
    run.sampler.start(() => run.session.ready(), (captureUs, jpeg) => {
      if (run.firstUs < 0) run.firstUs = captureUs;
      if (this.chain === 'scan' && captureUs - run.firstUs > run.lastFrameMs * 1000) {
        run.sampler.stop();
        return;
      }
      run.session.sendFrame(captureUs, jpeg);
    });
  }

  message(run, msg) {
    switch (msg.type) {
      case 'vitals':
        if (this.current !== 'measuring' && this.current !== 'finishing') return;
        // A link that lags behind the camera is said first: the person
        // cannot fix it, but should know why the ring moves slowly.
        this.view.vitals(run.session.behind && run.session.behind()
          ? { ...msg, guidance: [{ code: 'SLOW_LINK' }, ...(msg.guidance || [])] } : msg, this.text.guidance);
        this.emit('vitals', msg);
        if (this.chain === 'scan' && msg.progress >= 1 && this.current === 'measuring') this.setState('finishing');
        return;
      case 'reconnecting':
        // Until the next vitals: the ring stops, and the person learns why.
        if (this.current === 'measuring' || this.current === 'finishing') this.view.say(this.text.reconnecting);
        return;
      case 'result':
        this.finish(run, msg.measure);
        return;
      case 'calibrated':
        this.view.calibrated(true);
        this.emit('calibrated', { measureId: run.measureId });
        run.session.close();
        return;
      case 'error':
        if (this.current === 'result' && msg.code === 'invalid') {
          this.view.calibrated(false, msg.message || this.text.reasons.other);
        } else if (msg.code === 'internal') {
          run.serverError = msg.message;
        } else {
          console.warn(`PulseWire: the server says ${msg.code}: ${msg.message}`);
        }
    }
  }

  // finish shows the result; the session stays open only for a calibration.
  finish(run, measure) {
    this.releaseCamera(run);
    this.lastResult = measure;
    const calibrate = !!(measure && measure.userData && measure.userData.externalId);
    this.view.showResult(measure, { canRepeat: this.canRepeat, calibrate });
    this.current = 'result';
    this.emit('state', 'result');
    this.emit('result', measure);
    if (!calibrate) run.session.close();
  }

  // ended: the session is over, by its normal end or by a failure.
  ended(run, err) {
    this.releaseCamera(run);
    if (this.current === 'result' || run.cancelled) return;
    if (!err) {
      err = new PulseWireError(codes.server, run.serverError || 'the session ended without a result');
    }
    this.fail(err);
  }

  calibrate(systole, diastole) {
    if (this.run && this.run.session) this.run.session.send({ type: 'calibration', systole, diastole });
  }

  /**
   * stop ends the measurement under way: a realtime session is finished
   * (its measure is stored and shown); a scan is cancelled and nothing is
   * stored. After a result it skips the calibration.
   */
  stop() {
    const run = this.run;
    if (!run) return;
    if (this.current === 'measuring' && this.chain === 'realtime') {
      run.session.send({ type: 'stop' });
      if (run.sampler) run.sampler.stop();
      this.setState('finishing');
      return;
    }
    if (this.current === 'result') {
      if (run.session) run.session.close();
      return;
    }
    if (!this.busy) return;
    run.cancelled = true;
    run.abort.abort();
    if (run.session) {
      run.session.send({ type: 'stop' });
      run.session.close();
    }
    this.releaseCamera(run);
    this.current = 'stopped';
    this.view.cancelled(this.canRepeat);
    this.emit('state', 'stopped');
  }

  fail(err) {
    if (!(err instanceof PulseWireError)) {
      err = new PulseWireError(codes.server, String(err && err.message || err), err);
    }
    if (this.run) this.teardown(this.run);
    this.current = 'error';
    this.view.error(err, this.tokens.canRepeat);
    this.emit('state', 'error');
    this.emit('error', err);
  }

  releaseCamera(run) {
    if (run.sampler) run.sampler.stop();
    stopCamera(run.stream);
    run.stream = null;
    this.view.clearPreview();
    this.view.stopLive();
  }

  teardown(run) {
    run.cancelled = true;
    run.abort.abort();
    this.releaseCamera(run);
    if (run.session) run.session.close();
  }

  unmount() {
    if (this.unmounted) return;
    this.unmounted = true;
    if (this.run) this.teardown(this.run);
    this.run = null;
    this.view.destroy();
  }
}

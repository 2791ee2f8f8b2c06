// The widget's screen: camera preview with a face guide and a progress
// ring, live guidance, heart and breathing rate, the pulse wave, then the
// result card and the calibration form. It lives in a shadow root, so the
// page's styles and the widget's do not meet.

import { WaveChart } from './chart.js';

const svgNS = 'http://www.w3.org/2000/svg';

/** ringRadius of the progress ring, in the stage's 100x100 SVG units. */
const ringRadius = 48;
const ringLength = 2 * Math.PI * ringRadius;

// el makes an element with attributes and children (strings become text).
function el(tag, attrs = {}, ...children) {
  const e = tag.startsWith('svg:') ? document.createElementNS(svgNS, tag.slice(4)) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v !== false && v !== undefined) e.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children) e.append(c);
  return e;
}

let ids = 0;

/**
 * View draws the widget inside host. The owner sets the handlers
 * (onStart, onStop, onAgain, onCalibrate, onSkip) and calls the methods
 * below as the measurement goes.
 */
export class View {
  constructor(host, text, styleURL) {
    this.text = text;
    this.host = el('div', { class: 'pulsewire-host' });
    host.append(this.host);
    const root = this.host.attachShadow({ mode: 'open' });
    this.root = root;
    const id = `pw${++ids}`;
    const t = text;

    this.video = el('video', { class: 'video', muted: true, playsinline: true, autoplay: true, 'aria-label': t.preview });
    this.video.muted = true; // the attribute alone does not mute in every browser
    this.ring = el('svg:circle', { class: 'ring', cx: 50, cy: 50, r: ringRadius, 'stroke-dasharray': `0 ${ringLength}` });
    this.progress = el('div', {
      class: 'progress', role: 'progressbar', 'aria-label': t.progress,
      'aria-valuemin': 0, 'aria-valuemax': 100, 'aria-valuenow': 0,
    }, el('svg:svg', { viewBox: '0 0 100 100', 'aria-hidden': 'true' },
      el('svg:circle', { class: 'track', cx: 50, cy: 50, r: ringRadius }),
      this.ring,
      // The face guide: an oval a face of the right size fills.
      el('svg:ellipse', { class: 'guide', cx: 50, cy: 48, rx: 24, ry: 31 })));
    // What to fix now, on the picture itself, where the person is looking.
    this.hint = el('p', { class: 'hint', hidden: true, 'aria-hidden': 'true' });
    this.stage = el('div', { class: 'stage' }, el('div', { class: 'lens' }, this.video), this.progress, this.hint);

    this.status = el('p', { class: 'status', role: 'status', 'aria-live': 'polite', id: `${id}-status` }, t.intro);
    this.hr = this.tile('hr');
    this.br = this.tile('br');
    this.waveCanvas = el('canvas', { class: 'wave', role: 'img', 'aria-label': t.wave });
    this.chart = new WaveChart(this.waveCanvas);
    this.live = el('div', { class: 'live', hidden: true }, el('div', { class: 'tiles' }, this.hr.box, this.br.box), this.waveCanvas);

    this.startButton = el('button', { type: 'button', class: 'primary' }, t.start);
    this.stopButton = el('button', { type: 'button', hidden: true }, t.cancel);
    this.startButton.onclick = () => this.onStart();
    this.stopButton.onclick = () => this.onStop();
    this.actions = el('div', { class: 'actions' }, this.startButton, this.stopButton);

    this.alert = el('p', { class: 'alert', role: 'alert', hidden: true });
    this.result = el('section', { class: 'result', hidden: true, 'aria-labelledby': `${id}-result` });
    this.resultId = `${id}-result`;

    const styles = el('link', { rel: 'stylesheet', href: styleURL });
    this.panel = el('section', { class: 'pw', 'aria-label': t.title, 'aria-describedby': `${id}-status` },
      this.stage, this.status, this.live, this.alert, this.result, this.actions);
    root.append(styles, this.panel);
    this.setProgress(0);
    this.state('idle');
  }

  tile(name) {
    const [label, unit] = this.text.variables[name];
    const value = el('span', { class: 'value' }, '–');
    const box = el('div', { class: 'tile' }, el('span', { class: 'label' }, label), value, el('span', { class: 'unit' }, unit));
    return { box, value };
  }

  /** state shows what a state of the measurement needs (see pulsewire.js). */
  state(s) {
    this.panel.dataset.state = s;
    const busy = s === 'camera' || s === 'connecting' || s === 'measuring' || s === 'finishing';
    // A button about to be hidden must hand the focus on, or a keyboard
    // or screen reader user is left on the page's <body>.
    const focused = this.root.activeElement;
    this.startButton.hidden = busy || s === 'result';
    this.stopButton.hidden = !busy;
    if (focused === this.startButton && busy) this.stopButton.focus();
    if (focused === this.stopButton && !busy && !this.startButton.hidden) this.startButton.focus();
    this.result.hidden = s !== 'result';
    this.stage.hidden = s === 'result';
    this.status.hidden = s === 'result'; // the card speaks for itself
    this.live.hidden = !(s === 'measuring' || s === 'finishing');
    if (busy) this.alert.hidden = true;
    const say = { camera: this.text.camera, connecting: this.text.connecting, measuring: this.text.measuring, finishing: this.text.computing };
    if (say[s]) this.say(say[s]);
  }

  /** say puts a sentence in the status line, which screen readers announce on change. */
  say(sentence) {
    if (this.status.textContent !== sentence) this.status.textContent = sentence;
  }

  /** stopLabel names the stop button: cancel a scan, finish a realtime session. */
  stopLabel(label) {
    this.stopButton.textContent = label;
  }

  preview(stream) {
    this.video.srcObject = stream;
    const played = this.video.play();
    if (played) played.catch(() => {}); // autoplay of a muted camera is allowed; nothing to do if not
  }

  clearPreview() {
    this.video.srcObject = null;
  }

  /** vitals shows one vitals message (session/PROTOCOL.md section 3). */
  vitals(v, guidance) {
    this.setProgress(v.progress);
    this.hr.value.textContent = mean(v.hr);
    this.br.value.textContent = mean(v.br);
    this.chart.update(v);
    // Warming up is no fault to fix: the guide stays calm and the status
    // says "Measuring".
    const fix = Array.isArray(v.guidance) && v.guidance.find((g) => g && g.code !== 'CONFORMITY_INITIALISATION');
    this.panel.dataset.guidance = fix ? 'fix' : 'ok';
    const advice = fix ? guidance[fix.code] || fix.message || this.text.measuring : this.text.measuring;
    this.say(advice);
    // The status line says it to screen readers; the hint shows it on the picture.
    this.hint.textContent = fix ? advice : '';
    this.hint.hidden = !fix;
  }

  setProgress(p) {
    const f = Math.min(1, Math.max(0, Number(p) || 0));
    this.ring.setAttribute('stroke-dasharray', `${(f * ringLength).toFixed(1)} ${ringLength.toFixed(1)}`);
    this.ring.classList.toggle('empty', f === 0); // a round cap would show a dot at 0
    this.progress.setAttribute('aria-valuenow', Math.round(f * 100));
  }

  /** resetLive empties the live values for a new measurement. */
  resetLive() {
    this.setProgress(0);
    this.hr.value.textContent = '–';
    this.br.value.textContent = '–';
    this.chart.clear();
    this.hint.hidden = true;
    delete this.panel.dataset.guidance;
  }

  stopLive() {
    this.chart.stop();
  }

  /**
   * showResult draws the result card of a measure: its
   * variables in a fixed order, each value or the reason it has none, and
   * the calibration form when asked.
   */
  showResult(measure, { canRepeat, calibrate }) {
    const t = this.text;
    const list = el('dl', { class: 'variables' });
    const vars = measure && measure.variables ? measure.variables : {};
    const names = [...Object.keys(t.variables).filter((n) => n in vars), ...Object.keys(vars).filter((n) => !(n in t.variables))];
    for (const name of names) {
      const [label, unit] = t.variables[name] || [name, ''];
      const r = vars[name] || {};
      const dd = r.error
        ? el('dd', { title: r.error, 'data-error': r.error }, el('span', { class: 'why' }, reason(r.error, t)))
        : el('dd', {}, format(name, r.value, unit, t));
      list.append(el('div', { class: r.error ? 'variable missing' : 'variable', 'data-variable': name },
        el('dt', {}, label), dd));
    }
    const heading = el('h2', { id: this.resultId, tabindex: '-1' }, t.results);
    this.result.replaceChildren(heading, list);
    if (calibrate) this.result.append(this.calibrationForm());
    const again = el('button', { type: 'button', class: 'primary' }, t.again);
    again.onclick = () => this.onAgain();
    if (canRepeat) this.result.append(el('div', { class: 'actions' }, again));
    this.state('result');
    heading.focus();
  }

  calibrationForm() {
    const t = this.text;
    const field = (name, label, min, max) => {
      const input = el('input', { type: 'number', name, id: `${this.resultId}-${name}`, min, max, step: 1, required: true, inputmode: 'numeric' });
      return [input, el('div', { class: 'field' }, el('label', { for: input.id }, label), input)];
    };
    const [sys, sysField] = field('systole', t.systole, 60, 260);
    const [dia, diaField] = field('diastole', t.diastole, 30, 160);
    const note = el('p', { class: 'note', role: 'status', 'aria-live': 'polite' });
    const save = el('button', { type: 'submit', class: 'primary' }, t.save);
    const skip = el('button', { type: 'button' }, t.skip);
    const form = el('form', { class: 'calibration', 'aria-labelledby': `${this.resultId}-cal` },
      el('h3', { id: `${this.resultId}-cal` }, t.calibrationTitle),
      el('p', {}, t.calibrationHelp),
      el('div', { class: 'fields' }, sysField, diaField),
      note,
      el('div', { class: 'actions' }, save, skip));
    form.onsubmit = (ev) => {
      ev.preventDefault();
      save.disabled = true;
      this.onCalibrate(Number(sys.value), Number(dia.value));
    };
    skip.onclick = () => {
      form.remove();
      this.onSkip();
    };
    this.calibration = { form, note, save };
    return form;
  }

  /** calibrated reports the answer to the calibration: ok, or the server's message. */
  calibrated(ok, message) {
    const c = this.calibration;
    if (!c) return;
    c.note.textContent = ok ? this.text.calibrated : message;
    c.save.disabled = ok;
    if (ok) c.form.querySelectorAll('input, button').forEach((e) => { e.disabled = true; });
  }

  /** error shows a PulseWireError; the start button offers a new try when one is possible. */
  error(err, canRetry) {
    this.alert.textContent = err.message;
    this.alert.hidden = false;
    this.state('error');
    this.say(''); // not "Connecting…" beside the error
    this.startButton.hidden = !canRetry;
  }

  cancelled(canRetry = true) {
    this.state('stopped');
    this.say(this.text.cancelled);
    this.startButton.hidden = !canRetry;
  }

  destroy() {
    this.chart.stop();
    this.clearPreview();
    this.host.remove();
  }
}

// mean shows an hr/br/hrv variable's mean, rounded, or a dash.
function mean(v) {
  return v && !v.error && v.value && Number.isFinite(v.value.mean) ? String(Math.round(v.value.mean)) : '–';
}

// format shows a variable's value with its unit.
function format(name, value, unit, t) {
  const u = unit ? ` ${unit}` : '';
  if (value === null || value === undefined) return t.notMeasured;
  if (typeof value === 'number') {
    return `${name === 'physicalAge' || name === 'healthScore' ? Math.round(value) : value.toFixed(1)}${u}`;
  }
  if (Number.isFinite(value.mean)) return `${Math.round(value.mean)}${u}`;
  if (Number.isFinite(value.systole)) return `${Math.round(value.systole)}/${Math.round(value.diastole)}${u}`;
  if (Number.isFinite(value.level) && value.scale) return `${value.level} ${t.of} ${value.scale.max}`;
  return t.notMeasured;
}

// reason says why a variable has no value: its error code in plain words,
// or its group's words (a page's own text may name only the groups).
function reason(code, t) {
  const r = t.reasons;
  if (r[code]) return r[code];
  if (code.startsWith('CONFORMITY_') && r.CONFORMITY) return r.CONFORMITY;
  if (code.startsWith('MISSING_USER_DATA') && r.MISSING_USER_DATA) return r.MISSING_USER_DATA;
  return r.other;
}

// The live pulse wave chart, drawn from the `wave` of each vitals message.

/** spanMs of wave is shown at once: three to six beats at rest. */
const spanMs = 4000;

/**
 * lagMs: the chart shows the wave this far behind the latest message and
 * scrolls through the gap until the next one (about a second later), so
 * the line moves smoothly instead of jumping once a second.
 */
const lagMs = 1000;

/**
 * WaveChart draws the recent pulse wave on a canvas. The server sends the
 * last few seconds of wave with every vitals message, filtered anew each
 * time, so each message replaces the previous samples.
 */
export class WaveChart {
  constructor(canvas) {
    this.canvas = canvas;
    this.ctx = canvas.getContext('2d');
    this.wave = [];
    this.rateHz = 0;
    this.endMs = 0; // capture time of the last sample
    this.at = 0; // performance.now() when the samples came
    this.frame = 0;
    this.still = matchMedia('(prefers-reduced-motion: reduce)').matches;
  }

  /** update takes a vitals message. */
  update(vitals) {
    const wave = Array.isArray(vitals.wave) ? vitals.wave.filter(Number.isFinite) : [];
    if (!wave.length || !(vitals.waveRateHz > 0)) return;
    this.wave = wave;
    this.rateHz = vitals.waveRateHz;
    this.endMs = vitals.elapsedMs || 0;
    this.at = performance.now();
    if (this.still) this.draw(this.endMs);
    else if (!this.frame) this.animate();
  }

  animate() {
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      const since = Math.min(performance.now() - this.at, lagMs * 1.5);
      this.draw(this.endMs - lagMs + since);
      this.animate();
    });
  }

  /** stop ends the animation and keeps the last picture. */
  stop() {
    cancelAnimationFrame(this.frame);
    this.frame = 0;
  }

  /** clear empties the chart. */
  clear() {
    this.stop();
    this.wave = [];
    this.draw(0);
  }

  // draw plots the samples whose capture time is in (showEnd-spanMs, showEnd].
  draw(showEnd) {
    const { canvas, ctx } = this;
    const dpr = window.devicePixelRatio || 1;
    const w = Math.round(canvas.clientWidth * dpr);
    const h = Math.round(canvas.clientHeight * dpr);
    if (!w || !h) return;
    if (canvas.width !== w || canvas.height !== h) {
      canvas.width = w;
      canvas.height = h;
    }
    ctx.clearRect(0, 0, w, h);
    const n = this.wave.length;
    if (!n) return;
    const stepMs = 1000 / this.rateHz;
    const pad = 4 * dpr;
    ctx.lineWidth = 2 * dpr;
    ctx.lineJoin = 'round';
    ctx.strokeStyle = getComputedStyle(canvas).color;
    ctx.beginPath();
    let started = false;
    for (let k = 0; k < n; k++) {
      const t = this.endMs - (n - 1 - k) * stepMs;
      if (t < showEnd - spanMs - stepMs || t > showEnd + stepMs) continue;
      const x = ((t - (showEnd - spanMs)) / spanMs) * w;
      const y = h / 2 - (this.wave[k] * (h / 2 - pad));
      if (started) ctx.lineTo(x, y);
      else ctx.moveTo(x, y);
      started = true;
    }
    ctx.stroke();
  }
}

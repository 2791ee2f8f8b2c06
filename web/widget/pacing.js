// Which camera frames to send, and how to scale them: shared by the page's
// sampler (camera.js) and the encoding worker (encoder.js). Nothing here
// touches the page, so a worker can import it.

/**
 * adaptEveryMs is how often the pacer looks at its drops; when more than
 * adaptDropShare of the frames it meant to send were dropped (the phone or
 * the link cannot keep up), it keeps one frame in `stride` for the rest of
 * the session, up to maxStride. A steady 15 a second stays above the 12
 * the analysis needs (CONFORMITY_LOW_FPS) where a phone or link that keeps
 * falling behind would drop ever more.
 */
const adaptEveryMs = 2000;
const adaptDropShare = 0.15;

/**
 * encoders is how many frames may be encoding at once, on the page or in
 * the worker: two absorb the jitter of a busy CPU (an encoding that takes
 * a little longer than a frame interval) without building a queue.
 */
export const encoders = 2;

/** minFps: the stride never takes the frame rate below it (the analysis needs 12). */
const minFps = 15;

/**
 * maxStride is the largest stride for a camera of cameraFps: one of 15
 * frames a second is never thinned.
 */
export function maxStride(maxFps, cameraFps) {
  return Math.max(1, Math.floor(Math.min(maxFps, cameraFps || maxFps) / minFps));
}

/**
 * Pacer decides, frame by frame, which frames are kept: at most one per
 * intervalMs (times stride), in capture order. It counts what was kept,
 * sent and dropped, and widens the stride when too many are dropped.
 */
export class Pacer {
  constructor({ intervalMs, maxStride }) {
    this.intervalMs = intervalMs;
    this.maxStride = maxStride;
    this.stride = 1;
    this.lastMs = -Infinity; // capture time of the last frame kept
    this.sentMs = -Infinity; // and of the last one sent
    this.sent = 0;
    this.dropped = 0;
    this.window = { startMs: -1, kept: 0, dropped: 0 };
  }

  /**
   * due says whether a frame taken at atMs is one to keep, timewise: not
   * too soon after the last one kept (with a little slack, for the jitter
   * of frame times). The caller then either keeps or drops it.
   */
  due(atMs) {
    if (atMs - this.lastMs < this.stride * this.intervalMs - 4) return false;
    this.adapt(atMs);
    return true;
  }

  keep(atMs) {
    this.lastMs = atMs;
    this.window.kept++;
  }

  drop() {
    this.dropped++;
    this.window.dropped++;
  }

  /** sendable says whether an encoded frame taken at atMs may still go: in capture order only. */
  sendable(atMs) {
    return atMs > this.sentMs;
  }

  markSent(atMs) {
    this.sentMs = atMs;
    this.sent++;
  }

  adapt(atMs) {
    const win = this.window;
    if (win.startMs < 0) win.startMs = atMs;
    if (atMs - win.startMs < adaptEveryMs) return;
    if (win.dropped > adaptDropShare * (win.kept + win.dropped) && this.stride < this.maxStride) this.stride++;
    this.window = { startMs: atMs, kept: 0, dropped: 0 };
  }
}

/**
 * drawScaled draws source (w x h pixels) into canvas, an HTMLCanvasElement
 * or an OffscreenCanvas, at most maxSide pixels on the long side, in one
 * step with the best smoothing the browser has: plain nearest-pixel
 * scaling would alias the skin's tiny colour changes, which carry the
 * pulse.
 */
export function drawScaled(canvas, source, w, h, maxSide) {
  const scale = Math.min(1, maxSide / Math.max(w, h));
  const cw = Math.max(2, Math.round(w * scale));
  const ch = Math.max(2, Math.round(h * scale));
  if (canvas.width !== cw || canvas.height !== ch) {
    canvas.width = cw;
    canvas.height = ch;
  }
  const ctx = canvas.getContext('2d', { alpha: false });
  ctx.imageSmoothingEnabled = true;
  ctx.imageSmoothingQuality = 'high';
  ctx.drawImage(source, 0, 0, cw, ch);
}

/**
 * eachFrame reads a MediaStreamTrackProcessor's frames from reader while
 * keepOn() holds, and hands each to onFrame(frame, w, h, atMs) with its
 * capture time (VideoFrame.timestamp, µs, as ms). Each frame is closed as
 * soon as onFrame returns: a camera has a few frame buffers, and one kept
 * stalls it.
 */
export async function eachFrame(reader, keepOn, onFrame) {
  while (keepOn()) {
    let frame;
    try {
      const next = await reader.read();
      if (next.done) return;
      frame = next.value;
    } catch {
      return; // the track ended or the reader was cancelled
    }
    try {
      if (keepOn()) onFrame(frame, frame.displayWidth, frame.displayHeight, frame.timestamp / 1000);
    } finally {
      frame.close();
    }
  }
}

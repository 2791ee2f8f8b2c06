// The camera: opening it, and sampling its frames as small JPEG pictures
// for the WebSocket transport.

import { cameraError, codes, PulseWireError } from './errors.js';
import { drawScaled, eachFrame, encoders, maxStride, Pacer } from './pacing.js';

/**
 * openCamera asks for the front camera. 640x480 at 30 frames per second
 * is asked for, not required: the pulse needs a steady frame rate more
 * than pixels, and the frames are scaled down before they are sent.
 */
export async function openCamera() {
  if (!navigator.mediaDevices || !navigator.mediaDevices.getUserMedia) {
    // Also what an insecure (http, not localhost) page sees.
    throw new PulseWireError(codes.unsupported, 'navigator.mediaDevices.getUserMedia is missing (the page needs https)');
  }
  try {
    return await navigator.mediaDevices.getUserMedia({
      audio: false,
      video: {
        facingMode: 'user',
        width: { ideal: 640 },
        height: { ideal: 480 },
        frameRate: { ideal: 30 },
      },
    });
  } catch (err) {
    throw cameraError(err);
  }
}

/** stopCamera ends every track of the stream, which turns the camera light off. */
export function stopCamera(stream) {
  if (stream) stream.getTracks().forEach((t) => t.stop());
}

/** frameHeaderBytes: the capture time before each JPEG (session/PROTOCOL.md section 2). */
export const frameHeaderBytes = 8;

/**
 * frameMessage builds one binary frame message: the capture time in whole
 * microseconds as an unsigned 64-bit big-endian integer, then the JPEG. It
 * is a Blob the WebSocket reads by itself, so nothing waits for the bytes.
 */
export function frameMessage(captureUs, jpeg) {
  const header = new Uint8Array(frameHeaderBytes);
  new DataView(header.buffer).setBigUint64(0, BigInt(Math.max(0, Math.round(captureUs))));
  return new Blob([header, jpeg]);
}

/** workerReadyMs bounds the wait for the encoding worker to start; after it the page encodes. */
const workerReadyMs = 3000;

/**
 * startEncoder starts the encoding worker (encoder.js) and resolves with
 * it once it can encode, or with null where it cannot: no module Worker or
 * OffscreenCanvas, a Content-Security-Policy that forbids it, a worker
 * that fails to load. A page of another origin (the company's) may not
 * start a worker from our URL; it starts one from a blob: URL of its own
 * that imports ours (served with CORS).
 */
function startEncoder() {
  if (typeof Worker !== 'function' || typeof OffscreenCanvas !== 'function' || !OffscreenCanvas.prototype.convertToBlob) {
    return Promise.resolve(null);
  }
  const url = new URL('./encoder.js', import.meta.url);
  let blobURL = '';
  let worker;
  try {
    if (url.origin === self.location.origin) {
      worker = new Worker(url, { type: 'module' });
    } else {
      blobURL = URL.createObjectURL(new Blob([`import ${JSON.stringify(url.href)};`], { type: 'text/javascript' }));
      worker = new Worker(blobURL, { type: 'module' });
    }
  } catch {
    if (blobURL) URL.revokeObjectURL(blobURL);
    return Promise.resolve(null);
  }
  return new Promise((resolve) => {
    const done = (ok) => {
      clearTimeout(timer);
      worker.onmessage = null;
      worker.onerror = null;
      if (blobURL) URL.revokeObjectURL(blobURL);
      if (!ok) worker.terminate();
      resolve(ok ? worker : null);
    };
    const timer = setTimeout(() => done(false), workerReadyMs);
    worker.onmessage = (ev) => done(ev.data && ev.data.type === 'ready');
    worker.onerror = () => done(false);
  });
}

/**
 * FrameSampler turns camera frames into JPEG pictures of at most maxSide
 * pixels on the long side (320x240 from a 4:3 camera), at most maxFps a
 * second. It never queues: a frame that comes while two are still being
 * encoded, or while canSend() says the link is busy, is dropped and
 * counted. So a slow link or a slow phone lowers the frame rate instead of
 * delaying every frame, and the capture times stay true.
 *
 * The encoding runs in a worker (encoder.js) where the browser can: a page
 * busy drawing, or a phone's slow CPU, delayed the encoders on the page's
 * thread until frames were dropped or came late. Frames come from a
 * MediaStreamTrackProcessor where the browser has one (Chromium): it hands
 * over every camera frame with its capture time, and its stream goes to the
 * worker, so the page's thread only sends what comes back. Elsewhere they
 * come from the video element's requestVideoFrameCallback (which skips
 * frames the page did not get to paint) and go to the worker as
 * ImageBitmaps. Without a worker the page encodes them on canvases.
 *
 * Options: maxSide, maxFps, quality; worker: false and processor: false
 * turn those paths off (for tests and comparisons).
 */
export class FrameSampler {
  constructor(video, track, { maxSide = 320, maxFps = 30, quality = 0.85, worker = true, processor = true } = {}) {
    this.video = video;
    this.track = track;
    this.maxSide = maxSide;
    this.quality = quality;
    this.useWorker = worker;
    this.useProcessor = processor && typeof MediaStreamTrackProcessor === 'function' && !!track;
    // The stride counts frames of the camera.
    const cameraFps = track && track.getSettings && track.getSettings().frameRate;
    this.pacer = new Pacer({ intervalMs: 1000 / maxFps, maxStride: maxStride(maxFps, cameraFps) });
    this.canvases = [];
    this.busy = 0; // frames encoding now (on the page or sent to the worker)
    this.running = false;
    this.worker = null;
    this.workerDropped = 0;
    this.waiting = new Map(); // id -> resolve, of frames the worker encodes
    this.nextId = 0;
    this.mode = ''; // 'worker-track', 'worker-frames' or 'page', once started
    this.width = 0; // of the last frame sent
    this.height = 0;
  }

  get sent() {
    return this.pacer.sent;
  }

  get dropped() {
    return this.pacer.dropped + this.workerDropped;
  }

  /**
   * start calls send(captureUs, jpegBlob) for each kept frame, while
   * canSend() is true. captureUs is on the camera's clock (any origin).
   * It resolves once frames flow.
   */
  async start(canSend, send) {
    this.running = true;
    this.canSend = canSend;
    this.send = send;
    const worker = this.useWorker ? await startEncoder() : null;
    if (!this.running) {
      if (worker) worker.terminate();
      return;
    }
    if (worker) {
      this.worker = worker;
      worker.onmessage = (ev) => this.fromWorker(ev.data);
      if (this.useProcessor && this.giveTrack()) return;
      // The page's VideoFrames must be closed at once; the video's
      // pictures can become ImageBitmaps at leisure.
      this.useProcessor = false;
      this.mode = 'worker-frames';
    } else {
      this.mode = 'page';
      this.canvases = Array.from({ length: encoders }, () => document.createElement('canvas'));
    }
    if (this.useProcessor) this.pump();
    else this.schedule();
  }

  // giveTrack hands the camera's frames to the worker, which paces and
  // encodes them; false where the stream cannot be transferred.
  giveTrack() {
    let readable;
    try {
      readable = new MediaStreamTrackProcessor({ track: this.track }).readable;
      this.worker.postMessage({
        type: 'track', readable, maxSide: this.maxSide, quality: this.quality,
        intervalMs: this.pacer.intervalMs, maxStride: this.pacer.maxStride,
      }, [readable]);
    } catch {
      if (readable) readable.cancel().catch(() => {});
      return false;
    }
    this.mode = 'worker-track';
    return true;
  }

  stop() {
    this.running = false;
    if (this.worker) this.worker.terminate();
    this.worker = null;
    this.waiting.forEach((resolve) => resolve(null));
    this.waiting.clear();
    if (this.reader) this.reader.cancel().catch(() => {});
    if (this.handle !== undefined) {
      if (this.video.cancelVideoFrameCallback) this.video.cancelVideoFrameCallback(this.handle);
      else clearTimeout(this.handle);
      this.handle = undefined;
    }
  }

  fromWorker(msg) {
    switch (msg.type) {
      case 'jpeg': {
        // The worker keeps the order and the pace; the page only sees that
        // the link is free.
        const sent = this.running && this.canSend();
        if (this.worker) this.worker.postMessage({ type: 'ack', sent });
        this.workerDropped = msg.dropped + (sent ? 0 : 1); // the worker counts a frame the page drops
        if (!sent) return;
        this.width = msg.width;
        this.height = msg.height;
        this.pacer.markSent(msg.atMs);
        this.send(msg.atMs * 1000, msg.blob);
        return;
      }
      case 'encoded': {
        const resolve = this.waiting.get(msg.id);
        this.waiting.delete(msg.id);
        if (resolve) resolve(msg.blob ? msg : null);
      }
    }
  }

  // pump reads every frame of the track on the page's thread.
  pump() {
    this.reader = new MediaStreamTrackProcessor({ track: this.track }).readable.getReader();
    eachFrame(this.reader, () => this.running, (frame, w, h, atMs) => this.offer(frame, w, h, atMs));
  }

  schedule() {
    if (!this.running) return;
    if (this.video.requestVideoFrameCallback) {
      this.handle = this.video.requestVideoFrameCallback((now, meta) => {
        this.handle = undefined;
        this.schedule();
        this.offer(this.video, this.video.videoWidth, this.video.videoHeight, meta.captureTime || meta.presentationTime || now);
      });
    } else {
      this.handle = setTimeout(() => {
        this.handle = undefined;
        this.schedule();
        this.offer(this.video, this.video.videoWidth, this.video.videoHeight, performance.now());
      }, this.pacer.intervalMs / 2);
    }
  }

  // offer takes one camera frame (w x h pixels, taken at atMs) unless it
  // comes too soon after the last one kept, or the encoders or the link
  // are busy.
  offer(source, w, h, atMs) {
    if (!this.running || !w || !h || !this.pacer.due(atMs)) return;
    if (this.busy === encoders || !this.canSend()) {
      this.pacer.drop();
      return;
    }
    this.pacer.keep(atMs);
    this.busy++;
    const encoded = this.worker ? this.encodeInWorker(source) : this.encodeOnPage(source, w, h);
    encoded.then((out) => {
      this.busy--;
      if (!out || !this.running) return;
      // In capture order only, and only onto an idle link.
      if (!this.pacer.sendable(atMs) || !this.canSend()) {
        this.pacer.drop();
        return;
      }
      this.width = out.width;
      this.height = out.height;
      this.pacer.markSent(atMs);
      this.send(atMs * 1000, out.blob);
    });
  }

  // encodeInWorker resolves with {blob, width, height}, or null.
  encodeInWorker(source) {
    return createImageBitmap(source).then((bitmap) => new Promise((resolve) => {
      if (!this.worker) {
        bitmap.close();
        resolve(null);
        return;
      }
      const id = this.nextId++;
      this.waiting.set(id, resolve);
      this.worker.postMessage({ type: 'frame', id, bitmap, maxSide: this.maxSide, quality: this.quality }, [bitmap]);
    }), () => null);
  }

  // encodeOnPage draws the frame on a free canvas and encodes it there.
  encodeOnPage(source, w, h) {
    const canvas = this.canvases.find((c) => !c.encoding);
    drawScaled(canvas, source, w, h, this.maxSide);
    canvas.encoding = true;
    return new Promise((resolve) => canvas.toBlob((blob) => {
      canvas.encoding = false;
      resolve(blob && { blob, width: canvas.width, height: canvas.height });
    }, 'image/jpeg', this.quality));
  }
}

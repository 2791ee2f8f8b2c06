// The camera: opening it, and sampling its frames as small JPEG pictures
// for the WebSocket transport.

import { cameraError, codes, PulseWireError } from './errors.js';

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

/**
 * adaptEveryMs is how often the sampler looks at its drops; when more than
 * adaptDropShare of the frames it meant to send were dropped (the phone or
 * the link cannot keep up), it keeps one frame in `stride` for the rest of
 * the session, up to maxStride. Regular frames at 15 a second serve the
 * pulse better than 25 a second with random gaps, which the analysis
 * refuses (CONFORMITY_LOW_FPS below 80% of the frames the median rate
 * promises).
 */
const adaptEveryMs = 2000;
const adaptDropShare = 0.15;

/** minFps: the stride never takes the frame rate below it (the analysis needs 12). */
const minFps = 15;

/**
 * encoders is how many frames may be encoding at once: two absorb the
 * jitter of a busy page (an encoding that takes a little longer than a
 * frame interval) without building a queue.
 */
const encoders = 2;

/**
 * FrameSampler turns camera frames into JPEG pictures of at most maxSide
 * pixels on the long side (320x240 from a 4:3 camera), at most maxFps a
 * second. It never queues: a frame that comes while the previous one is
 * still being encoded, or while canSend() says the link is busy, is dropped
 * and counted. So a slow link or a slow phone lowers the frame rate instead
 * of delaying every frame, and the capture times stay true.
 *
 * Frames come from a MediaStreamTrackProcessor where the browser has one
 * (Chromium): it hands over every camera frame with its capture time, even
 * when the page is busy drawing. Elsewhere they come from the video
 * element's requestVideoFrameCallback, which skips frames the page did not
 * get to paint.
 */
export class FrameSampler {
  constructor(video, track, { maxSide = 320, maxFps = 30, quality = 0.85 } = {}) {
    this.video = video;
    this.track = track;
    this.maxSide = maxSide;
    this.intervalMs = 1000 / maxFps;
    // The stride counts frames of the camera: one of 15 a second is never thinned.
    const cameraFps = (track && track.getSettings && track.getSettings().frameRate) || maxFps;
    this.maxStride = Math.max(1, Math.floor(Math.min(maxFps, cameraFps) / minFps));
    this.quality = quality;
    this.canvases = Array.from({ length: encoders }, () => document.createElement('canvas'));
    this.busy = 0; // canvases encoding now
    this.running = false;
    this.lastMs = -Infinity; // capture time of the last frame kept
    this.sentMs = -Infinity; // and of the last one sent
    this.stride = 1;
    this.sent = 0;
    this.dropped = 0;
    this.window = { startMs: -1, kept: 0, dropped: 0 };
  }

  /** canvas is the first canvas, which shows the size of the frames sent. */
  get canvas() {
    return this.canvases[0];
  }

  /**
   * start calls send(captureUs, jpegBlob) for each kept frame, while
   * canSend() is true. captureUs is on the camera's clock (any origin).
   */
  start(canSend, send) {
    this.running = true;
    this.canSend = canSend;
    this.send = send;
    if (typeof MediaStreamTrackProcessor === 'function' && this.track) this.pump();
    else this.schedule();
  }

  stop() {
    this.running = false;
    if (this.reader) this.reader.cancel().catch(() => {});
    if (this.handle !== undefined) {
      if (this.video.cancelVideoFrameCallback) this.video.cancelVideoFrameCallback(this.handle);
      else clearTimeout(this.handle);
      this.handle = undefined;
    }
  }

  // pump reads every frame of the track; VideoFrame.timestamp is its
  // capture time in microseconds.
  async pump() {
    this.reader = new MediaStreamTrackProcessor({ track: this.track }).readable.getReader();
    while (this.running) {
      let frame;
      try {
        const next = await this.reader.read();
        if (next.done) return;
        frame = next.value;
      } catch {
        return; // the track ended or the reader was cancelled
      }
      try {
        if (this.running) this.offer(frame, frame.displayWidth, frame.displayHeight, frame.timestamp / 1000);
      } finally {
        frame.close(); // a camera has a few frame buffers: give each back at once
      }
    }
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
      }, this.intervalMs / 2);
    }
  }

  // offer takes one camera frame (w x h pixels, taken at atMs) unless it
  // comes too soon after the last one kept, or the sampler or the link is
  // busy.
  offer(source, w, h, atMs) {
    if (!this.running || !w || !h) return;
    // A little slack, for the jitter of frame times.
    if (atMs - this.lastMs < this.stride * this.intervalMs - 4) return;
    this.adapt(atMs);
    if (this.busy === this.canvases.length || !this.canSend()) {
      this.drop();
      return;
    }
    this.lastMs = atMs;
    this.window.kept++;
    const canvas = this.canvases.find((c) => !c.encoding);
    this.draw(canvas, source, w, h);
    canvas.encoding = true;
    this.busy++;
    canvas.toBlob((blob) => {
      canvas.encoding = false;
      this.busy--;
      if (!blob || !this.running) return;
      // In capture order only, and only onto an idle link.
      if (atMs <= this.sentMs || !this.canSend()) {
        this.drop();
        return;
      }
      this.sentMs = atMs;
      this.sent++;
      this.send(atMs * 1000, blob);
    }, 'image/jpeg', this.quality);
  }

  drop() {
    this.dropped++;
    this.window.dropped++;
  }

  adapt(atMs) {
    const win = this.window;
    if (win.startMs < 0) win.startMs = atMs;
    if (atMs - win.startMs < adaptEveryMs) return;
    if (win.dropped > adaptDropShare * (win.kept + win.dropped) && this.stride < this.maxStride) this.stride++;
    this.window = { startMs: atMs, kept: 0, dropped: 0 };
  }

  // draw scales the frame down in one step with the best smoothing the
  // browser has: plain nearest-pixel scaling would alias the skin's tiny
  // colour changes, which carry the pulse.
  draw(canvas, source, w, h) {
    const scale = Math.min(1, this.maxSide / Math.max(w, h));
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
}

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
 * microseconds as an unsigned 64-bit big-endian integer, then the JPEG.
 */
export async function frameMessage(captureUs, jpeg) {
  const body = new Uint8Array(await jpeg.arrayBuffer());
  const msg = new Uint8Array(frameHeaderBytes + body.length);
  new DataView(msg.buffer).setBigUint64(0, BigInt(Math.max(0, Math.round(captureUs))));
  msg.set(body, frameHeaderBytes);
  return msg;
}

/**
 * FrameSampler turns the video element's frames into JPEG pictures of at
 * most maxSide pixels on the long side (320x240 from a 4:3 camera) at most
 * maxFps times a second. It never queues: a frame comes while the previous
 * one is still being encoded, or while canSend() says the link is busy, is
 * dropped and counted. So a slow link or a slow phone lowers the frame
 * rate instead of delaying every frame, and the capture times stay true.
 */
export class FrameSampler {
  constructor(video, { maxSide = 320, maxFps = 30, quality = 0.85 } = {}) {
    this.video = video;
    this.maxSide = maxSide;
    this.minIntervalMs = 1000 / maxFps - 4; // a little slack for callback jitter
    this.quality = quality;
    this.canvas = document.createElement('canvas');
    this.ctx = this.canvas.getContext('2d', { alpha: false });
    this.running = false;
    this.encoding = false;
    this.lastMs = -Infinity;
    this.sent = 0;
    this.dropped = 0;
  }

  /**
   * start calls send(captureUs, jpegBlob) for each kept frame, when
   * canSend() is true. captureUs is on performance.now()'s clock.
   */
  start(canSend, send) {
    this.running = true;
    this.canSend = canSend;
    this.send = send;
    this.schedule();
  }

  stop() {
    this.running = false;
    if (this.handle !== undefined) {
      if (this.video.cancelVideoFrameCallback) this.video.cancelVideoFrameCallback(this.handle);
      else clearTimeout(this.handle);
      this.handle = undefined;
    }
  }

  schedule() {
    if (!this.running) return;
    if (this.video.requestVideoFrameCallback) {
      // Called once per new camera frame, with the time the camera took it.
      this.handle = this.video.requestVideoFrameCallback((now, meta) => {
        this.frame(meta.captureTime || meta.presentationTime || now);
      });
    } else {
      this.handle = setTimeout(() => this.frame(performance.now()), this.minIntervalMs / 2);
    }
  }

  frame(atMs) {
    this.handle = undefined;
    if (!this.running) return;
    this.schedule();
    if (atMs - this.lastMs < this.minIntervalMs || this.video.readyState < 2) return;
    if (this.encoding || !this.canSend()) {
      this.dropped++;
      return;
    }
    this.lastMs = atMs;
    this.draw();
    this.encoding = true;
    this.canvas.toBlob((blob) => {
      this.encoding = false;
      if (!blob || !this.running) return;
      this.sent++;
      this.send(atMs * 1000, blob);
    }, 'image/jpeg', this.quality);
  }

  // draw scales the frame down in one step with the best smoothing the
  // browser has: plain nearest-pixel scaling would alias the skin's tiny
  // colour changes, which carry the pulse.
  draw() {
    const w = this.video.videoWidth;
    const h = this.video.videoHeight;
    const scale = Math.min(1, this.maxSide / Math.max(w, h));
    const cw = Math.max(2, Math.round(w * scale));
    const ch = Math.max(2, Math.round(h * scale));
    if (this.canvas.width !== cw || this.canvas.height !== ch) {
      this.canvas.width = cw;
      this.canvas.height = ch;
    }
    this.ctx.imageSmoothingEnabled = true;
    this.ctx.imageSmoothingQuality = 'high';
    this.ctx.drawImage(this.video, 0, 0, cw, ch);
  }
}

// The JPEG encoder of the WebSocket transport, run as a module worker so
// that a busy page (or a slow phone) does not hold up the frames: the
// page's own thread draws the preview, the live chart and the guidance,
// and every frame it had to encode waited behind them. camera.js starts
// it; the messages are:
//
//   page -> worker
//     {type: 'track', readable, maxSide, intervalMs, maxStride, quality}
//         the camera's frames (a MediaStreamTrackProcessor's stream,
//         transferred): the worker paces, scales and encodes them itself
//     {type: 'ack', sent}       a frame posted back was sent, or dropped (the link was busy)
//     {type: 'frame', id, bitmap, maxSide, quality}
//         one frame the page chose (an ImageBitmap, transferred), where
//         the browser has no MediaStreamTrackProcessor
//   worker -> page
//     {type: 'ready'}           the worker runs and can encode
//     {type: 'unsupported'}     it cannot (no 2D context on an OffscreenCanvas)
//     {type: 'jpeg', atMs, blob, width, height, dropped}
//         an encoded frame of the track, taken at atMs (camera clock, ms),
//         in capture order; dropped counts the frames dropped so far
//     {type: 'encoded', id, blob, width, height}   the answer to a 'frame' (blob null on failure)

import { drawScaled, eachFrame, encoders, Pacer } from './pacing.js';

/**
 * maxUnacked is how many encoded frames may wait for the page to take
 * them: the page's thread is late when it is busy, and a frame that waits
 * longer is better dropped than sent late. Beyond it and the encoders,
 * frames are dropped, never queued.
 */
const maxUnacked = 3;

const canvases = Array.from({ length: encoders }, () => new OffscreenCanvas(2, 2));
let encoding = 0;
let unacked = 0;
let pacer = null;

// encode draws source at most maxSide pixels on the long side into a free
// canvas and encodes it; the source may be closed once it returns its
// promise (the drawing is done by then).
function encode(source, w, h, maxSide, quality) {
  const canvas = canvases.find((c) => !c.busy);
  canvas.busy = true;
  encoding++;
  drawScaled(canvas, source, w, h, maxSide);
  const size = { width: canvas.width, height: canvas.height };
  return canvas.convertToBlob({ type: 'image/jpeg', quality }).then(
    (blob) => ({ blob, ...size }),
    () => ({ blob: null, ...size }),
  ).finally(() => {
    canvas.busy = false;
    encoding--;
  });
}

// offer encodes one frame unless it comes too soon after the last one kept
// or every encoder or the page is busy.
function offer(frame, w, h, atMs, maxSide, quality) {
  if (!w || !h || !pacer.due(atMs)) return;
  if (encoding === encoders || unacked >= maxUnacked) {
    pacer.drop();
    return;
  }
  pacer.keep(atMs);
  encode(frame, w, h, maxSide, quality).then(({ blob, width, height }) => {
    if (!blob) return;
    if (!pacer.sendable(atMs)) {
      pacer.drop();
      return;
    }
    pacer.markSent(atMs);
    unacked++;
    self.postMessage({ type: 'jpeg', atMs, blob, width, height, dropped: pacer.dropped });
  });
}

self.onmessage = (ev) => {
  const msg = ev.data;
  switch (msg.type) {
    case 'track':
      pacer = new Pacer(msg);
      // Until the page ends the worker.
      eachFrame(msg.readable.getReader(), () => true, (frame, w, h, atMs) => offer(frame, w, h, atMs, msg.maxSide, msg.quality));
      return;
    case 'ack':
      unacked--;
      if (!msg.sent) {
        pacer.sent--;
        pacer.drop();
      }
      return;
    case 'frame':
      encode(msg.bitmap, msg.bitmap.width, msg.bitmap.height, msg.maxSide, msg.quality).then((out) => {
        self.postMessage({ type: 'encoded', id: msg.id, ...out });
      });
      msg.bitmap.close();
  }
};

let canDraw = false;
try {
  canDraw = !!new OffscreenCanvas(2, 2).getContext('2d');
} catch {
  // canDraw stays false: the page encodes
}
self.postMessage({ type: canDraw ? 'ready' : 'unsupported' });

// Reference outputs of the original BlazeFace model for dsp/face's tests.
//
// Runs face_detection_short_range.tflite, unconverted, in TensorFlow Lite
// itself: the WebAssembly build of the TFLite interpreter that
// @tensorflow/tfjs-tflite ships (one thread, XNNPACK), loaded straight from
// the package so no browser is needed. Each input is a 128x128 PNG, scaled
// to -1..1 as MediaPipe feeds the model. It prints JSON: per input, every
// anchor's raw score (a logit) and the 16 box values of the ten best scored
// anchors.
//
//	cd scripts/blazeface/reference && npm ci
//	node reference.js face_detection_short_range.tflite ../../../dsp/face/testdata/blazeface-*.png \
//	    > ../../../dsp/face/testdata/blazeface-reference.json
'use strict';
const crypto = require('crypto');
const fs = require('fs');
const path = require('path');
const { PNG } = require('pngjs');

const wasm = path.join(__dirname, 'node_modules/@tensorflow/tfjs-tflite/wasm/');
const factory = require(wasm + 'tflite_web_api_cc.js');

const round = (v) => Math.round(v * 1e4) / 1e4;

async function main() {
  const [modelPath, ...inputs] = process.argv.slice(2);
  const M = await factory({ wasmBinary: fs.readFileSync(wasm + 'tflite_web_api_cc.wasm') });
  const model = fs.readFileSync(modelPath);
  const ptr = M._malloc(model.length);
  M.HEAPU8.set(model, ptr);
  const created = M.TFLiteWebModelRunner.CreateFromBufferAndOptions(ptr, model.length,
    { numThreads: 1, enableProfiling: false, maxProfilingBufferEntries: 1024 });
  if (!created.ok()) throw new Error(created.errorMessage());
  const runner = created.value();
  const list = (v) => { const a = []; for (let i = 0; i < v.size(); i++) a.push(v.get(i)); v.delete(); return a; };
  const [input] = list(runner.GetInputs());
  const outputs = Object.fromEntries(list(runner.GetOutputs()).map((t) => [t.name, t]));
  const version = require('./node_modules/@tensorflow/tfjs-tflite/package.json').version;
  const result = {
    model: path.basename(modelPath),
    sha256: crypto.createHash('sha256').update(model).digest('hex'),
    runtime: `TensorFlow Lite (WebAssembly, @tensorflow/tfjs-tflite ${version}), one thread`,
    inputs: [],
  };
  for (const file of inputs) {
    const png = PNG.sync.read(fs.readFileSync(file));
    if (png.width !== 128 || png.height !== 128) throw new Error(`${file}: ${png.width}x${png.height}, want 128x128`);
    const x = input.data();
    for (let i = 0; i < 128 * 128; i++) {
      for (let c = 0; c < 3; c++) x[3 * i + c] = png.data[4 * i + c] / 127.5 - 1;
    }
    if (!runner.Infer()) throw new Error('inference failed');
    const scores = Array.from(outputs.classificators.data());
    const boxes = outputs.regressors.data();
    const best = scores.map((s, i) => [s, i]).sort((a, b) => b[0] - a[0]).slice(0, 10);
    result.inputs.push({
      file: path.basename(file),
      scores: scores.map(round),
      best: best.map(([, i]) => ({ anchor: i, box: Array.from(boxes.slice(16 * i, 16 * i + 16), round) })),
    });
  }
  process.stdout.write(JSON.stringify(result) + '\n');
}

main().catch((e) => { console.error('reference:', e); process.exit(1); });

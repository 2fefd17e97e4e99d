#!/usr/bin/env node
// Times ONNX Runtime (npm onnxruntime-node, CPU) on one model and .npy inputs,
// to set npukit's `npukit run --repeat` figures beside ORT's on the same data:
//   node bench/ort_time.mjs MODEL.onnx NAME=FILE.npy ... [--threads N] [--repeat R]
// Prints the mean and best ms per run after one warm-up run (graph
// optimization level: all, ORT's default).
import fs from 'node:fs';
import path from 'node:path';
import {createRequire} from 'node:module';
import {fileURLToPath} from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dirs = [process.env.NPUKIT_ORT_DIR, path.join(repo, '.cache', 'onnxruntime')].filter(Boolean);
const dir = dirs.find((d) => fs.existsSync(path.join(d, 'node_modules', 'onnxruntime-node', 'package.json')));
if (!dir) throw new Error(`onnxruntime-node not found in ${dirs.join(' or ')}`);
const ort = createRequire(path.join(dir, 'node_modules', 'onnxruntime-node', 'package.json'))('onnxruntime-node');

// Minimal .npy reader (version 1-3, little-endian, C order; f32/u8/s8/s32).
function readNpy(file) {
  const buf = fs.readFileSync(file);
  const major = buf[6];
  const hlen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', start, start + hlen);
  const descr = /'descr'\s*:\s*'([^']+)'/.exec(header)[1];
  const dims = /'shape'\s*:\s*\(([^)]*)\)/.exec(header)[1].split(',').map((s) => s.trim())
      .filter((s) => s.length).map(Number);
  const types = {'<f4': ['float32', Float32Array], '|u1': ['uint8', Uint8Array],
    '|i1': ['int8', Int8Array], '<i4': ['int32', Int32Array]};
  const [type, Arr] = types[descr];
  const body = buf.subarray(start + hlen);
  const data = new Arr(body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength));
  return {type, dims, data};
}

const args = process.argv.slice(2);
let threads = 1, repeat = 10;
const feeds = {};
let model;
for (let i = 0; i < args.length; ++i) {
  if (args[i] === '--threads') threads = Number(args[++i]);
  else if (args[i] === '--repeat') repeat = Number(args[++i]);
  else if (args[i].includes('=')) {
    const [name, file] = args[i].split('=');
    const a = readNpy(file);
    feeds[name] = new ort.Tensor(a.type, a.data, a.dims);
  } else model = args[i];
}
const session = await ort.InferenceSession.create(model, {
  intraOpNumThreads: threads, interOpNumThreads: 1, graphOptimizationLevel: 'all'});
await session.run(feeds);
const times = [];
for (let r = 0; r < repeat; ++r) {
  const t0 = process.hrtime.bigint();
  await session.run(feeds);
  times.push(Number(process.hrtime.bigint() - t0) / 1e6);
}
const mean = times.reduce((a, b) => a + b, 0) / times.length;
console.log(`ort ${path.basename(model)} threads ${threads}: ${mean.toFixed(3)} ms per run (mean of ${repeat}, best ${Math.min(...times).toFixed(3)} ms)`);

#!/usr/bin/env node
// Times ONNX Runtime (npm onnxruntime-node, CPU) on one model and .npy inputs,
// to set npukit's `npukit run --repeat` figures beside ORT's on the same data:
//   node bench/ort_time.mjs MODEL.onnx NAME=FILE.npy ... [--threads N] [--repeat R]
// Prints the mean and best ms per run after one warm-up run (graph
// optimization level: all, ORT's default).
import path from 'node:path';
import {ort, parseArgs} from './ort_common.mjs';

const {model, feeds, threads, repeat} = parseArgs(
    10, 'node bench/ort_time.mjs MODEL NAME=FILE.npy ... [--threads N] [--repeat R]');
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

#!/usr/bin/env node
// ONNX Runtime's time per node (its own profiler, enableProfiling), to set
// beside `npukit run MODEL --layers` on the same data:
//   node bench/ort_layers.mjs MODEL.onnx NAME=FILE.npy ... [--threads N] [--repeat R] [--json]
// Prints, in execution order, each node of ORT's optimized graph (names differ
// from the ONNX file's: ORT fuses and inserts layout transposes) with its op,
// best and mean kernel time over R runs after one warm-up, then the sum of
// the best times and the best whole run. The best times are what survives a
// shared machine; compare them with npukit's "best ms" column.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {ort, parseArgs} from './ort_common.mjs';

const {model, feeds, threads, repeat, json} = parseArgs(
    30, 'node bench/ort_layers.mjs MODEL NAME=FILE.npy ... [--threads N] [--repeat R] [--json]');

// The profile goes to a private temporary directory, read back, then removed.
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ort-layers-'));
const session = await ort.InferenceSession.create(model, {
  intraOpNumThreads: threads, interOpNumThreads: 1, graphOptimizationLevel: 'all',
  enableProfiling: true, profileFilePrefix: path.join(tmp, 'profile')});
await session.run(feeds);  // warm-up: its events are left out below
const runs = [];
for (let r = 0; r < repeat; ++r) {
  const t0 = process.hrtime.bigint();
  await session.run(feeds);
  runs.push(Number(process.hrtime.bigint() - t0) / 1e6);
}
session.endProfiling();
let file;
for (let i = 0; i < 50 && !file; ++i) {  // the file is written when profiling ends
  file = fs.readdirSync(tmp).find((f) => f.endsWith('.json'));
  if (!file) await new Promise((ok) => setTimeout(ok, 20));
}
const events = JSON.parse(fs.readFileSync(path.join(tmp, file), 'utf8'));
fs.rmSync(tmp, {recursive: true, force: true});

// Kernel events per name, in order. Several nodes may share a name (ORT's
// inserted transposes): k of them give k events per run, the j-th of each run
// being one node (name#j). The first run's events (the warm-up) are dropped.
const byName = new Map();
for (const e of events) {
  if (e.cat !== 'Node' || !e.name.endsWith('_kernel_time')) continue;
  const name = e.name.slice(0, -'_kernel_time'.length);
  if (!byName.has(name)) byName.set(name, {op: e.args.op_name, us: []});
  byName.get(name).us.push(e.dur);
}
const rows = [];
for (const [name, n] of byName) {
  const k = Math.round(n.us.length / (repeat + 1));
  if (k < 1 || k * (repeat + 1) !== n.us.length) throw new Error(`${name}: ${n.us.length} events for ${repeat + 1} runs`);
  for (let j = 0; j < k; ++j) {
    const timed = n.us.filter((_, i) => i % k === j).slice(1);
    rows.push({node: k > 1 ? `${name}#${j}` : name, op: n.op, best_ms: Math.min(...timed) / 1e3,
      mean_ms: timed.reduce((a, b) => a + b, 0) / timed.length / 1e3});
  }
}
const sumBest = rows.reduce((a, r) => a + r.best_ms, 0);
const bestRun = Math.min(...runs);
if (json) {
  console.log(JSON.stringify({model, threads, repeat, best_run_ms: bestRun, sum_of_best_ms: sumBest, layers: rows}));
} else {
  const w = Math.max(4, ...rows.map((r) => r.node.length)), ow = Math.max(8, ...rows.map((r) => r.op.length));
  console.log(`${'node'.padEnd(w)}  ${'operator'.padEnd(ow)}  ${'best ms'.padStart(10)}  ${'mean ms'.padStart(10)}`);
  for (const r of rows)
    console.log(`${r.node.padEnd(w)}  ${r.op.padEnd(ow)}  ${r.best_ms.toFixed(4).padStart(10)}  ${r.mean_ms.toFixed(4).padStart(10)}`);
  console.log(`sum of best ${sumBest.toFixed(3)} ms; best run ${bestRun.toFixed(3)} ms (${threads} thread(s), ${repeat} runs)`);
}

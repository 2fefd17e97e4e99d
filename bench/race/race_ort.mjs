#!/usr/bin/env node
// ONNX Runtime's side of npukit_race (npm onnxruntime-node, CPU).
//
//   node bench/race/race_ort.mjs DIR [--threads 1,2] [--quick] [--stat median|min]
//
// DIR holds what `npukit_race --export DIR` and race_peers.py wrote: cases.tsv,
// the inputs, and one single-node model per case in DIR/onnx/. For every case
// and thread count (intraOpNumThreads) this times session.run (median of
// repeats after warm-up, the Node binding's cost included) and writes
// DIR/results-ort.tsv and each output under DIR/out/; it also times the models
// of DIR/models.tsv (the bundled Fashion-MNIST models on DIR/images.npy, 1,000
// images as one batch; race_peers.py --torchvision adds two torchvision models).
// ONNX Runtime is looked up in $NPUKIT_ORT_DIR, then <repo>/.cache/onnxruntime.
import fs from 'node:fs';
import path from 'node:path';
import {createRequire} from 'node:module';
import {fileURLToPath} from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

function loadOrt() {
  const dirs = [process.env.NPUKIT_ORT_DIR, path.join(repo, '.cache', 'onnxruntime')].filter(Boolean);
  for (const d of dirs) {
    const pkg = path.join(d, 'node_modules', 'onnxruntime-node', 'package.json');
    if (fs.existsSync(pkg)) return createRequire(pkg)('onnxruntime-node');
  }
  return null;
}

// Minimal .npy for the three dtypes of the race (little-endian, C order).
const DESCR = {'<f4': ['float32', Float32Array], '|u1': ['uint8', Uint8Array],
  '|i1': ['int8', Int8Array]};
function readNpy(file) {
  const buf = fs.readFileSync(file);
  const len = buf[6] === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = buf[6] === 1 ? 10 : 12;
  const header = buf.toString('latin1', start, start + len);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1].replace('<u1', '|u1').replace('<i1', '|i1');
  const dims = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').map((s) => s.trim())
    .filter((s) => s).map(Number);
  if (!DESCR[descr]) throw new Error(`${file}: dtype ${descr} is not f32, u8 or s8`);
  const [type, Typed] = DESCR[descr];
  const n = dims.reduce((a, b) => a * b, 1);
  const data = new Typed(n);
  new Uint8Array(data.buffer).set(buf.subarray(start + len, start + len + n * Typed.BYTES_PER_ELEMENT));
  return {type, dims, data};
}
function writeNpy(file, t) {
  const descr = Object.keys(DESCR).find((k) => DESCR[k][0] === t.type);
  const shape = t.dims.length === 1 ? `(${t.dims[0]},)` : `(${t.dims.join(', ')})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  header = header.padEnd(Math.ceil((header.length + 11) / 64) * 64 - 11, ' ') + '\n';
  const pre = Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0, 0, 0]);
  pre.writeUInt16LE(header.length, 8);
  const body = Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength);
  fs.writeFileSync(file, Buffer.concat([pre, Buffer.from(header, 'latin1'), body]));
}

// Median (or minimum) of repeats after warm-up: the same budget as npukit_race.
async function medianSeconds(fn, quick, minimum) {
  const [warmup, target, lo, hi] = quick ? [1, 0.01, 3, 20] : [2, 0.1, 3, 200];
  let first = 0;
  for (let i = 0; i < warmup; ++i) {
    const t0 = process.hrtime.bigint();
    await fn();
    first = Number(process.hrtime.bigint() - t0) / 1e9;
  }
  const reps = first > 0 ? Math.min(hi, Math.max(lo, Math.floor(target / first))) : lo;
  const times = [];
  for (let i = 0; i < reps; ++i) {
    const t0 = process.hrtime.bigint();
    await fn();
    times.push(Number(process.hrtime.bigint() - t0) / 1e9);
  }
  times.sort((a, b) => a - b);
  return minimum ? times[0] : times[Math.floor(reps / 2)];
}

function parseArgs(argv) {
  const o = {dir: null, threads: [1, 2], quick: false, minimum: false};
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    if (a === '--threads') o.threads = argv[++i].split(',').map(Number);
    else if (a === '--quick') o.quick = true;
    else if (a === '--stat') o.minimum = argv[++i] === 'min';
    else if (!o.dir) o.dir = a;
    else throw new Error(`unexpected argument ${a}`);
  }
  if (!o.dir) throw new Error('usage: node bench/race/race_ort.mjs DIR [--threads 1,2] [--quick]');
  return o;
}

async function timeModel(ort, model, feeds, threads, quick, minimum) {
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: threads, interOpNumThreads: 1, executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  let out;
  const seconds = await medianSeconds(async () => { out = await session.run(feeds); }, quick, minimum);
  await session.release?.();
  return {seconds, out: out[Object.keys(out)[0]]};
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const rows = [];
  const ort = loadOrt();
  const lines = fs.readFileSync(path.join(o.dir, 'cases.tsv'), 'utf8').trim().split('\n');
  const cols = lines[0].split('\t');
  const cases = lines.slice(1).map((l) => Object.fromEntries(l.split('\t').map((v, i) => [cols[i], v])));
  const note = ort ? 'onnxruntime-node' : 'not available (onnxruntime-node not installed: scripts/install-onnxruntime.sh)';
  fs.mkdirSync(path.join(o.dir, 'out'), {recursive: true});
  for (const [i, c] of cases.entries()) {
    const x = readNpy(path.join(o.dir, c.input));
    for (const t of o.threads) {
      if (!ort) { rows.push([c.id, 'ONNX Runtime', 'nchw', t, -1, '', note]); continue; }
      console.error(`[${i + 1}/${cases.length}] ONNX Runtime ${c.id} threads ${t}`);
      try {
        const feeds = {x: new ort.Tensor(x.type, x.data, x.dims)};
        const r = await timeModel(ort, path.join(o.dir, 'onnx', `${c.id}.onnx`), feeds, t, o.quick, o.minimum);
        const out = `out/ort-${c.id}-t${t}.npy`;
        writeNpy(path.join(o.dir, out), r.out);
        rows.push([c.id, 'ONNX Runtime', 'nchw', t, r.seconds.toFixed(9), out, note]);
      } catch (e) {
        rows.push([c.id, 'ONNX Runtime', 'nchw', t, -1, '', `ONNX Runtime: ${String(e?.message ?? e).split('\n')[0].slice(0, 120)}`]);
      }
    }
  }
  // The main job: the models of DIR/models.tsv (the bundled ones on the bundled
  // images as one batch, and race_peers.py --torchvision's exports).
  const models = path.join(o.dir, 'models.tsv');
  if (ort && fs.existsSync(models)) {
    for (const line of fs.readFileSync(models, 'utf8').trim().split('\n').slice(1)) {
      const [name, model, input] = line.split('\t');
      const x = readNpy(input);
      const session = await ort.InferenceSession.create(model);
      const inputName = session.inputNames[0];
      await session.release?.();
      for (const t of o.threads) {
        console.error(`ONNX Runtime model ${name} threads ${t}`);
        const r = await timeModel(ort, model, {[inputName]: new ort.Tensor(x.type, x.data, x.dims)},
          t, o.quick, o.minimum);
        const out = `out/ort-model-${name}-t${t}.npy`;
        writeNpy(path.join(o.dir, out), r.out);
        rows.push([`model-${name}`, 'ONNX Runtime', 'nchw', t, r.seconds.toFixed(9), out, note]);
      }
    }
  }
  const text = ['id\tpeer\tlayout\tthreads\tseconds\toutput\tnote', ...rows.map((r) => r.join('\t'))];
  fs.writeFileSync(path.join(o.dir, 'results-ort.tsv'), text.join('\n') + '\n');
  return 0;
}

main().then((rc) => process.exit(rc), (e) => {
  console.error(`race_ort.mjs: error: ${e?.message ?? e}`);
  process.exit(2);
});

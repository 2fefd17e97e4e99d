#!/usr/bin/env node
// Runs ONNX models with ONNX Runtime (npm onnxruntime-node, CPU) on .npy inputs
// and writes every output as <output-dir>/<name>.npy. It is the "real system"
// that npukit's ONNX-facing tests compare against; it holds no arithmetic.
//
// One model:
//   node tools/ort/run.mjs MODEL.onnx --input NAME=FILE.npy ... --output-dir DIR
// Many models in one process (thousands of small models run in seconds):
//   node tools/ort/run.mjs --batch JOBS.json
//   JOBS.json = [{"model": "a.onnx", "inputs": {"x": "x.npy"}, "output_dir": "out/0"}, ...]
//   Prints one JSON line per job: {"job": i, "ok": true, "outputs": [...]}
//   or {"job": i, "ok": false, "error": "..."}; a failing job does not stop the others.
// Options: --threads N (intra-op threads, default 1 so results never depend on
// the machine), --opt-level disabled|basic|extended|all (default all, ORT's).
// ONNX Runtime is looked up in $NPUKIT_ORT_DIR, then <repo>/.cache/onnxruntime
// (scripts/install-onnxruntime.sh puts it there).
import fs from 'node:fs';
import path from 'node:path';
import {createRequire} from 'node:module';
import {fileURLToPath} from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..', '..');

function loadOrt() {
  const dirs = [process.env.NPUKIT_ORT_DIR, path.join(repo, '.cache', 'onnxruntime')].filter(Boolean);
  for (const d of dirs) {
    const pkg = path.join(d, 'node_modules', 'onnxruntime-node', 'package.json');
    if (fs.existsSync(pkg)) return createRequire(pkg)('onnxruntime-node');
  }
  throw new Error(`onnxruntime-node not found in ${dirs.join(' or ')}; run scripts/install-onnxruntime.sh`);
}

// ---- .npy (NumPy format spec, versions 1.0 to 3.0, little-endian C order) ----

// numpy descr -> [ONNX Runtime type, TypedArray]
const NPY_TYPES = {
  '<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array],
  '|i1': ['int8', Int8Array], '|u1': ['uint8', Uint8Array],
  '<i2': ['int16', Int16Array], '<u2': ['uint16', Uint16Array],
  '<i4': ['int32', Int32Array], '<u4': ['uint32', Uint32Array],
  '<i8': ['int64', BigInt64Array], '<u8': ['uint64', BigUint64Array],
  '|b1': ['bool', Uint8Array],
};
const ORT_TO_DESCR = Object.fromEntries(Object.entries(NPY_TYPES).map(([d, [t]]) => [t, d]));

export function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.length < 10 || buf[0] !== 0x93 || buf.toString('latin1', 1, 6) !== 'NUMPY')
    throw new Error(`${file}: not a .npy file (bad magic)`);
  const major = buf[6];
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = buf.toString(major === 3 ? 'utf8' : 'latin1', start, start + headerLen);
  const descr = /'descr'\s*:\s*'([^']+)'/.exec(header)?.[1];
  const fortran = /'fortran_order'\s*:\s*(True|False)/.exec(header)?.[1];
  const shapeText = /'shape'\s*:\s*\(([^)]*)\)/.exec(header)?.[1];
  if (!descr || !fortran || shapeText === undefined) throw new Error(`${file}: unreadable header ${header}`);
  const key = descr === '<i1' ? '|i1' : descr === '<u1' ? '|u1' : descr === '<b1' ? '|b1' : descr;
  if (!NPY_TYPES[key]) throw new Error(`${file}: dtype ${descr} not supported (allowed: ${Object.keys(NPY_TYPES).join(', ')})`);
  if (fortran === 'True') throw new Error(`${file}: fortran_order arrays are not supported; save a C-order array`);
  const dims = shapeText.split(',').map((s) => s.trim()).filter((s) => s.length).map(Number);
  const [type, Typed] = NPY_TYPES[key];
  const count = dims.reduce((a, b) => a * b, 1);
  const offset = start + headerLen;
  const bytes = buf.subarray(offset, offset + count * Typed.BYTES_PER_ELEMENT);
  if (bytes.length !== count * Typed.BYTES_PER_ELEMENT) throw new Error(`${file}: truncated data`);
  // Copy into an aligned buffer (the header length makes the data offset arbitrary).
  const data = new Typed(count);
  new Uint8Array(data.buffer).set(bytes);
  return {type, dims, data: type === 'bool' ? Uint8Array.from(data, (v) => (v ? 1 : 0)) : data};
}

export function writeNpy(file, type, dims, data) {
  const descr = ORT_TO_DESCR[type];
  if (!descr) throw new Error(`${file}: output type ${type} has no .npy writer`);
  const shape = dims.length === 1 ? `(${dims[0]},)` : `(${dims.join(', ')})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  // Pad with spaces so that magic + header is a multiple of 64 bytes, ending in '\n'.
  const total = Math.ceil((10 + header.length + 1) / 64) * 64;
  header = header.padEnd(total - 10 - 1, ' ') + '\n';
  const pre = Buffer.alloc(10);
  pre[0] = 0x93;
  pre.write('NUMPY', 1, 'latin1');
  pre[6] = 1;
  pre[7] = 0;
  pre.writeUInt16LE(header.length, 8);
  const raw = type === 'bool' ? Uint8Array.from(data, (v) => (v ? 1 : 0)) : data;
  const body = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  fs.writeFileSync(file, Buffer.concat([pre, Buffer.from(header, 'latin1'), body]));
}

// ---- running ----

function parseArgs(argv) {
  const o = {inputs: {}, threads: 1, optLevel: 'all'};
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--input') {
      const v = next();
      const eq = v.indexOf('=');
      if (eq <= 0) throw new Error(`--input ${v}: expected NAME=FILE.npy`);
      o.inputs[v.slice(0, eq)] = v.slice(eq + 1);
    } else if (a === '--output-dir') o.outputDir = next();
    else if (a === '--batch') o.batch = next();
    else if (a === '--threads') o.threads = Number(next());
    else if (a === '--opt-level') o.optLevel = next();
    else if (a === '-h' || a === '--help') o.help = true;
    else if (a.startsWith('-')) throw new Error(`unknown option ${a}`);
    else if (!o.model) o.model = a;
    else throw new Error(`unexpected argument ${a}`);
  }
  return o;
}

async function runJob(ort, sessions, opts, model, inputs, outputDir) {
  let session = sessions.get(model);
  if (!session) {
    session = await ort.InferenceSession.create(model, {
      intraOpNumThreads: opts.threads, interOpNumThreads: 1,
      graphOptimizationLevel: opts.optLevel, executionMode: 'sequential',
    });
    sessions.set(model, session);
  }
  const feeds = {};
  for (const [name, file] of Object.entries(inputs)) {
    const {type, dims, data} = readNpy(file);
    feeds[name] = new ort.Tensor(type, data, dims);
  }
  const results = await session.run(feeds);
  fs.mkdirSync(outputDir, {recursive: true});
  const names = [];
  for (const [name, t] of Object.entries(results)) {
    writeNpy(path.join(outputDir, `${name}.npy`), t.type, t.dims, t.data);
    names.push(name);
  }
  return names;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  if (opts.help || (!opts.batch && !opts.model)) {
    console.log('usage: node tools/ort/run.mjs MODEL.onnx --input NAME=FILE.npy ... --output-dir DIR\n' +
                '       node tools/ort/run.mjs --batch JOBS.json   (see the header of this file)\n' +
                'options: --threads N, --opt-level disabled|basic|extended|all');
    return opts.help ? 0 : 2;
  }
  const ort = loadOrt();
  const sessions = new Map();
  if (!opts.batch) {
    if (!opts.outputDir) throw new Error('--output-dir is required');
    const names = await runJob(ort, sessions, opts, opts.model, opts.inputs, opts.outputDir);
    for (const n of names) console.log(path.join(opts.outputDir, `${n}.npy`));
    return 0;
  }
  const jobs = JSON.parse(fs.readFileSync(opts.batch, 'utf8'));
  if (!Array.isArray(jobs)) throw new Error(`${opts.batch}: expected a JSON list of jobs`);
  const base = path.dirname(path.resolve(opts.batch));
  const rel = (p) => (path.isAbsolute(p) ? p : path.join(base, p));  // paths relative to JOBS.json
  let failed = 0;
  const lines = [];
  for (let i = 0; i < jobs.length; ++i) {
    const j = jobs[i];
    try {
      const inputs = Object.fromEntries(Object.entries(j.inputs ?? {}).map(([k, v]) => [k, rel(v)]));
      const outputs = await runJob(ort, sessions, opts, rel(j.model), inputs, rel(j.output_dir));
      lines.push(JSON.stringify({job: i, ok: true, outputs}));
    } catch (e) {
      ++failed;
      lines.push(JSON.stringify({job: i, ok: false, error: String(e?.message ?? e)}));
    }
    // Sessions of distinct models are not reused; free them to bound memory.
    if (sessions.size > 64) {
      for (const s of sessions.values()) await s.release?.();
      sessions.clear();
    }
  }
  process.stdout.write(lines.join('\n') + (lines.length ? '\n' : ''));
  return failed ? 1 : 0;
}

// Exit only once stdout is flushed (a pipe would otherwise lose the tail).
main().then((rc) => process.stdout.write('', () => process.exit(rc)), (e) => {
  console.error(`ort/run.mjs: error: ${e?.message ?? e}`);
  process.exit(2);
});

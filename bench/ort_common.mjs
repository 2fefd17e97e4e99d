// What bench/ort_time.mjs and bench/ort_layers.mjs share: onnxruntime-node
// (NPUKIT_ORT_DIR, else the repository's .cache/onnxruntime, where
// scripts/install-onnxruntime.sh puts it), a small .npy reader and the
// command line MODEL NAME=FILE.npy ... [--threads N] [--repeat R] [--json].
import fs from 'node:fs';
import path from 'node:path';
import {createRequire} from 'node:module';
import {fileURLToPath} from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dirs = [process.env.NPUKIT_ORT_DIR, path.join(repo, '.cache', 'onnxruntime')].filter(Boolean);
const dir = dirs.find((d) => fs.existsSync(path.join(d, 'node_modules', 'onnxruntime-node', 'package.json')));
if (!dir) throw new Error(`onnxruntime-node not found in ${dirs.join(' or ')}`);
export const ort = createRequire(path.join(dir, 'node_modules', 'onnxruntime-node', 'package.json'))('onnxruntime-node');

// .npy reader (version 1-3, little-endian, C order; f32/u8/s8/s32).
export function readNpy(file) {
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
  if (!types[descr]) throw new Error(`${file}: dtype ${descr} not read here`);
  const [type, Arr] = types[descr];
  const body = buf.subarray(start + hlen);
  return {type, dims, data: new Arr(body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength))};
}

// {model, feeds, threads, repeat, json} from process.argv; `usage` is thrown
// when the model is missing or the repeat count is not a positive number.
export function parseArgs(defaultRepeat, usage) {
  const args = process.argv.slice(2);
  const out = {threads: 1, repeat: defaultRepeat, json: false, model: undefined, feeds: {}};
  for (let i = 0; i < args.length; ++i) {
    if (args[i] === '--threads') out.threads = Number(args[++i]);
    else if (args[i] === '--repeat') out.repeat = Number(args[++i]);
    else if (args[i] === '--json') out.json = true;
    else if (args[i].includes('=')) {
      const [name, file] = args[i].split('=');
      const a = readNpy(file);
      out.feeds[name] = new ort.Tensor(a.type, a.data, a.dims);
    } else out.model = args[i];
  }
  if (!out.model || !(out.repeat >= 1)) throw new Error(`usage: ${usage}`);
  return out;
}

"""What the Python test files share: the repository's paths, a named-check
runner that prints its seed, ONNX Runtime 1.30 driven through tools/ort/run.mjs
(one model, or a batch of jobs in one process), and small ONNX model builders.
Each test file keeps only its cases.
"""

import json
import os
import subprocess
import sys
import traceback

import numpy as np
import onnx
from onnx import TensorProto, helper

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MODELS = os.path.join(ROOT, "models")
ORT_RUNNER = os.path.join(ROOT, "tools", "ort", "run.mjs")

ONNX_TYPE = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.uint8): TensorProto.UINT8,
             np.dtype(np.int8): TensorProto.INT8, np.dtype(np.int32): TensorProto.INT32,
             np.dtype(np.int64): TensorProto.INT64}


# ---- named checks ---------------------------------------------------------

class Checks:
    """@checks.test runs a function at once and counts it as passed or failed
    (the traceback is printed); finish() prints the seed (if any) and the
    counts and returns the exit status."""

    def __init__(self, seed=None):
        self.seed = seed
        self.passed = self.failed = 0

    def test(self, fn):
        try:
            fn()
            self.passed += 1
            print(f"ok    {fn.__name__}")
        except Exception:
            self.failed += 1
            print(f"FAIL  {fn.__name__}" + ("" if self.seed is None else f" (seed {self.seed})"))
            traceback.print_exc(file=sys.stdout)
        return fn

    def finish(self):
        if self.seed is not None:
            print(f"seed {self.seed}")
        print(f"{self.passed} passed, {self.failed} failed")
        return 1 if self.failed else 0


# ---- ONNX Runtime ---------------------------------------------------------

def ort_dir():
    """Where ONNX Runtime for Node.js is installed, or None."""
    for d in (os.environ.get("NPUKIT_ORT_DIR"), os.path.join(ROOT, ".cache", "onnxruntime")):
        if d and os.path.exists(os.path.join(d, "node_modules", "onnxruntime-node")):
            return d
    return None


def ort_missing():
    """None when ONNX Runtime is installed, else the message to print."""
    if ort_dir():
        return None
    d = os.environ.get("NPUKIT_ORT_DIR", os.path.join(ROOT, ".cache", "onnxruntime"))
    return f"ONNX Runtime not found in {d}: run scripts/install-onnxruntime.sh"


def read_outputs(out_dir, skip=("x.npy",)):
    """{name: array} of every .npy in out_dir (run.mjs writes one per output)."""
    return {f[:-4]: np.load(os.path.join(out_dir, f)) for f in os.listdir(out_dir)
            if f.endswith(".npy") and f not in skip}


def run_ort_model(model_path, inputs, out_dir, opt_level=None):
    """Runs one model in ONNX Runtime on {input name: .npy path}; returns
    {output name: array}. Raises with run.mjs's stderr when it fails."""
    os.makedirs(out_dir, exist_ok=True)
    cmd = ["node", ORT_RUNNER, model_path]
    for name, path in inputs.items():
        cmd += ["--input", f"{name}={path}"]
    cmd += ["--output-dir", out_dir]
    if opt_level is not None:
        cmd += ["--opt-level", opt_level]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"tools/ort/run.mjs failed: {r.stderr[-2000:]}")
    return read_outputs(out_dir)


def run_ort_batch(jobs, tmp, env=None):
    """Runs every job ({"model", "inputs", "output_dir"}, paths relative to
    tmp) in one ONNX Runtime process. Returns (one result dict per job, in
    order; the process's CompletedProcess). Exit status 1 means some job
    failed (its result says why); anything else is printed."""
    path = os.path.join(tmp, "jobs.json")
    with open(path, "w") as f:
        json.dump(jobs, f)
    r = subprocess.run(["node", ORT_RUNNER, "--batch", path], capture_output=True, text=True,
                       env=env)
    if r.returncode not in (0, 1):
        print(r.stderr[-3000:])
    return [json.loads(line) for line in r.stdout.splitlines() if line.strip()], r


def run_ort_single_input(models, tmp):
    """Runs each (model, x) in one ONNX Runtime process with x as its input
    "x": saved as tmp/<i>/m.onnx and x.npy, outputs in tmp/<i>/out. Returns
    one result dict per model, in order (a missing one reads as an error)."""
    jobs = []
    for i, (m, x) in enumerate(models):
        d = os.path.join(tmp, str(i))
        os.makedirs(d)
        onnx.save(m, os.path.join(d, "m.onnx"))
        np.save(os.path.join(d, "x.npy"), x)
        jobs.append({"model": f"{i}/m.onnx", "inputs": {"x": f"{i}/x.npy"},
                     "output_dir": f"{i}/out"})
    results, _ = run_ort_batch(jobs, tmp)
    return results + [{"ok": False, "error": "no result"}] * (len(jobs) - len(results))


def bit_difference(got, mine):
    """(differing element count, None) when two float32 arrays of one shape
    hold the same bits or (count, a one-line description of the first
    difference: index, both values and their bits)."""
    bad = got.view(np.uint32) != mine.view(np.uint32)
    if not bad.any():
        return 0, None
    idx = tuple(int(v) for v in np.argwhere(bad)[0])
    n = int(bad.sum())
    return n, (f"{n} of {got.size} differ, first at {idx}: ORT {got[idx]!r} "
               f"({got.view(np.uint32)[idx]:#010x}) npukit {mine[idx]!r} "
               f"({mine.view(np.uint32)[idx]:#010x})")


# ---- ONNX model builders --------------------------------------------------

def value_info(name, array_or_dtype, shape=None):
    """A graph input/output for an array (its dtype and shape) or a dtype."""
    if isinstance(array_or_dtype, np.ndarray):
        return helper.make_tensor_value_info(name, ONNX_TYPE[array_or_dtype.dtype],
                                             list(array_or_dtype.shape))
    return helper.make_tensor_value_info(name, ONNX_TYPE[np.dtype(array_or_dtype)], shape)


def single_node_model(node, inputs, outputs, initializers=(), opset=13, domains=(), ir_version=8):
    """A model of one node (or a list of nodes) with the given value infos."""
    nodes = node if isinstance(node, list) else [node]
    g = helper.make_graph(nodes, "g", list(inputs), list(outputs), initializer=list(initializers))
    ops = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, 1) for d in domains]
    m = helper.make_model(g, opset_imports=ops)
    m.ir_version = ir_version
    return m

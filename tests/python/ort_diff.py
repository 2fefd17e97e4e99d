"""Shared runner of the ONNX Runtime differential tests: single-node models
built with Debian's python3-onnx, run in one ONNX Runtime 1.30 process
(tools/ort/run.mjs), every output element compared with npukit's bit for bit.
"""

import json
import os
import shutil
import tempfile
import time

import numpy as np
import onnx
from onnx import helper, numpy_helper

import npukit
from harness import ONNX_TYPE, ort_missing, run_ort_batch, single_node_model  # noqa: F401 (re-exported)
from harness import ORT_RUNNER as RUNNER, ROOT  # noqa: F401 (older names tests may import from here)

SEED = int(os.environ.get("NPUKIT_SEED", "20261125"))
SCALE = float(os.environ.get("NPUKIT_ORT_CASES", "1"))


def count(n):
    return max(1, int(n * SCALE))


class Case:
    """One single-node model: inputs fed at run time, constants as initializers."""

    def __init__(self, op, config, node_op, inputs, attrs, expect, domain="", opset=13,
                 consts=None):
        self.op, self.config = op, config
        self.node_op, self.inputs, self.attrs = node_op, inputs, attrs
        self.consts = consts or {}
        self.expect = expect  # npukit's output (computed in-process); None: npukit rejected it
        self.out_dtype = (expect if expect is not None else next(iter(inputs.values()))).dtype
        self.domain, self.opset = domain, opset
        self.alt = None  # u8 x s8 only: npukit's output under the OTHER kernel's profile

    def model(self):
        names = list(self.inputs) + list(self.consts)
        order = self.attrs.pop("_order", names)
        node = helper.make_node(self.node_op, order, ["y"], domain=self.domain, **self.attrs)
        ins = [helper.make_tensor_value_info(k, ONNX_TYPE[v.dtype], list(v.shape))
               for k, v in self.inputs.items()]
        inits = [numpy_helper.from_array(np.asarray(v), k) for k, v in self.consts.items()]
        out = helper.make_tensor_value_info("y", ONNX_TYPE[self.out_dtype], None)
        return single_node_model(node, ins, [out], inits, opset=self.opset,
                                 domains=[self.domain] if self.domain else [])

    def repro(self, i):
        return (f"repro: NPUKIT_SEED={SEED} op={self.op} case={i} "
                f"config={json.dumps(self.config, sort_keys=True)}")


def npukit_or_error(f, *args, **kw):
    """npukit's output, or None when npukit rejects the configuration (then ORT must too)."""
    try:
        return f(*args, **kw)
    except npukit.Error:
        return None


def window_attrs(rng, H, W, allow_dilation=False, conv=False):
    kh, kw = int(rng.integers(1, min(H, 5) + 1)), int(rng.integers(1, min(W, 5) + 1))
    st = [int(rng.integers(1, 4)), int(rng.integers(1, 4))]
    d = [int(rng.integers(1, 3)), int(rng.integers(1, 3))] if allow_dilation else [1, 1]
    r = rng.random()
    auto_pad = "NOTSET" if r < 0.7 else ["VALID", "SAME_UPPER", "SAME_LOWER"][int(rng.integers(0, 3))]
    if auto_pad in ("SAME_UPPER", "SAME_LOWER") and conv:
        d = [1, 1]  # ONNX Runtime rejects SAME with dilation for Conv: not drawn
    # Pools draw SAME with any stride and dilation: ONNX Runtime's own SAME pads
    # (undilated kernel, negative when stride > kernel) are profile onnxruntime's
    # PoolGeometry::onnxruntime; a configuration ORT rejects (or answers with an
    # empty tensor) must be an npukit error too (see main()).
    pads = [int(rng.integers(0, kh)), int(rng.integers(0, kw)),
            int(rng.integers(0, kh)), int(rng.integers(0, kw))]
    # The effective kernel must fit the padded input, except for 15% of the pools:
    # ONNX Runtime then truncates the window count toward zero (one window that
    # hangs past the padded end, or none: an error for both).
    fit = conv or rng.random() < 0.85
    while fit and (kh - 1) * d[0] + 1 > H + (pads[0] + pads[2] if auto_pad == "NOTSET" else 0) and kh > 1:
        kh -= 1
    while fit and (kw - 1) * d[1] + 1 > W + (pads[1] + pads[3] if auto_pad == "NOTSET" else 0) and kw > 1:
        kw -= 1
    pads = [min(pads[0], kh - 1), min(pads[1], kw - 1), min(pads[2], kh - 1), min(pads[3], kw - 1)]
    a = {"kernel_shape": [kh, kw], "strides": st}
    if auto_pad == "NOTSET":
        a["pads"] = pads
    else:
        a["auto_pad"] = auto_pad
    if allow_dilation and d != [1, 1]:
        a["dilations"] = d
    return a


def write_jobs(cases, tmp):
    """Saves each case's model and inputs under tmp/<i>/ and returns the
    run.mjs jobs (outputs to tmp/<i>/out/y.npy)."""
    jobs = []
    for i, c in enumerate(cases):
        d = os.path.join(tmp, str(i))
        os.makedirs(d)
        onnx.save(c.model(), os.path.join(d, "m.onnx"))
        inputs = {}
        for k, v in c.inputs.items():
            np.save(os.path.join(d, f"{k}.npy"), v)
            inputs[k] = f"{i}/{k}.npy"
        jobs.append({"model": f"{i}/m.onnx", "inputs": inputs, "output_dir": f"{i}/out"})
    return jobs


def run_cases(cases):
    """Runs every case in ONNX Runtime and compares bit for bit. Returns
    (passed, failed, stats per op, seconds in ONNX Runtime); prints the repro
    of the first 20 failures and a table per operator."""
    tmp = tempfile.mkdtemp(prefix="npukit_ort_")
    t1 = t2 = time.time()
    try:
        jobs = write_jobs(cases, tmp)
        t1 = time.time()
        results, _ = run_ort_batch(jobs, tmp)  # a failed job is reported per case below
        t2 = time.time()
        stats = {}
        passed = failed = 0
        shown = 0
        for i, c in enumerate(cases):
            st = stats.setdefault(c.op, {"configs": 0, "elements": 0, "mismatches": 0,
                                         "failed": 0, "ort_errors": 0, "both_reject": 0})
            st["configs"] += 1
            res = results[i] if i < len(results) else {"ok": False, "error": "no result"}
            if c.expect is None:
                # npukit rejected it: ORT must reject it too or return an empty tensor.
                empty = res["ok"] and np.load(os.path.join(tmp, str(i), "out", "y.npy")).size == 0
                if not res["ok"] or empty:
                    st["both_reject"] += 1
                    passed += 1
                else:
                    st["failed"] += 1
                    failed += 1
                    if shown < 20:
                        print(f"FAIL npukit rejected a configuration ORT runs\n  {c.repro(i)}")
                        shown += 1
                continue
            if not res["ok"]:
                st["ort_errors"] += 1
                st["failed"] += 1
                failed += 1
                if shown < 20:
                    print(f"FAIL ORT error: {res['error'][:300]}\n  {c.repro(i)}")
                    shown += 1
                continue
            got = np.load(os.path.join(tmp, str(i), "out", "y.npy"))
            st["elements"] += got.size
            if got.shape != c.expect.shape or got.dtype != c.expect.dtype:
                st["failed"] += 1
                failed += 1
                if shown < 20:
                    print(f"FAIL shape/dtype ORT {got.shape} {got.dtype} vs npukit "
                          f"{c.expect.shape} {c.expect.dtype}\n  {c.repro(i)}")
                    shown += 1
                continue
            if got.dtype == np.float32:
                bad = got.view(np.uint32) != c.expect.view(np.uint32)
            else:
                bad = got != c.expect
            nbad = int(bad.sum())
            st["mismatches"] += nbad
            if nbad:
                st["failed"] += 1
                failed += 1
                if shown < 20:
                    idx = tuple(int(v) for v in np.argwhere(bad)[0])
                    print(f"FAIL {nbad} of {got.size} elements differ, first at {idx}: ORT "
                          f"{got[idx]} npukit {c.expect[idx]}\n  {c.repro(i)}")
                    shown += 1
            else:
                passed += 1
            if c.alt is not None:
                st["u8s8"] = st.get("u8s8", 0) + 1
                st["u8s8_other_differs"] = st.get("u8s8_other_differs", 0) + int(
                    bool((c.alt != got).any()))
        print(f"\n{'operator':<36}{'configs':>8}{'elements':>10}{'mismatch':>10}{'ORT err':>9}"
              f"{'both reject':>12}")
        for op, st in stats.items():
            print(f"{op:<36}{st['configs']:>8}{st['elements']:>10}{st['mismatches']:>10}"
                  f"{st['ort_errors']:>9}{st['both_reject']:>12}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return passed, failed, stats, t2 - t1

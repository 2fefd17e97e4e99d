#!/usr/bin/env python3
"""ghp_rtl and ghp_golden against ONNX Runtime 1.30's QLinearAveragePool.

Random count_include_pad = 1 cases (seed below): NCHW uint8, kernels up to the
hardware's N = KH*KW <= 64, strides 1..3, begin/end pads, ceil_mode, and
whole-image kernels (ORT's integer path). Scales and zero points are
calibrated as the accelerator's own generator does (min/max of the real input
and of the real average), so the results lie inside the PPU's range; on these
the GHP fixed point must stay within +-1 of ONNX Runtime. A second, stress set
uses uncalibrated scales: there the 10-bit register of the RTL wraps for
results beyond +-256 and the distribution of differences is reported, not
asserted. Skips (exit 0) when ONNX Runtime for Node is not installed.
"""
import os
import shutil
import sys
import tempfile

import numpy as np
import onnx
from onnx import helper, numpy_helper

import npukit
from harness import ORT_RUNNER, ort_dir, run_ort_batch, single_node_model, value_info

SEED = 20261125
CASES = 1200
STRESS = 300


def quant_auto(t):
    lo, hi = float(t.min()), float(t.max())
    if hi - lo < 1e-6:
        hi = lo + 1.0
    scale = (hi - lo) / 255
    zp = min(max(round(-lo / scale), 0), 255)
    return np.float32(scale), zp


def out_size(n, k, s, pb, pe, ceil):
    span = n + pb + pe - k
    o = (-(-span // s) if ceil else span // s) + 1
    if ceil and (o - 1) * s >= n + pb:
        o -= 1
    return o


def random_case(rng, stress):
    c = int(rng.integers(1, 4))
    while True:
        h, w = (int(v) for v in rng.integers(1, 13, size=2))
        if rng.random() < 0.12:  # whole image, no pads: ORT's integer path
            k, s, pads, ceil = [h, w], [1, 1], [0, 0, 0, 0], 0
        else:
            k = [int(rng.integers(1, min(h, 8) + 1)), int(rng.integers(1, min(w, 8) + 1))]
            s = [int(v) for v in rng.integers(1, 4, size=2)]
            pads = [int(rng.integers(0, k[0])), int(rng.integers(0, k[1])),
                    int(rng.integers(0, k[0])), int(rng.integers(0, k[1]))]
            ceil = int(rng.random() < 0.3)
        if k[0] * k[1] > 64:
            continue
        oh = out_size(h, k[0], s[0], pads[0], pads[2], ceil)
        ow = out_size(w, k[1], s[1], pads[1], pads[3], ceil)
        if oh >= 1 and ow >= 1:
            break
    xf = rng.standard_normal((1, c, h, w)) * rng.uniform(0.2, 5) + rng.uniform(-2, 2)
    xs, xz = quant_auto(xf)
    xq = np.clip(np.round(xf / xs) + xz, 0, 255).astype(np.uint8)
    if stress:
        ys = np.float32(xs * rng.uniform(0.05, 2.0))
        yz = int(rng.integers(0, 256))
    else:
        # real average with zero padding (count_include_pad = 1), as the generator calibrates
        real = (xq.astype(np.float64) - xz) * float(xs)
        big = np.zeros((1, c, h + pads[0] + pads[2] + 2 * k[0] * 3, w + pads[1] + pads[3] + 2 * k[1] * 3))
        big[:, :, pads[0]:pads[0] + h, pads[1]:pads[1] + w] = real
        avg = np.array([big[0, :, i * s[0]:i * s[0] + k[0], j * s[1]:j * s[1] + k[1]].mean(axis=(1, 2))
                        for i in range(oh) for j in range(ow)] + [np.zeros(c)]).reshape(-1)
        ys, yz = quant_auto(np.concatenate([avg, real.reshape(-1)[:1]]))
    return dict(x=xq, x_scale=float(xs), x_zp=int(xz), y_scale=float(ys), y_zp=int(yz),
                kernel=k, strides=s, pads=pads, ceil=ceil)


def model(case, path):
    x = case["x"]
    node = helper.make_node(
        "QLinearAveragePool", ["x", "x_scale", "x_zp", "y_scale", "y_zp"], ["y"],
        domain="com.microsoft", kernel_shape=case["kernel"], strides=case["strides"],
        pads=case["pads"], ceil_mode=case["ceil"], count_include_pad=1, channels_last=0)
    inits = [
        numpy_helper.from_array(np.array(case["x_scale"], dtype=np.float32), "x_scale"),
        numpy_helper.from_array(np.array(case["x_zp"], dtype=np.uint8), "x_zp"),
        numpy_helper.from_array(np.array(case["y_scale"], dtype=np.float32), "y_scale"),
        numpy_helper.from_array(np.array(case["y_zp"], dtype=np.uint8), "y_zp"),
    ]
    m = single_node_model(node, [value_info("x", x)], [value_info("y", np.uint8)], inits,
                          domains=["com.microsoft"])
    onnx.save(m, path)


def main():
    d = ort_dir()
    node = shutil.which("node")
    if not d or not node or not os.path.exists(ORT_RUNNER):
        print("ONNX Runtime for Node not installed (scripts/install-onnxruntime.sh): skipped")
        print("0 passed, 0 failed")
        return 0
    rng = np.random.default_rng(SEED)
    cases = [random_case(rng, False) for _ in range(CASES)] + \
            [random_case(rng, True) for _ in range(STRESS)]
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        jobs = []
        for i, c in enumerate(cases):
            model(c, os.path.join(tmp, f"m{i}.onnx"))
            np.save(os.path.join(tmp, f"x{i}.npy"), c["x"])
            jobs.append({"model": f"m{i}.onnx", "inputs": {"x": f"x{i}.npy"}, "output_dir": f"o{i}"})
        _, r = run_ort_batch(jobs, tmp, env=dict(os.environ, NPUKIT_ORT_DIR=d))
        if r.returncode != 0:
            print("ORT runner failed:", r.stderr[-2000:])
            print("0 passed, 1 failed")
            return 1
        stats = {}
        for i, c in enumerate(cases):
            stress = i >= CASES
            want = np.load(os.path.join(tmp, f"o{i}", "y.npy")).astype(np.int64)
            for profile in ("ghp_rtl", "ghp_golden"):
                got = npukit.ghp_avg_pool(c["x"], c["kernel"], c["x_scale"], c["x_zp"],
                                          c["y_scale"], c["y_zp"], strides=c["strides"],
                                          pads=c["pads"], ceil_mode=c["ceil"], profile=profile)
                if got.shape != want.shape:
                    failed += 1
                    print(f"FAIL shape case {i} {profile}: {got.shape} vs {want.shape} {c}")
                    continue
                diff = got.astype(np.int64) - want
                key = ("stress" if stress else "calibrated", profile)
                s = stats.setdefault(key, {"outputs": 0, "cases_exact": 0, "hist": {}})
                s["outputs"] += diff.size
                s["cases_exact"] += int(not diff.any())
                for v, n in zip(*np.unique(np.clip(diff, -9, 9), return_counts=True)):
                    s["hist"][int(v)] = s["hist"].get(int(v), 0) + int(n)
                if not stress:
                    worst = int(np.abs(diff).max())
                    if worst <= 1:
                        passed += 1
                    else:
                        failed += 1
                        print(f"FAIL case {i} {profile}: max |diff| {worst} (seed {SEED}) "
                              f"x_shape {c['x'].shape} {({k: v for k, v in c.items() if k != 'x'})}")
        for (kind, profile), s in sorted(stats.items()):
            n = CASES if kind == "calibrated" else STRESS
            hist = ", ".join(f"{k:+d}: {v}" for k, v in sorted(s["hist"].items()))
            print(f"{kind:10s} {profile:10s} {n} cases, {s['outputs']} outputs, "
                  f"{s['cases_exact']} cases exact; diff (npukit - ORT, clipped to +-9): {hist}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

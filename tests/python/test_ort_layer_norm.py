"""LayerNormalization against ONNX Runtime 1.30, bit for bit: thousands of
seeded random single-node models (row lengths 1..4096, every axis of ranks 1
to 4, with and without bias, values near 0, large offsets, huge and tiny
magnitudes, NaN/inf/-0/denormals, several epsilons), each output (Y, Mean,
InvStdDev) compared bit for bit with npukit's (its ORT model: Welford below 8
elements, MLAS's AVX2 lane order from 8 on; docs/semantics.md). Any differing
bit fails and prints a one-line repro. NPUKIT_SEED changes the seed,
NPUKIT_ORT_CASES scales the count.
"""
import json
import os
import shutil
import sys
import tempfile

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import npukit
from harness import bit_difference, run_ort_single_input
from ort_diff import SEED, count, ort_missing

OUTPUTS = ("y", "mean", "inv_std_dev")
SPECIALS = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-45, -1e-45, 1e-39, 3e38], np.float32)
MAX_ELEMENTS = 1 << 15  # per case, so that thousands of cases stay a few seconds


def row_length(rng, i):
    """Every length 1..80 in turn, then log-uniform up to 4096 (odd sizes too)."""
    if i < 80:
        return i + 1
    return int(np.exp(rng.uniform(np.log(8), np.log(4096.5))))


def shape_for(rng, n):
    """A shape of rank 1..4 and an axis whose inner product is n (factors of n split off)."""
    inner = [n]
    if n > 1 and rng.random() < 0.4:
        f = [d for d in range(2, min(n, 64) + 1) if n % d == 0]
        if f:
            d = int(rng.choice(f))
            inner = [d, n // d]
    outer_rank = int(rng.integers(0, 5 - len(inner)))
    rows_cap = max(1, MAX_ELEMENTS // n)
    outer = []
    for _ in range(outer_rank):
        outer.append(int(rng.integers(1, max(2, min(5, rows_cap) + 1))))
        rows_cap = max(1, rows_cap // outer[-1])
    return outer + inner, len(outer)


def values(rng, shape):
    kind = int(rng.integers(0, 7))
    if kind == 0:
        x = rng.standard_normal(shape)
    elif kind == 1:  # large offset: mean far above the spread (cancellation)
        x = rng.standard_normal(shape) * rng.uniform(0.01, 10) + rng.choice([-1, 1]) * 10 ** rng.uniform(2, 5)
    elif kind == 2:  # tiny: denormal squares, epsilon dominates
        x = rng.standard_normal(shape) * 10 ** rng.uniform(-30, -3)
    elif kind == 3:  # huge: squared deviations near or past float max
        x = rng.standard_normal(shape) * 10 ** rng.uniform(10, 20)
    elif kind == 4:  # few distinct values (exact sums, ties)
        x = rng.integers(-3, 4, size=shape).astype(np.float64)
    elif kind == 5:
        x = rng.uniform(-6, 6, size=shape)
    else:  # specials sprinkled into normal values
        x = rng.standard_normal(shape)
        mask = rng.random(shape) < rng.choice([0.002, 0.05])
        x[mask] = rng.choice(SPECIALS, size=int(mask.sum()))
    with np.errstate(over="ignore"):
        return x.astype(np.float32)


def make_case(rng, i):
    n = row_length(rng, i)
    shape, axis = shape_for(rng, n)
    rank = len(shape)
    if rng.random() < 0.5:
        axis -= rank  # negative axis
    inner = shape[axis % rank:]
    x = values(rng, shape)
    scale = (rng.standard_normal(inner) * rng.choice([1.0, 0.01, 100.0])).astype(np.float32)
    if rng.random() < 0.05:
        scale.flat[int(rng.integers(0, scale.size))] = -0.0
    consts = {"scale": scale}
    if rng.random() < 0.6:
        consts["bias"] = rng.standard_normal(inner).astype(np.float32)
    eps = float(rng.choice([1e-5, 1e-6, 1e-12, 1e-3, 0.0]))
    node = helper.make_node("LayerNormalization", ["x"] + list(consts), list(OUTPUTS), axis=axis,
                            epsilon=eps)
    g = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in OUTPUTS],
        initializer=[numpy_helper.from_array(v, k) for k, v in consts.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    config = {"shape": shape, "axis": axis, "n": n, "bias": "bias" in consts, "epsilon": eps}
    return m, x, config


def main():
    missing = ort_missing()
    if missing:
        print("SKIP", missing)
        return 0
    rng = np.random.default_rng(SEED)
    total = count(3000)
    cases = [make_case(rng, i) for i in range(total)]
    tmp = tempfile.mkdtemp(prefix="npukit_ort_ln_")
    try:
        results = run_ort_single_input([(m, x) for m, x, _ in cases], tmp)
        failed = shown = 0
        elements = {o: 0 for o in OUTPUTS}
        differing = {o: 0 for o in OUTPUTS}
        lengths = set()
        for i, (m, x, config) in enumerate(cases):
            repro = f"repro: NPUKIT_SEED={SEED} case={i} config={json.dumps(config)}"
            res = results[i]
            if not res["ok"]:
                failed += 1
                print(f"FAIL ORT error: {res['error'][:300]}\n  {repro}")
                continue
            ours = npukit.run_model(os.path.join(tmp, str(i), "m.onnx"), {"x": x})
            bad_case = False
            for o in OUTPUTS:
                got = np.load(os.path.join(tmp, str(i), "out", o + ".npy"))
                mine = np.asarray(ours[o], np.float32)
                if got.shape != mine.shape:
                    bad_case = True
                    print(f"FAIL {o} shape ORT {got.shape} npukit {mine.shape}\n  {repro}")
                    continue
                n, text = bit_difference(got, mine)
                elements[o] += got.size
                differing[o] += n
                if n:
                    bad_case = True
                    if shown < 20:
                        print(f"FAIL {o}: {text}\n  {repro}")
                        shown += 1
            failed += bad_case
            lengths.add(config["n"])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"LayerNormalization vs ONNX Runtime 1.30: {total} models, {len(lengths)} distinct row "
          f"lengths ({min(lengths, default=0)}..{max(lengths, default=0)})")
    for o in OUTPUTS:
        print(f"  {o:<12}{elements[o]:>10} elements {differing[o]:>6} differing bits")
    print(f"seed {SEED}: {total - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""ReduceSum and ReduceMean against ONNX Runtime 1.30, bit for bit: thousands
of seeded random single-node models (ranks 0 to 4, every pattern of axes,
size-1 axes, rows long enough for ORT's column loop, keepdims 0/1, axes as an
input or an attribute, normal values, large offsets, tiny and huge magnitudes,
NaN/inf/-0/denormals), each output compared bit for bit with npukit's model of
ORT's order (Eigen's 4-lane packet sums, MLAS's M=1 SGEMM, the sequential
loop; docs/semantics.md). Any differing bit fails and prints a one-line repro.
NPUKIT_SEED changes the seed, NPUKIT_ORT_CASES scales the count.
"""
import json
import os
import shutil
import sys
import tempfile

import numpy as np
from onnx import helper, numpy_helper

import npukit
from harness import bit_difference, run_ort_single_input, single_node_model, value_info
from ort_diff import SEED, count, ort_missing

SPECIALS = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-45, -1e-45, 1e-39, 3e38], np.float32)
MAX_ELEMENTS = 1 << 14


def shape_for(rng, i):
    """Ranks 0..4; every 8th case a tall 2-D-like tensor (ORT's RK column loop)."""
    if i % 8 == 7:
        rows, cols = int(rng.integers(17, 80)), int(rng.integers(257, 600))
        if rng.random() < 0.5:
            rows, cols = int(rng.integers(257, 1200)), int(rng.integers(1, 12))
        return [rows, cols] if rng.random() < 0.5 else [rows, 1, cols]
    rank = int(rng.integers(0, 5))
    shape = []
    for _ in range(rank):
        shape.append(1 if rng.random() < 0.15 else int(np.exp(rng.uniform(0, np.log(70)))))
    while int(np.prod(shape)) > MAX_ELEMENTS:
        j = int(np.argmax(shape))
        shape[j] = max(1, shape[j] // 2)
    return shape


def values(rng, shape):
    kind = int(rng.integers(0, 6))
    if kind == 0:
        x = rng.standard_normal(shape)
    elif kind == 1:  # large offset: cancellation makes the order visible
        x = rng.standard_normal(shape) + rng.choice([-1, 1]) * 10 ** rng.uniform(2, 6)
    elif kind == 2:
        x = rng.standard_normal(shape) * 10 ** rng.uniform(-40, 37)
    elif kind == 3:  # -0 and small integers (exact sums, the sign of zero)
        x = rng.integers(-2, 3, size=shape).astype(np.float64)
        x[x == 0] = -0.0
    elif kind == 4:
        x = rng.uniform(-6, 6, size=shape)
    else:  # specials sprinkled into normal values
        x = rng.standard_normal(shape)
        mask = rng.random(shape) < rng.choice([0.002, 0.05])
        x[mask] = rng.choice(SPECIALS, size=int(mask.sum()))
    with np.errstate(over="ignore"):
        return np.asarray(x, np.float32)


def reduce_model(rng, op, shape, x, attribute_opset, input_opset):
    """A single-node `op` model over x with random axes (some negative),
    keepdims and axes as an input (input_opset) or an attribute
    (attribute_opset); returns the model and its configuration."""
    rank = len(shape)
    axes = sorted(int(a) for a in rng.choice(rank, size=int(rng.integers(0, rank + 1)), replace=False)) if rank else []
    axes = [a - rank if rng.random() < 0.3 else a for a in axes]
    keepdims = int(rng.random() < 0.7)
    as_input = rng.random() < 0.5
    opset = input_opset if as_input else attribute_opset
    inits, ins, attrs = [], ["x"], {"keepdims": keepdims}
    if as_input and axes:
        inits.append(numpy_helper.from_array(np.array(axes, np.int64), "axes"))
        ins.append("axes")
    elif axes:
        attrs["axes"] = axes
    node = helper.make_node(op, ins, ["y"], **attrs)
    m = single_node_model(node, [value_info("x", x)], [value_info("y", np.float32, None)], inits,
                          opset=opset)
    config = {"op": op, "shape": shape, "axes": axes, "keepdims": keepdims, "opset": opset}
    return m, config


def make_case(rng, i):
    op = "ReduceSum" if i % 2 == 0 else "ReduceMean"
    shape = shape_for(rng, i)
    x = values(rng, shape)
    sum_op = op == "ReduceSum"
    m, config = reduce_model(rng, op, shape, x, 11 if sum_op else 13, 13 if sum_op else 18)
    return m, x, config


def main():
    missing = ort_missing()
    if missing:
        print("SKIP", missing)
        return 0
    rng = np.random.default_rng(SEED)
    total = count(3000)
    cases = [make_case(rng, i) for i in range(total)]
    tmp = tempfile.mkdtemp(prefix="npukit_ort_reduce_")
    try:
        results = run_ort_single_input([(m, x) for m, x, _ in cases], tmp)
        failed = shown = elements = differing = 0
        kinds = {}
        for i, (m, x, config) in enumerate(cases):
            repro = f"repro: NPUKIT_SEED={SEED} case={i} config={json.dumps(config)}"
            res = results[i]
            if not res["ok"]:
                failed += 1
                print(f"FAIL ORT error: {res['error'][:300]}\n  {repro}")
                continue
            got = np.load(os.path.join(tmp, str(i), "out", "y.npy"))
            mine = np.asarray(npukit.run_model(os.path.join(tmp, str(i), "m.onnx"), {"x": x})["y"],
                              np.float32)
            if got.shape != mine.shape:
                failed += 1
                print(f"FAIL shape ORT {got.shape} npukit {mine.shape}\n  {repro}")
                continue
            n, text = bit_difference(got, mine)
            elements += got.size
            differing += n
            kinds[config["op"]] = kinds.get(config["op"], 0) + 1
            if n:
                failed += 1
                if shown < 20:
                    print(f"FAIL {text}\n  {repro}")
                    shown += 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"ReduceSum/ReduceMean vs ONNX Runtime 1.30: {total} models ({kinds}), {elements} output "
          f"elements, {differing} differing bits")
    print(f"seed {SEED}: {total - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""Differential test of npukit's fp32 pooling under profile onnxruntime against
ONNX Runtime 1.30 itself: AveragePool (both count_include_pad, ceil_mode,
overhanging kernels, opsets 13 and 19, dilations at opset 19), MaxPool (dilations, NaN/inf/-0
inputs), GlobalAveragePool and GlobalMaxPool, thousands of seeded random
single-node models plus a sweep of every small 1-D geometry. Every output
element must have the same bits. NPUKIT_SEED changes the seed,
NPUKIT_ORT_CASES scales the counts; a failure prints a one-line repro.
"""
import sys
import time

import numpy as np

import npukit
from ort_diff import SEED, Case, count, npukit_or_error, ort_missing, run_cases, window_attrs

SPECIALS = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-45, -1e-45, 3.4e38, -3.4e38],
                    np.float32)


def values(rng, shape):
    """Uniform floats; a quarter of the tensors also hold NaN, +-inf, -0 and denormals."""
    x = rng.uniform(-4, 4, size=shape).astype(np.float32)
    if rng.random() < 0.25:
        mask = rng.random(shape) < 0.15
        x[mask] = rng.choice(SPECIALS, size=int(mask.sum()))
    return x


def channels(rng, low=1, high=5):
    """A few channels, or (a quarter of the time) 8, 16 or 32: counts that fill
    ONNX Runtime's NCHWc blocks, where its graph optimizer swaps in MLAS's NCHWc
    pooling kernel (block 16 on AVX512F hosts, else 8)."""
    if rng.random() < 0.25:
        return int(rng.choice([8, 16, 32]))
    return int(rng.integers(low, high))


def fits(a, H, W):
    """Whether the (dilated) window fits the padded input."""
    k, d = a["kernel_shape"], a.get("dilations", [1, 1])
    if a.get("auto_pad", "NOTSET") in ("SAME_UPPER", "SAME_LOWER"):
        return True
    p = a.get("pads", [0, 0, 0, 0])
    return ((k[0] - 1) * d[0] + 1 <= H + p[0] + p[2]) and ((k[1] - 1) * d[1] + 1 <= W + p[1] + p[3])


def nchwc_safe(rng, C, a, H, W):
    """ONNX Runtime 1.30's process dies (no error) on an NCHWc pool whose window
    is larger than the padded input (e.g. MaxPool 2x32x2x6, kernel 2x4,
    dilations 2): such windows get a channel count outside the NCHWc blocks."""
    return C if C % 8 or fits(a, H, W) else int(rng.integers(1, 5))


def gen_avg_pool(rng, i):
    N, C = int(rng.integers(1, 3)), channels(rng)
    H, W = int(rng.integers(1, 11)), int(rng.integers(1, 11))
    dil = rng.random() < 0.3
    a = window_attrs(rng, H, W, allow_dilation=dil)
    a["ceil_mode"] = int(rng.integers(0, 2))
    a["count_include_pad"] = int(rng.integers(0, 2))
    C = nchwc_safe(rng, C, a, H, W)
    x = values(rng, [N, C, H, W])
    # ONNX Runtime runs AveragePool-19 in another loop than MLAS, dilated or not.
    opset = 19 if "dilations" in a or rng.random() < 0.25 else 13
    y = npukit_or_error(npukit.average_pool, x, profile="onnxruntime", opset=opset, **a)
    return Case("AveragePool", dict(a, shape=[N, C, H, W], opset=opset), "AveragePool", {"x": x},
                dict(a), y, opset=opset)


def gen_max_pool(rng, i):
    N, C = int(rng.integers(1, 3)), channels(rng)
    H, W = int(rng.integers(1, 11)), int(rng.integers(1, 11))
    a = window_attrs(rng, H, W, allow_dilation=True)
    a["ceil_mode"] = int(rng.integers(0, 2))
    C = nchwc_safe(rng, C, a, H, W)
    x = values(rng, [N, C, H, W])
    y = npukit_or_error(npukit.max_pool, x, profile="onnxruntime", **a)
    return Case("MaxPool", dict(a, shape=[N, C, H, W]), "MaxPool", {"x": x}, dict(a), y, opset=12)


def gen_global(op, fn):
    def gen(rng, i):
        N, C = int(rng.integers(1, 3)), channels(rng, 1, 9)
        H, W = int(rng.integers(1, 17)), int(rng.integers(1, 17))
        x = values(rng, [N, C, H, W])
        y = fn(x, profile="onnxruntime")
        return Case(op, {"shape": [N, C, H, W]}, op, {"x": x}, {}, y)
    return gen


def large_values(rng, shape):
    """values(), with a third of the tensors spread over 2^-20..2^20 so that any
    change of summation order shows in the low bits."""
    x = values(rng, shape)
    if rng.random() < 0.33:
        with np.errstate(over="ignore", invalid="ignore"):
            x *= np.float32(2.0) ** rng.integers(-20, 21, size=shape).astype(np.float32)
    return x


def gen_large(op):
    """Wide, tall and large images (H, W up to 230) with few channels, or with
    16 (ONNX Runtime's NCHWc path), any kernel up to 9 (sometimes up to 40,
    past MLAS's limit of 32), strides 1..3, pads, ceil_mode, dilation and both
    divisors: the geometries where MLAS's summation order shows."""
    def gen(rng, i):
        N = 1 if rng.random() < 0.8 else 2
        C = int(rng.integers(1, 4)) if rng.random() < 0.7 else 16
        big = 230 if C < 16 else 96
        H, W = int(rng.integers(1, big + 1)), int(rng.integers(1, big + 1))
        if rng.random() < 0.3:  # a row or a column
            if rng.random() < 0.5:
                H = int(rng.integers(1, 4))
            else:
                W = int(rng.integers(1, 4))
        kmax = 40 if rng.random() < 0.1 else 9
        kh, kw = int(rng.integers(1, min(H, kmax) + 1)), int(rng.integers(1, min(W, kmax) + 1))
        a = {"kernel_shape": [kh, kw],
             "strides": [int(rng.integers(1, 4)), int(rng.integers(1, 4))],
             "pads": [int(rng.integers(0, kh)), int(rng.integers(0, kw)),
                      int(rng.integers(0, kh)), int(rng.integers(0, kw))],
             "ceil_mode": int(rng.random() < 0.3)}
        if op == "MaxPool" and rng.random() < 0.2:
            a["dilations"] = [int(rng.integers(1, 3)), int(rng.integers(1, 3))]
            a["pads"] = [0, 0, 0, 0]
            if not fits(a, H, W):
                del a["dilations"]
        x = large_values(rng, [N, C, H, W])
        shape = [N, C, H, W]
        if op == "AveragePool":
            a["count_include_pad"] = int(rng.integers(0, 2))
            y = npukit_or_error(npukit.average_pool, x, profile="onnxruntime", opset=13, **a)
            return Case("AveragePool (large)", dict(a, shape=shape), op, {"x": x}, dict(a), y,
                        opset=13)
        y = npukit_or_error(npukit.max_pool, x, profile="onnxruntime", **a)
        return Case("MaxPool (large)", dict(a, shape=shape), op, {"x": x}, dict(a), y, opset=12)
    return gen


def race_cases():
    """The shapes of scripts/bench.sh's pooling race, as ONNX Runtime runs them."""
    rng = np.random.default_rng(SEED + 4)
    cases = []
    for shape, k, s, pad, op, cip in [
            ([1, 64, 112, 112], 3, 2, 1, "AveragePool", 1),
            ([1, 64, 112, 112], 3, 2, 1, "AveragePool", 0),
            ([1, 64, 112, 112], 3, 2, 1, "MaxPool", 0),
            ([1, 256, 56, 56], 2, 2, 0, "MaxPool", 0),
            ([1, 256, 56, 56], 2, 2, 0, "AveragePool", 1),
            ([1, 512, 14, 14], 3, 1, 1, "AveragePool", 0),
            ([1, 512, 14, 14], 3, 1, 1, "AveragePool", 1),
            ([1, 3, 224, 224], 3, 2, 1, "AveragePool", 1),
            ([1, 3, 224, 224], 3, 2, 1, "MaxPool", 0)]:
        x = large_values(rng, shape)
        a = {"kernel_shape": [k, k], "strides": [s, s], "pads": [pad] * 4}
        if op == "AveragePool":
            a["count_include_pad"] = cip
            y = npukit_or_error(npukit.average_pool, x, profile="onnxruntime", opset=13, **a)
        else:
            y = npukit_or_error(npukit.max_pool, x, profile="onnxruntime", **a)
        cases.append(Case(op + " (race shapes)", dict(a, shape=shape), op, {"x": x}, dict(a), y,
                          opset=12 if op == "MaxPool" else 13))
    for shape in ([1, 2048, 7, 7], [1, 3, 230, 229]):
        for op, fn in (("GlobalAveragePool", npukit.global_average_pool),
                       ("GlobalMaxPool", npukit.global_max_pool)):
            x = large_values(rng, shape)
            cases.append(Case(op + " (race shapes)", {"shape": shape}, op, {"x": x}, {},
                              fn(x, profile="onnxruntime")))
    return cases


def sweep_cases():
    """Every small 1-D geometry (two per model, one on H and one on W) where ONNX
    Runtime's pool_attributes.h departs from the ONNX formulas: SAME pads from
    the undilated kernel, C-truncated window counts, ceil_mode's drop rule, and
    overhanging kernels, for AveragePool (both divisors) and MaxPool."""
    rng = np.random.default_rng(SEED + 2)
    cases = []
    for op in ("AveragePool", "MaxPool"):
        for mode in ("SAME_UPPER", "SAME_LOWER", "NOTSET"):
            for ceil in (0, 1):
                for cip in ((0, 1) if op == "AveragePool" else (0,)):
                    axes = [(n, k, s, p) for n in range(1, 7) for k in range(1, 5)
                            for s in range(1, 4) for p in range(0, k)
                            if mode == "NOTSET" or p == 0]
                    order = rng.permutation(len(axes))
                    for a, b in zip(order[0::2], order[1::2]):
                        (h, kh, sh, ph), (w, kw, sw, pw) = axes[a], axes[b]
                        attrs = {"kernel_shape": [kh, kw], "strides": [sh, sw], "ceil_mode": ceil}
                        if mode == "NOTSET":
                            attrs["pads"] = [ph, pw, int(rng.integers(0, kh)),
                                             int(rng.integers(0, kw))]
                        else:
                            attrs["auto_pad"] = mode
                        x = values(rng, [1, 2, h, w])
                        if op == "AveragePool":
                            attrs["count_include_pad"] = cip
                            y = npukit_or_error(npukit.average_pool, x, profile="onnxruntime",
                                                **attrs)
                        else:
                            y = npukit_or_error(npukit.max_pool, x, profile="onnxruntime", **attrs)
                        cases.append(Case(op + " (geometry sweep)",
                                          dict(attrs, shape=[1, 2, h, w]), op, {"x": x},
                                          dict(attrs), y, opset=12 if op == "MaxPool" else 13))
    return cases


def mlas_order_cases():
    """Geometries at the edges of ONNX Runtime's choice among MLAS's three
    orders (whole image; column sums for stride_w <= 2, kernels <= 32 and
    pad_left + W + pad_right <= 2045; else row major), where only the
    summation order tells them apart."""
    rng = np.random.default_rng(SEED + 3)
    cases = []
    geoms = [
        ((2, 36), [1, 33], [1, 1], [0, 0, 0, 0]),      # kernel_w 33: row major
        ((36, 5), [33, 3], [1, 1], [0, 1, 0, 1]),      # kernel_h 33: row major
        ((34, 34), [32, 32], [1, 2], [0, 0, 0, 0]),    # kernels 32: column sums
        ((3, 2039), [3, 5], [1, 1], [1, 3, 1, 3]),     # 3 + 2039 + 3 = 2045: column sums
        ((3, 2040), [3, 5], [1, 1], [1, 3, 1, 3]),     # 2046: row major
        ((3, 6), [3, 3], [1, 1], [1, 3, 1, 0]),        # pad = kernel: ORT rejects it
        ((3, 2050), [2, 2], [1, 2], [0, 0, 0, 0]),     # too wide: row major
        ((5, 7), [5, 7], [1, 1], [0, 0, 0, 0]),        # the whole image: four lanes
        ((5, 7), [5, 7], [2, 1], [0, 0, 0, 0]),        # the same with stride 2: column sums
        ((5, 7), [5, 7], [1, 3], [0, 0, 0, 0]),        # stride_w 3: row major
        ((5, 7), [5, 7], [1, 1], [0, 0, 0, 1]),        # padded: column sums
        ((4, 9), [3, 4], [2, 3], [1, 1, 1, 1]),        # stride_w 3: row major
    ]
    for (h, w), k, st, pads in geoms:
        for op in ("AveragePool", "MaxPool"):
            for cip in ((0, 1) if op == "AveragePool" else (0,)):
                x = values(rng, [1, 2, h, w])
                if rng.random() < 0.5:  # large terms make the order visible in the sum
                    with np.errstate(over="ignore", invalid="ignore"):
                        x *= np.float32(2.0) ** rng.integers(-20, 20, size=x.shape).astype(np.float32)
                attrs = {"kernel_shape": k, "strides": st, "pads": pads}
                if op == "AveragePool":
                    attrs["count_include_pad"] = cip
                    y = npukit_or_error(npukit.average_pool, x, profile="onnxruntime", opset=13,
                                        **attrs)
                else:
                    y = npukit_or_error(npukit.max_pool, x, profile="onnxruntime", **attrs)
                cases.append(Case(op + " (MLAS order edges)", dict(attrs, shape=[1, 2, h, w]), op,
                                  {"x": x}, dict(attrs), y, opset=12 if op == "MaxPool" else 13))
    return cases


def runner_agrees(cases, every=7):
    """npukit's ONNX runner (npukit.OnnxModel, which takes the opset from the
    model) must give the bits of the direct call, so it matches ORT too. Runs
    every `every`-th case; returns the number of disagreements."""
    import os
    import tempfile
    bad = 0
    with tempfile.TemporaryDirectory(prefix="npukit_runner_") as tmp:
        for i, c in enumerate(cases[::every]):
            path = os.path.join(tmp, f"{i}.onnx")
            with open(path, "wb") as f:
                f.write(c.model().SerializeToString())
            try:
                got = npukit.OnnxModel(path).run(c.inputs)["y"]
            except npukit.Error:
                got = None
            if c.expect is None or got is None:
                same = c.expect is None and got is None
            else:
                same = got.shape == c.expect.shape and bool(
                    (got.view(np.uint32) == c.expect.view(np.uint32)).all())
            if not same:
                bad += 1
                if bad <= 5:
                    print(f"FAIL ONNX runner differs from the direct call\n  {c.repro(i * every)}")
    print(f"ONNX runner: {len(cases[::every]) - bad} of {len(cases[::every])} models give the "
          "direct call's bits")
    return bad


GENERATORS = [
    ("AveragePool", gen_avg_pool, 900),
    ("MaxPool", gen_max_pool, 700),
    ("GlobalAveragePool", gen_global("GlobalAveragePool", npukit.global_average_pool), 200),
    ("GlobalMaxPool", gen_global("GlobalMaxPool", npukit.global_max_pool), 200),
    ("AveragePool (large)", gen_large("AveragePool"), 200),
    ("MaxPool (large)", gen_large("MaxPool"), 150),
]


def main():
    t0 = time.time()
    if ort_missing():
        print(ort_missing())
        print("0 passed, 1 failed")
        return 1
    print(f"seed {SEED}")
    rng = np.random.default_rng(SEED)
    cases = [gen(rng, i) for _, gen, n in GENERATORS for i in range(count(n))]
    cases += sweep_cases()
    cases += mlas_order_cases()
    cases += race_cases()
    runner_bad = runner_agrees(cases)
    passed, failed, stats, ort_seconds = run_cases(cases)
    failed += runner_bad
    total = sum(s["configs"] for s in stats.values())
    ran = sum(s["configs"] - s["both_reject"] for s in stats.values())
    print(f"\n{total} configurations ({ran} run by both), ONNX Runtime {ort_seconds:.1f} s, "
          f"all {time.time() - t0:.1f} s")
    # Guard: most configurations must run, or the test proves little.
    if ran < 0.8 * total:
        failed += 1
        print(f"FAIL only {ran} of {total} configurations ran")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

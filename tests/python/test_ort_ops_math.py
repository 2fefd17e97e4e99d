"""Differential test of npukit's ONNX float math operators (activations,
unary math, Sub/Div/Pow/Min/Max with broadcasting, reductions,
LayerNormalization, Gelu, Dropout; Add, Mul, Clip, Softmax, BatchNormalization, ReduceL2)
against ONNX Runtime 1.30: seeded random
single-node models with random shapes, broadcasting, attributes and special
values (NaN, +-inf, -0, denormals), run through npukit's ONNX runner and ORT.
Operators npukit models exactly must agree bit for bit; those with a stated
tolerance (docs/semantics.md) are checked within it and their mismatch counts
printed. NPUKIT_SEED changes the seed, NPUKIT_ORT_CASES scales the counts; a
failure prints a one-line repro.
"""
import os
import sys
import tempfile

import numpy as np
from onnx import helper

import npukit
from ort_diff import SEED, Case, count, ort_missing, run_cases

SPECIALS = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-45, -1e-45, 1e-39, 3.4e38, -3.4e38],
                    np.float32)

# Operators whose ORT CPU kernels npukit does not reproduce bit for bit (their
# summation order or their libm differ; see docs/semantics.md), with the
# allowed distance: at most `ulp` units in the last place, or an absolute
# error of at most `atol` (outputs near 0 after cancellation). Every other
# operator must give ORT's bits.
# Softmax and LogSoftmax: 0 ulp, every bit of ORT's MLAS kernels, except the
# sign or payload of a NaN (a NaN in a row: not modelled; still a NaN).
ULP_TOLERANCE = {"Exp": 1, "Log": 2, "Pow": 1,
                 "Softmax": 0,
                 "LogSoftmax": 0, "Einsum": 64}
ABS_TOLERANCE = {"Einsum": 2e-5}  # ReduceSum/Mean/L2: ORT's bits
# Without AVX512F, ORT sums exponentials with its FMA3 kernel, which npukit
# models from ORT's source but has not yet checked against ORT itself: until
# it has been, those hosts keep the former tolerance.
if not npukit.host_cpu_features()["avx512_core"]:
    ULP_TOLERANCE.update({"Softmax": 16, "LogSoftmax": 16})
    ABS_TOLERANCE.update({"Softmax": 2e-6, "LogSoftmax": 2e-6})


def values(rng, shape, lo=-6.0, hi=6.0, specials=True):
    x = rng.uniform(lo, hi, size=shape).astype(np.float32)
    if specials and rng.random() < 0.3:
        mask = rng.random(shape) < 0.15
        x[mask] = rng.choice(SPECIALS, size=int(mask.sum()))
    return x


def rand_shape(rng, rank=None):
    rank = int(rng.integers(0, 5)) if rank is None else rank
    return [int(rng.integers(1, 7)) for _ in range(rank)]


def broadcastable(rng, shape):
    """A shape that broadcasts with `shape` (some axes 1, some leading axes dropped)."""
    s = [d if rng.random() < 0.6 else 1 for d in shape]
    drop = int(rng.integers(0, len(s) + 1)) if rng.random() < 0.4 else 0
    return s[drop:]


def npukit_run(case):
    """npukit's output of the case's single-node model (None when npukit rejects it)."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "m.onnx")
        m = case.model()
        import onnx
        onnx.save(m, path)
        try:
            return npukit.run_model(path, case.inputs)["y"]
        except npukit.Error:
            return None


def make(op, config, inputs, attrs=None, opset=13, domain="", consts=None, order=None):
    a = dict(attrs or {})
    if order:
        a["_order"] = order
    c = Case(op if not domain else domain + "." + op, config, op, inputs, a, None, domain=domain,
             opset=opset, consts=consts)
    c.expect = npukit_run(Case(op, config, op, inputs, dict(a), None, domain=domain, opset=opset,
                               consts=consts))
    c.out_dtype = np.dtype(np.float32)
    return c


UNARY = {
    "Sigmoid": {}, "Tanh": {}, "Erf": {}, "Sqrt": {}, "Exp": {}, "Log": {}, "Neg": {}, "Abs": {},
    "Reciprocal": {}, "HardSwish": {"opset": 14},
}


def gen_unary(op, opset=13, attrs=None):
    def gen(rng, i):
        shape = rand_shape(rng)
        lo, hi = (-30, 30) if op in ("Sigmoid", "Tanh", "Exp") else (-6, 6)
        x = values(rng, shape, lo, hi)
        a = attrs(rng) if attrs else {}
        return make(op, dict(a, shape=shape), {"x": x}, a, opset=opset)
    return gen


def gen_gelu(domain):
    def gen(rng, i):
        shape = rand_shape(rng)
        x = values(rng, shape)
        if domain:
            return make("Gelu", {"shape": shape}, {"x": x}, {}, opset=13, domain=domain)
        a = {"approximate": ["none", "tanh"][int(rng.integers(0, 2))]}
        return make("Gelu", dict(a, shape=shape), {"x": x}, a, opset=20)
    return gen


def gen_binary(op):
    def gen(rng, i):
        sa = rand_shape(rng)
        sb = broadcastable(rng, sa)
        if rng.random() < 0.5:
            sa, sb = sb, sa
        a = values(rng, sa, -4, 4)
        b = values(rng, sb, -4, 4)
        if op == "Pow" and rng.random() < 0.4:
            b = np.array(rng.choice([2.0, 3.0, 0.5, -1.0]), np.float32).reshape([1] * len(sb))
        return make(op, {"a": sa, "b": sb}, {"a": a, "b": b})
    return gen


def gen_variadic(op):
    def gen(rng, i):
        n = int(rng.integers(1, 4))
        base = rand_shape(rng)
        ins = {}
        for k in range(n):
            ins[f"x{k}"] = values(rng, broadcastable(rng, base) if k else base, -4, 4)
        return make(op, {k: list(v.shape) for k, v in ins.items()}, ins)
    return gen


def gen_reduce(op):
    def gen(rng, i):
        shape = rand_shape(rng, int(rng.integers(1, 5)))
        x = values(rng, shape, -4, 4, specials=op in ("ReduceMax", "ReduceMin"))
        x[np.isnan(x)] = 0.0  # NaN in ReduceMax/Min: ORT's answer depends on its order (semantics.md)
        rank = len(shape)
        axes = sorted(set(int(v) for v in rng.integers(-rank, rank, size=int(rng.integers(0, rank + 1)))))
        # Drop duplicates that name one axis twice (e.g. -1 and rank-1).
        seen, ax = set(), []
        for v in axes:
            if v % rank not in seen:
                seen.add(v % rank)
                ax.append(v)
        keepdims = int(rng.integers(0, 2))
        new_style = rng.random() < 0.5
        opset = (13 if op == "ReduceSum" else 18) if new_style else (11 if op == "ReduceSum" else 13)
        attrs = {"keepdims": keepdims}
        consts = {}
        order = ["x"]
        if new_style:
            if ax or rng.random() < 0.5:
                consts["axes"] = np.array(ax, np.int64)
                order = ["x", "axes"]
            if not ax and rng.random() < 0.5:
                attrs["noop_with_empty_axes"] = 1
        elif ax:
            attrs["axes"] = ax
        cfg = dict(attrs, shape=shape, axes=ax, opset=opset)
        return make(op, cfg, {"x": x}, attrs, opset=opset, consts=consts, order=order)
    return gen


def gen_layer_norm(rng, i):
    shape = rand_shape(rng, int(rng.integers(1, 5)))
    rank = len(shape)
    axis = int(rng.integers(-rank, rank))
    inner = shape[axis % rank:]
    x = values(rng, shape, -4, 4, specials=rng.random() < 0.2)
    scale = values(rng, inner, -2, 2, specials=False)
    consts = {"scale": scale}
    order = ["x", "scale"]
    if rng.random() < 0.7:
        consts["bias"] = values(rng, inner, -2, 2, specials=False)
        order.append("bias")
    attrs = {"axis": axis, "epsilon": float(rng.choice([1e-5, 1e-6, 1e-3]))}
    # Bit-exact at every row length (tests/python/test_ort_layer_norm.py sweeps 1..4096).
    return make("LayerNormalization", dict(attrs, shape=shape, bias="bias" in consts),
                {"x": x}, attrs, opset=17, consts=consts, order=order)


def gen_softmax(op):
    """Softmax / LogSoftmax: MLAS's lane orders (blocks of 48 / 24 / 16 / 8 and
    tails), so rows from 1 to 300 elements, any axis, opsets 11 and 13."""
    def gen(rng, i):
        shape = rand_shape(rng, int(rng.integers(1, 6)))  # rank 5: maxvit's attention
        rank = len(shape)
        if rng.random() < 0.5:
            shape[int(rng.integers(0, rank))] = int(rng.integers(7, 300))
        x = values(rng, shape, -8, 8, specials=rng.random() < 0.3)
        if rng.random() < 0.2:
            x *= np.float32(12)  # exp of -100 and below: MLAS's clamps
        opset = 13 if rng.random() < 0.7 else 11
        axis = int(rng.integers(-rank, rank))
        return make(op, {"shape": shape, "axis": axis, "opset": opset}, {"x": x},
                    {"axis": axis}, opset=opset)
    return gen


def gen_einsum(rng, i):
    """The batched products npukit accepts (maxvit's two forms, ranks 2 to 5);
    ORT sums with MLAS's GEMM, hence the tolerance."""
    nb = int(rng.integers(0, 4))
    batch = "ABCD"[:nb]
    dims = [int(rng.integers(1, 5)) for _ in range(nb)]
    I, K, N = (int(rng.integers(1, 40)) for _ in range(3))
    if i % 2:
        eq = f"{batch}ik,{batch}jk->{batch}ij"
        bshape = dims + [N, K]
    else:
        eq = f"{batch}ik,{batch}kj->{batch}ij"
        bshape = dims + [K, N]
    a = values(rng, dims + [I, K], -2, 2, specials=False)
    b = values(rng, bshape, -2, 2, specials=False)
    if rng.random() < 0.3:
        eq = eq.replace(",", ", ").replace("->", " -> ")  # spaces are allowed
    return make("Einsum", {"equation": eq, "a": list(a.shape), "b": list(b.shape)},
                {"a": a, "b": b}, {"equation": eq}, opset=13)


def gen_clip(rng, i):
    """Clip with bounds as constant inputs (opset 13): -0/+0 bounds, min > max, absent bounds."""
    shape = rand_shape(rng)
    x = values(rng, shape, -4, 4)
    bounds = [-0.0, 0.0, -1.5, 2.0, -np.inf, np.inf, 0.5]
    consts, order = {}, ["x"]
    for name in ("min", "max"):
        if rng.random() < 0.8:
            consts[name] = np.array(rng.choice(bounds), np.float32)
            order.append(name)
        else:
            order.append("")
    while order and order[-1] == "":
        order.pop()
    cfg = {"shape": shape, **{k: float(v) for k, v in consts.items()}}
    return make("Clip", cfg, {"x": x}, {}, opset=13, consts=consts, order=order)


def gen_batch_norm(rng, i):
    """Inference BatchNormalization, rank 2 to 4, per-channel constants."""
    shape = rand_shape(rng, int(rng.integers(2, 5)))
    x = values(rng, shape, -4, 4)
    ch = [shape[1]]
    consts = {"scale": values(rng, ch, -2, 2, specials=False),
              "B": values(rng, ch, -2, 2, specials=False),
              "mean": values(rng, ch, -2, 2, specials=False),
              "var": rng.uniform(0, 3, ch).astype(np.float32)}
    attrs = {"epsilon": float(rng.choice([1e-5, 1e-3, 0.1]))}
    return make("BatchNormalization", dict(attrs, shape=shape), {"x": x}, attrs, opset=15,
                consts=consts, order=["x", "scale", "B", "mean", "var"])


def gen_dropout(rng, i):
    shape = rand_shape(rng)
    x = values(rng, shape)
    return make("Dropout", {"shape": shape}, {"x": x}, {}, opset=13)


def gen_bad(rng, i):
    """Configurations ONNX Runtime rejects: npukit must reject them too."""
    x = values(rng, [2, 3, 4], specials=False)
    k = i % 4
    if k == 0:
        return make("Gelu", {"approximate": "fast"}, {"x": x}, {"approximate": "fast"}, opset=20)
    if k == 1:  # scale holds 3 elements, x.shape[axis:] 4
        return make("LayerNormalization", {"scale": [3]}, {"x": x}, {"axis": -1}, opset=17,
                    consts={"scale": np.ones(3, np.float32)}, order=["x", "scale"])
    if k == 2:  # axis out of range
        return make("ReduceMean", {"axes": [3]}, {"x": x}, {"axes": [3]}, opset=13)
    return make("Sub", {"b": [5]}, {"x": x, "b": values(rng, [5])}, {})


GENERATORS = [
    ("Sigmoid", gen_unary("Sigmoid"), 60),
    ("Tanh", gen_unary("Tanh"), 60),
    ("Erf", gen_unary("Erf"), 60),
    ("Sqrt", gen_unary("Sqrt"), 20),
    ("Exp", gen_unary("Exp"), 20),
    ("Log", gen_unary("Log"), 20),
    ("Neg", gen_unary("Neg"), 10),
    ("Abs", gen_unary("Abs"), 10),
    ("Reciprocal", gen_unary("Reciprocal"), 10),
    ("HardSwish", gen_unary("HardSwish", 14), 40),
    ("HardSigmoid", gen_unary("HardSigmoid", 13, lambda r: {"alpha": float(r.uniform(0.05, 0.5)),
                                                           "beta": float(r.uniform(0, 1))}), 40),
    ("LeakyRelu", gen_unary("LeakyRelu", 13, lambda r: {"alpha": float(r.uniform(0, 0.5))}), 30),
    ("Gelu", gen_gelu(""), 40),
    ("com.microsoft.Gelu", gen_gelu("com.microsoft"), 30),
    ("Sub", gen_binary("Sub"), 40),
    ("Div", gen_binary("Div"), 40),
    ("Pow", gen_binary("Pow"), 40),
    ("Min", gen_variadic("Min"), 40),
    ("Max", gen_variadic("Max"), 40),
    ("ReduceSum", gen_reduce("ReduceSum"), 40),
    ("ReduceMean", gen_reduce("ReduceMean"), 40),
    ("ReduceMax", gen_reduce("ReduceMax"), 40),
    ("ReduceMin", gen_reduce("ReduceMin"), 30),
    ("LayerNormalization", gen_layer_norm, 60),
    ("LogSoftmax", gen_softmax("LogSoftmax"), 80),
    ("Softmax", gen_softmax("Softmax"), 80),
    ("Einsum", gen_einsum, 30),
    ("Dropout", gen_dropout, 5),
    ("rejected", gen_bad, 8),
    # Appended so that the cases above keep their random draws.
    ("Add", gen_binary("Add"), 40),
    ("Mul", gen_binary("Mul"), 40),
    ("Clip", gen_clip, 40),
    ("BatchNormalization", gen_batch_norm, 40),
    ("ReduceL2", gen_reduce("ReduceL2"), 40),  # swin_v2's F.normalize
]


def ulp_distance(a, b):
    """Distance in representable floats (NaN equal only to NaN)."""
    def key(v):
        i = v.view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)
    d = np.abs(key(a) - key(b))
    both_nan = np.isnan(a) & np.isnan(b)
    one_nan = np.isnan(a) ^ np.isnan(b)
    return np.where(both_nan, 0, np.where(one_nan, np.iinfo(np.int64).max, d))


def run_tolerant(cases):
    """Runs cases whose operator has a tolerance: ORT's output replaces the
    expectation when npukit is within it, so run_cases counts them as equal;
    returns {op: (elements, differing, worst ulp)}."""
    import shutil
    from harness import run_ort_batch
    from ort_diff import write_jobs
    tmp = tempfile.mkdtemp(prefix="npukit_ort_tol_")
    report = {}
    try:
        jobs = write_jobs(cases, tmp)
        results, _ = run_ort_batch(jobs, tmp)
        for i, c in enumerate(cases):
            if c.expect is None or i >= len(results) or not results[i]["ok"]:
                continue
            got = np.load(os.path.join(tmp, str(i), "out", "y.npy"))
            if got.shape != c.expect.shape:
                continue
            got = got.astype(np.float32)
            d = ulp_distance(got, c.expect)
            with np.errstate(invalid="ignore"):
                err = np.abs(got.astype(np.float64) - c.expect)
            err = np.where(d == 0, 0.0, err)
            ok = (d <= ULP_TOLERANCE[c.op]) | (err <= ABS_TOLERANCE.get(c.op, 0.0))
            n, bad, worst, worst_abs = report.get(c.op, (0, 0, 0, 0.0))
            far = d > ULP_TOLERANCE[c.op]
            report[c.op] = (n + d.size, bad + int((d > 0).sum()),
                            max(worst, int(d[~far].max()) if (~far).any() else 0),
                            max(worst_abs, float(err[far].max()) if far.any() else 0.0))
            if ok.all():
                c.expect = got
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return report


def einsum_refusals():
    """Equations outside the two batched products are npukit errors naming the
    equation and the accepted forms (ORT runs them: not an ORT differential)."""
    bad = 0
    for eq, shapes in (("ij->ji", [[2, 3]]), ("bij,bjk->bki", [[2, 3, 4], [2, 4, 5]]),
                       ("ij,jk", [[2, 3], [3, 4]]), ("bij,bjk->bik", [[2, 3, 4], [1, 4, 5]])):
        ins = {f"x{k}": np.ones(sh, np.float32) for k, sh in enumerate(shapes)}
        c = Case("Einsum", {}, "Einsum", ins, {"equation": eq}, None, opset=13)
        c.out_dtype = np.dtype(np.float32)
        with tempfile.TemporaryDirectory() as d:
            import onnx
            onnx.save(c.model(), os.path.join(d, "m.onnx"))
            try:
                npukit.run_model(os.path.join(d, "m.onnx"), ins)
                print(f"FAIL Einsum '{eq}' ran; expected an npukit error")
                bad += 1
            except npukit.Error as e:
                if "Einsum" not in str(e) or ("equation" not in str(e) and "inputs" not in str(e)):
                    print(f"FAIL Einsum '{eq}': unclear error {e}")
                    bad += 1
    print(f"Einsum refusals: {4 - bad} of 4 named")
    return bad


def main():
    missing = ort_missing()
    if missing:
        print("SKIP", missing)
        return 0
    only = set(sys.argv[1:])
    rng = np.random.default_rng(SEED)
    cases = []
    for name, gen, n in GENERATORS:
        if only and name not in only:
            continue
        for i in range(count(n)):
            cases.append(gen(rng, i))
    tolerant = [c for c in cases if c.op in ULP_TOLERANCE]
    report = run_tolerant(tolerant)
    passed, failed, stats, secs = run_cases(cases)
    print("\nwithin tolerance (docs/semantics.md): operator, elements, differing, worst ulp"
          " (allowed), worst absolute error beyond it (allowed)")
    for op, (n, bad, worst, worst_abs) in sorted(report.items()):
        print(f"  {op:<22}{n:>8}{bad:>8}{worst:>6} ({ULP_TOLERANCE[op]}){worst_abs:>11.3g} "
              f"({ABS_TOLERANCE.get(op, 0.0):g})")
    failed += einsum_refusals() if not only or "Einsum" in only else 0
    print(f"\nseed {SEED}: {passed} passed, {failed} failed ({secs:.1f} s in ONNX Runtime)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

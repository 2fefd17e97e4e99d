#!/usr/bin/python3
"""ONNX Runtime 1.30 differential of npukit's tensor / shape / index operators:
Gather, Slice, Pad, Cast, Expand, Where, ConstantOfShape, Shape, Size,
Unsqueeze, Squeeze, Split, Reshape / Transpose / Concat at ranks up to 6,
Equal/Less/Greater/LessOrEqual/GreaterOrEqual, And/Or/Xor/Not.

Every case is a single-node model (tests/python/ort_diff.py) run by npukit's
ONNX runner and by ONNX Runtime; outputs must agree bit for bit (dtype, shape
and every element), and a configuration npukit rejects must be rejected by ONNX
Runtime too. Shape-valued inputs (starts, pads, axes, shapes) are initializers,
data inputs are fed at run time, with float specials (NaN, +-inf, -0,
denormals, values past the int32 range) in float inputs. Each case prints a
repro line with the seed (NPUKIT_SEED) and its configuration on failure.
"""
import os
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import npukit
import ort_diff
from ort_diff import SEED, Case, count, ort_missing, run_cases

ort_diff.ONNX_TYPE[np.dtype(np.int64)] = TensorProto.INT64
ort_diff.ONNX_TYPE[np.dtype(np.bool_)] = TensorProto.BOOL
ONNX_OF = {"float32": 1, "uint8": 2, "int8": 3, "int32": 6, "int64": 7, "bool": 9}
DTYPES = ["float32", "uint8", "int8", "int32", "int64", "bool"]

SPECIALS = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-40, -1e-40, 2.5, -2.5, 0.5, -0.5,
                     127.9, 128.0, -128.6, 255.5, 256.0, 300.7, -1.0, -300.2, 65536.5,
                     2147483520.0, 2147483648.0, -2147483648.0, -2147483904.0, 9.3e18, -9.3e18,
                     9.2233715e18, 3.4e38], dtype=np.float32)


def rand(rng, dtype, shape, special=0.15):
    shape = tuple(int(s) for s in shape)
    if dtype == "float32":
        x = rng.uniform(-4, 4, size=shape).astype(np.float32)
        m = rng.random(shape) < special
        return np.where(m, rng.choice(SPECIALS, size=shape), x).astype(np.float32)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype == "int64":
        big = rng.integers(-2**62, 2**62, size=shape, dtype=np.int64)
        small = rng.integers(-300, 300, size=shape, dtype=np.int64)
        return np.where(rng.random(shape) < 0.2, big, small)
    info = np.iinfo(dtype)
    return rng.integers(info.min, int(info.max) + 1, size=shape).astype(dtype)


def rshape(rng, lo=1, hi=5, dmax=4, allow_zero=False):
    r = int(rng.integers(lo, hi + 1))
    return [int(rng.integers(0 if allow_zero and rng.random() < 0.1 else 1, dmax + 1))
            for _ in range(r)]


class MultiOut(Case):
    """A node with extra outputs that are not graph outputs (Split): only y is compared."""

    def __init__(self, *a, extra=0, **kw):
        super().__init__(*a, **kw)
        self.extra = extra

    def model(self):
        m = super().model()
        m.graph.node[0].output.extend([f"z{i}" for i in range(self.extra)])
        return m


def make(op, config, node_op, inputs, attrs, consts=None, opset=13, cls=Case, out=None, **kw):
    """A case with npukit's answer (None when npukit rejects the model); `out` is the
    output's dtype when it is not the first input's."""
    c = cls(op, config, node_op, inputs, dict(attrs), None, opset=opset, consts=consts, **kw)
    if out is not None:
        c.out_dtype = np.dtype(out)
    attrs_copy = dict(attrs)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "m.onnx")
        m = c.model()
        onnx.save(m, path)
        try:
            c.expect = npukit.run_model(path, dict(inputs))["y"]
        except npukit.Error:
            c.expect = None
    c.attrs = attrs_copy  # model() pops "_order"
    if c.expect is not None:
        c.out_dtype = c.expect.dtype
    return c


def gen_gather(rng):
    out = []
    for i in range(count(120)):
        xs = rshape(rng, 1, 5)
        dt = DTYPES[int(rng.integers(0, len(DTYPES)))]
        axis = int(rng.integers(-len(xs), len(xs)))
        n = xs[axis]
        ishape = rshape(rng, 0, 2, 3)
        idt = np.int64 if rng.random() < 0.7 else np.int32
        idx = rng.integers(-n, n, size=ishape).astype(idt)
        if rng.random() < 0.05:  # out of range: both must reject
            idx.flat[0] = n
        cfg = {"x": xs, "dtype": dt, "axis": axis, "indices": idx.tolist(), "const": i % 2 == 0}
        x = rand(rng, dt, xs)
        if i % 2 == 0:
            out.append(make("Gather", cfg, "Gather", {"x": x}, {"axis": axis}, {"i": idx}))
        else:
            out.append(make("Gather", cfg, "Gather", {"x": x, "i": idx}, {"axis": axis}))
    return out


def gen_slice(rng):
    out = []
    edge = [0, 1, -1, 2, -2, 5, -7, 2**63 - 1, -2**63, 2**31 - 1, 2**31, -2**31 - 5]
    for i in range(count(150)):
        xs = rshape(rng, 1, 5, 6, allow_zero=True)
        r = len(xs)
        k = int(rng.integers(1, r + 1))
        axes = [int(a) for a in rng.permutation(r)[:k]]
        axes = [a - r if rng.random() < 0.3 else a for a in axes]
        pick = lambda: int(rng.choice(edge)) if rng.random() < 0.3 else int(rng.integers(-8, 9))
        starts = [pick() for _ in axes]
        ends = [pick() for _ in axes]
        steps = [int(rng.choice([1, 1, 2, 3, -1, -2, -3, 2**62, -2**63])) for _ in axes]
        if rng.random() < 0.03:
            steps[0] = 0
        dt = "float32" if i % 3 else DTYPES[int(rng.integers(0, len(DTYPES)))]
        it = np.int64 if rng.random() < 0.8 else np.int32
        if it == np.int32:
            clip = lambda v: [int(np.clip(a, -2**31, 2**31 - 1)) for a in v]
            starts, ends, steps = clip(starts), clip(ends), clip(steps)
        consts = {"starts": np.array(starts, it), "ends": np.array(ends, it)}
        order = ["x", "starts", "ends"]
        if rng.random() < 0.8:
            consts["axes"] = np.array(axes, it)
            order.append("axes")
            if rng.random() < 0.8:
                consts["steps"] = np.array(steps, it)
                order.append("steps")
        else:
            starts, ends = starts[:r], ends[:r]
            consts["starts"], consts["ends"] = np.array(starts, it), np.array(ends, it)
        cfg = {"x": xs, "dtype": dt, "starts": starts, "ends": ends, "axes": axes, "steps": steps,
               "index_type": np.dtype(it).name, "inputs": order}
        out.append(make("Slice", cfg, "Slice", {"x": rand(rng, dt, xs)}, {"_order": order},
                        consts))
    return out


def gen_pad(rng):
    out = []
    for i in range(count(150)):
        xs = rshape(rng, 1, 5, 4)
        r = len(xs)
        mode = ["constant", "reflect", "edge", "wrap"][i % 4]
        pads = [int(rng.integers(-2, 4)) for _ in range(2 * r)]
        if mode in ("reflect", "wrap"):
            # ORT's CPU kernel copies from its own unwritten output for reflect pads
            # >= the cropped extent and wrap pads > it; npukit rejects those (the ONNX
            # spec's limit for reflect, ORT's CUDA kernel's too): not drawn here, the
            # unit tests check the rejection.
            lim = 1 if mode == "reflect" else 0
            if mode == "wrap":  # npukit refuses wrap with crops (see npukit::pad_shape)
                pads = [max(p, 0) for p in pads]
            for a in range(r):
                ext = xs[a] - max(-pads[a], 0) - max(-pads[a + r], 0)
                pads[a] = min(pads[a], max(ext - lim, 0))
                pads[a + r] = min(pads[a + r], max(ext - lim, 0))
        if rng.random() < 0.15:
            pads = [0] * (2 * r)  # densenet's all-zero pads
        dt = "float32" if i % 2 else DTYPES[int(rng.integers(0, 5))]
        opset = 19 if mode == "wrap" else int(rng.choice([11, 13, 18]))
        consts = {"pads": np.array(pads, np.int64)}
        order = ["x", "pads"]
        if mode == "constant" and rng.random() < 0.6:
            consts["value"] = rand(rng, dt, [])
            order.append("value")
        if opset >= 18 and rng.random() < 0.5:
            k = int(rng.integers(1, r + 1))
            axes = [int(a) for a in rng.permutation(r)[:k]]
            consts["pads"] = np.array([pads[a] for a in axes] + [pads[a + r] for a in axes],
                                      np.int64)
            if "value" not in consts:
                order.append("")
            consts["axes"] = np.array([a - r if rng.random() < 0.3 else a for a in axes],
                                      np.int64)
            order.append("axes")
        cfg = {"x": xs, "dtype": dt, "mode": mode, "pads": consts["pads"].tolist(),
               "opset": opset, "inputs": order}
        out.append(make("Pad", cfg, "Pad", {"x": rand(rng, dt, xs)},
                        {"mode": mode, "_order": order}, consts, opset=opset))
    return out


def gen_cast(rng):
    out = []
    for src in DTYPES:
        for dst in DTYPES:
            for i in range(count(4)):
                xs = rshape(rng, 1, 4, 5)
                x = rand(rng, src, xs, special=0.6)
                if src == "float32" and i == 0:
                    x = SPECIALS.copy()
                cfg = {"from": src, "to": dst, "x": list(x.shape)}
                out.append(make("Cast", cfg, "Cast", {"x": x}, {"to": ONNX_OF[dst]}, out=dst))
    return out


def gen_broadcast_ops(rng):
    out = []
    for i in range(count(60)):
        ys = rshape(rng, 1, 5, 4)
        sub = lambda: [d if rng.random() < 0.6 else 1 for d in ys[int(rng.integers(0, len(ys))):]]
        dt = DTYPES[int(rng.integers(0, len(DTYPES)))]
        xs = sub()
        shape = np.array([d if rng.random() < 0.7 else 1 for d in ys], np.int64)
        cfg = {"x": xs, "shape": shape.tolist(), "dtype": dt}
        out.append(make("Expand", cfg, "Expand", {"x": rand(rng, dt, xs)}, {},
                        {"shape": shape}))
        cs, as_, bs = sub(), sub(), sub()
        wdt = dt if dt in ("float32", "int32", "int64", "uint8") else "float32"  # ORT's Where types
        cfg = {"cond": cs, "a": as_, "b": bs, "dtype": wdt}
        out.append(make("Where", cfg, "Where", {"c": rand(rng, "bool", cs),
                                                "a": rand(rng, wdt, as_),
                                                "b": rand(rng, wdt, bs)}, {}, out=wdt))
        for op in ["Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"]:
            cdt = dt if dt != "bool" or op == "Equal" else "int32"
            as_, bs = sub(), sub()
            a, b = rand(rng, cdt, as_, 0.4), rand(rng, cdt, bs, 0.4)
            if cdt != "bool" and rng.random() < 0.5 and a.size and b.size:
                a.flat[0] = b.flat[0]  # equal values compare
            opset = 16 if op in ("LessOrEqual", "GreaterOrEqual") else 13
            out.append(make(op, {"a": as_, "b": bs, "dtype": cdt}, op, {"a": a, "b": b}, {},
                            opset=opset, out="bool"))
        for op in ["And", "Or", "Xor"]:
            as_, bs = sub(), sub()
            out.append(make(op, {"a": as_, "b": bs}, op, {"a": rand(rng, "bool", as_),
                                                          "b": rand(rng, "bool", bs)}, {}))
        out.append(make("Not", {"x": ys}, "Not", {"x": rand(rng, "bool", ys)}, {}))
    return out


def gen_range(rng):
    """Range with known scalars: float (fractional steps accumulate), int32, int64."""
    out = []
    for i in range(count(60)):
        dt = ["float32", "int32", "int64"][i % 3]
        if dt == "float32":
            start = np.float32(rng.uniform(-20, 20))
            delta = np.float32(rng.choice([0.1, -0.3, 0.7, 1.0, -2.5, 1e-3, 3.3]))
            limit = np.float32(start + delta * rng.uniform(-3, 300))
        else:
            start = np.dtype(dt).type(rng.integers(-50, 50))
            delta = np.dtype(dt).type(rng.choice([1, 2, -1, -3, 7, 100]))
            limit = np.dtype(dt).type(rng.integers(-300, 300))
        if rng.random() < 0.03:
            delta = np.dtype(dt).type(0)
        cfg = {"dtype": dt, "start": float(start), "limit": float(limit), "delta": float(delta)}
        consts = {"start": np.array(start), "limit": np.array(limit), "delta": np.array(delta)}
        out.append(make("Range", cfg, "Range", {"unused": np.zeros(1, np.float32)},
                        {"_order": ["start", "limit", "delta"]}, consts, opset=13, out=dt))
    return out


def gen_scatter_nd(rng):
    """ScatterND (reduction none): distinct index tuples, negative ones too."""
    out = []
    for i in range(count(60)):
        ds = rshape(rng, 1, 4, 4)
        r = len(ds)
        k = int(rng.integers(1, r + 1))
        dt = DTYPES[int(rng.integers(0, len(DTYPES)))]
        total = int(np.prod(ds[:k]))
        m = int(rng.integers(1, total + 1))
        flat = rng.permutation(total)[:m]
        tup = np.array(np.unravel_index(flat, ds[:k])).T.astype(np.int64)
        neg = rng.random(tup.shape) < 0.3
        tup = np.where(neg, tup - np.array(ds[:k], np.int64), tup)
        lead = [m] if rng.random() < 0.6 else ([1, m] if rng.random() < 0.5 else [m, 1])
        idx = tup.reshape(lead + [k])
        if rng.random() < 0.04:
            idx.flat[0] = ds[0]  # out of range: both must reject
        upd_shape = lead + ds[k:]
        cfg = {"data": ds, "indices": idx.tolist(), "dtype": dt}
        inputs = {"data": rand(rng, dt, ds), "upd": rand(rng, dt, upd_shape)}
        out.append(make("ScatterND", cfg, "ScatterND", inputs, {"_order": ["data", "idx", "upd"]},
                        {"idx": idx}, out=dt))
    return out


def gen_shapes(rng):
    out = []
    for i in range(count(40)):
        xs = rshape(rng, 1, 6, 3)
        r = len(xs)
        dt = DTYPES[int(rng.integers(0, len(DTYPES)))]
        x = rand(rng, dt, xs)
        start, end = int(rng.integers(-r - 1, r + 2)), int(rng.integers(-r - 1, r + 2))
        out.append(make("Shape", {"x": xs, "start": start, "end": end}, "Shape", {"x": x},
                        {"start": start, "end": end}, opset=15, out="int64"))
        out.append(make("Size", {"x": xs}, "Size", {"x": x}, {}, out="int64"))
        # ConstantOfShape: value of each type.
        vdt = DTYPES[int(rng.integers(0, len(DTYPES)))]
        v = rand(rng, vdt, [1])
        out.append(make("ConstantOfShape", {"shape": xs, "value": v.tolist(), "dtype": vdt},
                        "ConstantOfShape", {"unused": np.zeros(1, np.float32)},
                        {"value": numpy_helper.from_array(v), "_order": ["s"]},
                        {"s": np.array(xs, np.int64)}, out=vdt))
        # Unsqueeze (opset 13 input, 11 attribute) and Squeeze.
        k = int(rng.integers(1, 3))
        axes = sorted({int(a) for a in rng.integers(-(r + k), r + k, size=k)})
        if r + k <= 8:
            out.append(make("Unsqueeze", {"x": xs, "axes": axes}, "Unsqueeze", {"x": x}, {},
                            {"axes": np.array(axes, np.int64)}))
            out.append(make("Unsqueeze", {"x": xs, "axes": axes, "opset": 11}, "Unsqueeze",
                            {"x": x}, {"axes": axes}, opset=11))
        ones = [j for j, d in enumerate(xs) if d == 1]
        sq = [int(a) for a in rng.permutation(r)[:int(rng.integers(0, 3))]]
        if rng.random() < 0.5:
            sq = ones[:2]
        consts = {"axes": np.array(sq, np.int64)} if sq else {}
        out.append(make("Squeeze", {"x": xs, "axes": sq}, "Squeeze", {"x": x}, {}, consts))
        # Reshape / Transpose / Concat at ranks up to 6.
        perm = [int(p) for p in rng.permutation(r)]
        out.append(make("Transpose", {"x": xs, "perm": perm}, "Transpose", {"x": x},
                        {"perm": perm}))
        target = list(rng.permutation(xs)) + [1] * int(rng.integers(0, 2))
        if target and rng.random() < 0.5:
            target[int(rng.integers(0, len(target)))] = -1
        out.append(make("Reshape", {"x": xs, "shape": [int(t) for t in target]}, "Reshape",
                        {"x": x}, {}, {"shape": np.array(target, np.int64)}))
        axis = int(rng.integers(-r, r))
        ys = list(xs)
        ys[axis] = int(rng.integers(0, 3))
        out.append(make("Concat", {"x": xs, "y": ys, "axis": axis}, "Concat",
                        {"a": x, "b": rand(rng, dt, ys)}, {"axis": axis}))
        # Split: the first output is compared.
        sa = int(rng.integers(-r, r))
        d = xs[sa]
        parts = int(rng.integers(1, 4))
        cut = sorted(int(c) for c in rng.integers(0, d + 1, size=parts - 1))
        sizes = np.diff([0] + cut + [d]).astype(np.int64)
        use_input = rng.random() < 0.6
        cfg = {"x": xs, "axis": sa, "split": sizes.tolist() if use_input else None}
        out.append(make("Split", cfg, "Split", {"x": x}, {"axis": sa},
                        {"split": sizes} if use_input else {}, cls=MultiOut,
                        extra=(parts if use_input else 2) - 1))
    return out


def check_folding():
    """torch.onnx.export's shape chain (Shape -> Gather -> Unsqueeze -> Concat ->
    Reshape) is computed while planning: only the Reshape runs, for every batch
    size; an int64 graph input feeding Reshape's shape is read when a run plans."""
    problems = []
    one = numpy_helper.from_array(np.array(0, np.int64), "zero")
    minus = numpy_helper.from_array(np.array([-1], np.int64), "minus")
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
             helper.make_node("Unsqueeze", ["n", "axes"], ["n1"]),
             helper.make_node("Concat", ["n1", "minus"], ["shape"], axis=0),
             helper.make_node("Reshape", ["x", "shape"], ["y"])]
    axes = numpy_helper.from_array(np.array([0], np.int64), "axes")
    g = helper.make_graph(nodes, "fold",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 2, 3, 2, 2])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                          initializer=[one, minus, axes])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    g2 = helper.make_graph([helper.make_node("Reshape", ["x", "s"], ["y"])], "dyn",
                           [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4]),
                            helper.make_tensor_value_info("s", TensorProto.INT64, [3])],
                           [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    m2 = helper.make_model(g2, opset_imports=[helper.make_opsetid("", 13)])
    m2.ir_version = 8
    with tempfile.TemporaryDirectory() as d:
        path, path2 = os.path.join(d, "fold.onnx"), os.path.join(d, "dyn.onnx")
        onnx.save(m, path)
        onnx.save(m2, path2)
        model = npukit.OnnxModel(path)
        for n in (1, 3):
            x = np.arange(n * 24, dtype=np.float32).reshape(n, 2, 3, 2, 2)
            y = model.run({"x": x})["y"]
            if not np.array_equal(y, x.reshape(n, -1)):
                problems.append(f"fold: batch {n}: shape {y.shape}")
        ops = [t[1] for t in model.layer_times()]
        if ops != ["Reshape"]:
            problems.append(f"fold: steps {ops} (only Reshape expected)")
        dyn = npukit.OnnxModel(path2)
        x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
        for s in ([4, 3, 2], [1, -1, 6], [4, 3, 2]):
            y = dyn.run({"x": x, "s": np.array(s, np.int64)})["y"]
            if not np.array_equal(y, x.reshape(s)):
                problems.append(f"int64 input: shape {s} gave {y.shape}")
    for p in problems:
        print("FAIL", p)
    print(f"folding and int64 inputs: {'ok' if not problems else 'FAILED'}")
    return not problems


def main():
    missing = ort_missing()
    if missing:
        print("SKIP:", missing)
        return 0
    rng = np.random.default_rng(SEED)
    cases = []
    for gen in (gen_gather, gen_slice, gen_pad, gen_cast, gen_broadcast_ops, gen_range,
                gen_scatter_nd, gen_shapes):
        cases += gen(rng)
    rejected = sum(c.expect is None for c in cases)
    print(f"seed {SEED}: {len(cases)} cases ({rejected} rejected by npukit)")
    passed, failed, stats, secs = run_cases(cases)
    print(f"\n{passed} passed, {failed} failed ({secs:.1f} s in ONNX Runtime)")
    weak = [op for op, st in stats.items() if st["elements"] == 0]
    if weak:
        print("FAIL: operators with no compared element:", weak)
        return 1
    folding_ok = check_folding()
    return 1 if failed or not folding_ok else 0


if __name__ == "__main__":
    sys.exit(main())

"""Differential test of npukit's quantized operators (profile onnxruntime)
against ONNX Runtime 1.30 itself (npm onnxruntime-node, run by tools/ort/run.mjs).

Thousands of seeded random single-node models (built with Debian's python3-onnx)
run in one node process; every output element must be identical. Set
NPUKIT_SEED to change the seed and NPUKIT_ORT_CASES to scale the counts.
A failing configuration prints a one-line repro.
"""
import os
import sys
import time

import numpy as np

import npukit
from ort_diff import SEED, Case, count, npukit_or_error, ort_missing, run_cases, window_attrs

ONLY = [o for o in os.environ.get("NPUKIT_ORT_OPS", "").split(",") if o]


def scale(rng):
    # Half of the scales are powers of two (exact ties), half log-uniform.
    if rng.random() < 0.3:
        return np.float32(2.0 ** int(rng.integers(-8, 3)))
    return np.float32(np.exp(rng.uniform(np.log(1e-3), np.log(2.0))))


def code_type(rng):
    return np.dtype(np.uint8) if rng.random() < 0.5 else np.dtype(np.int8)


def codes(rng, t, shape, lo=None, hi=None):
    info = np.iinfo(t)
    lo = info.min if lo is None else lo
    hi = info.max if hi is None else hi
    return rng.integers(lo, hi + 1, size=shape).astype(t)


# Weights cover the whole int8/uint8 range: on x86 without VNNI ONNX Runtime's
# u8 x s8 kernels saturate adjacent product pairs to int16 (vpmaddubsw), which
# profile onnxruntime reproduces on such a host (npukit.onnxruntime_accumulation()).
def weight_codes(rng, x_type, w_type, shape):
    return codes(rng, w_type, shape)


# The profile forcing the other x86 kernel: its outputs are kept for u8 x s8
# cases to show that the cases really tell the two accumulations apart.
OTHER = ("onnxruntime_vnni" if npukit.onnxruntime_accumulation("onnxruntime") ==
         "mlas_u8s8_int16_pairs" else "onnxruntime_avx2")


def u8s8(x_type, w_type):
    return x_type == np.uint8 and w_type == np.int8


def zp(rng, t):
    info = np.iinfo(t)
    return t.type(rng.integers(info.min, info.max + 1))


# ---------------------------------------------------------------- generators

def gen_quantize(rng, i):
    rank = int(rng.integers(1, 5))
    shape = [int(rng.integers(1, 6)) for _ in range(rank)]
    t = code_type(rng)
    per_axis = rng.random() < 0.4
    axis = int(rng.integers(-rank, rank)) if per_axis else 1
    n = shape[axis] if per_axis else 1
    s = np.array([scale(rng) for _ in range(n)], np.float32)
    z = np.array([zp(rng, t) for _ in range(n)], t)
    if not per_axis:
        s, z = s.reshape(()), z.reshape(())
    # Codes times the scale plus an offset: exact ties (offset 0.5) and saturation.
    base = rng.integers(-400, 400, size=shape).astype(np.float32)
    frac = rng.choice(np.array([0.0, 0.5, -0.5, 0.25, 0.49999997], np.float32), size=shape)
    noise = rng.uniform(-1, 1, size=shape).astype(np.float32)
    use_noise = rng.random(size=shape) < 0.3
    bshape = [1] * rank
    if per_axis:
        bshape[axis] = n
    x = ((base + np.where(use_noise, noise, frac)) * s.reshape(bshape)).astype(np.float32)
    y = npukit.quantize_linear(x, s, z, axis=axis, profile="onnxruntime")
    attrs = {"axis": axis} if per_axis else {}
    cfg = {"shape": shape, "dtype": t.name, "axis": axis if per_axis else None}
    return Case("QuantizeLinear", cfg, "QuantizeLinear", {"x": x}, attrs, y,
                consts={"y_scale": s, "y_zero_point": z})


def gen_dequantize(rng, i):
    rank = int(rng.integers(1, 5))
    shape = [int(rng.integers(1, 6)) for _ in range(rank)]
    t = np.dtype(np.int32) if rng.random() < 0.15 else code_type(rng)
    per_axis = t != np.int32 and rng.random() < 0.4
    axis = int(rng.integers(-rank, rank)) if per_axis else 1
    n = shape[axis] if per_axis else 1
    s = np.array([scale(rng) for _ in range(n)], np.float32)
    if t == np.int32:
        x = rng.integers(-2**31, 2**31, size=shape, dtype=np.int64).astype(np.int32)
        z = np.zeros(n, np.int32)
    else:
        x = codes(rng, t, shape)
        z = np.array([zp(rng, t) for _ in range(n)], t)
    if not per_axis:
        s, z = s.reshape(()), z.reshape(())
    y = npukit.dequantize_linear(x, s, z, axis=axis)
    attrs = {"axis": axis} if per_axis else {}
    cfg = {"shape": shape, "dtype": t.name, "axis": axis if per_axis else None}
    return Case("DequantizeLinear", cfg, "DequantizeLinear", {"x": x}, attrs, y,
                consts={"x_scale": s, "x_zero_point": z})


def gen_avg_pool(rng, i):
    N, C = int(rng.integers(1, 3)), int(rng.integers(1, 5))
    H, W = int(rng.integers(1, 11)), int(rng.integers(1, 11))
    t = code_type(rng)
    cl = int(rng.integers(0, 2))
    a = window_attrs(rng, H, W)
    if rng.random() < 0.1:  # whole image, no padding: ORT's integer path
        a = {"kernel_shape": [H, W], "strides": [int(rng.integers(1, 3))] * 2}
    a["ceil_mode"] = int(rng.integers(0, 2))
    a["count_include_pad"] = int(rng.integers(0, 2))
    a["channels_last"] = cl
    x = codes(rng, t, [N, H, W, C] if cl else [N, C, H, W])
    xs, ys, xz, yz = scale(rng), scale(rng), zp(rng, t), zp(rng, t)
    y = npukit_or_error(npukit.qlinear_average_pool, x, xs, xz, ys, yz, profile="onnxruntime", **a)
    cfg = dict(a, shape=list(x.shape), dtype=t.name, x_scale=float(xs), y_scale=float(ys),
               x_zero_point=int(xz), y_zero_point=int(yz))
    return Case("QLinearAveragePool", cfg, "QLinearAveragePool", {"x": x},
                dict(a, _order=["x", "x_scale", "x_zero_point", "y_scale", "y_zero_point"]), y,
                domain="com.microsoft",
                consts={"x_scale": np.float32(xs), "x_zero_point": np.array(xz, t),
                        "y_scale": np.float32(ys), "y_zero_point": np.array(yz, t)})


def gen_global_avg_pool(rng, i):
    N, C = int(rng.integers(1, 3)), int(rng.integers(1, 9))
    H, W = int(rng.integers(1, 17)), int(rng.integers(1, 17))
    t = code_type(rng)
    cl = int(rng.integers(0, 2))
    x = codes(rng, t, [N, H, W, C] if cl else [N, C, H, W])
    xs, ys, xz, yz = scale(rng), scale(rng), zp(rng, t), zp(rng, t)
    y = npukit.qlinear_global_average_pool(x, xs, xz, ys, yz, channels_last=cl,
                                           profile="onnxruntime")
    cfg = dict(shape=list(x.shape), dtype=t.name, channels_last=cl, x_scale=float(xs),
               y_scale=float(ys), x_zero_point=int(xz), y_zero_point=int(yz))
    return Case("QLinearGlobalAveragePool", cfg, "QLinearGlobalAveragePool", {"x": x},
                {"channels_last": cl,
                 "_order": ["x", "x_scale", "x_zero_point", "y_scale", "y_zero_point"]}, y,
                domain="com.microsoft",
                consts={"x_scale": np.float32(xs), "x_zero_point": np.array(xz, t),
                        "y_scale": np.float32(ys), "y_zero_point": np.array(yz, t)})


def gen_conv(rng, i):
    g = int(rng.integers(1, 4)) if rng.random() < 0.4 else 1
    cg, ocg = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    r = rng.random()
    if r < 0.15:  # MLAS's symmetric (indirect) conv: s8 weights, C % 4 == 0, OC % 8 == 0, >= 16
        g, cg, ocg = 1, int(rng.choice([4, 8])), int(rng.choice([16, 24]))
    elif r < 0.25:  # depthwise, also MLAS's symmetric depthwise kernel (groups % 16 == 0)
        g, cg, ocg = int(rng.choice([2, 16])), 1, 1
    N, H, W = int(rng.integers(1, 3)), int(rng.integers(1, 10)), int(rng.integers(1, 10))
    t = code_type(rng)
    wt = np.dtype(np.int8) if t == np.int8 else code_type(rng)
    a = window_attrs(rng, H, W, allow_dilation=True, conv=True)
    a["group"] = g
    kh, kw = a["kernel_shape"]
    x = codes(rng, t, [N, g * cg, H, W])
    w = weight_codes(rng, t, wt, [g * ocg, cg, kh, kw])
    OC = g * ocg
    per_channel = rng.random() < 0.5
    ws = np.array([scale(rng) for _ in range(OC if per_channel else 1)], np.float32)
    # s8 weights: zero point 0 (MLAS's symmetric kernels) or, now and then, not.
    wz_value = zp(rng, wt) if wt == np.uint8 or rng.random() < 0.2 else wt.type(0)
    wz = np.full(OC if per_channel else 1, wz_value, wt)
    if not per_channel:
        ws, wz = ws.reshape(()), wz.reshape(())
    xs, ys, xz, yz = scale(rng), scale(rng), zp(rng, t), zp(rng, t)
    ys = np.float32(ys * 20)  # keep outputs off the rails more often
    consts = {"x_scale": np.float32(xs), "x_zero_point": np.array(xz, t), "w": w,
              "w_scale": ws, "w_zero_point": wz, "y_scale": np.float32(ys),
              "y_zero_point": np.array(yz, t)}
    order = ["x", "x_scale", "x_zero_point", "w", "w_scale", "w_zero_point", "y_scale",
             "y_zero_point"]
    b = None
    if rng.random() < 0.5:
        b = rng.integers(-20000, 20000, size=OC).astype(np.int32)
        consts["B"] = b
        order.append("B")
    y = npukit.qlinear_conv(x, xs, xz, w, ws, wz, ys, yz, b, profile="onnxruntime", **a)
    cfg = dict(a, x_shape=list(x.shape), w_shape=list(w.shape), dtype=t.name, w_dtype=wt.name,
               per_channel=per_channel, bias=b is not None)
    c = Case("QLinearConv", cfg, "QLinearConv", {"x": x}, dict(a, _order=order), y,
             consts=consts)
    if u8s8(t, wt):
        c.alt = npukit.qlinear_conv(x, xs, xz, w, ws, wz, ys, yz, b, profile=OTHER, **a)
    return c


def matmul_shapes(rng):
    """numpy.matmul operand shapes of ranks 1 to 4 whose batch axes broadcast."""
    M, K, N = int(rng.integers(1, 7)), int(rng.integers(1, 17)), int(rng.integers(1, 7))
    batch = [int(rng.integers(1, 4)) for _ in range(2)]

    def shape(rank, tail):
        if rank == 1:
            return [K]
        lead = batch[4 - rank:] if rank > 2 else []
        return [1 if rng.random() < 0.3 else b for b in lead] + tail

    return shape(int(rng.integers(1, 5)), [M, K]), shape(int(rng.integers(1, 5)), [K, N])


def gen_matmul(rng, i):
    sa, sb = matmul_shapes(rng)
    t = code_type(rng)
    bt = np.dtype(np.int8) if t == np.int8 else code_type(rng)  # ORT has no s8 x u8 kernel
    a, b = codes(rng, t, sa), weight_codes(rng, t, bt, sb)
    as_, bs, ys = scale(rng), scale(rng), np.float32(scale(rng) * 10)
    az, bz, yz = zp(rng, t), zp(rng, bt), zp(rng, t)
    y = npukit.qlinear_mat_mul(a, as_, az, b, bs, bz, ys, yz, profile="onnxruntime")
    cfg = dict(a_shape=sa, b_shape=sb, dtype=t.name, b_dtype=bt.name)
    order = ["a", "a_scale", "a_zero_point", "b", "b_scale", "b_zero_point", "y_scale",
             "y_zero_point"]
    alt = (npukit.qlinear_mat_mul(a, as_, az, b, bs, bz, ys, yz, profile=OTHER)
           if u8s8(t, bt) else None)
    return with_alt(alt, Case("QLinearMatMul", cfg, "QLinearMatMul", {"a": a, "b": b}, {"_order": order}, y,
                consts={"a_scale": np.float32(as_), "a_zero_point": np.array(az, t),
                        "b_scale": np.float32(bs), "b_zero_point": np.array(bz, bt),
                        "y_scale": np.float32(ys), "y_zero_point": np.array(yz, t)}))


def with_alt(alt, case):
    case.alt = alt
    return case


def gen_max_pool(rng, i):
    N, C = int(rng.integers(1, 3)), int(rng.integers(1, 5))
    H, W = int(rng.integers(1, 11)), int(rng.integers(1, 11))
    t = code_type(rng)
    a = window_attrs(rng, H, W, allow_dilation=True)
    a["ceil_mode"] = int(rng.integers(0, 2))
    x = codes(rng, t, [N, C, H, W])
    y = npukit_or_error(npukit.max_pool, x, profile="onnxruntime", **a)
    cfg = dict(a, shape=list(x.shape), dtype=t.name)
    return Case("MaxPool", cfg, "MaxPool", {"x": x}, dict(a), y, opset=12)


def gen_add(rng, i):
    shape = [int(rng.integers(1, 5)) for _ in range(int(rng.integers(1, 5)))]
    shape_b = list(shape)
    if rng.random() < 0.3:
        shape_b = [1 if rng.random() < 0.5 else d for d in shape]
    if rng.random() < 0.1:
        shape_b = [1]
    t = code_type(rng)
    a, b = codes(rng, t, shape), codes(rng, t, shape_b)
    s = [scale(rng) for _ in range(3)]
    z = [zp(rng, t) for _ in range(3)]
    y = npukit.qlinear_add(a, s[0], z[0], b, s[1], z[1], s[2], z[2], profile="onnxruntime")
    cfg = dict(a_shape=shape, b_shape=shape_b, dtype=t.name, scales=[float(v) for v in s],
               zero_points=[int(v) for v in z])
    order = ["A", "A_scale", "A_zero_point", "B", "B_scale", "B_zero_point", "C_scale",
             "C_zero_point"]
    return Case("QLinearAdd", cfg, "QLinearAdd", {"A": a, "B": b}, {"_order": order}, y,
                domain="com.microsoft",
                consts={"A_scale": np.float32(s[0]), "A_zero_point": np.array(z[0], t),
                        "B_scale": np.float32(s[1]), "B_zero_point": np.array(z[1], t),
                        "C_scale": np.float32(s[2]), "C_zero_point": np.array(z[2], t)})


def gen_conv_integer(rng, i):
    N, C, H, W = 1, int(rng.integers(1, 4)), int(rng.integers(1, 8)), int(rng.integers(1, 8))
    a = window_attrs(rng, H, W, allow_dilation=True, conv=True)
    kh, kw = a["kernel_shape"]
    OC = int(rng.integers(1, 4))
    wt = code_type(rng)  # ORT's ConvInteger sums u8 x s8 exactly (no pair saturation)
    x = codes(rng, np.dtype(np.uint8), [N, C, H, W])
    w = codes(rng, wt, [OC, C, kh, kw])
    xz, wz = zp(rng, np.dtype(np.uint8)), zp(rng, wt)
    y = npukit.conv_integer(x, w, xz, wz, **a)
    cfg = dict(a, x_shape=list(x.shape), w_shape=list(w.shape), w_dtype=wt.name)
    return Case("ConvInteger", cfg, "ConvInteger", {"x": x}, dict(a, _order=["x", "w", "x_zero_point", "w_zero_point"]), y,
                opset=10, consts={"w": w, "x_zero_point": np.array(xz, np.uint8),
                                  "w_zero_point": np.array(wz, wt)})


def gen_matmul_integer(rng, i):
    sa, sb = matmul_shapes(rng)
    t = code_type(rng)
    bt = np.dtype(np.int8) if t == np.int8 else code_type(rng)  # ORT has no s8 x u8 kernel
    a, b = codes(rng, t, sa), weight_codes(rng, t, bt, sb)
    az, bz = zp(rng, t), zp(rng, bt)
    y = npukit.mat_mul_integer(a, b, az, bz, profile="onnxruntime")
    cfg = dict(a_shape=sa, b_shape=sb, dtype=t.name, b_dtype=bt.name)
    alt = npukit.mat_mul_integer(a, b, az, bz, profile=OTHER) if u8s8(t, bt) else None
    return with_alt(alt, Case("MatMulInteger", cfg, "MatMulInteger", {"A": a, "B": b},
                {"_order": ["A", "B", "a_zero_point", "b_zero_point"]}, y, opset=10,
                consts={"a_zero_point": np.array(az, t), "b_zero_point": np.array(bz, bt)}))


def sweep_cases():
    """Every small 1-D pooling geometry where ONNX Runtime's pool_attributes.h departs
    from the ONNX formulas (SAME pads from the undilated kernel, negative when
    stride > kernel; C-truncated window count; ceil_mode's drop rule), two per
    model (one on H, one on W, same auto_pad / ceil_mode / count_include_pad):
    MaxPool u8/s8 with dilation, QLinearAveragePool without (it has none)."""
    grid = []
    for op in ("MaxPool", "QLinearAveragePool"):
        for mode in ("SAME_UPPER", "SAME_LOWER", "NOTSET"):
            for ceil in (0, 1):
                for cip in ((0,) if op == "MaxPool" else (0, 1)):
                    axes = [(n, k, s, d) for n in range(1, 8) for k in range(1, 5)
                            for s in range(1, 5) for d in ((1, 2, 3) if op == "MaxPool" else (1,))
                            if mode != "NOTSET" or (k - 1) * d + 1 > n]  # NOTSET: overhangs only
                    grid.append((op, mode, ceil, cip, axes))
    rng = np.random.default_rng(SEED + 1)
    cases = []
    for op, mode, ceil, cip, axes in grid:
        order = rng.permutation(len(axes))
        for a, b in zip(order[0::2], order[1::2]):
            (h, kh, sh, dh), (w, kw, sw, dw) = axes[a], axes[b]
            t = code_type(rng)
            attrs = {"kernel_shape": [kh, kw], "strides": [sh, sw], "ceil_mode": ceil}
            if mode == "NOTSET":
                attrs["pads"] = [0, 0, 0, 0]
            else:
                attrs["auto_pad"] = mode
            if op == "MaxPool":
                attrs["dilations"] = [dh, dw]
                x = codes(rng, t, [1, 2, h, w])
                y = npukit_or_error(npukit.max_pool, x, profile="onnxruntime", **attrs)
                cases.append(Case("MaxPool (geometry sweep)", dict(attrs, shape=list(x.shape),
                                  dtype=t.name), "MaxPool", {"x": x}, dict(attrs), y, opset=12))
                continue
            attrs["count_include_pad"] = cip
            x = codes(rng, t, [1, 2, h, w])
            xs, ys, xz, yz = scale(rng), scale(rng), zp(rng, t), zp(rng, t)
            y = npukit_or_error(npukit.qlinear_average_pool, x, xs, xz, ys, yz,
                                profile="onnxruntime", **attrs)
            cfg = dict(attrs, shape=list(x.shape), dtype=t.name, x_scale=float(xs),
                       y_scale=float(ys), x_zero_point=int(xz), y_zero_point=int(yz))
            cases.append(Case("QLinearAveragePool (geometry sweep)", cfg, "QLinearAveragePool",
                              {"x": x},
                              dict(attrs, _order=["x", "x_scale", "x_zero_point", "y_scale",
                                                  "y_zero_point"]), y, domain="com.microsoft",
                              consts={"x_scale": np.float32(xs), "x_zero_point": np.array(xz, t),
                                      "y_scale": np.float32(ys), "y_zero_point": np.array(yz, t)}))
    return cases


GENERATORS = [
    ("QuantizeLinear", gen_quantize, 500),
    ("DequantizeLinear", gen_dequantize, 400),
    ("QLinearAveragePool", gen_avg_pool, 900),
    ("QLinearGlobalAveragePool", gen_global_avg_pool, 250),
    ("QLinearConv", gen_conv, 700),
    ("QLinearMatMul", gen_matmul, 500),
    ("MaxPool", gen_max_pool, 400),
    ("QLinearAdd", gen_add, 300),
    ("ConvInteger", gen_conv_integer, 100),
    ("MatMulInteger", gen_matmul_integer, 250),
]


def main():
    t0 = time.time()
    if ort_missing():
        print(ort_missing())
        print("0 passed, 1 failed")
        return 1
    print(f"seed {SEED}; host {npukit.host_cpu_features()}; u8 x s8 accumulation under "
          f"onnxruntime: {npukit.onnxruntime_accumulation('onnxruntime')}")
    rng = np.random.default_rng(SEED)
    cases = []
    for name, gen, n in GENERATORS:
        for i in range(count(n)):
            c = gen(rng, i)  # always drawn, so a filtered run keeps the same cases
            if not ONLY or name in ONLY:
                cases.append(c)
    if not ONLY or "sweep" in ONLY:
        cases += sweep_cases()
    t1 = time.time()
    passed, failed, stats, ort_seconds = run_cases(cases)
    for op, st in stats.items():
        if st.get("u8s8"):
            print(f"{op}: {st['u8s8']} u8 x s8 configurations, {st['u8s8_other_differs']} of "
                  f"them differ from ORT under {OTHER} (the other kernel's accumulation)")
    # Guard: the u8 x s8 cases must be able to tell the accumulations apart.
    if not ONLY and sum(st.get("u8s8_other_differs", 0) for st in stats.values()) == 0:
        failed += 1
        print(f"FAIL no u8 x s8 case distinguishes onnxruntime from {OTHER}")
    total = sum(s["configs"] for s in stats.values())
    print(f"\n{total} configurations, build {t1 - t0:.1f} s, ONNX Runtime {ort_seconds:.1f} s, "
          f"all {time.time() - t0:.1f} s")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

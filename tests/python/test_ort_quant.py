"""Differential test of npukit's quantized operators (profile onnxruntime)
against ONNX Runtime 1.30 itself (npm onnxruntime-node, run by tools/ort/run.mjs).

Thousands of seeded random single-node models (built with Debian's python3-onnx)
run in one node process; every output element must be identical. Set
NPUKIT_SEED to change the seed and NPUKIT_ORT_CASES to scale the counts.
A failing configuration prints a one-line repro.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import npukit

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
RUNNER = os.path.join(ROOT, "tools", "ort", "run.mjs")
SEED = int(os.environ.get("NPUKIT_SEED", "20261125"))
SCALE = float(os.environ.get("NPUKIT_ORT_CASES", "1"))
ONLY = [o for o in os.environ.get("NPUKIT_ORT_OPS", "").split(",") if o]

ONNX_TYPE = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.uint8): TensorProto.UINT8,
             np.dtype(np.int8): TensorProto.INT8, np.dtype(np.int32): TensorProto.INT32}


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
        g = helper.make_graph([node], "g", ins, [out], initializer=inits)
        ops = [helper.make_opsetid("", self.opset)]
        if self.domain:
            ops.append(helper.make_opsetid(self.domain, 1))
        m = helper.make_model(g, opset_imports=ops)
        m.ir_version = 8
        return m

    def repro(self, i):
        return (f"repro: NPUKIT_SEED={SEED} op={self.op} case={i} "
                f"config={json.dumps(self.config, sort_keys=True)}")


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


def npukit_or_error(f, *args, **kw):
    """npukit's output, or None when npukit rejects the configuration (then ORT must too)."""
    try:
        return f(*args, **kw)
    except npukit.Error:
        return None


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
    ort_dir = os.environ.get("NPUKIT_ORT_DIR", os.path.join(ROOT, ".cache", "onnxruntime"))
    if not os.path.exists(os.path.join(ort_dir, "node_modules", "onnxruntime-node")):
        print(f"ONNX Runtime not found in {ort_dir}: run scripts/install-onnxruntime.sh")
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
    tmp = tempfile.mkdtemp(prefix="npukit_ort_")
    try:
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
        with open(os.path.join(tmp, "jobs.json"), "w") as f:
            json.dump(jobs, f)
        t1 = time.time()
        r = subprocess.run(["node", RUNNER, "--batch", os.path.join(tmp, "jobs.json")],
                           capture_output=True, text=True)
        if r.returncode not in (0, 1):  # 1 = some job failed (reported per case below)
            print(r.stderr[-3000:])
        results = [json.loads(line) for line in r.stdout.splitlines() if line.strip()]
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
        for op, st in stats.items():
            if st.get("u8s8"):
                print(f"{op}: {st['u8s8']} u8 x s8 configurations, {st['u8s8_other_differs']} of "
                      f"them differ from ORT under {OTHER} (the other kernel's accumulation)")
        # Guard: the u8 x s8 cases must be able to tell the accumulations apart.
        if not ONLY and sum(st.get("u8s8_other_differs", 0) for st in stats.values()) == 0:
            failed += 1
            print(f"FAIL no u8 x s8 case distinguishes onnxruntime from {OTHER}")
        total = sum(s["configs"] for s in stats.values())
        print(f"\n{total} configurations, build {t1 - t0:.1f} s, ONNX Runtime {t2 - t1:.1f} s, "
              f"compare {time.time() - t2:.1f} s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

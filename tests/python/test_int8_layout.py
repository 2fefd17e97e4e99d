#!/usr/bin/python3
"""The runner's int8 layout pass (src/onnx/int8_layout.hpp) changes no byte:
QOperator graphs built from resnet18's and mobilenet_v2's layer kinds (first
3-channel convolution, an 8-bit MaxPool, 1x1 expansions and projections with
partial 64-channel blocks, 3x3 depthwise with strides 1 and 2, residual
QLinearAdd, 3x3 and
1x1-stride-2 convolutions, QLinearGlobalAveragePool, u8 activations, s8 and u8
symmetric weights, one convolution with asymmetric weights that the pass must
leave NCHW, batch 1 and 2) run by `npukit run --dump-all` with the pass
(default) and without it (NPUKIT_INT8_LAYOUT=nchw): every value of the graph
must have the same bytes, at 1, 2 and 3 threads, under NPUKIT_MAX_ISA=avx2
(the pass with the AVX2 channels-last kernels) at 1 and 3 threads, and
NPUKIT_IMPL=reference (the pass off); and under profile onnxruntime_avx2
(MLAS's int16 pairs, x8-qconv-pairs-gemm-nhwc-avx2) against its own plain
plan, at 1 thread and at the AVX2 cap at 1 and 3 threads. The test also checks, from
NPUKIT_LOG_KERNELS, that the pass did run the channels-last kernels, so that
it cannot pass by comparing the plain plan with itself. Seeded; a failure
prints the graph and the setting.
"""
import os
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from layout_graphs import differing, run

SEED = 2026
# The channels-last kernels the pass must have run, per ISA level (symmetric
# 3x3 depthwise weights take the column-quad kernel at VNNI).
LAYOUT_KERNELS = {
    "avx512_vnni": ["x8-qconv-dw-nhwc-cols-avx512vnni", "x8-qconv-gemm-nhwc-avx512vnni"],
    "avx2": ["x8-qconv-dw-nhwc-avx2", "x8-qconv-gemm-nhwc-avx2"],
}
# Under profile onnxruntime_avx2 (MLAS's int16 pairs for u8 x s8, as ONNX
# Runtime on an AVX2 host without VNNI), s8 weights.
PAIRS_KERNEL = "x8-qconv-pairs-gemm-nhwc-avx2"


class Builder:
    def __init__(self, rng, w_dtype):
        self.rng, self.w_dtype = rng, w_dtype
        self.nodes, self.inits, self.count = [], [], 0

    def const(self, value, name=None):
        self.count += 1
        name = name or f"c{self.count}"
        self.inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def qparams(self, scale, zp):
        return self.const(np.float32(scale)), self.const(np.uint8(zp))

    def conv(self, x, xq, c, oc, k, stride, groups=1, asymmetric=False):
        """QLinearConv; returns (output, its (scale, zero point))."""
        self.count += 1
        K = c // groups * k * k
        u8w = self.w_dtype == "u8"
        w = self.rng.integers(-127, 128, size=(oc, c // groups, k, k))
        if u8w:
            w_arr, wzp = (w + 128).astype(np.uint8), np.full(oc, 128, np.uint8)
        else:
            w_arr, wzp = w.astype(np.int8), np.zeros(oc, np.int8)
        if asymmetric:
            wzp = (wzp.astype(np.int32) + self.rng.integers(1, 9, size=oc)).astype(w_arr.dtype)
        w_scale = (0.01 * self.rng.uniform(0.5, 2.0, size=oc)).astype(np.float32)
        y_scale = xq[0] * 0.01 * np.sqrt(K) * 25.0
        yq = (y_scale, int(self.rng.integers(100, 156)))
        bias = self.rng.integers(-3000, 3000, size=oc).astype(np.int32)
        out = f"conv{self.count}"
        inputs = [x, *self.qparams(*xq), self.const(w_arr), self.const(w_scale), self.const(wzp),
                  *self.qparams(*yq), self.const(bias)]
        self.nodes.append(helper.make_node(
            "QLinearConv", inputs, [out], name=out, kernel_shape=[k, k], strides=[stride, stride],
            pads=[k // 2] * 4, group=groups))
        return out, yq

    def add(self, a, aq, b, bq):
        self.count += 1
        out, cq = f"add{self.count}", (max(aq[0], bq[0]) * 1.5, 128)
        self.nodes.append(helper.make_node(
            "QLinearAdd", [a, *self.qparams(*aq), b, *self.qparams(*bq), *self.qparams(*cq)], [out],
            name=out, domain="com.microsoft"))
        return out, cq


def mobilenet_like(rng, w_dtype, batch, asymmetric):
    b = Builder(rng, w_dtype)
    xq = (1.0 / 255, 0)
    b.nodes.append(helper.make_node("QuantizeLinear", ["image", *b.qparams(*xq)], ["q"], name="quant"))
    t, q = b.conv("q", xq, 3, 32, 3, 2)
    t, q = b.conv(t, q, 32, 32, 3, 1, groups=32)
    t, q = b.conv(t, q, 32, 16, 1, 1)
    t, q = b.conv(t, q, 16, 96, 1, 1)
    t, q = b.conv(t, q, 96, 96, 3, 2, groups=96)
    r, rq = b.conv(t, q, 96, 24, 1, 1)
    t, q = b.conv(r, rq, 24, 144, 1, 1, asymmetric=asymmetric)
    t, q = b.conv(t, q, 144, 144, 3, 1, groups=144)
    t, q = b.conv(t, q, 144, 24, 1, 1)
    t, q = b.add(t, q, r, rq)
    t, q = b.conv(t, q, 24, 160, 1, 1)
    t, q = b.conv(t, q, 160, 160, 3, 2, groups=160)
    t, q = b.conv(t, q, 160, 40, 1, 1)
    return b, t, q, (batch, 3, 32, 32)


def resnet_like(rng, w_dtype, batch, asymmetric):
    b = Builder(rng, w_dtype)
    xq = (1.0 / 255, 0)
    b.nodes.append(helper.make_node("QuantizeLinear", ["image", *b.qparams(*xq)], ["q"], name="quant"))
    r, rq = b.conv("q", xq, 3, 64, 3, 1)
    b.nodes.append(helper.make_node("MaxPool", [r], ["pool"], name="pool", kernel_shape=[3, 3],
                                    strides=[2, 2], pads=[1, 1, 1, 1]))
    r = "pool"
    t, q = b.conv(r, rq, 64, 64, 3, 1)
    t, q = b.conv(t, q, 64, 64, 3, 1, asymmetric=asymmetric)
    r, rq = b.add(t, q, r, rq)
    t, q = b.conv(r, rq, 64, 128, 3, 2)
    t, q = b.conv(t, q, 128, 128, 3, 1)
    d, dq = b.conv(r, rq, 64, 128, 1, 2)
    t, q = b.add(t, q, d, dq)
    return b, t, q, (batch, 3, 40, 40)


def finish(b, t, q, shape):
    gq = (q[0], 128)
    b.nodes.append(helper.make_node(
        "QLinearGlobalAveragePool", [t, *b.qparams(*q), *b.qparams(*gq)], ["gap"], name="gap",
        domain="com.microsoft"))
    b.nodes.append(helper.make_node("DequantizeLinear", ["gap", *b.qparams(*gq)], ["logits"],
                                    name="dequant"))
    g = helper.make_graph(b.nodes, "int8_layout",
                          [helper.make_tensor_value_info("image", TensorProto.FLOAT, list(shape))],
                          [helper.make_tensor_value_info("logits", TensorProto.FLOAT, None)],
                          b.inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13),
                                            helper.make_opsetid("com.microsoft", 1)])
    m.ir_version = 8
    return m


def main():
    rng = np.random.default_rng(SEED)
    failures = 0
    cases = 0
    saw_channels_last = set()
    with tempfile.TemporaryDirectory() as tmp:
        for net in (mobilenet_like, resnet_like):
            for w_dtype, batch, asymmetric in (("s8", 1, False), ("u8", 2, False), ("s8", 1, True)):
                b, t, q, shape = net(rng, w_dtype, batch, asymmetric)
                model = finish(b, t, q, shape)
                what = f"seed {SEED} {net.__name__} weights {w_dtype} batch {batch} " \
                       f"asymmetric conv {asymmetric}"
                path = os.path.join(tmp, "m.onnx")
                onnx.save(model, path)
                x = rng.uniform(0, 1, size=shape).astype(np.float32)
                xp = os.path.join(tmp, "x.npy")
                np.save(xp, x)
                want, _ = run(path, xp, os.path.join(tmp, "plain"), {"NPUKIT_INT8_LAYOUT": "nchw"}, 1,
                              dump=True, input_name="image")
                distinct = len(np.unique(want[t]))
                if distinct < 8:
                    print(f"FAIL {what}: only {distinct} distinct codes in the last layer")
                    failures += 1
                for setting, env, threads in (("layout pass", {}, 1), ("layout pass", {}, 2),
                                              ("layout pass", {}, 3),
                                              ("NPUKIT_MAX_ISA=avx2", {"NPUKIT_MAX_ISA": "avx2"}, 1),
                                              ("NPUKIT_MAX_ISA=avx2", {"NPUKIT_MAX_ISA": "avx2"}, 3),
                                              ("NPUKIT_IMPL=reference",
                                               {"NPUKIT_IMPL": "reference"}, 3)):
                    cases += 1
                    got, log = run(path, xp, os.path.join(tmp, f"got{cases}"), env, threads, dump=True,
                                   input_name="image")
                    if setting in ("layout pass", "NPUKIT_MAX_ISA=avx2"):
                        for name in LAYOUT_KERNELS["avx512_vnni"] + LAYOUT_KERNELS["avx2"]:
                            if name in log:
                                saw_channels_last.add(name)
                    bad = differing(want, got)
                    if bad:
                        failures += 1
                        print(f"FAIL {what}, {setting}, {threads} threads: {len(bad)} of "
                              f"{len(want)} values differ ({', '.join(bad[:5])})")
                # The same under MLAS's int16 pairs, against its own plain plan.
                prof = "onnxruntime_avx2"
                want, _ = run(path, xp, os.path.join(tmp, "plain_pairs"),
                              {"NPUKIT_INT8_LAYOUT": "nchw"}, 1, dump=True, input_name="image",
                              profile=prof)
                for setting, env, threads in (("layout pass", {}, 1),
                                              ("NPUKIT_MAX_ISA=avx2", {"NPUKIT_MAX_ISA": "avx2"}, 1),
                                              ("NPUKIT_MAX_ISA=avx2", {"NPUKIT_MAX_ISA": "avx2"}, 3)):
                    cases += 1
                    got, log = run(path, xp, os.path.join(tmp, f"got{cases}"), env, threads, dump=True,
                                   input_name="image", profile=prof)
                    if PAIRS_KERNEL in log:
                        saw_channels_last.add(PAIRS_KERNEL)
                    bad = differing(want, got)
                    if bad:
                        failures += 1
                        print(f"FAIL {what}, {prof}, {setting}, {threads} threads: {len(bad)} of "
                              f"{len(want)} values differ ({', '.join(bad[:5])})")
    # The pass must have run the channels-last kernels where this host has them.
    cpu = open("/proc/cpuinfo").read() if os.path.exists("/proc/cpuinfo") else ""
    cap = os.environ.get("NPUKIT_MAX_ISA", "")
    if os.environ.get("NPUKIT_IMPL", "") != "reference":
        expected = []
        if "avx512_vnni" in cpu and cap in ("", "avx512_vnni"):
            expected += LAYOUT_KERNELS["avx512_vnni"]
        if " avx2" in cpu and cap in ("", "avx512_vnni", "avx512", "avx2"):
            expected += LAYOUT_KERNELS["avx2"] + [PAIRS_KERNEL]
        for name in expected:
            if name not in saw_channels_last:
                failures += 1
                print(f"FAIL: the layout pass never ran {name}")
    print(f"{cases} runs compared, {failures} failures")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

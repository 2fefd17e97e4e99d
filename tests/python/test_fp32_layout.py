#!/usr/bin/python3
"""The runner's fp32 layout pass (src/onnx/fp32_layout.hpp) changes no bit:
resnet-like fp32 graphs (a 7x7 stride-2 stem from 3 channels, MaxPool, 3x3
blocks with identity residuals and with a 1x1 stride-2 downsample, Relu after
each conv and after each Add, GlobalAveragePool, Flatten, Gemm; 32, 48 and 64
channels, so partial 64-channel blocks too; batch 1 and 2) run by `npukit
run` with the pass (default: activations channels-last between the convs)
and without it (NPUKIT_FP32_LAYOUT=nchw): the logits must have the same
bytes at 1, 2 and 3 threads, under NPUKIT_MAX_ISA=avx2 (the pass off) and
NPUKIT_IMPL=reference, and ONNX Runtime 1.30's bytes (the onnxruntime
profile reproduces its FMA chains). With --dump-all (every value kept, Conv
and Relu unfused) every value must be the same with and without the pass:
values() and the dump stay NCHW. The test also checks from
NPUKIT_LOG_KERNELS that the pass did give a convolution channels-last
operands, so that it cannot pass by comparing the plain plan with itself.
Seeded (NPUKIT_SEED); a failure prints the graph and the setting.
"""
import os
import sys
import tempfile

import numpy as np
import onnx
from onnx import helper, numpy_helper

from harness import ort_missing, run_ort_model
from layout_graphs import F, classifier_model, differing, run

SEED = int(os.environ.get("NPUKIT_SEED", "20261214"))
# The 1x1 kernel's refusal, printed only for a convolution with channels-last operands.
CHANNELS_LAST_MARK = "channels-last operands (f32-conv-ocl takes them)"


class Builder:
    def __init__(self, rng):
        self.rng, self.nodes, self.inits, self.count = rng, [], [], 0

    def conv(self, x, cin, cout, k, stride, relu=True):
        self.count += 1
        name = f"conv{self.count}"
        w = (self.rng.standard_normal((cout, cin, k, k)) / np.sqrt(cin * k * k)).astype(F)
        b = self.rng.uniform(-0.2, 0.2, cout).astype(F)
        self.inits += [numpy_helper.from_array(w, name + "_w"),
                       numpy_helper.from_array(b, name + "_b")]
        self.nodes.append(helper.make_node("Conv", [x, name + "_w", name + "_b"], [name], name=name,
                                           pads=[k // 2] * 4, strides=[stride, stride]))
        return self.relu(name) if relu else name

    def relu(self, x):
        self.nodes.append(helper.make_node("Relu", [x], [x + "_r"], name=x + "_relu"))
        return x + "_r"

    def add_relu(self, a, b):
        self.count += 1
        name = f"add{self.count}"
        self.nodes.append(helper.make_node("Add", [a, b], [name], name=name))
        return self.relu(name)


def resnet_like(rng, c, batch, hw):
    b = Builder(rng)
    s = b.conv("x", 3, c, 7, 2)
    b.nodes.append(helper.make_node("MaxPool", [s], ["pool"], name="pool", kernel_shape=[3, 3],
                                    strides=[2, 2], pads=[1, 1, 1, 1]))
    r = "pool"
    t = b.conv(r, c, c, 3, 1)
    t = b.conv(t, c, c, 3, 1, relu=False)
    r = b.add_relu(t, r)
    t = b.conv(r, c, 2 * c, 3, 2)
    t = b.conv(t, 2 * c, 2 * c, 3, 1, relu=False)
    d = b.conv(r, c, 2 * c, 1, 2, relu=False)
    r = b.add_relu(t, d)
    return classifier_model(rng, b.nodes, b.inits, r, 2 * c, "fp32_layout", batch, hw)


def main():
    rng = np.random.default_rng(SEED)
    failures = cases = 0
    saw_channels_last = False
    ort = ort_missing() is None
    if not ort:
        print("note:", ort_missing(), "(ONNX Runtime comparison skipped, not counted)")
    with tempfile.TemporaryDirectory() as tmp:
        for c, batch, hw in ((32, 1, 40), (48, 2, 36), (64, 1, 56)):
            what = f"seed {SEED} channels {c} batch {batch} input {hw}x{hw}"
            path = os.path.join(tmp, "m.onnx")
            onnx.save(resnet_like(rng, c, batch, hw), path)
            xp = os.path.join(tmp, "x.npy")
            np.save(xp, rng.uniform(-1, 1, size=(batch, 3, hw, hw)).astype(F))
            want, _ = run(path, xp, os.path.join(tmp, "plain"), {"NPUKIT_FP32_LAYOUT": "nchw"}, 1)
            if len(np.unique(want["logits"])) < 5:
                print(f"FAIL {what}: degenerate logits {want['logits']}")
                failures += 1
            for setting, env, threads in (("layout pass", {}, 1), ("layout pass", {}, 2),
                                          ("layout pass", {}, 3),
                                          ("NPUKIT_MAX_ISA=avx2", {"NPUKIT_MAX_ISA": "avx2"}, 2),
                                          ("NPUKIT_IMPL=reference", {"NPUKIT_IMPL": "reference"}, 2)):
                cases += 1
                got, log = run(path, xp, os.path.join(tmp, f"got{cases}"), env, threads)
                if setting == "layout pass" and CHANNELS_LAST_MARK in log:
                    saw_channels_last = True
                if setting == "NPUKIT_MAX_ISA=avx2":
                    # An AVX2 host's own ORT order (mlas_nchwc8): compare the
                    # pass against no pass at the same cap.
                    want_cap, _ = run(path, xp, os.path.join(tmp, f"cap{cases}"),
                                      {**env, "NPUKIT_FP32_LAYOUT": "nchw"}, 1)
                    bad = differing(want_cap, got)
                else:
                    bad = differing(want, got)
                if bad:
                    failures += 1
                    print(f"FAIL {what}, {setting}, {threads} threads: logits differ")
            if ort:
                theirs = run_ort_model(path, {"x": xp}, os.path.join(tmp, "ort"))
                cases += 1
                bad = int((theirs["logits"].view(np.uint32) != want["logits"].view(np.uint32)).sum())
                if bad:
                    failures += 1
                    print(f"FAIL {what}: {bad} of {want['logits'].size} logits differ from ORT")
            # Every value kept (Conv and Relu unfused): the same with and without the pass.
            cases += 1
            plain, _ = run(path, xp, os.path.join(tmp, "dump_plain"), {"NPUKIT_FP32_LAYOUT": "nchw"},
                           2, dump=True)
            kept, log = run(path, xp, os.path.join(tmp, "dump_pass"), {}, 2, dump=True)
            bad = differing(plain, kept)
            if bad or len(plain) < 15:
                failures += 1
                print(f"FAIL {what}, --dump-all: {len(bad)} of {len(plain)} values differ "
                      f"({', '.join(bad[:5])})")
    capped = os.environ.get("NPUKIT_MAX_ISA", "") not in ("", "avx512", "avx512_vnni")
    reference = os.environ.get("NPUKIT_IMPL", "") == "reference"
    cpu = open("/proc/cpuinfo").read() if os.path.exists("/proc/cpuinfo") else ""
    if " avx512f" in cpu and not capped and not reference and not saw_channels_last:
        failures += 1
        print("FAIL: the layout pass never gave a convolution channels-last operands")
    print(f"{cases} comparisons, {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

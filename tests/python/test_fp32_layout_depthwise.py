#!/usr/bin/python3
"""The fp32 layout pass on depthwise layers (src/onnx/fp32_layout.hpp,
cpu::dwconv_channels_last) changes no bit: mobilenet-like fp32 graphs (a
3x3 stride-2 stem, inverted residual blocks of 1x1 expansion + Clip, 3x3
depthwise at stride 1 and 2 + Clip, 1x1 projection, an identity residual
Add; GlobalAveragePool, Flatten, Gemm) whose depthwise outputs are 14x14 or
smaller, so the pass holds the expansions' and the depthwise layers'
outputs channels-last. Channel counts include partial groups of 16 lanes
(40, 72, 88; compared with and without the pass only: ORT runs those
depthwise layers outside its NCHWc blocks) and batch 2. The logits must have the same bytes with the pass
(default) and without it (NPUKIT_FP32_LAYOUT=nchw) at 1, 2 and 3 threads,
under NPUKIT_MAX_ISA=avx2 (the pass off) and NPUKIT_IMPL=reference, and ONNX
Runtime 1.30's bytes; with --dump-all every value must be the same with and
without the pass. From NPUKIT_LOG_KERNELS the test also checks that the pass
did give a 14x14 stride-1 depthwise layer channels-last operands (without
them f32-dwconv-nchwc-avx512 leaves it to the plane kernel), so that it
cannot pass by comparing the plain plan with itself. Seeded (NPUKIT_SEED).
"""
import os
import sys
import tempfile

import numpy as np
import onnx
from onnx import helper, numpy_helper

from harness import ort_missing, run_ort_model
from layout_graphs import F, classifier_model, differing, run

SEED = int(os.environ.get("NPUKIT_SEED", "20261313"))
# Printed for a 3x3 stride-1 depthwise layer on 14-wide NCHW rows only.
PLANE_KERNEL_MARK = "a 3x3 stride-1 window on rows of 12+ outputs"


class Builder:
    def __init__(self, rng):
        self.rng, self.nodes, self.inits, self.count = rng, [], [], 0

    def conv(self, x, cin, cout, k, stride, group=1, clip=True):
        self.count += 1
        name = f"conv{self.count}"
        w = (self.rng.standard_normal((cout, cin // group, k, k)) /
             np.sqrt(cin // group * k * k)).astype(F)
        b = self.rng.uniform(-0.2, 0.2, cout).astype(F)
        self.inits += [numpy_helper.from_array(w, name + "_w"),
                       numpy_helper.from_array(b, name + "_b")]
        self.nodes.append(helper.make_node("Conv", [x, name + "_w", name + "_b"], [name], name=name,
                                           pads=[k // 2] * 4, strides=[stride, stride],
                                           group=group))
        if not clip:
            return name
        self.inits += [numpy_helper.from_array(np.array(0, F), name + "_lo"),
                       numpy_helper.from_array(np.array(6, F), name + "_hi")]
        self.nodes.append(helper.make_node("Clip", [name, name + "_lo", name + "_hi"],
                                           [name + "_c"], name=name + "_clip"))
        return name + "_c"

    def block(self, x, cin, hidden, cout, stride):
        t = self.conv(x, cin, hidden, 1, 1)
        t = self.conv(t, hidden, hidden, 3, stride, group=hidden)
        t = self.conv(t, hidden, cout, 1, 1, clip=False)
        if stride == 1 and cin == cout:
            self.count += 1
            self.nodes.append(helper.make_node("Add", [t, x], [f"add{self.count}"]))
            t = f"add{self.count}"
        return t


def mobilenet_like(rng, batch, hw, c, hidden1, hidden2):
    b = Builder(rng)
    t = b.conv("x", 3, c, 3, 2)  # hw/2: 14x14
    t = b.block(t, c, hidden1, c, 1)  # 14x14 stride 1, residual
    t = b.block(t, c, hidden2, 32, 2)  # 14x14 -> 7x7 stride 2
    t = b.block(t, 32, 96, 32, 1)  # 7x7 stride 1, residual
    return classifier_model(rng, b.nodes, b.inits, t, 32, "fp32_layout_depthwise", batch, hw)


def main():
    rng = np.random.default_rng(SEED)
    failures = cases = 0
    saw_channels_last = saw_plane_kernel = False
    ort = ort_missing() is None
    if not ort:
        print("note:", ort_missing(), "(ONNX Runtime comparison skipped, not counted)")
    with tempfile.TemporaryDirectory() as tmp:
        # ORT runs depthwise layers as NCHWc blocks (the onnxruntime
        # profile's order) only when their channels fill blocks of 16: the
        # partial-group graph is compared with and without the pass only.
        for batch, c, hidden1, hidden2, vs_ort in ((1, 16, 64, 96, True), (2, 40, 88, 72, False),
                                                   (1, 64, 128, 128, True)):
            what = f"seed {SEED} batch {batch} channels {c}/{hidden1}/{hidden2}"
            path = os.path.join(tmp, "m.onnx")
            onnx.save(mobilenet_like(rng, batch, 28, c, hidden1, hidden2), path)
            xp = os.path.join(tmp, "x.npy")
            np.save(xp, rng.uniform(-1, 1, size=(batch, 3, 28, 28)).astype(F))
            want, log = run(path, xp, os.path.join(tmp, "plain"), {"NPUKIT_FP32_LAYOUT": "nchw"}, 1)
            saw_plane_kernel |= PLANE_KERNEL_MARK in log
            if len(np.unique(want["logits"])) < 5:
                print(f"FAIL {what}: degenerate logits {want['logits']}")
                failures += 1
            for setting, env, threads in (("layout pass", {}, 1), ("layout pass", {}, 2),
                                          ("layout pass", {}, 3),
                                          ("NPUKIT_MAX_ISA=avx2", {"NPUKIT_MAX_ISA": "avx2"}, 2),
                                          ("NPUKIT_IMPL=reference", {"NPUKIT_IMPL": "reference"}, 2)):
                cases += 1
                got, log = run(path, xp, os.path.join(tmp, f"got{cases}"), env, threads)
                if setting == "layout pass" and PLANE_KERNEL_MARK not in log:
                    saw_channels_last = True
                if setting == "NPUKIT_MAX_ISA=avx2":
                    # An AVX2 host's own ORT order (mlas_nchwc8): the pass
                    # against no pass at the same cap.
                    want_cap, _ = run(path, xp, os.path.join(tmp, f"cap{cases}"),
                                      {**env, "NPUKIT_FP32_LAYOUT": "nchw"}, 1)
                    bad = differing(want_cap, got)
                else:
                    bad = differing(want, got)
                if bad:
                    failures += 1
                    print(f"FAIL {what}, {setting}, {threads} threads: logits differ")
            if ort and vs_ort:
                theirs = run_ort_model(path, {"x": xp}, os.path.join(tmp, "ort"))
                cases += 1
                bad = int((theirs["logits"].view(np.uint32) != want["logits"].view(np.uint32)).sum())
                if bad:
                    failures += 1
                    print(f"FAIL {what}: {bad} of {want['logits'].size} logits differ from ORT")
            cases += 1
            plain, _ = run(path, xp, os.path.join(tmp, "dump_plain"), {"NPUKIT_FP32_LAYOUT": "nchw"},
                           2, dump=True)
            kept, _ = run(path, xp, os.path.join(tmp, "dump_pass"), {}, 2, dump=True)
            bad = differing(plain, kept)
            if bad or len(plain) < 20:
                failures += 1
                print(f"FAIL {what}, --dump-all: {len(bad)} of {len(plain)} values differ "
                      f"({', '.join(bad[:5])})")
    capped = os.environ.get("NPUKIT_MAX_ISA", "") not in ("", "avx512", "avx512_vnni")
    reference = os.environ.get("NPUKIT_IMPL", "") == "reference"
    cpu = open("/proc/cpuinfo").read() if os.path.exists("/proc/cpuinfo") else ""
    if " avx512f" in cpu and not capped and not reference:
        if not saw_plane_kernel:
            failures += 1
            print("FAIL: without the pass no 14x14 depthwise layer went to the plane kernel "
                  "(the check below would prove nothing)")
        if not saw_channels_last:
            failures += 1
            print("FAIL: the layout pass never gave a depthwise layer channels-last operands")
    print(f"{cases} comparisons, {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

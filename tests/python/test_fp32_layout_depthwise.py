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
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from harness import ort_missing, run_ort_model

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
NPUKIT = os.environ.get("NPUKIT_BIN", os.path.join(ROOT, "build", "bin", "npukit"))
SEED = int(os.environ.get("NPUKIT_SEED", "20261313"))
F = np.float32
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
    b.nodes.append(helper.make_node("GlobalAveragePool", [t], ["gap"], name="gap"))
    b.nodes.append(helper.make_node("Flatten", ["gap"], ["flat"], name="flatten"))
    fc_w = (rng.standard_normal((10, 32)) / np.sqrt(32)).astype(F)
    fc_b = rng.uniform(-0.1, 0.1, 10).astype(F)
    b.inits += [numpy_helper.from_array(fc_w, "fc_w"), numpy_helper.from_array(fc_b, "fc_b")]
    b.nodes.append(helper.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["logits"], name="fc",
                                    transB=1))
    g = helper.make_graph(b.nodes, "fp32_layout_depthwise",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 3, hw, hw])],
                          [helper.make_tensor_value_info("logits", TensorProto.FLOAT, None)],
                          b.inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


def run(model_path, x_path, out_dir, env_extra, threads, dump=False):
    env = dict(os.environ, NPUKIT_NUM_THREADS=str(threads), NPUKIT_LOG_KERNELS="1", **env_extra)
    cmd = [NPUKIT, "run", model_path, "-i", f"x={x_path}", "-o", out_dir]
    if dump:
        cmd += ["--dump-all", out_dir]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode:
        raise RuntimeError(f"npukit failed: {r.stderr[-2000:]}")
    if not dump:
        return {"logits": np.load(os.path.join(out_dir, "logits.npy"))}, r.stderr
    values = {}
    with open(os.path.join(out_dir, "values.tsv")) as index:
        next(index)
        for line in index:
            f, name = line.split("\t")[:2]
            values[name] = np.load(os.path.join(out_dir, f))
    return values, r.stderr


def differing(want, got):
    return [k for k in want if k not in got or want[k].shape != got[k].shape
            or want[k].tobytes() != got[k].tobytes()]


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

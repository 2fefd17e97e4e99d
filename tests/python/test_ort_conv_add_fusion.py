#!/usr/bin/python3
"""Residual Adds after a convolution against ONNX Runtime 1.30 at its default
level: its NCHWc transformer folds the Add into the convolution that makes
its first eligible input (the other input is the convolution's "Sum": its FMA
chains are added to it, then the bias) and a Relu after the Add into the
same node. npukit does the same (src/onnx/conv_add_fusion.cpp, conv2d's
residual_first), so every output must have ORT's bits.

Random residual blocks (seeded; NPUKIT_SEED changes it): a stem conv from the
graph input, then a block whose second conv's output is added to the block
input (identity), to a 1x1 stride-2 downsample conv (both Add inputs are
convs: the first is fused), or a mobilenet-style 1x1 projection without Relu;
channel counts that fill MLAS's NCHWc blocks (ORT's bits required) and 24,
which at block 16 does not: ORT then fuses through its plain-conv path,
which npukit does not model yet (reported as "gap", the differing elements
counted; the fusion choice is still checked).
Reports per graph the differing elements, and checks that the unfused order
(Conv, then Add; NPUKIT_CONV_ADD_FUSION=0) differs from ORT on most graphs
(the test can fail).
"""
import os
import shutil
import sys
import tempfile

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import npukit
from harness import run_ort_single_input
from ort_diff import SEED, ort_missing

F = np.float32


def conv(name, x, cin, cout, k, stride, rng, nodes, inits, relu=False):
    w = (rng.standard_normal((cout, cin, k, k)) / np.sqrt(cin * k * k)).astype(F)
    b = rng.uniform(-0.5, 0.5, cout).astype(F)
    inits += [numpy_helper.from_array(w, name + "_w"), numpy_helper.from_array(b, name + "_b")]
    nodes.append(helper.make_node("Conv", [x, name + "_w", name + "_b"], [name], name=name,
                                  pads=[k // 2] * 4, strides=[stride, stride]))
    if relu:
        nodes.append(helper.make_node("Relu", [name], [name + "_r"], name=name + "_relu"))
        return name + "_r"
    return name


def block_graph(kind, C, rng):
    nodes, inits = [], []
    H = 14
    s = conv("stem", "x", 3, C, 3, 1, rng, nodes, inits, relu=True)
    if kind == "identity":
        a = conv("a", s, C, C, 3, 1, rng, nodes, inits, relu=True)
        b = conv("b", a, C, C, 3, 1, rng, nodes, inits)
        nodes.append(helper.make_node("Add", [b, s], ["sum"], name="add"))
        nodes.append(helper.make_node("Relu", ["sum"], ["y"], name="relu"))
        out = [C, H, H]
    elif kind == "downsample":
        a = conv("a", s, C, 2 * C, 3, 2, rng, nodes, inits, relu=True)
        b = conv("b", a, 2 * C, 2 * C, 3, 1, rng, nodes, inits)
        d = conv("d", s, C, 2 * C, 1, 2, rng, nodes, inits)
        nodes.append(helper.make_node("Add", [b, d], ["sum"], name="add"))
        nodes.append(helper.make_node("Relu", ["sum"], ["y"], name="relu"))
        out = [2 * C, H // 2, H // 2]
    else:  # projection: 1x1 expand (Relu), 1x1 project, + block input, no Relu
        e = conv("e", s, C, 4 * C, 1, 1, rng, nodes, inits, relu=True)
        p = conv("p", e, 4 * C, C, 1, 1, rng, nodes, inits)
        nodes.append(helper.make_node("Add", [p, s], ["y"], name="add"))
        out = [C, H, H]
    g = helper.make_graph(nodes, kind, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, H, H])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1] + out)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


def main():
    missing = ort_missing()
    if missing:
        print("SKIP:", missing)
        return 0
    rng = np.random.default_rng(SEED)
    # MLAS's NCHWc block on this host: 16 with AVX-512F, else 8.
    with open("/proc/cpuinfo") as f:
        block = 16 if " avx512f" in f.read() else 8
    cases = []
    for kind in ("identity", "downsample", "projection"):
        for C in (16, 32, 48, 24):
            for _ in range(2):
                x = rng.uniform(-1, 1, (1, 3, 14, 14)).astype(F)
                cases.append((kind, C, block_graph(kind, C, rng), x))
    tmp = tempfile.mkdtemp()
    failures, unfused_differ, fused_graphs = 0, 0, 0
    try:
        results = run_ort_single_input([(m, x) for _, _, m, x in cases], tmp)
        for i, ((kind, C, m, x), r) in enumerate(zip(cases, results)):
            if not r.get("ok"):
                print(f"FAIL {kind} C={C}: ORT: {r.get('error')}")
                failures += 1
                continue
            want = np.load(os.path.join(tmp, str(i), "out", "y.npy"))
            path = os.path.join(tmp, str(i), "m.onnx")
            model = npukit.OnnxModel(path)
            got = model.run({"x": x})["y"]
            ops = [t[1] for t in model.layer_times()]
            # npukit fuses where the Add's first input's conv fills the NCHWc
            # blocks (its input channels: C, 2C or 4C).
            conv_in = {"identity": C, "downsample": 2 * C, "projection": 4 * C}[kind]
            should_fuse = conv_in % block == 0
            fused = "Add" not in ops
            fused_graphs += fused
            bad = int((got.view(np.uint32) != want.view(np.uint32)).sum())
            # Every conv NCHWc (C a multiple of the block): ORT's bits. Otherwise
            # ORT fuses through its plain-conv path, not modelled: reported only.
            modelled = C % block == 0
            ok = fused == should_fuse and (bad == 0 or not modelled)
            tag = "ok  " if ok and modelled else "gap " if ok else "FAIL"
            print(f"{tag} {kind:10} C={C:2}: {bad} of {got.size} differ from ORT; ops {ops}")
            failures += not ok
        # The rule matters: adding the residual last (Conv, then Add) differs.
        for i, (kind, C, m, x) in enumerate(cases):
            if C % block:
                continue
            want = np.load(os.path.join(tmp, str(i), "out", "y.npy"))
            os.environ["NPUKIT_CONV_ADD_FUSION"] = "0"
            try:
                got = npukit.OnnxModel(os.path.join(tmp, str(i), "m.onnx")).run({"x": x})["y"]
            finally:
                del os.environ["NPUKIT_CONV_ADD_FUSION"]
            unfused_differ += bool((got.view(np.uint32) != want.view(np.uint32)).any())
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    checked = sum(1 for c in cases if c[1] % block == 0)
    print(f"seed {SEED}: {len(cases)} graphs, {fused_graphs} fused, {failures} failures; "
          f"Conv then Add differs from ORT on {unfused_differ} of {checked}")
    if unfused_differ < checked // 2:
        print("FAIL: the unfused order should differ from ORT on most graphs")
        failures += 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

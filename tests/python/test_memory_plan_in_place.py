#!/usr/bin/python3
"""`OnnxModel.memory_use["in_place_values"]`: a fused Conv + Add (+ Relu)
writes its output over the residual input Z when nothing reads Z after it
(src/onnx/allocate.cpp, join_in_place). Residual blocks built here: the block
input dead after the Add (one join), the block input also read by a later
node (no join), the fused output a graph output (no join). In every case the
outputs equal the unshared plan's (NPUKIT_MEMORY_PLAN=unshared) bit for bit.
"""
import os
import sys
import tempfile

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

import npukit

F = np.float32
C, H = 16, 10  # 16 channels: a whole NCHWc block at AVX-512 and AVX2, so the Add is fused


def conv(name, x, rng, nodes, inits, relu=False):
    w = (rng.standard_normal((C, C, 3, 3)) / np.sqrt(C * 9)).astype(F)
    b = rng.uniform(-0.5, 0.5, C).astype(F)
    inits += [numpy_helper.from_array(w, name + "_w"), numpy_helper.from_array(b, name + "_b")]
    out = name + ("_pre" if relu else "")
    nodes.append(helper.make_node("Conv", [x, name + "_w", name + "_b"], [out], name=name,
                                  pads=[1, 1, 1, 1]))
    if relu:
        nodes.append(helper.make_node("Relu", [out], [name], name=name + "_relu"))
    return name


def block(kind, rng):
    """stem -> a -> b; b + stem -> Relu -> tail (or the graph output)."""
    nodes, inits = [], []
    s = conv("stem", "x", rng, nodes, inits, relu=True)
    a = conv("a", s, rng, nodes, inits, relu=True)
    b = conv("b", a, rng, nodes, inits)
    nodes.append(helper.make_node("Add", [b, s], ["sum"], name="add"))
    last = "y" if kind == "output" else "r"
    nodes.append(helper.make_node("Relu", ["sum"], [last], name="relu"))
    if kind != "output":
        t = conv("tail", "r", rng, nodes, inits)
        if kind == "z_read_later":  # the block input read again after the Add
            nodes.append(helper.make_node("Add", [t, s], ["y"], name="late"))
        else:
            nodes.append(helper.make_node("Relu", [t], ["y"], name="tail_relu"))
    io = lambda n: helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, C, H, H])
    g = helper.make_graph(nodes, kind, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, C, H, H])],
                          [io("y")], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


def main():
    rng = np.random.default_rng(20261127)
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for kind, joins in (("z_dead", 1), ("z_read_later", 0), ("output", 0)):
            path = os.path.join(tmp, kind + ".onnx")
            save(block(kind, rng), path)
            x = rng.uniform(-1, 1, (1, C, H, H)).astype(F)
            model = npukit.OnnxModel(path)
            got = model.run({"x": x})["y"]
            use = model.memory_use
            os.environ["NPUKIT_MEMORY_PLAN"] = "unshared"
            try:
                plain = npukit.OnnxModel(path)
                want = plain.run({"x": x})["y"]
                plain_joins = plain.memory_use["in_place_values"]
            finally:
                del os.environ["NPUKIT_MEMORY_PLAN"]
            ops = [t[1] for t in model.layer_times()]
            bad = int((got.view(np.uint32) != want.view(np.uint32)).sum())
            ok = use["in_place_values"] == joins and plain_joins == 0 and bad == 0 and "Add" not in ops[:5]
            print(f"{'ok  ' if ok else 'FAIL'} {kind:12}: in_place_values {use['in_place_values']} "
                  f"(want {joins}; unshared plan {plain_joins}), {bad} of {got.size} differ from the "
                  f"unshared plan; ops {ops}")
            failures += not ok
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

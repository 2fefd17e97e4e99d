#!/usr/bin/python3
"""ONNX Relu and Clip of every rank 0 to 8 equal numpy bit for bit (the runner
used to refuse ranks above 4 for them)."""
import os
import sys
import tempfile

import numpy as np, onnx, npukit
from onnx import helper, TensorProto


def main():
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "r.onnx")
        for op, extra in (("Relu", []), ("Clip", ["lo", "hi"])):
            for r in range(0, 9):
                shape = [2, 3, 1, 2, 3, 2, 1, 2][:r]
                inits = [] if not extra else [
                    helper.make_tensor("lo", TensorProto.FLOAT, [], [-0.5]),
                    helper.make_tensor("hi", TensorProto.FLOAT, [], [0.7])]
                g = helper.make_graph(
                    [helper.make_node(op, ["x"] + extra, ["y"])], "g",
                    [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                    [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)], inits)
                onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
                x = np.random.default_rng(r).standard_normal(shape).astype(np.float32)
                y = npukit.OnnxModel(path).run({"x": x})["y"]
                lo, hi = np.float32(-0.5), np.float32(0.7)
                want = np.maximum(x, 0) if op == "Relu" else np.minimum(np.maximum(x, lo), hi)
                if y.tobytes() != want.astype(np.float32).tobytes():
                    print(f"FAIL {op} rank {r} shape {shape} (seed {r})")
                    return 1
    print("Relu/Clip ranks 0-8: 18 models, 0 mismatches")
    return 0


if __name__ == "__main__":
    sys.exit(main())

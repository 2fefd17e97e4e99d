#!/usr/bin/python3
"""Hostile input to the `npukit` CLI (issue #11): out-of-range options,
repeated inputs, main-job options with a model, directories, /dev/zero and
oversized YAML cases end with npukit's message and a non-zero status; `info`
and `compare` report problems through their exit status too.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.environ.get("NPUKIT_BIN")
FP32 = os.path.join(HERE, "..", "..", "models", "fashion_mnist_fp32.onnx")
TMP = tempfile.mkdtemp(prefix="npukit_hostile_")
failed = 0


def npukit(*args):
    # A fixed budget: the oversized cases must be refused whatever the machine's RAM.
    env = dict(os.environ, NPUKIT_MEMORY_LIMIT="1G")
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=120, env=env)


def expect_fail(args, fragment):
    global failed
    r = npukit(*args)
    out = r.stdout + r.stderr
    if r.returncode == 0 or fragment not in out:
        failed += 1
        print(f"FAIL  {args}: status {r.returncode}, wanted '{fragment}' in:\n{out[-600:]}")
    else:
        print(f"ok    {' '.join(args)[:70]}")


if not BIN:
    print("NPUKIT_BIN not set: skipped")
    sys.exit(0)

pool = ["compare", "qlinear_average_pool", "--shape", "1,1,4,4", "--kernel", "2,2"]
expect_fail(pool + ["--ceil-mode", "2"], "--ceil-mode")
expect_fail(pool + ["--count-include-pad", "5"], "--count-include-pad")
expect_fail(pool + ["--seed", "-1"], "--seed")
expect_fail(pool + ["--profiles", "mico", "--x-zero-point", "3"], "rejected")
expect_fail(["compare", "qlinear_average_pool", "--shape", "1,1,100000,100000", "--kernel", "2,2"],
            "memory budget")

x = os.path.join(TMP, "x.npy")
np.save(x, np.zeros((1, 1, 28, 28), np.float32))
expect_fail(["run", FP32, "--input", "image=" + x, "--input", "image=" + x], "given before")
expect_fail(["run", FP32, "--input", x, "--dataset", "fashion-mnist"], "--dataset")
expect_fail(["run", FP32, "--input", "image=" + TMP], "(a directory)")
expect_fail(["run", FP32, "--input", "image=/dev/zero"], "more than")
expect_fail(["info", "/dev/zero"], "more than")
expect_fail(["info", TMP], "(a directory)")

big = os.path.join(TMP, "big.yaml")
with open(big, "w") as f:
    f.write("cases:\n  - op: add\n    elements: 100000000000\n")
expect_fail(["isa", "golden", "--config", big, "--out", os.path.join(TMP, "g")], "case 0: C")
broken = os.path.join(TMP, "broken.yaml")
with open(broken, "w") as f:
    f.write("cases: [\n")
expect_fail(["isa", "golden", "--config", broken, "--out", os.path.join(TMP, "g")], "yaml-cpp")

# info: a model with an unsupported operator exits non-zero.
import onnx
from onnx import TensorProto, helper

g = helper.make_graph([helper.make_node("Sin", ["x"], ["y"])], "g",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])])
bad_model = os.path.join(TMP, "sin.onnx")
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), bad_model)
expect_fail(["info", bad_model], "problem")
expect_fail(["info", "--json", bad_model], "\"runnable\": false")

# A chain of 40,000 Relu nodes listed in reverse order loads (the graph check
# and the topological sort are O(E log N); the quadratic sort of issue #11 took
# 53 s for 20,000 nodes, so this would overrun the 120 s guard of npukit()).
chain = 40000
nodes = [helper.make_node("Relu", [f"t{k}"], [f"t{k + 1}"]) for k in range(chain)]
g = helper.make_graph(list(reversed(nodes)), "chain",
                      [helper.make_tensor_value_info("t0", TensorProto.FLOAT, [1, 4])],
                      [helper.make_tensor_value_info(f"t{chain}", TensorProto.FLOAT, [1, 4])])
long_model = os.path.join(TMP, "reverse_chain.onnx")
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), long_model)
try:
    r = npukit("info", long_model)
    ok = r.returncode == 0 and str(chain) in r.stdout
    detail = f"status {r.returncode}: {(r.stdout + r.stderr)[-300:]}"
except subprocess.TimeoutExpired:
    ok, detail = False, "still loading after 120 s"
if ok:
    print(f"ok    info on {chain} nodes in reverse order")
else:
    failed += 1
    print(f"FAIL  info on {chain} nodes in reverse order: {detail}")

print(f"{'FAILED' if failed else 'all passed'} ({failed} failed)")
sys.exit(1 if failed else 0)

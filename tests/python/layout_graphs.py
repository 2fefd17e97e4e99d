"""Shared by the layout passes' tests (test_fp32_layout*.py, test_int8_layout.py):
running `npukit run` on a small graph with an environment, reading its logits
or every value (--dump-all), comparing values byte for byte, and the classifier
head (GlobalAveragePool, Flatten, Gemm) that ends each fp32 test graph."""
import os
import subprocess

import numpy as np
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
NPUKIT = os.environ.get("NPUKIT_BIN", os.path.join(ROOT, "build", "bin", "npukit"))
F = np.float32


def run(model_path, x_path, out_dir, env_extra, threads, dump=False, input_name="x",
        profile="onnxruntime"):
    """The logits (or with dump every value) and the kernel log of one run,
    x_path given as the model's input input_name."""
    env = dict(os.environ, NPUKIT_NUM_THREADS=str(threads), NPUKIT_LOG_KERNELS="1", **env_extra)
    cmd = [NPUKIT, "run", model_path, "-i", f"{input_name}={x_path}", "-o", out_dir, "-p", profile]
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
    """Names of the values of want that got lacks or holds with other bytes."""
    return [k for k in want if k not in got or want[k].shape != got[k].shape
            or want[k].tobytes() != got[k].tobytes()]


def classifier_model(rng, nodes, inits, last, channels, name, batch, hw):
    """The graph of nodes ending in last (channels wide), closed by a
    10-class head, as an opset-13 model on a [batch, 3, hw, hw] input x."""
    nodes.append(helper.make_node("GlobalAveragePool", [last], ["gap"], name="gap"))
    nodes.append(helper.make_node("Flatten", ["gap"], ["flat"], name="flatten"))
    fc_w = (rng.standard_normal((10, channels)) / np.sqrt(channels)).astype(F)
    fc_b = rng.uniform(-0.1, 0.1, 10).astype(F)
    inits += [numpy_helper.from_array(fc_w, "fc_w"), numpy_helper.from_array(fc_b, "fc_b")]
    nodes.append(helper.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["logits"], name="fc",
                                  transB=1))
    g = helper.make_graph(nodes, name,
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 3, hw, hw])],
                          [helper.make_tensor_value_info("logits", TensorProto.FLOAT, None)],
                          inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m

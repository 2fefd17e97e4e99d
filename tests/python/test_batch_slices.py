#!/usr/bin/python3
"""Batch-sliced execution (src/onnx/batch_slices.hpp) changes no byte: the
bundled fp32 and int8 models and random small per-item graphs (convolutions,
pools, element-wise with broadcast constants, Flatten/Reshape/Squeeze/
Unsqueeze as views, Gemm, MatMul, QGemm, Softmax, odd batch sizes) give the
unsliced run's bytes (NPUKIT_BATCH_SLICES=off) for slice sizes 1..N, at 1, 2
and 3 threads (slices on lanes, and with NPUKIT_SLICE_THREADS=nodes threads
inside each node), under NPUKIT_MAX_ISA=avx2 and NPUKIT_IMPL=reference. The
runner's NPUKIT_LOG_SLICES line must say that the graph was sliced (so the
test cannot compare the plain plan with itself), and graphs with batch-mixing
nodes (Softmax over axis 0, ReduceMean over axis 0, Transpose of the batch,
Reshape to a fixed batch, a constant spanning the batch) must stay unsliced
and still give the same bytes. Seeded; a failure prints the graph and the
setting.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
NPUKIT = os.environ.get("NPUKIT_BIN", os.path.join(ROOT, "build", "bin", "npukit"))
SEED = 20261126
FAILURES = []


def run(model, x, tmp, slices, threads=1, extra=None):
    """Runs `model` on x with NPUKIT_BATCH_SLICES=slices; returns (output bytes, log line)."""
    np.save(os.path.join(tmp, "x.npy"), x)
    out = tempfile.mkdtemp(dir=tmp)  # fresh: graphs name their outputs differently
    env = dict(os.environ, NPUKIT_BATCH_SLICES=str(slices), NPUKIT_LOG_SLICES="1")
    env.update(extra or {})
    r = subprocess.run([NPUKIT, "run", model, "--input", os.path.join(tmp, "x.npy"), "-o", out,
                        "--threads", str(threads)], env=env, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"npukit run failed: {r.stderr}")
    log = [l for l in r.stderr.splitlines() if l.startswith("batch slices:")]
    files = sorted(f for f in os.listdir(out) if f.endswith(".npy"))
    return [np.load(os.path.join(out, f)).tobytes() for f in files], (log[-1] if log else "")


def check(name, model, x, slice_sizes, sliced, settings, tmp):
    for extra in settings:
        for threads in (1, 2, 3):
            want, log = run(model, x, tmp, "off", threads, extra)
            if log:
                FAILURES.append(f"{name} {extra}: NPUKIT_BATCH_SLICES=off still logged '{log}'")
            for s in slice_sizes:
                got, log = run(model, x, tmp, s, threads, extra)
                what = f"{name} (batch {x.shape[0]}) slices={s} threads={threads} {extra}"
                if got != want:
                    FAILURES.append(f"{what}: outputs differ from the unsliced run")
                is_sliced = "slices of" in log
                if is_sliced:  # lanes: min(threads, slices, 4), 1 when threads split nodes
                    count = int(log.split(" as ")[1].split()[0])
                    lanes = 1 if extra.get("NPUKIT_SLICE_THREADS") == "nodes" else min(threads,
                                                                                       count, 4)
                    if f"on {lanes} lane(s)" not in log:
                        FAILURES.append(f"{what}: expected {lanes} lanes, log '{log}'")
                if s != "auto" and int(s) < x.shape[0] and is_sliced != sliced:
                    FAILURES.append(f"{what}: expected {'sliced' if sliced else 'unsliced'}, "
                                    f"log '{log}'")


class Graph:
    def __init__(self, rng):
        self.rng, self.nodes, self.inits, self.n = rng, [], [], 0

    def name(self, p):
        self.n += 1
        return f"{p}{self.n}"

    def const(self, a):
        n = self.name("c")
        self.inits.append(numpy_helper.from_array(np.asarray(a), n))
        return n

    def node(self, op, inputs, domain="", **attrs):
        out = self.name(op.lower())
        self.nodes.append(helper.make_node(op, inputs, [out], name=out, domain=domain, **attrs))
        return out

    def model(self, x_shape, out, symbolic_batch=True):
        batch = "N" if symbolic_batch else x_shape[0]
        g = helper.make_graph(
            self.nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                            [batch, *x_shape[1:]])],
            [helper.make_tensor_value_info(out, TensorProto.FLOAT, None)], self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13),
                                                helper.make_opsetid("com.microsoft", 1)])
        m.ir_version = 8
        return m


def per_item_graph(rng, c, h, w):
    """Conv (+Relu), MaxPool ceil mode, Add of a per-channel constant, AveragePool with pads,
    Flatten, Reshape, Unsqueeze/Squeeze, Gemm, Softmax over axis 1."""
    g = Graph(rng)
    f = lambda *s: rng.standard_normal(s).astype(np.float32)
    oc = int(rng.integers(1, 6))
    y = g.node("Conv", ["x", g.const(f(oc, c, 3, 3)), g.const(f(oc))], kernel_shape=[3, 3],
               pads=[1, 1, 1, 1], dilations=[1, 1])
    y = g.node("Relu", [y])
    y = g.node("MaxPool", [y], kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)
    y = g.node("Add", [y, g.const(f(oc, 1, 1))])
    y = g.node("AveragePool", [y], kernel_shape=[2, 2], strides=[1, 1], pads=[1, 0, 0, 1],
               count_include_pad=0)
    oh, ow = (h - 1) // 2 + 1, (w - 1) // 2 + 1  # ceil-mode MaxPool; the AveragePool keeps it
    y = g.node("Flatten", [y], axis=1)
    k = oc * oh * ow
    y = g.node("Reshape", [y, g.const(np.array([-1, k], np.int64))])
    y = g.node("Unsqueeze", [y, g.const(np.array([2], np.int64))])
    y = g.node("Squeeze", [y, g.const(np.array([2], np.int64))])
    y = g.node("Gemm", [y, g.const(f(7, k)), g.const(f(7))], transB=1)
    y = g.node("MatMul", [y, g.const(f(7, 5))])
    y = g.node("Softmax", [y], axis=1)
    return g.model((1, c, h, w), y)


def qgemm_graph(rng, c, h, w):
    """Flatten, QuantizeLinear, com.microsoft QGemm (what the QDQ rules make of
    DQ -> Gemm -> Q, as in resnet18 QDQ's classifier), DequantizeLinear."""
    g = Graph(rng)
    k, n = c * h * w, int(rng.integers(3, 12))
    f = g.node("Flatten", ["x"], axis=1)
    a_scale, a_zp = g.const(np.float32(0.02)), g.const(np.uint8(128))
    q = g.node("QuantizeLinear", [f, a_scale, a_zp])
    b = g.const(rng.integers(-128, 128, size=(k, n)).astype(np.int8))
    b_scale, b_zp = g.const(np.float32(0.01)), g.const(np.int8(0))
    bias = g.const(rng.integers(-500, 500, size=n).astype(np.int32))
    y_scale, y_zp = g.const(np.float32(0.05)), g.const(np.uint8(120))
    y = g.node("QGemm", [q, a_scale, a_zp, b, b_scale, b_zp, bias, y_scale, y_zp],
               domain="com.microsoft")
    out = g.node("DequantizeLinear", [y, y_scale, y_zp])
    return g.model([1, c, h, w], out)


def mixing_graphs(rng, n, c, h, w):
    """Graphs with one batch-mixing node each: (description, model)."""
    out = []
    f = lambda *s: rng.standard_normal(s).astype(np.float32)
    for kind in ("softmax0", "reduce0", "transpose", "fixed_reshape", "batch_const"):
        g = Graph(rng)
        y = g.node("Relu", ["x"])
        if kind == "softmax0":
            y = g.node("Softmax", [g.node("Flatten", [y], axis=1)], axis=0)
        elif kind == "reduce0":
            y = g.node("ReduceMean", [y], axes=[0], keepdims=1)
            y = g.node("Add", ["x", y])
        elif kind == "transpose":
            y = g.node("Transpose", [y], perm=[1, 0, 2, 3])
        elif kind == "fixed_reshape":
            y = g.node("Reshape", [y, g.const(np.array([n, c * h * w], np.int64))])
        else:
            y = g.node("Add", [y, g.const(f(n, c, h, w))])
        out.append((kind, g.model((n, c, h, w), y, kind != "fixed_reshape")))
    return out


def special_values(rng, x):
    flat = x.reshape(-1)
    idx = rng.choice(flat.size, size=min(flat.size, 12), replace=False)
    vals = [np.nan, np.inf, -np.inf, -0.0, 1e-40, -1e-40]
    for i, j in enumerate(idx):
        flat[j] = vals[i % len(vals)]
    return x


def main():
    rng = np.random.default_rng(SEED)
    print(f"seed {SEED}")
    settings = [{}, {"NPUKIT_MAX_ISA": "avx2"}, {"NPUKIT_IMPL": "reference"},
                {"NPUKIT_SLICE_THREADS": "nodes"}]
    with tempfile.TemporaryDirectory() as tmp:
        images = np.load(os.path.join(ROOT, "models", "fashion_mnist_eval_images.npy"))
        x = (images[:67].astype(np.float32) / 255).reshape(-1, 1, 28, 28)
        for m in ("fp32", "int8"):
            model = os.path.join(ROOT, "models", f"fashion_mnist_{m}.onnx")
            check(f"bundled {m}", model, x, ["auto", 1, 2, 5, 13, 33, 66], True, settings, tmp)
        for case in range(6):
            n = int(rng.choice([2, 3, 5, 7]))
            c, h, w = int(rng.integers(1, 4)), int(rng.integers(2, 9)), int(rng.integers(2, 9))
            model = os.path.join(tmp, f"g{case}.onnx")
            m = per_item_graph(rng, c, h, w)
            onnx.save(m, model)
            x = special_values(rng, rng.standard_normal((n, c, h, w)).astype(np.float32))
            desc = f"per-item graph {case} (x {[n, c, h, w]}:\n{onnx.helper.printable_graph(m.graph)})"
            check(desc, model, x, list(range(1, n + 1)), True, settings[:1] if case else settings,
                  tmp)
        n, c, h, w = 5, 2, 3, 3
        model = os.path.join(tmp, "qgemm.onnx")
        onnx.save(qgemm_graph(rng, c, h, w), model)
        x = rng.standard_normal((n, c, h, w)).astype(np.float32)
        check("QGemm graph", model, x, list(range(1, n + 1)), True, settings[:2], tmp)
        for kind, m in mixing_graphs(rng, n, c, h, w):
            model = os.path.join(tmp, f"mix_{kind}.onnx")
            onnx.save(m, model)
            x = rng.standard_normal((n, c, h, w)).astype(np.float32)
            check(f"batch-mixing graph {kind}", model, x, [1, 2], False, settings[:1], tmp)
    for f in FAILURES:
        print("FAIL:", f)
    print(f"{len(FAILURES)} failures")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())

"""Global pools inside graphs against ONNX Runtime 1.30 at its default level:
its NCHWc transformer rewrites a GlobalAveragePool / GlobalMaxPool to MLAS's
NCHWc kernel only when its input is a graph input or comes from a node that
was itself rewritten (Conv, pools, BatchNormalization / Relu / Sigmoid / Tanh
after one, an activation fused into a single-use Conv, Add / Sum / Mul /
Concat of rewritten inputs); otherwise ORT's plain global pool runs, and the
two sum in different orders. npukit models it (src/onnx/ort_nchwc.cpp).

Each graph starts with a 1x1 convolution whose weights copy one input
channel (exact in any summation order), so that the pool's input is the same
in both runtimes and every bit of the pooled output depends only on the
pool's order. Every output element must have ORT's bits; the test also checks
that the rule matters (the other choice differs from ORT on most graphs of
each kind; column "other"). NPUKIT_SEED changes the seed.
"""
import os
import shutil
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import npukit
from harness import run_ort_batch
from ort_diff import SEED, ort_missing

F = np.float32


def one_hot_conv(name, x, cin, cout, nodes, inits, out=None):
    w = np.zeros((cout, cin, 1, 1), F)
    w[np.arange(cout), np.arange(cout) % cin] = 1.0
    inits.append(numpy_helper.from_array(w, name + "_w"))
    nodes.append(helper.make_node("Conv", [x, name + "_w"], [out or name]))
    return out or name


def graph(kind, pool, C, rng):
    """(model, input shape, whether ORT rewrites the pool) for one recipe."""
    nodes, inits, outs = [], [], []
    cin = 16
    c = one_hot_conv("c", "x", cin, C, nodes, inits)
    src, rewritten = c, True
    if kind == "conv":
        pass
    elif kind in ("Relu", "Sigmoid", "Tanh", "Abs", "Neg"):
        nodes.append(helper.make_node(kind, [c], ["a"]))
        src, rewritten = "a", kind in ("Relu", "Sigmoid", "Tanh")
    elif kind in ("Clip", "LeakyRelu", "HardSigmoid", "Clip2"):
        op = "Clip" if kind == "Clip2" else kind
        ins = [c]
        if op == "Clip":
            inits += [numpy_helper.from_array(np.array(-1.5, F), "lo"),
                      numpy_helper.from_array(np.array(2.5, F), "hi")]
            ins = [c, "lo", "hi"]
        nodes.append(helper.make_node(op, ins, ["a"]))
        src = "a"
        if kind == "Clip2":  # the conv output is also a graph output: no fusion
            outs.append(c)
            rewritten = False
    elif kind == "bn_relu":
        # Scale 1, variance 1, epsilon 0 and bias 0: x - mean either way, whether
        # ORT folds the normalization into the convolution or not.
        for k, v in (("s", np.ones(C)), ("b", np.zeros(C)), ("m", rng.uniform(-1, 1, C)),
                     ("v", np.ones(C))):
            inits.append(numpy_helper.from_array(v.astype(F), "bn_" + k))
        nodes.append(helper.make_node("BatchNormalization",
                                      [c, "bn_s", "bn_b", "bn_m", "bn_v"], ["n"], epsilon=0.0))
        nodes.append(helper.make_node("Relu", ["n"], ["a"]))
        src = "a"
    elif kind in ("add", "mul", "concat", "add_input"):
        d = one_hot_conv("d", "x", cin, C, nodes, inits)
        if kind == "concat":
            nodes.append(helper.make_node("Concat", [c, d], ["a"], axis=1))
        elif kind == "add_input":  # one operand is not rewritten (an Abs): plain
            nodes.append(helper.make_node("Abs", [d], ["e"]))
            nodes.append(helper.make_node("Add", [c, "e"], ["a"]))
            rewritten = False
        else:
            nodes.append(helper.make_node("Add" if kind == "add" else "Mul", [c, d], ["a"]))
        src = "a"
    elif kind == "maxpool_after_abs":  # a rewritten MaxPool restores NCHWc
        nodes.append(helper.make_node("Abs", [c], ["e"]))
        nodes.append(helper.make_node("MaxPool", ["e"], ["a"], kernel_shape=[3, 3],
                                      pads=[1, 1, 1, 1]))
        src = "a"
    elif kind == "identity_abs":  # ORT removes Identity first: still behind an Abs
        nodes.append(helper.make_node("Abs", [c], ["e"]))
        nodes.append(helper.make_node("Identity", ["e"], ["a"]))
        src, rewritten = "a", False
    elif kind == "identity_relu":
        nodes.append(helper.make_node("Relu", [c], ["e"]))
        nodes.append(helper.make_node("Identity", ["e"], ["a"]))
        src = "a"
    elif kind == "graph_input":  # no producer node at all
        src = "x2"
    else:
        raise ValueError(kind)
    nodes.append(helper.make_node(pool, [src], ["y"]))
    H, W = int(rng.integers(3, 30)), int(rng.integers(3, 30))
    ins = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, cin, H, W])]
    if kind == "graph_input":
        ins.append(helper.make_tensor_value_info("x2", TensorProto.FLOAT, [2, C, H, W]))
    outputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ["y"] + outs]
    g = helper.make_graph(nodes, "g", ins, outputs, initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m, (2, cin, H, W), (2, C, H, W), rewritten


KINDS = ["conv", "Relu", "Sigmoid", "Tanh", "Abs", "Neg", "Clip", "LeakyRelu", "HardSigmoid",
         "Clip2", "bn_relu", "add", "mul", "concat", "add_input", "maxpool_after_abs",
         "identity_abs", "identity_relu", "graph_input"]


def pool_input(model, ins):
    """npukit's value of the pool's input (the graph without its pool)."""
    g = onnx.helper.make_graph(
        [n for n in model.graph.node if n.output[0] != "y"], "g", model.graph.input,
        [helper.make_tensor_value_info(next(n.input[0] for n in model.graph.node
                                            if n.output[0] == "y"), TensorProto.FLOAT, None)],
        initializer=model.graph.initializer)
    m = helper.make_model(g, opset_imports=model.opset_import)
    m.ir_version = 8
    with tempfile.TemporaryDirectory() as d:
        onnx.save(m, os.path.join(d, "p.onnx"))
        return next(iter(npukit.run_model(os.path.join(d, "p.onnx"), ins).values()))


def other_choice(a, rewritten):
    """The average pool ORT would give with the other choice: NCHWc is what a
    lone pool of a block-aligned channel count runs; one extra channel keeps
    MLAS's plain pool (channels are pooled independently)."""
    if not rewritten:
        return npukit.global_average_pool(a)
    b = np.concatenate([a, a[:, :1]], axis=1)
    return npukit.global_average_pool(b)[:, :a.shape[1]]


def main():
    missing = ort_missing()
    if missing:
        print("SKIP", missing)
        return 0
    rng = np.random.default_rng(SEED)
    tmp = tempfile.mkdtemp(prefix="npukit_nchwc_gap_")
    cases, jobs = [], []
    try:
        for kind in KINDS:
            for pool in ("GlobalAveragePool", "GlobalMaxPool"):
                for C in (32, 48):
                    for rep in range(3):
                        m, xs, x2s, rewritten = graph(kind, pool, C, rng)
                        i = len(cases)
                        d = os.path.join(tmp, str(i))
                        os.makedirs(d)
                        onnx.save(m, os.path.join(d, "m.onnx"))
                        ins = {"x": rng.uniform(-4, 4, xs).astype(F)}
                        if kind == "graph_input":
                            ins["x2"] = rng.uniform(-4, 4, x2s).astype(F)
                        paths = {}
                        for k, v in ins.items():
                            np.save(os.path.join(d, k + ".npy"), v)
                            paths[k] = f"{i}/{k}.npy"
                        jobs.append({"model": f"{i}/m.onnx", "inputs": paths,
                                     "output_dir": f"{i}/out"})
                        cases.append((kind, pool, C, xs, rewritten, ins))
        results, _ = run_ort_batch(jobs, tmp)
        failed, table = 0, {}
        for i, (kind, pool, C, xs, rewritten, ins) in enumerate(cases):
            key = (kind, pool[6:9])
            t = table.setdefault(key, [0, 0, 0, rewritten])
            t[0] += 1
            if i >= len(results) or not results[i]["ok"]:
                print(f"FAIL ORT error {results[i]['error'][:200] if i < len(results) else ''}")
                failed += 1
                continue
            want = np.load(os.path.join(tmp, str(i), "out", "y.npy"))
            model = npukit.OnnxModel(os.path.join(tmp, str(i), "m.onnx"))
            got = model.run(ins)["y"]
            bad = int((got.view(np.uint32) != want.view(np.uint32)).sum())
            t[1] += bad
            if pool == "GlobalAveragePool":
                alt = other_choice(pool_input(onnx.load(os.path.join(tmp, str(i), "m.onnx")), ins),
                                   rewritten)
                t[2] += int((alt.view(np.uint32) != want.view(np.uint32)).any())
            if bad:
                failed += 1
                print(f"FAIL {bad} of {got.size} differ: seed {SEED} case {i} {kind} {pool} "
                      f"C={C} x={list(xs)} (ORT rewrites the pool: {rewritten})")
        print(f"{'graph':<20}{'pool':>6}{'graphs':>8}{'differ':>8}{'other':>7}  ORT rewrites")
        for (kind, pool), (n, bad, other, rw) in table.items():
            print(f"{kind:<20}{pool:>6}{n:>8}{bad:>8}{other if pool == 'Ave' else '-':>7}  {rw}")
            # The other choice must be visible, or this graph kind proves nothing.
            if pool == "Ave" and other == 0:
                failed += 1
                print(f"FAIL {kind}: the other pooling order gives ORT's bits too (weak case)")
        print(f"\nseed {SEED}: {len(cases)} graphs, {failed} failed")
        return 1 if failed else 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

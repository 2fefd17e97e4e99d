#!/usr/bin/python3
"""The ONNX runner's faces: malformed models each get their error (naming every
offending node and op type), runs repeat on planned buffers, and the CLI's run
and info commands write and report what the Python API computes."""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import npukit
from harness import MODELS, Checks

FP32 = os.path.join(MODELS, "fashion_mnist_fp32.onnx")
BIN = os.environ.get("NPUKIT_BIN")
TMP = tempfile.mkdtemp(prefix="npukit_onnx_")
CHECKS = Checks()
case = CHECKS.test


def save(model, name):
    path = os.path.join(TMP, name)
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    return path


def make(nodes, inputs, outputs, inits=(), opset=13):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def expect_model_error(path, *fragments):
    try:
        npukit.OnnxModel(path)
    except npukit.ModelError as e:
        msg = str(e)
        for f in fragments:
            assert f in msg, f"{f!r} not in error: {msg}"
        return msg
    raise AssertionError("no ModelError")


def relu_model():
    return make([helper.make_node("Relu", ["x"], ["y"], name="r")],
                [vi("x", TensorProto.FLOAT, ["N", 3])], [vi("y", TensorProto.FLOAT, ["N", 3])])


@case
def truncated_file():
    data = open(FP32, "rb").read()
    path = os.path.join(TMP, "truncated.onnx")
    with open(path, "wb") as f:
        f.write(data[:len(data) // 2])
    expect_model_error(path, "truncated")


@case
def corrupt_file():
    path = os.path.join(TMP, "corrupt.onnx")
    with open(path, "wb") as f:
        f.write(bytes(np.random.default_rng(7).integers(0, 256, 4000, dtype=np.uint8)))
    expect_model_error(path, "is not an ONNX model")


@case
def wrong_input_type():
    m = make([helper.make_node("Relu", ["x"], ["y"], name="r")],
             [vi("x", TensorProto.INT32, [2])], [vi("y", TensorProto.INT32, [2])])
    expect_model_error(save(m, "int_relu.onnx"), "node 'r' (Relu)", "int32", "float")


@case
def wrong_initializer_type():
    w = numpy_helper.from_array(np.ones((1, 1, 1, 1), np.float64), "w")
    m = make([helper.make_node("Conv", ["x", "w"], ["y"], name="c")],
             [vi("x", TensorProto.FLOAT, [1, 1, 2, 2])], [vi("y", TensorProto.FLOAT, [1, 1, 2, 2])], [w])
    expect_model_error(save(m, "f64_init.onnx"), "initializer 'w'", "double")


@case
def cycle():
    m = make([helper.make_node("Relu", ["x2"], ["y"], name="a"),
              helper.make_node("Relu", ["y"], ["x2"], name="b")],
             [vi("x", TensorProto.FLOAT, [2])], [vi("y", TensorProto.FLOAT, [2])])
    expect_model_error(save(m, "cycle.onnx"), "node 'a' (Relu)", "node 'b' (Relu)", "cycle")


@case
def unsupported_ops_all_named():
    m = make([helper.make_node("Sin", ["x"], ["s"], name="sine"),
              helper.make_node("Relu", ["s"], ["r"], name="ok"),
              helper.make_node("Cos", ["r"], ["y"], name="cos1")],
             [vi("x", TensorProto.FLOAT, [2])], [vi("y", TensorProto.FLOAT, [2])])
    msg = expect_model_error(save(m, "unsupported.onnx"), "node 'sine' (Sin): unsupported operator",
                             "node 'cos1' (Cos): unsupported operator")
    assert "'ok'" not in msg, msg


@case
def missing_initializer():
    m = make([helper.make_node("Conv", ["x", "weights"], ["y"], name="conv1")],
             [vi("x", TensorProto.FLOAT, [1, 1, 4, 4])], [vi("y", TensorProto.FLOAT, [1, 1, 4, 4])])
    expect_model_error(save(m, "missing.onnx"), "node 'conv1' (Conv)", "input 'weights' is missing")


@case
def shape_mismatch_in_graph():
    b = numpy_helper.from_array(np.ones(4, np.float32), "b")
    m = make([helper.make_node("Add", ["x", "b"], ["y"], name="add1")],
             [vi("x", TensorProto.FLOAT, [2, 3])], [vi("y", TensorProto.FLOAT, [2, 3])], [b])
    expect_model_error(save(m, "add_shape.onnx"), "node 'add1' (Add)", "shape [4]")
    w = numpy_helper.from_array(np.ones((2, 3, 1, 1), np.float32), "w")
    m = make([helper.make_node("Conv", ["x", "w"], ["y"], name="conv2")],
             [vi("x", TensorProto.FLOAT, [1, 2, 4, 4])], [vi("y", TensorProto.FLOAT, [1, 2, 4, 4])], [w])
    expect_model_error(save(m, "conv_shape.onnx"), "node 'conv2' (Conv)", "C/groups")


@case
def declared_output_mismatch():
    m = make([helper.make_node("Relu", ["x"], ["y"], name="r")],
             [vi("x", TensorProto.FLOAT, [2, 3])], [vi("y", TensorProto.INT8, [2, 3])])
    expect_model_error(save(m, "out_type.onnx"), "graph output 'y' is declared int8 but computed as float")
    m = make([helper.make_node("Relu", ["x"], ["y"], name="r")],
             [vi("x", TensorProto.FLOAT, [2, 3])], [vi("y", TensorProto.FLOAT, [2, 4])])
    expect_model_error(save(m, "out_shape.onnx"), "declared [2, 4] but computed as [2, 3]")


@case
def unsupported_opset():
    m = relu_model()
    m.opset_import[0].version = 5
    expect_model_error(save(m, "opset5.onnx"), "opset 5")


@case
def input_shape_and_type_mismatch_at_run():
    m = npukit.OnnxModel(FP32)
    for bad, frag in [(np.zeros((1, 1, 28, 27), np.float32), "shape [1, 1, 28, 27]"),
                      (np.zeros((1, 28, 28), np.float32), "shape [1, 28, 28]"),
                      (np.zeros((1, 1, 28, 28), np.uint8), "u8")]:
        try:
            m.run({"image": bad})
        except npukit.Error as e:
            assert "parameter 'input image'" in str(e) and frag in str(e), str(e)
            continue
        raise AssertionError(f"no error for {bad.shape} {bad.dtype}")
    try:
        m.run({"picture": np.zeros((1, 1, 28, 28), np.float32)})
        raise AssertionError("no error for a missing input")
    except npukit.Error as e:
        assert "'image'" in str(e), str(e)


@case
def repeated_runs_and_batch_change():
    m = npukit.OnnxModel(FP32)
    assert m.inputs[0][0] == "image" and m.inputs[0][2] == ["N", 1, 28, 28], m.inputs
    x = np.random.default_rng(1).random((5, 1, 28, 28), dtype=np.float32)
    a = m.run({"image": x})["logits"]
    b = m.run({"image": x})["logits"]
    c = m.run({"image": x[2:3]})["logits"]
    assert a.shape == (5, 10) and np.array_equal(a, b)
    assert np.array_equal(a[2:3], c)  # per-image results do not depend on the batch
    times = m.layer_times()
    # Conv + Relu run as one com.microsoft FusedConv under onnxruntime (ORT's fusion).
    assert [t[1] for t in times] == ["FusedConv", "MaxPool", "FusedConv", "AveragePool", "Flatten", "Gemm"], times
    # Milliseconds per run over the runs since the last change of shapes (one here).
    assert m.timed_runs == 1 and all(t[2] == "onnxruntime" and t[3] >= 0 for t in times), times
    m.run({"image": x[2:3]})
    assert m.timed_runs == 2
    m.reset_layer_times()
    assert m.timed_runs == 0 and all(t[3] == 0 for t in m.layer_times())
    nodes = m.nodes()
    assert nodes[-1]["op_type"] == "Gemm" and nodes[-1]["outputs"][0] == ("logits", "float", [1, 10]), nodes[-1]
    ops = npukit.supported_operators()
    assert ("ai.onnx", "Conv", 6, 25) in ops and any(o[0] == "com.microsoft" for o in ops), ops


@case
def max_pool_runs_under_every_fp32_pool_profile():
    # MaxPool has no count_include_pad: bm1684 (whose average pools must count
    # the padding) used to reject every MaxPool for AveragePool's default.
    x = np.random.default_rng(3).standard_normal((1, 2, 5, 5)).astype(np.float32)
    path = save(make([helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 3],
                                       strides=[2, 2], pads=[1, 1, 1, 1])],
                     [vi("x", TensorProto.FLOAT, [1, 2, 5, 5])],
                     [vi("y", TensorProto.FLOAT, [1, 2, 3, 3])]), "maxpool.onnx")
    want = npukit.max_pool(x, kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    for profile in ("onnxruntime", "pytorch", "bm1684"):
        y = npukit.run_model(path, {"x": x}, profile=profile)["y"]
        assert np.array_equal(y, want), (profile, y, want)


@case
def fp32_model_accuracy_on_bundled_images():
    images = np.load(os.path.join(MODELS, "fashion_mnist_eval_images.npy"))
    labels = np.load(os.path.join(MODELS, "fashion_mnist_eval_labels.npy"))
    x = (images.astype(np.float32) / np.float32(255)).reshape(-1, 1, 28, 28)
    y = npukit.run_model(FP32, {"image": x})["logits"]
    acc = float((y.argmax(1) == labels).mean())
    assert acc >= 0.83, acc


@case
def cli_run_writes_outputs_and_json():
    x = np.random.default_rng(2).random((3, 1, 28, 28), dtype=np.float32)
    xin = os.path.join(TMP, "x.npy")
    np.save(xin, x)
    out = os.path.join(TMP, "out")
    r = subprocess.run([BIN, "run", FP32, "--input", f"image={xin}", "--output-dir", out, "--repeat", "3",
                        "--json"], capture_output=True, text=True, check=True)
    info = json.loads(r.stdout)
    assert info["runs"] == 3 and info["outputs"][0]["shape"] == [3, 10], info
    assert len(info["layers"]) == 6  # two Conv + Relu pairs run as FusedConv
    got = np.load(os.path.join(out, "logits.npy"))
    want = npukit.run_model(FP32, {"image": x})["logits"]
    assert np.array_equal(got, want)
    r = subprocess.run([BIN, "run", FP32, "--input", xin, "--output-dir", out], capture_output=True,
                       text=True, check=True)
    assert "ms per run" in r.stdout and "[3, 10]" in r.stdout, r.stdout
    assert "\r" not in r.stderr  # no progress bar when not on a terminal


@case
def cli_errors():
    r = subprocess.run([BIN, "run", os.path.join(TMP, "cycle.onnx"), "--input", "x=none.npy"],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "cycle" in r.stderr, (r.returncode, r.stderr)
    xin = os.path.join(TMP, "bad.npy")
    np.save(xin, np.zeros((1, 1, 28, 27), np.float32))
    r = subprocess.run([BIN, "run", FP32, "--input", f"image={xin}", "--output-dir", TMP],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "parameter 'input image'" in r.stderr, r.stderr
    np.save(xin, np.asfortranarray(np.zeros((1, 1, 28, 2), np.float32).transpose(3, 2, 1, 0)))
    r = subprocess.run([BIN, "run", FP32, "--input", f"image={xin}"], capture_output=True, text=True)
    assert r.returncode != 0 and "fortran_order" in r.stderr, r.stderr


@case
def cli_info():
    r = subprocess.run([BIN, "info", FP32], capture_output=True, text=True, check=True)
    assert "Gemm" in r.stdout and "model check: ok" in r.stdout, r.stdout
    r = subprocess.run([BIN, "info", os.path.join(TMP, "unsupported.onnx"), "--json"],
                       capture_output=True, text=True)
    assert r.returncode == 1, r.returncode  # problems found: non-zero status
    info = json.loads(r.stdout)
    ops = {o["op"]: o["supported"] for o in info["ops"]}
    assert ops == {"Sin": False, "Relu": True, "Cos": False}, ops
    assert not info["runnable"] and len(info["problems"]) == 2, info


@case
def gemm_with_constant_transposed_b_equals_the_reference():
    # The planner transposes a constant b of Gemm(transB=1) once (the fast
    # kernels then read its rows in place): bit for bit the model with b as
    # an input, and the reference kernels (NPUKIT_IMPL=reference, CLI). K = 150
    # crosses the packing's chunks of 64, N = 37 leaves a partial block.
    rng = np.random.default_rng(9)
    M, K, N = 3, 150, 37
    a = rng.uniform(-2, 2, (M, K)).astype(np.float32)
    b = rng.uniform(-2, 2, (N, K)).astype(np.float32)
    c = rng.uniform(-2, 2, (N,)).astype(np.float32)
    a[0, 5], b[3, 9], b[4, 100], a[2, 140] = np.nan, -np.inf, 1e-40, -0.0

    def same(x, y):  # bit for bit, a NaN equals any NaN
        return np.array_equal(np.isnan(x), np.isnan(y)) and np.array_equal(
            np.where(np.isnan(x), 0, x).view(np.uint32), np.where(np.isnan(y), 0, y).view(np.uint32))

    node = helper.make_node("Gemm", ["a", "b", "c"], ["y"], transB=1, alpha=0.75, beta=1.5)
    y_vi = vi("y", TensorProto.FLOAT, [M, N])
    const = save(make([node], [vi("a", TensorProto.FLOAT, [M, K])], [y_vi],
                      [numpy_helper.from_array(b, "b"), numpy_helper.from_array(c, "c")]),
                 "gemm_const_b.onnx")
    given = save(make([node], [vi("a", TensorProto.FLOAT, [M, K]), vi("b", TensorProto.FLOAT, [N, K])],
                      [y_vi], [numpy_helper.from_array(c, "c")]), "gemm_input_b.onnx")
    got = npukit.run_model(const, {"a": a})["y"]
    want = npukit.run_model(given, {"a": a, "b": b})["y"]
    assert np.isnan(got).any() and np.isfinite(got).sum() > M * N // 2, got
    assert same(got, want), (got, want)
    np.save(os.path.join(TMP, "gemm_a.npy"), a)
    out = os.path.join(TMP, "gemm_ref")
    subprocess.run([BIN, "run", const, "-i", os.path.join(TMP, "gemm_a.npy"), "-o", out],
                   check=True, capture_output=True, env={**os.environ, "NPUKIT_IMPL": "reference"})
    ref = np.load(os.path.join(out, "y.npy"))
    assert same(got, ref), (got, ref)


@case
def conv_activation_fusion_keeps_the_unfused_bits():
    # Under onnxruntime a Conv whose output only feeds a Relu, or a Clip with
    # constant bounds, runs as one FusedConv (ORT's ConvActivationFusion).
    # Every output must be the same bits (a NaN equals any NaN) as the
    # reference kernels' run of the nodes as written (NPUKIT_IMPL=reference). Not fused: a Conv output used twice, a Clip whose
    # bound is a graph input.
    rng = np.random.default_rng(12)
    x = rng.uniform(-2, 2, (2, 3, 9, 11)).astype(np.float32)
    x[0, 0, 2, 3], x[1, 2, 4, 4] = np.nan, -0.0
    w = rng.uniform(-1, 1, (5, 3, 3, 3)).astype(np.float32)
    b = rng.uniform(-1, 1, (5,)).astype(np.float32)
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b"),
             numpy_helper.from_array(np.array(-0.5, np.float32), "lo"),
             numpy_helper.from_array(np.array(0.75, np.float32), "hi")]
    conv = lambda o: helper.make_node("Conv", ["x", "w", "b"], [o], pads=[1, 1, 1, 1], name=o)
    nodes = [conv("c1"), helper.make_node("Relu", ["c1"], ["relu"], name="r1"),
             conv("c2"), helper.make_node("Clip", ["c2", "lo", "hi"], ["clip"], name="k2"),
             conv("c3"), helper.make_node("Relu", ["c3"], ["twice_a"], name="r3"),
             helper.make_node("Add", ["c3", "c3"], ["twice_b"], name="n3"),
             conv("c4"), helper.make_node("Clip", ["c4", "lo", "top"], ["given"], name="k4")]
    outs = ["relu", "clip", "twice_a", "twice_b", "given"]
    path = save(make(nodes, [vi("x", TensorProto.FLOAT, [2, 3, 9, 11]), vi("top", TensorProto.FLOAT, [])],
                     [vi(o, TensorProto.FLOAT, None) for o in outs], inits), "conv_act.onnx")
    feeds = {"x": x, "top": np.array(0.5, np.float32)}

    def same(p, q):
        return np.array_equal(np.isnan(p), np.isnan(q)) and np.array_equal(
            np.where(np.isnan(p), 0, p).view(np.uint32), np.where(np.isnan(q), 0, q).view(np.uint32))

    m = npukit.OnnxModel(path)  # onnxruntime
    got = m.run(feeds)
    ops = sorted(t[1] for t in m.layer_times())
    assert ops == ["Add", "Clip", "Conv", "Conv", "FusedConv", "FusedConv", "Relu"], ops
    for o in outs:
        assert np.isnan(got[o]).any(), o  # the NaN input reached every output
    assert (got["relu"] == 0).any() and (got["relu"] > 0).any()
    assert (got["clip"] == np.float32(0.75)).any() and (got["clip"] == np.float32(-0.5)).any()
    np.save(os.path.join(TMP, "conv_act_x.npy"), x)
    np.save(os.path.join(TMP, "conv_act_top.npy"), feeds["top"])
    out = os.path.join(TMP, "conv_act_ref")
    subprocess.run([BIN, "run", path, "-i", "x=" + os.path.join(TMP, "conv_act_x.npy"),
                    "top=" + os.path.join(TMP, "conv_act_top.npy"), "-o", out],
                   check=True, capture_output=True, env={**os.environ, "NPUKIT_IMPL": "reference"})
    for o in outs:
        assert same(got[o], np.load(os.path.join(out, o + ".npy"))), o


@case
def fused_conv_node_as_onnxruntime_saves_it():
    # An ORT-optimized model holds com.microsoft FusedConv nodes itself.
    rng = np.random.default_rng(13)
    x = rng.uniform(-2, 2, (1, 2, 6, 6)).astype(np.float32)
    w = rng.uniform(-1, 1, (4, 2, 3, 3)).astype(np.float32)
    inits = [numpy_helper.from_array(w, "w")]

    def model(**attrs):
        n = helper.make_node("FusedConv", ["x", "w"], ["y"], domain="com.microsoft", name="fc", **attrs)
        m = make([n], [vi("x", TensorProto.FLOAT, [1, 2, 6, 6])], [vi("y", TensorProto.FLOAT, None)], inits)
        m.opset_import.append(helper.make_opsetid("com.microsoft", 1))
        return m

    y = npukit.run_model(save(model(activation="Clip", activation_params=[-0.25, 0.5]), "fc.onnx"), {"x": x})["y"]
    plain = save(make([helper.make_node("Conv", ["x", "w"], ["c"])], [vi("x", TensorProto.FLOAT, [1, 2, 6, 6])],
                      [vi("c", TensorProto.FLOAT, None)], inits), "fc_plain.onnx")
    c = npukit.run_model(plain, {"x": x})["c"]
    assert np.array_equal(y, np.clip(c, np.float32(-0.25), np.float32(0.5))), (y, c)
    expect_model_error(save(model(activation="Sigmoid"), "fc_bad.onnx"), "activation", "Relu or Clip")
    expect_model_error(save(model(activation="Clip"), "fc_noparams.onnx"), "activation_params")


@case
def shape_products_that_overflow():
    # Found by libFuzzer: a Reshape whose sizes multiply past 2^63 (and an input
    # whose declared dims do) must be rejected by name, not wrap around.
    shape = numpy_helper.from_array(np.array([784, 3386706919782612993], np.int64), "s")
    m = make([helper.make_node("Reshape", ["x", "s"], ["y"], name="big")],
             [vi("x", TensorProto.FLOAT, [1, 784])], [vi("y", TensorProto.FLOAT, None)], [shape])
    expect_model_error(save(m, "reshape_overflow.onnx"), "big", "Reshape", "64 bits")
    m = make([helper.make_node("Relu", ["x"], ["y"], name="r")],
             [vi("x", TensorProto.FLOAT, [1 << 40, 1 << 40])], [vi("y", TensorProto.FLOAT, None)])
    expect_model_error(save(m, "input_overflow.onnx"), "x")


if __name__ == "__main__":
    sys.exit(CHECKS.finish())

#!/usr/bin/python3
"""One test per (operator family, profile) pair of the profile table, through
the ONNX runner: a one-node model of the family runs under every profile; a
pair the table supports runs, an unsupported one fails with the table's
refusal (parameter 'profile' and the reason), and with fallback it runs with
ONNX Runtime's semantics. Families the runner does not reach (the C faces,
OKKernel's series, MRT's chain) are covered by tests/unit/test_profile_support.cpp."""
import os
import sys
import tempfile

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import npukit

TMP = tempfile.mkdtemp(prefix="npukit_pairs_")
F, U8, S8, I32, I64 = (TensorProto.FLOAT, TensorProto.UINT8, TensorProto.INT8, TensorProto.INT32,
                       TensorProto.INT64)
results = {"passed": 0, "failed": 0}


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def const(name, value, dtype):
    return numpy_helper.from_array(np.array(value, dtype=dtype), name)


def q_inits(prefix_scale, prefix_zp, scale, zp, dtype=np.uint8):
    return [const(prefix_scale, scale, np.float32), const(prefix_zp, zp, dtype)]


def model(node, inputs, outputs, inits=(), opset=17):
    g = helper.make_graph([node], "g", inputs, outputs, list(inits))
    opsets = [helper.make_opsetid("", opset), helper.make_opsetid("com.microsoft", 1)]
    return helper.make_model(g, opset_imports=opsets)


RNG = np.random.default_rng(12)  # seed of every input below
X4 = RNG.standard_normal((1, 2, 4, 4)).astype(np.float32)
Q4 = RNG.integers(0, 256, (1, 2, 4, 4)).astype(np.uint8)


def one_input(op, x, elem, out_shape, out_elem=None, inits=(), extra_inputs=(), domain="",
              **attrs):
    node = helper.make_node(op, ["x", *extra_inputs], ["y"], domain=domain or None, **attrs)
    return (model(node, [vi("x", elem, list(x.shape))], [vi("y", out_elem or elem, out_shape)],
                  inits), {"x": x})


# One representative ONNX node per family the runner maps (src/onnx/op_families.cpp).
def cases():
    w = RNG.standard_normal((3, 2, 3, 3)).astype(np.float32)
    c = {}
    c["elementwise"] = one_input("Relu", X4, F, [1, 2, 4, 4])
    c["pool2d"] = one_input("MaxPool", X4, F, [1, 2, 2, 2], kernel_shape=[2, 2], strides=[2, 2])
    c["conv2d"] = one_input("Conv", X4, F, [1, 3, 2, 2], inits=[numpy_helper.from_array(w, "w")],
                            extra_inputs=["w"])
    c["matmul"] = one_input("MatMul", X4.reshape(8, 4), F, [8, 3],
                            inits=[numpy_helper.from_array(w.reshape(18, 3)[:4], "w")],
                            extra_inputs=["w"])
    c["quantize_linear"] = one_input("QuantizeLinear", X4, F, [1, 2, 4, 4], U8,
                                     inits=q_inits("s", "z", 0.05, 128), extra_inputs=["s", "z"])
    qi = q_inits("xs", "xz", 0.05, 128) + q_inits("ys", "yz", 0.05, 128)
    # Zero points 0 and one scale: TFLite keeps the input's quantization, MiCo has no zero point.
    q0 = q_inits("xs", "xz", 0.05, 0) + q_inits("ys", "yz", 0.05, 0)
    c["qlinear_average_pool"] = one_input("QLinearAveragePool", Q4, U8, [1, 2, 2, 2], inits=q0,
                                          extra_inputs=["xs", "xz", "ys", "yz"],
                                          domain="com.microsoft", kernel_shape=[2, 2],
                                          strides=[2, 2], count_include_pad=1)
    wq = RNG.integers(-20, 20, (3, 2, 3, 3)).astype(np.int8)
    c["qlinear_conv"] = one_input(
        "QLinearConv", Q4, U8, [1, 3, 2, 2],
        inits=q_inits("xs", "xz", 0.05, 128) + [numpy_helper.from_array(wq, "w")] +
        q_inits("ws", "wz", 0.02, 0, np.int8) + q_inits("ys", "yz", 0.1, 128),
        extra_inputs=["xs", "xz", "w", "ws", "wz", "ys", "yz"])
    bq = RNG.integers(-20, 20, (4, 3)).astype(np.int8)
    q2 = Q4.reshape(8, 4)
    c["qlinear_matmul"] = one_input(
        "QLinearMatMul", q2, U8, [8, 3],
        inits=q_inits("xs", "xz", 0.05, 128) + [numpy_helper.from_array(bq, "b")] +
        q_inits("bs", "bz", 0.02, 0, np.int8) + q_inits("ys", "yz", 0.1, 128),
        extra_inputs=["xs", "xz", "b", "bs", "bz", "ys", "yz"])
    c["matmul_integer"] = one_input("MatMulInteger", q2, U8, [8, 3], I32,
                                    inits=[numpy_helper.from_array(bq, "b")], extra_inputs=["b"])
    c["qlinear_add"] = one_input(
        "QLinearAdd", Q4, U8, [1, 2, 4, 4], domain="com.microsoft",
        inits=q_inits("xs", "xz", 0.05, 128) + [numpy_helper.from_array(Q4[:, :, ::-1].copy(), "b")]
        + q_inits("bs", "bz", 0.05, 128) + q_inits("ys", "yz", 0.1, 128),
        extra_inputs=["xs", "xz", "b", "bs", "bz", "ys", "yz"])
    c["float_math"] = one_input("Exp", X4, F, [1, 2, 4, 4])
    c["reduce"] = one_input("ReduceSum", X4, F, [1, 1, 1, 1], keepdims=1)
    c["layer_norm"] = one_input("LayerNormalization", X4, F, [1, 2, 4, 4],
                                inits=[const("g", np.ones(4), np.float32)], extra_inputs=["g"])
    c["conv_transpose"] = one_input("ConvTranspose", X4, F, [1, 3, 6, 6],
                                    inits=[numpy_helper.from_array(w.transpose(1, 0, 2, 3).copy(),
                                                                   "w")], extra_inputs=["w"])
    c["resize"] = one_input("Resize", X4, F, [1, 2, 8, 8],
                            inits=[const("scales", [1, 1, 2, 2], np.float32)],
                            extra_inputs=["", "scales"], mode="nearest")
    c["data_movement"] = one_input("Transpose", X4, F, [1, 2, 4, 4], perm=[0, 1, 3, 2])
    c["qlinear_mul"] = one_input(
        "QLinearMul", Q4, U8, [1, 2, 4, 4], domain="com.microsoft",
        inits=q_inits("xs", "xz", 0.05, 128) + [numpy_helper.from_array(Q4[:, ::-1].copy(), "b")]
        + q_inits("bs", "bz", 0.05, 128) + q_inits("ys", "yz", 0.1, 128),
        extra_inputs=["xs", "xz", "b", "bs", "bz", "ys", "yz"])
    c["qlinear_lookup"] = one_input("QLinearSigmoid", Q4, U8, [1, 2, 4, 4], domain="com.microsoft",
                                    inits=qi, extra_inputs=["xs", "xz", "ys", "yz"])
    bg = RNG.integers(-20, 20, (4, 3)).astype(np.int8)
    c["qgemm"] = one_input(
        "QGemm", q2, U8, [8, 3], domain="com.microsoft",
        inits=q_inits("xs", "xz", 0.05, 128) + [numpy_helper.from_array(bg, "b")] +
        q_inits("bs", "bz", 0.02, 0, np.int8) + q_inits("ys", "yz", 0.1, 128),
        extra_inputs=["xs", "xz", "b", "bs", "bz", "", "ys", "yz"])
    return c


def check_pair(family, profile, row, path, feeds):
    label = f"{family} x {profile}"
    try:
        npukit.run_model(path, feeds, profile=profile)
        ran, err = True, ""
    except Exception as e:  # the refusal is an npukit error
        ran, err = False, str(e)
    if row["supported"]:
        assert ran, f"{label}: the table supports it but the runner refused: {err}"
        return
    assert not ran, f"{label}: the table refuses it but the runner ran it"
    assert "'profile'" in err and row["semantics"] in err, f"{label}: not the table's refusal: {err}"
    # With fallback, the node keeps ONNX Runtime's semantics and runs.
    npukit.run_model(path, feeds, profile=profile, fallback=True)


def main():
    table = {(r["family"], r["profile"]): r for r in npukit.profile_table()}
    profiles = list(npukit.profiles())  # base profiles and the onnxruntime variants
    built = cases()
    mapped = {f for (f, _) in table} - {"depthwise2d", "fp32_series", "bm_pool_quantized",
                                         "mico_pool", "mrt_conv"}
    missing = mapped - set(built)
    if missing:
        print(f"FAIL no runner case for families {sorted(missing)}")
        results["failed"] += 1
    for family, (m, feeds) in sorted(built.items()):
        path = os.path.join(TMP, family + ".onnx")
        with open(path, "wb") as f:
            f.write(m.SerializeToString())
        for profile in profiles:
            base = profile if (family, profile) in table else "onnxruntime"  # variants
            try:
                check_pair(family, profile, table[(family, base)], path, feeds)
                results["passed"] += 1
            except Exception as e:  # report every pair, then fail
                results["failed"] += 1
                print(f"FAIL {family} x {profile}: {type(e).__name__}: {e}")
    print(f"{results['passed']} pairs passed, {results['failed']} failed")
    return 1 if results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())

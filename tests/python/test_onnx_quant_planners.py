#!/usr/bin/python3
"""The ONNX runner's quantized planners (src/onnx/ops_quant.cpp): each documented
load-time error, and small hand-computed runs (values worked out in the comments
from the ONNX operator definitions, round half to even; each also checked once
with ONNX Runtime 1.30 through tools/ort/run.mjs)."""
import os
import sys
import tempfile

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import npukit
from harness import Checks

TMP = tempfile.mkdtemp(prefix="npukit_qplan_")
CHECKS = Checks()
case = CHECKS.test


def save(nodes, inputs, outputs, inits=(), opset=13, ms=False):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    ops = [helper.make_opsetid("", opset)] + ([helper.make_opsetid("com.microsoft", 1)] if ms else [])
    m = helper.make_model(g, opset_imports=ops)
    path = os.path.join(TMP, f"m{len(os.listdir(TMP))}.onnx")
    with open(path, "wb") as f:
        f.write(m.SerializeToString())
    return path


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def init(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def expect_model_error(path, *fragments):
    try:
        npukit.OnnxModel(path)
    except npukit.ModelError as e:
        msg = str(e)
        for f in fragments:
            assert f in msg, f"{f!r} not in error: {msg}"
        return
    raise AssertionError("no ModelError")


def quantize_model(inits, extra_inputs=(), attrs=None, opset=13):
    names = ["x", "s", "z"][: 1 + len(inits) + len(extra_inputs)]
    node = helper.make_node("QuantizeLinear", names, ["y"], name="q", **(attrs or {}))
    return save([node], [vi("x", TensorProto.FLOAT, [4])] + list(extra_inputs),
                [vi("y", TensorProto.UINT8, [4])], inits, opset=opset)


@case
def quantize_hand_computed():
    # x / 0.5 + 10 with ties to even: 0 -> 10, 0.25 -> 0.5 -> 0 -> 10, 0.75 -> 1.5 -> 2 -> 12,
    # -6 -> -12 + 10 = -2 -> saturates to 0, 200 -> 400 + 10 -> 255.
    p = quantize_model([init("s", np.float32(0.5)), init("z", np.uint8(10))])
    y = npukit.run_model(p, {"x": np.array([0, 0.25, 0.75, -6], np.float32)})["y"]
    assert y.dtype == np.uint8 and y.tolist() == [10, 10, 12, 0], y
    y = npukit.run_model(p, {"x": np.array([200, 1.25, 1.75, 2.25], np.float32)})["y"]
    # 1.25 -> 2.5 -> 2 -> 12; 1.75 -> 3.5 -> 4 -> 14; 2.25 -> 4.5 -> 4 -> 14.
    assert y.tolist() == [255, 12, 14, 14], y


@case
def dequantize_hand_computed():
    # (x - 128) * 0.25: 0 -> -32, 128 -> 0, 255 -> 31.75, 129 -> 0.25.
    node = helper.make_node("DequantizeLinear", ["x", "s", "z"], ["y"], name="d")
    p = save([node], [vi("x", TensorProto.UINT8, [4])], [vi("y", TensorProto.FLOAT, [4])],
             [init("s", np.float32(0.25)), init("z", np.uint8(128))])
    y = npukit.run_model(p, {"x": np.array([0, 128, 255, 129], np.uint8)})["y"]
    assert y.tolist() == [-32.0, 0.0, 31.75, 0.25], y


@case
def scale_read_at_run_time():
    # y_scale fed as a graph input: 3 / 2 = 1.5 -> 2, 5 / 2 = 2.5 -> 2, -1 / 2 -> -0.5 -> 0, 7 / 0.5 -> 14.
    p = quantize_model([], [vi("s", TensorProto.FLOAT, [])])
    y = npukit.run_model(p, {"x": np.array([3, 5, -1, 0], np.float32), "s": np.array(2, np.float32)})["y"]
    assert y.tolist() == [2, 2, 0, 0], y
    y = npukit.run_model(p, {"x": np.array([7, 0, 0, 0], np.float32), "s": np.array(0.5, np.float32)})["y"]
    assert y.tolist() == [14, 0, 0, 0], y


@case
def qlinear_add_scale_at_run_time_rejected():
    node = helper.make_node("QLinearAdd", ["a", "as", "az", "b", "bs", "bz", "cs", "cz"], ["c"],
                            name="add", domain="com.microsoft")
    p = save([node], [vi("a", TensorProto.UINT8, [3]), vi("b", TensorProto.UINT8, [3]),
                      vi("cs", TensorProto.FLOAT, [])], [vi("c", TensorProto.UINT8, [3])],
             [init("as", np.float32(0.5)), init("az", np.uint8(0)), init("bs", np.float32(0.5)),
              init("bz", np.uint8(0)), init("cz", np.uint8(0))], ms=True)
    expect_model_error(p, "QLinearAdd", "computed at run time", "an initializer or Constant")


@case
def scale_of_wrong_type():
    p = quantize_model([init("s", np.int32(1))])
    expect_model_error(p, "QuantizeLinear", "y_scale", "float")


@case
def zero_point_of_wrong_type():
    p = quantize_model([init("s", np.float32(1)), init("z", np.int32(0))])
    expect_model_error(p, "QuantizeLinear", "y_zero_point", "uint8 or int8")


@case
def scale_of_rank_two():
    p = quantize_model([init("s", np.ones((2, 2), np.float32))])
    expect_model_error(p, "QuantizeLinear", "y_scale", "a scalar or a 1-D tensor")


@case
def blocked_quantization_rejected():
    p = quantize_model([init("s", np.float32(1))], attrs={"block_size": 2}, opset=21)
    expect_model_error(p, "QuantizeLinear", "block_size", "blocked quantization is not supported")


@case
def axis_out_of_range():
    p = quantize_model([init("s", np.ones(4, np.float32)), init("z", np.zeros(4, np.uint8))],
                       attrs={"axis": 1})
    expect_model_error(p, "QuantizeLinear", "axis")


@case
def dequantize_zero_point_type_differs():
    node = helper.make_node("DequantizeLinear", ["x", "s", "z"], ["y"], name="d")
    p = save([node], [vi("x", TensorProto.UINT8, [4])], [vi("y", TensorProto.FLOAT, [4])],
             [init("s", np.float32(1)), init("z", np.int8(0))])
    expect_model_error(p, "DequantizeLinear", "x_zero_point", "int8")


def qlinear_add_model(c_scale):
    node = helper.make_node("QLinearAdd", ["a", "as", "az", "b", "bs", "bz", "cs", "cz"], ["c"],
                            name="add", domain="com.microsoft")
    return save([node], [vi("a", TensorProto.UINT8, [3]), vi("b", TensorProto.UINT8, [3])],
                [vi("c", TensorProto.UINT8, [3])],
                [init("as", np.float32(0.5)), init("az", np.uint8(0)), init("bs", np.float32(0.5)),
                 init("bz", np.uint8(0)), init("cs", c_scale), init("cz", np.uint8(0))], ms=True)


@case
def qlinear_add_hand_computed():
    # 0.5a + 0.5b with c_scale 1: (1,1) -> 1, (1,2) -> 1.5 -> 2, (3,2) -> 2.5 -> 2.
    p = qlinear_add_model(np.float32(1))
    c = npukit.run_model(p, {"a": np.array([1, 1, 3], np.uint8), "b": np.array([1, 2, 2], np.uint8)})["c"]
    assert c.tolist() == [1, 2, 2], c


@case
def qlinear_add_per_axis_scale_rejected():
    p = qlinear_add_model(np.ones(3, np.float32))
    expect_model_error(p, "QLinearAdd", "C_scale", "one value (per-tensor)")


def global_pool_model(inputs, inits):
    node = helper.make_node("QLinearGlobalAveragePool", inputs, ["y"], name="gp", domain="com.microsoft")
    return save([node], [vi("x", TensorProto.UINT8, [1, 1, 2, 2])], [vi("y", TensorProto.UINT8, [1, 1, 1, 1])],
                inits, ms=True)


@case
def qlinear_global_pool_hand_computed():
    # Mean of 1..4 = 2.5 with equal scales and zero points 0 -> 2 (ties to even).
    p = global_pool_model(["x", "xs", "xz", "ys", "yz"],
                          [init("xs", np.float32(1)), init("xz", np.uint8(0)), init("ys", np.float32(1)),
                           init("yz", np.uint8(0))])
    y = npukit.run_model(p, {"x": np.array([1, 2, 3, 4], np.uint8).reshape(1, 1, 2, 2)})["y"]
    assert y.shape == (1, 1, 1, 1) and int(y.ravel()[0]) == 2, y


@case
def qlinear_global_pool_needs_five_inputs():
    # ONNX Runtime's schema takes exactly 5 inputs (it rejects 4 at load time too).
    p = global_pool_model(["x", "xs", "", "ys"], [init("xs", np.float32(1)), init("ys", np.float32(1))])
    expect_model_error(p, "QLinearGlobalAveragePool", "4 inputs")


def main():
    return CHECKS.finish()


if __name__ == "__main__":
    sys.exit(main())

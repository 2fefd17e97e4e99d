#!/usr/bin/python3
"""Quantizes the trained Fashion-MNIST CNN into an int8 QOperator ONNX model
with npukit's own calibration (npukit.onnx_calibrate / onnx_quantize).

    PYTHONPATH=build/python /usr/bin/python3 models/quantize_fashion_mnist.py

Activations are uint8 (asymmetric: scale = (hi - lo) / 255 over the range
extended to 0; a ReLU output gets zero point 0, so saturation at 0 is the ReLU),
weights int8 symmetric per output channel, biases int32 with scale
x_scale * w_scale and zero point 0. The graph:

  image f32 -> QuantizeLinear -> QLinearConv(+ReLU) -> MaxPool -> QLinearConv(+ReLU)
  -> QLinearAveragePool (com.microsoft; same scale and zero point in and out)
  -> Reshape (N, 784, 1, 1) -> QLinearConv 1x1 (the fully connected layer, int32 bias)
  -> Reshape (N, 10) -> DequantizeLinear -> logits f32
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
CALIB_COUNT = 2000


def import_npukit():
    try:
        import npukit  # noqa: F401
    except ImportError:
        sys.path.insert(0, os.path.join(HERE, "..", "build", "python"))
    import npukit
    return npukit


def activations(net, x):
    """Outputs of relu1, relu2 and the final linear layer on x (PyTorch, fp32)."""
    import torch

    acts = {}
    with torch.no_grad():
        h = torch.from_numpy(x)
        for i, layer in enumerate(net):
            h = layer(h)
            acts[i] = h.numpy().copy()
    return {"relu1": acts[1], "relu2": acts[4], "logits": acts[7]}


def quantize():
    import onnx
    import torch
    from onnx import TensorProto, helper, numpy_helper

    from train_fashion_mnist import load_split, make_net, to_float

    npukit = import_npukit()
    net = make_net()
    net.load_state_dict(torch.load(os.path.join(HERE, "fashion_mnist_weights.pt")))
    net.eval()
    x_train, _ = load_split("train")
    calib = to_float(x_train[:CALIB_COUNT])
    acts = activations(net, calib)

    def act_params(a):
        p = npukit.onnx_calibrate(np.ascontiguousarray(a.reshape(a.shape[0], -1)), "uint8")
        return np.float32(p.scale[0]), np.uint8(p.zero_point[0])

    s_in, z_in = act_params(calib)
    s1, z1 = act_params(acts["relu1"])
    s2, z2 = act_params(acts["relu2"])
    s3, z3 = act_params(acts["logits"])
    assert z1 == 0 and z2 == 0, "a ReLU output must get zero point 0 (the fused ReLU is the saturation)"

    inits = []

    def add(name, array):
        inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def conv_weights(tag, w, b, x_scale):
        """int8 symmetric per output channel, int32 bias at scale x_scale * w_scale."""
        w = np.ascontiguousarray(w, dtype=np.float32)
        oc = w.shape[0]
        flat = w.reshape(oc, -1)
        p = npukit.onnx_calibrate(flat, "int8", symmetric=True, axis=0)
        wq = npukit.onnx_quantize(flat, p).reshape(w.shape)
        w_scale = np.asarray(p.scale, np.float32)
        bias_scale = np.float32(x_scale) * w_scale  # fp32 product, as the runtime's requantization
        bq = np.round(b.astype(np.float64) / bias_scale.astype(np.float64)).astype(np.int32)
        add(f"{tag}_w", wq)
        add(f"{tag}_w_scale", w_scale)
        add(f"{tag}_w_zero_point", np.zeros(oc, np.int8))
        add(f"{tag}_b", bq)

    sd = {k: v.numpy() for k, v in net.state_dict().items()}
    add("x_scale", s_in)
    add("x_zero_point", z_in)
    add("s1", s1)
    add("z1", z1)
    add("s2", s2)
    add("z2", z2)
    add("s3", s3)
    add("z3", z3)
    conv_weights("conv1", sd["0.weight"], sd["0.bias"], s_in)
    conv_weights("conv2", sd["3.weight"], sd["3.bias"], s1)
    conv_weights("fc", sd["7.weight"].reshape(10, 784, 1, 1), sd["7.bias"], s2)
    add("shape_fc_in", np.array([-1, 784, 1, 1], np.int64))
    add("shape_logits", np.array([-1, 10], np.int64))

    def qconv(name, x, xs, xz, tag, ys, yz, out, pads):
        return helper.make_node("QLinearConv", [x, xs, xz, f"{tag}_w", f"{tag}_w_scale", f"{tag}_w_zero_point",
                                                ys, yz, f"{tag}_b"], [out], name=name,
                                kernel_shape=list(sd_shape[tag][2:]), pads=pads, strides=[1, 1])

    sd_shape = {"conv1": (8, 1, 3, 3), "conv2": (16, 8, 3, 3), "fc": (10, 784, 1, 1)}
    nodes = [
        helper.make_node("QuantizeLinear", ["image", "x_scale", "x_zero_point"], ["image_q"], name="quantize"),
        qconv("conv1_relu", "image_q", "x_scale", "x_zero_point", "conv1", "s1", "z1", "c1", [1, 1, 1, 1]),
        helper.make_node("MaxPool", ["c1"], ["p1"], name="maxpool", kernel_shape=[2, 2], strides=[2, 2]),
        qconv("conv2_relu", "p1", "s1", "z1", "conv2", "s2", "z2", "c2", [1, 1, 1, 1]),
        # count_include_pad=1 changes nothing without padding and lets GHP's accelerator run it.
        helper.make_node("QLinearAveragePool", ["c2", "s2", "z2", "s2", "z2"], ["p2"], name="avgpool",
                         domain="com.microsoft", kernel_shape=[2, 2], strides=[2, 2], count_include_pad=1),
        helper.make_node("Reshape", ["p2", "shape_fc_in"], ["p2_flat"], name="flatten"),
        qconv("fc", "p2_flat", "s2", "z2", "fc", "s3", "z3", "fc_q", [0, 0, 0, 0]),
        helper.make_node("Reshape", ["fc_q", "shape_logits"], ["logits_q"], name="to_logits"),
        helper.make_node("DequantizeLinear", ["logits_q", "s3", "z3"], ["logits"], name="dequantize"),
    ]
    graph = helper.make_graph(
        nodes, "fashion_mnist_int8",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["N", 1, 28, 28])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 10])], inits)
    model = helper.make_model(graph, producer_name="npukit models/quantize_fashion_mnist.py",
                              opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    path = os.path.join(HERE, "fashion_mnist_int8.onnx")
    onnx.save(model, path)
    print(f"wrote {path} (activation scales {s_in:.6g}, {s1:.6g}, {s2:.6g}, {s3:.6g}; logits zero point {z3})")


if __name__ == "__main__":
    sys.path.insert(0, HERE)
    quantize()

#!/usr/bin/python3
"""Builds an int8 QOperator ONNX model of a torchvision network (resnet18 or
mobilenet_v2, random initialization: no download) for speed and bit-exactness
checks of npukit against ONNX Runtime.

Each Conv+BatchNorm(+ReLU/ReLU6) becomes one QLinearConv (BatchNorm folded,
weights s8 symmetric per output channel, int32 bias, the activation folded
into the u8 output range: zero point 0 clamps at 0, scale 6/255 at 6);
residual additions become com.microsoft QLinearAdd, max pooling runs on u8,
global average pooling is com.microsoft QLinearGlobalAveragePool and the
classifier a 1x1 QLinearConv. Activations are u8 per tensor, calibrated by
min/max on a few random images.

  /usr/bin/python3 scripts/make_int8_torchvision.py resnet18 /tmp/resnet18_int8.onnx [--input /tmp/x.npy]

Writes the model and, with --input, one random 1x3x224x224 image for it.
"""
import argparse

import numpy as np
import onnx
import torch
import torch.nn.functional as F
import torchvision
from onnx import TensorProto, helper, numpy_helper


def fold(conv, bn):
    w = conv.weight.detach().double()
    b = conv.bias.detach().double() if conv.bias is not None else torch.zeros(w.shape[0], dtype=torch.float64)
    g = bn.weight.detach().double() / torch.sqrt(bn.running_var.double() + bn.eps)
    return (w * g[:, None, None, None]).float(), ((b - bn.running_mean.double()) * g + bn.bias.double()).float()


class Builder:
    """A tiny IR: ops on named fp32 tensors, run in torch for calibration, then
    emitted as QOperator nodes."""

    def __init__(self):
        self.ops = []
        self.count = 0

    def name(self, p):
        self.count += 1
        return f"{p}{self.count}"

    def conv(self, x, w, b, stride, pad, groups, act):
        y = self.name("c")
        self.ops.append(("conv", x, y, dict(w=w, b=b, stride=stride, pad=pad, groups=groups, act=act)))
        return y

    def add(self, a, b, relu):
        y = self.name("a")
        self.ops.append(("add", (a, b), y, dict(relu=relu)))
        return y

    def maxpool(self, x, k, s, p):
        y = self.name("m")
        self.ops.append(("maxpool", x, y, dict(k=k, s=s, p=p)))
        return y

    def gap(self, x):
        y = self.name("g")
        self.ops.append(("gap", x, y, {}))
        return y

    def fc(self, x, w, b):
        y = "logits_q"
        self.ops.append(("fc", x, y, dict(w=w, b=b)))
        return y

    def forward(self, x):
        v = {"image": x}
        for kind, i, o, a in self.ops:
            if kind == "conv":
                t = F.conv2d(v[i], a["w"], a["b"], a["stride"], a["pad"], 1, a["groups"])
                v[o] = t.clamp(0, 6) if a["act"] == "relu6" else t.relu() if a["act"] == "relu" else t
            elif kind == "add":
                t = v[i[0]] + v[i[1]]
                v[o] = t.relu() if a["relu"] else t
            elif kind == "maxpool":
                v[o] = F.max_pool2d(v[i], a["k"], a["s"], a["p"])
            elif kind == "gap":
                v[o] = v[i].mean(dim=(2, 3), keepdim=True)
            else:
                v[o] = F.conv2d(v[i].reshape(v[i].shape[0], -1, 1, 1), a["w"][:, :, None, None], a["b"])
        return v


def resnet18(B):
    m = torchvision.models.resnet18(weights=None).eval()
    w, b = fold(m.conv1, m.bn1)
    x = B.conv("image", w, b, 2, 3, 1, "relu")
    x = B.maxpool(x, 3, 2, 1)
    for layer in (m.layer1, m.layer2, m.layer3, m.layer4):
        for blk in layer:
            w1, b1 = fold(blk.conv1, blk.bn1)
            w2, b2 = fold(blk.conv2, blk.bn2)
            y = B.conv(x, w1, b1, blk.conv1.stride[0], 1, 1, "relu")
            y = B.conv(y, w2, b2, 1, 1, 1, None)
            sc = x
            if blk.downsample is not None:
                wd, bd = fold(blk.downsample[0], blk.downsample[1])
                sc = B.conv(x, wd, bd, blk.downsample[0].stride[0], 0, 1, None)
            x = B.add(y, sc, True)
    x = B.gap(x)
    return B.fc(x, m.fc.weight.detach(), m.fc.bias.detach())


def mobilenet_v2(B):
    m = torchvision.models.mobilenet_v2(weights=None).eval()
    x = "image"
    for f in m.features:
        if isinstance(f, torchvision.ops.misc.Conv2dNormActivation) or f.__class__.__name__ == "ConvBNReLU":
            c, bn = f[0], f[1]
            w, b = fold(c, bn)
            x = B.conv(x, w, b, c.stride[0], c.padding[0], c.groups, "relu6")
            continue
        layers = list(f.conv)
        y = x
        for layer in layers[:-2]:  # expand and depthwise: Conv-BN-ReLU6 blocks
            c, bn = layer[0], layer[1]
            w, b = fold(c, bn)
            y = B.conv(y, w, b, c.stride[0], c.padding[0], c.groups, "relu6")
        w, b = fold(layers[-2], layers[-1])  # linear projection
        y = B.conv(y, w, b, 1, 0, 1, None)
        x = B.add(x, y, False) if f.use_res_connect else y
    x = B.gap(x)
    return B.fc(x, m.classifier[1].weight.detach(), m.classifier[1].bias.detach())


def act_q(lo, hi):
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    scale = np.float32((hi - lo) / 255.0) if hi > lo else np.float32(1.0)
    zp = int(np.clip(round(-lo / scale), 0, 255))
    return scale, zp


def emit(B, ranges, path, calib):
    inits, nodes = [], []

    def const(name, arr):
        inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def qparams(t):
        s, z = ranges[t]
        return const(t + "_s", np.float32(s)), const(t + "_z", np.uint8(z))

    s, z = qparams("image")
    nodes.append(helper.make_node("QuantizeLinear", ["image", s, z], ["image_q"]))
    q = {"image": "image_q"}
    for kind, i, o, a in B.ops:
        os_, oz = qparams(o)
        if kind in ("conv", "fc"):
            w = a["w"].detach().numpy().astype(np.float64)
            if kind == "fc":
                w = w[:, :, None, None]
            ws = np.maximum(np.abs(w).reshape(w.shape[0], -1).max(1), 1e-8) / 127.0
            wq = np.clip(np.round(w / ws[:, None, None, None]), -127, 127).astype(np.int8)
            xs = np.float32(ranges[i][0])
            ws32 = ws.astype(np.float32)
            bq = np.round(a["b"].detach().numpy().astype(np.float64) / (np.float64(xs) * ws32)).astype(np.int32)
            xin = q[i]
            if kind == "fc":
                xin_r = i + "_flat"
                nodes.append(helper.make_node("Reshape", [q[i], const("fc_shape", np.array([-1, w.shape[1], 1, 1], np.int64))], [xin_r]))
                xin = xin_r
            xs_n, xz_n = ranges_names[i]
            args = dict(kernel_shape=list(w.shape[2:]), strides=[a.get("stride", 1)] * 2,
                        pads=[a.get("pad", 0)] * 4, group=a.get("groups", 1))
            nodes.append(helper.make_node(
                "QLinearConv",
                [xin, xs_n, xz_n, const(o + "_w", wq), const(o + "_ws", ws32), const(o + "_wz", np.zeros(w.shape[0], np.int8)),
                 os_, oz, const(o + "_b", bq)], [o + "_q"], **args))
        elif kind == "add":
            (as_, az), (bs, bz) = ranges_names[i[0]], ranges_names[i[1]]
            nodes.append(helper.make_node("QLinearAdd", [q[i[0]], as_, az, q[i[1]], bs, bz, os_, oz], [o + "_q"], domain="com.microsoft"))
        elif kind == "maxpool":
            nodes.append(helper.make_node("MaxPool", [q[i]], [o + "_q"], kernel_shape=[a["k"]] * 2, strides=[a["s"]] * 2, pads=[a["p"]] * 4))
        elif kind == "gap":
            xs_n, xz_n = ranges_names[i]
            nodes.append(helper.make_node("QLinearGlobalAveragePool", [q[i], xs_n, xz_n, os_, oz], [o + "_q"], domain="com.microsoft", channels_last=0))
        q[o] = o + "_q"
        ranges_names[o] = (os_, oz)
    last = B.ops[-1][2]
    nodes.append(helper.make_node("Reshape", [q[last], const("out_shape", np.array([-1, 1000], np.int64))], ["logits_r"]))
    ls, lz = ranges_names[last]
    nodes.append(helper.make_node("DequantizeLinear", ["logits_r", ls, lz], ["logits"]))
    g = helper.make_graph(nodes, "int8", [helper.make_tensor_value_info("image", TensorProto.FLOAT, [None, 3, 224, 224])],
                          [helper.make_tensor_value_info("logits", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    onnx.save(model, path)


ranges_names = {}

if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("net", choices=["resnet18", "mobilenet_v2"])
    ap.add_argument("out")
    ap.add_argument("--input")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    torch.manual_seed(a.seed)
    B = Builder()
    (resnet18 if a.net == "resnet18" else mobilenet_v2)(B)
    calib = torch.rand(4, 3, 224, 224) * 2 - 1
    with torch.no_grad():
        v = B.forward(calib)
    ranges = {k: act_q(float(t.min()), float(t.max())) for k, t in v.items()}
    # ReLU6 outputs keep their calibrated range (at most [0, 6]): pinning it
    # to [0, 6] leaves a randomly initialized network with no resolution.
    for kind, i, o, args in B.ops:
        if kind == "gap":  # the input's quantization (ORT bounds x_scale / (y_scale * N))
            ranges[o] = ranges[i]
    ranges_names["image"] = ("image_s", "image_z")
    emit(B, ranges, a.out, calib)
    if a.input:
        np.save(a.input, (torch.rand(1, 3, 224, 224) * 2 - 1).numpy().astype(np.float32))
    print(f"wrote {a.out}: {len(B.ops)} quantized ops")

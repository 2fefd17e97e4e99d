#!/usr/bin/python3
"""Builds an int8 QDQ ONNX model of a torchvision network the way ONNX
Runtime's quantizer (quantize_static, QuantFormat.QDQ) writes one, for
bit-exactness checks of npukit's QDQ fusion against ONNX Runtime.

The network (random initialization: no download) is exported to fp32 ONNX
by torch.onnx (opset 13; BatchNorm folds into Conv), calibrated by min/max
on a few random images (npukit's fp32 runner evaluates every tensor), then
rewritten as ORT's quantizer does by default:
  - activations u8 asymmetric per tensor: scale = (max - min) / 255 over the
    range widened to include 0, zero point round(-min / scale);
  - Conv / Gemm weights s8 symmetric per output channel (absmax / 127, zero
    point 0, DequantizeLinear axis 0), biases int32 with scale
    x_scale * w_scale and zero point 0 behind a DequantizeLinear;
  - a Relu or Clip whose input has no other consumer is removed and its
    producer's output takes its name and range (QDQRemovableActivation);
  - MaxPool, Flatten, Reshape and Transpose outputs reuse their input's
    scale and zero point (QDQDirect8BitOp); other quantized operators'
    inputs and outputs get QuantizeLinear -> DequantizeLinear pairs;
  - the graph input and outputs stay float (Q -> DQ around them).

  /usr/bin/python3 scripts/make_qdq_torchvision.py resnet18 /tmp/r18_qdq.onnx [--size 224] [--seed 0] [--opset 13]

Networks: resnet18, mobilenet_v2, googlenet (Concat -> QLinearConcat),
mobilenet_v3_small (HardSigmoid / HardSwish stay float between DQ and Q),
efficientnet_b0 (SiLU = Sigmoid * x), shufflenet_v2_x0_5 / _x1_0 (5-D channel
shuffle; its int64 shape subgraphs stay unquantized). Needs npukit's Python
module (PYTHONPATH=build/python) for calibration.
"""
import argparse
import os
import tempfile

import numpy as np
import onnx
import torch
import torchvision
from onnx import TensorProto, helper, numpy_helper

# Operators whose inputs and outputs are quantized (ORT's default op_types_to_quantize
# restricted to what these networks contain).
QUANTIZED = {"Conv", "Gemm", "MatMul", "Add", "Mul", "Concat", "MaxPool", "AveragePool",
             "GlobalAveragePool", "Sigmoid", "LeakyRelu", "Flatten", "Reshape", "Transpose"}
SAME_AS_INPUT = {"MaxPool", "Flatten", "Reshape", "Transpose"}  # QDQDirect8BitOp
REMOVABLE = {"Relu", "Clip"}  # QDQRemovableActivation
WEIGHTED = {"Conv": 0, "Gemm": 1}  # op -> index of its weight input


def network(name):
    tv = torchvision.models
    if name == "googlenet":
        m = tv.googlenet(weights=None, aux_logits=False, init_weights=True, transform_input=False)
        # Its own initialization (std 0.01) lets a random network's activations
        # vanish; He initialization keeps every layer's range meaningful.
        for mod in m.modules():
            if isinstance(mod, torch.nn.Conv2d):
                torch.nn.init.kaiming_normal_(mod.weight, mode="fan_out", nonlinearity="relu")
        return m
    return getattr(tv, name)(weights=None)


def export_fp32(name, size, path, opset=13):
    m = network(name).eval()
    x = torch.rand(1, 3, size, size)
    torch.onnx.export(m, x, path, opset_version=opset, input_names=["image"], output_names=["logits"],
                      dynamic_axes={"image": {0: "N"}, "logits": {0: "N"}}, do_constant_folding=True)
    return onnx.load(path)


def act_qparams(lo, hi):
    """ORT's compute_scale_zp for uint8 asymmetric activations."""
    lo, hi = min(float(lo), 0.0), max(float(hi), 0.0)
    scale = np.float32((hi - lo) / 255.0)
    if scale == 0 or not np.isfinite(scale):
        return np.float32(1.0), np.uint8(0)
    zp = int(np.clip(np.round(0.0 - lo / float(scale)), 0, 255))
    return scale, np.uint8(zp)


def inline_identities(model):
    """torch.onnx shares equal initializers (the zero biases of a fresh network)
    through Identity nodes: give each consumer its own initializer instead."""
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    keep = []
    for n in g.node:
        if n.op_type == "Identity" and n.input[0] in inits:
            g.initializer.append(numpy_helper.from_array(numpy_helper.to_array(inits[n.input[0]]), n.output[0]))
            continue
        keep.append(n)
    del g.node[:]
    g.node.extend(keep)


def remove_activations(model):
    """Drops each Relu/Clip whose input comes from a quantized node and feeds only it."""
    g = model.graph
    outputs = {o.name for o in g.output}
    producer = {o: n for n in g.node for o in n.output}
    uses = {}
    for n in g.node:
        for i in n.input:
            uses[i] = uses.get(i, 0) + 1
    keep = []
    for n in g.node:
        src = producer.get(n.input[0]) if n.input else None
        if (n.op_type in REMOVABLE and src is not None and src.op_type in QUANTIZED
                and uses.get(n.input[0], 0) == 1 and n.input[0] not in outputs):
            src.output[0] = n.output[0]  # the producer now writes the activation's tensor
            producer[n.output[0]] = src
            continue
        keep.append(n)
    del g.node[:]
    g.node.extend(keep)


def calibrate(model, images, tmp):
    """Min and max of every float tensor over the calibration images (npukit fp32 runner)."""
    import npukit
    m = onnx.ModelProto()
    m.CopyFrom(model)
    have = {o.name for o in m.graph.output}
    # Shape subgraphs (shufflenet's channel shuffle under a dynamic batch) compute
    # int64 tensors: expose only those that shape inference does not type otherwise.
    typed = onnx.shape_inference.infer_shapes(m).graph.value_info
    not_float = {v.name for v in typed if v.type.tensor_type.elem_type not in (0, TensorProto.FLOAT)}
    for n in m.graph.node:
        for o in n.output:
            if o and o not in have and o not in not_float and n.op_type != "Constant":
                m.graph.output.append(helper.make_tensor_value_info(o, TensorProto.FLOAT, None))
                have.add(o)
    path = os.path.join(tmp, "calib.onnx")
    onnx.save(m, path)
    out = npukit.OnnxModel(path, "onnxruntime", False).run({"image": images})
    ranges = {k: (float(np.min(v)), float(np.max(v))) for k, v in out.items() if np.asarray(v).dtype == np.float32}
    ranges["image"] = (float(images.min()), float(images.max()))
    return ranges


def quantize(model, ranges):
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    consts = {n.output[0] for n in g.node if n.op_type == "Constant"} | set(inits)
    producer = {o: n for n in g.node for o in n.output}
    graph_outputs = {o.name for o in g.output}
    new_inits, extra = [], []
    qparams = {}  # tensor -> (scale name, zero point name)

    def const(name, arr):
        new_inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def params_for(t):
        if t not in ranges and t.endswith("_dq") and t[:-3] in ranges:
            t = t[:-3]  # a consumer's input already rewired to the tensor's DequantizeLinear
        if t not in qparams:
            src = producer.get(t)
            if src is not None and src.op_type in SAME_AS_INPUT:
                qparams[t] = params_for(src.input[0])
            else:
                s, z = act_qparams(*ranges[t])
                qparams[t] = (const(t + "_scale", s), const(t + "_zero_point", z), float(s))
        return qparams[t]

    def weight_dq(node, wname):
        w = numpy_helper.to_array(inits[wname]).astype(np.float64)
        axis = 0
        if node.op_type == "Gemm":
            axis = 0 if any(a.name == "transB" and a.i for a in node.attribute) else 1
        absmax = np.abs(np.moveaxis(w, axis, 0).reshape(w.shape[axis], -1)).max(axis=1)
        ws = np.where(absmax > 0, absmax / 127.0, 1.0).astype(np.float32)
        shape = [1] * w.ndim
        shape[axis] = -1
        wq = np.clip(np.round(w / ws.astype(np.float64).reshape(shape)), -127, 127).astype(np.int8)
        extra.append(helper.make_node(
            "DequantizeLinear", [const(wname + "_quantized", wq), const(wname + "_scale", ws),
                                 const(wname + "_zero_point", np.zeros(len(ws), np.int8))],
            [wname + "_dq"], name=wname + "_DequantizeLinear", axis=axis))
        return wname + "_dq", ws

    def bias_dq(bname, x_scale, ws):
        b = numpy_helper.to_array(inits[bname]).astype(np.float64)
        bs = (np.float32(x_scale) * ws).astype(np.float32)
        bs = np.where(bs > 0, bs, np.float32(1.0)).astype(np.float32)
        bq = np.clip(np.round(b / bs.astype(np.float64)), -2**31, 2**31 - 1).astype(np.int32)
        extra.append(helper.make_node(
            "DequantizeLinear", [const(bname + "_quantized", bq), const(bname + "_scale", bs),
                                 const(bname + "_zero_point", np.zeros(len(bs), np.int32))],
            [bname + "_dq"], name=bname + "_DequantizeLinear", axis=0))
        return bname + "_dq"

    # The activations to quantize: every non-constant input and output of a quantized node.
    tensors = []
    for n in g.node:
        if n.op_type not in QUANTIZED:
            continue
        acts = [n.input[0]] if n.op_type in WEIGHTED else [i for i in n.input if i and i not in consts]
        for t in acts + [o for o in n.output if o]:
            if t not in tensors and t in ranges:  # float tensors only (not shape arithmetic)
                tensors.append(t)
    # Weights and biases behind their DequantizeLinear.
    for n in g.node:
        if n.op_type in WEIGHTED:
            n.input[1], ws = weight_dq(n, n.input[1])
            if len(n.input) > 2 and n.input[2]:
                n.input[2] = bias_dq(n.input[2], params_for(n.input[0])[2], ws)
    # Q -> DQ after each activation; consumers read the DQ. A graph output keeps
    # its name on the DQ (its producer writes "<name>_float").
    for t in tensors:
        s, z, _ = params_for(t)
        if t in graph_outputs:
            src = t + "_float"
            for n in g.node:
                n.output[:] = [src if o == t else o for o in n.output]
            dq_out = t
        else:
            src, dq_out = t, t + "_dq"
            for n in g.node:
                n.input[:] = [dq_out if i == t else i for i in n.input]
        extra.append(helper.make_node("QuantizeLinear", [src, s, z], [t + "_q"], name=t + "_QuantizeLinear"))
        extra.append(helper.make_node("DequantizeLinear", [t + "_q", s, z], [dq_out], name=t + "_DequantizeLinear"))
    g.node.extend(extra)
    g.initializer.extend(new_inits)
    used = {i for n in g.node for i in n.input}
    # Constants only the removed activations read (Clip's bounds) go too.
    keep_nodes = [n for n in g.node if n.op_type != "Constant" or n.output[0] in used]
    del g.node[:]
    g.node.extend(keep_nodes)
    keep = [t for t in g.initializer if t.name in used]
    del g.initializer[:]
    g.initializer.extend(keep)
    return model


def safe_names(model):
    """Value names usable as file names (torch.onnx writes "/layer1/Relu_output_0")."""
    def fix(name):
        return name.lstrip("/").replace("/", "_").replace(":", "_").replace(".", "_") if name else name
    g = model.graph
    for n in g.node:
        n.input[:] = [fix(i) for i in n.input]
        n.output[:] = [fix(o) for o in n.output]
    for coll in (g.initializer, g.input, g.output, g.value_info):
        for t in coll:
            t.name = fix(t.name)


def topo_sort(model):
    g = model.graph
    ready = {i.name for i in g.input} | {t.name for t in g.initializer} | {""}
    pending, out = list(g.node), []
    while pending:
        rest = []
        for n in pending:
            if all(i in ready for i in n.input):
                out.append(n)
                ready.update(n.output)
            else:
                rest.append(n)
        if len(rest) == len(pending):
            raise RuntimeError("graph has a cycle")
        pending = rest
    del g.node[:]
    g.node.extend(out)


def build(name, out_path, size=224, seed=0, calib_images=4, fp32=None, opset=13):
    """fp32: an already exported float model of `name` (skips torch). From opset 14
    on, torch exports hard-swish as one HardSwish node instead of HardSigmoid * x."""
    torch.manual_seed(seed)
    with tempfile.TemporaryDirectory() as tmp:
        model = onnx.load(fp32) if fp32 else export_fp32(name, size, os.path.join(tmp, "fp32.onnx"), opset)
        inline_identities(model)
        remove_activations(model)
        rng = np.random.default_rng(seed)
        images = (rng.random((calib_images, 3, size, size), dtype=np.float32) * 2 - 1).astype(np.float32)
        ranges = calibrate(model, images, tmp)
        quantize(model, ranges)
        topo_sort(model)
        safe_names(model)
        model.producer_name = "npukit make_qdq_torchvision.py"
        onnx.checker.check_model(model)
        onnx.save(model, out_path)
    return out_path


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("net")
    ap.add_argument("out")
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--opset", type=int, default=13)
    ap.add_argument("--fp32", help="quantize this float export instead of exporting again")
    a = ap.parse_args()
    build(a.net, a.out, a.size, a.seed, fp32=a.fp32, opset=a.opset)
    m = onnx.load(a.out)
    ops = {}
    for n in m.graph.node:
        ops[n.op_type] = ops.get(n.op_type, 0) + 1
    print(f"wrote {a.out}: " + ", ".join(f"{k} {v}" for k, v in sorted(ops.items())))

#!/usr/bin/python3
"""The bundled int8 QOperator model (models/fashion_mnist_int8.onnx) on the
1,000 bundled evaluation images: npukit's runner (profile onnxruntime) against
ONNX Runtime itself (npm onnxruntime-node, run by tools/ort/run.mjs, one intra-op
thread). The logits (DequantizeLinear of int8 codes) must be bit-identical, and
so must the uint8 codes of the QuantizeLinear and of every QLinearConv (conv1,
conv2 and the 1x1 fully connected layer); predictions are counted.

ONNX Runtime's u8 x s8 QLinearConv/QLinearMatMul (MLAS) saturates each sum of
two adjacent products to int16 on x86 without VNNI (vpmaddubsw) and sums
exactly with VNNI. Profile onnxruntime follows this host's CPU (CPUID, as MLAS
does), so the test holds on either kind of machine. It also checks that the
model really exercises the difference: the profile forcing the OTHER kernel
(onnxruntime_vnni on a non-VNNI host, onnxruntime_avx2 on a VNNI host) must
NOT reproduce ORT.
"""
import os
import shutil
import sys
import tempfile

import numpy as np
import onnx

import npukit
from harness import MODELS, ort_missing, run_ort_model

MODEL = os.path.join(MODELS, "fashion_mnist_int8.onnx")
IMAGES = os.path.join(MODELS, "fashion_mnist_eval_images.npy")
LABELS = os.path.join(MODELS, "fashion_mnist_eval_labels.npy")


def model_input(images):
    # The models take float images in [0, 1], (N, 1, 28, 28) (see models/train_fashion_mnist.py).
    return (images.astype(np.float32) / np.float32(255.0)).reshape(-1, 1, 28, 28)


def run_ort(model_path, x, tmp):
    xin = os.path.join(tmp, "x.npy")
    np.save(xin, x)
    name = onnx.load(model_path).graph.input[0].name
    out = os.path.join(tmp, "ort_" + os.path.basename(model_path))
    return run_ort_model(model_path, {name: xin}, out)


def expose_quantized_tensors(tmp):
    # A copy of the model whose outputs also include the uint8 codes of the
    # QuantizeLinear and of every QLinearConv, so the integer tensors of each
    # layer are compared too, not only the logits.
    m = onnx.load(MODEL)
    names = [n.output[0] for n in m.graph.node if n.op_type in ("QuantizeLinear", "QLinearConv")]
    for name in names:
        m.graph.output.append(onnx.helper.make_tensor_value_info(name, onnx.TensorProto.UINT8, None))
    path = os.path.join(tmp, "int8_with_codes.onnx")
    onnx.save(m, path)
    return path, names


def main():
    if ort_missing():
        print(ort_missing())
        print("0 passed, 1 failed")
        return 1
    images = np.load(IMAGES)
    labels = np.load(LABELS)
    x = model_input(images)
    passed = failed = 0
    tmp = tempfile.mkdtemp(prefix="npukit_int8_")
    try:
        path, code_names = expose_quantized_tensors(tmp)
        want = run_ort(path, x, tmp)
        name = onnx.load(MODEL).graph.input[0].name
        got = npukit.run_model(path, {name: x}, profile="onnxruntime")
        mode = npukit.onnxruntime_accumulation("onnxruntime")
        print(f"host {npukit.host_cpu_features()}: u8 x s8 accumulation {mode}")
        other = "onnxruntime_vnni" if mode == "mlas_u8s8_int16_pairs" else "onnxruntime_avx2"
        alt = npukit.run_model(path, {name: x}, profile=other)["logits"]
        alt_rows = int(np.count_nonzero((np.asarray(alt) != want["logits"]).any(axis=1)))
        if alt_rows:
            passed += 1
            print(f"PASS the other kernel's semantics ({other}) differ from ORT in {alt_rows} "
                  f"of {len(alt)} logits rows (the model exercises the difference)")
        else:
            failed += 1
            print(f"FAIL profile {other} also reproduces ORT: this test cannot tell the kernels apart")
        for out in ["logits"] + code_names:
            g, w = np.asarray(got[out]), want[out]
            if g.shape != w.shape or g.dtype != w.dtype:
                failed += 1
                print(f"FAIL {out}: npukit {g.shape} {g.dtype} vs ORT {w.shape} {w.dtype}")
                continue
            # Bit-identical: compare the raw bytes (floats included, so -0.0 != 0.0).
            diff = g.view(np.uint8).reshape(g.shape[0], -1) != w.view(np.uint8).reshape(w.shape[0], -1)
            bad_rows = int(np.count_nonzero(diff.any(axis=1)))
            if bad_rows:
                failed += 1
                r = int(np.argmax(diff.any(axis=1)))
                print(f"FAIL {out}: {bad_rows} of {g.shape[0]} images differ; first image {r}: "
                      f"npukit {g[r].ravel()[:10]} ORT {w[r].ravel()[:10]}")
            else:
                passed += 1
                print(f"PASS {out}: {g.shape[0]} images, {g.size} values bit-identical ({g.dtype})")
        # Predictions: the same argmax, and an accuracy no lower than chance by far
        # (the lead's figures for the model are printed, asserted only loosely).
        pg = np.argmax(np.asarray(got["logits"]), axis=1)
        pw = np.argmax(want["logits"], axis=1)
        agree = int(np.count_nonzero(pg == pw))
        acc_npukit = float(np.mean(pg == labels))
        acc_ort = float(np.mean(pw == labels))
        print(f"predictions agree on {agree} of {len(labels)} images; accuracy npukit "
              f"{acc_npukit:.3f}, ORT {acc_ort:.3f}")
        if agree == len(labels) and acc_npukit > 0.5:
            passed += 1
        else:
            failed += 1
            print("FAIL predictions differ or accuracy is implausibly low")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

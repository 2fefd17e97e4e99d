#!/usr/bin/python3
"""The bundled int8 QOperator model (models/fashion_mnist_int8.onnx) on the
1,000 bundled evaluation images: npukit's runner (profile onnxruntime) against
ONNX Runtime itself (npm onnxruntime-node, run by tools/ort/run.mjs, one intra-op
thread). The logits (DequantizeLinear of int8 codes) must be bit-identical, and
so must the uint8 codes of the first quantized tensor; predictions are counted.

NOT a ctest case yet (its name does not start with test_): it FAILS on x86
machines without AVX-VNNI. There ONNX Runtime's u8 x s8 QLinearConv (MLAS,
vpmaddubsw) saturates each sum of two adjacent products to int16 before the
int32 accumulation, while npukit's onnxruntime profile accumulates exactly in
int32. On this AVX2 machine 930 of 1000 logits rows differ (first conv: 534,196
codes, max |diff| 61); a numpy model of the pairwise int16 saturation matches
ORT's first-conv output exactly. Run it by hand:
  PYTHONPATH=build/python /usr/bin/python3 tests/python/int8_model_ort_check.py
Rename it to test_int8_model_ort.py once the profile models the saturation.
"""
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx

import npukit

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MODEL = os.path.join(ROOT, "models", "fashion_mnist_int8.onnx")
IMAGES = os.path.join(ROOT, "models", "fashion_mnist_eval_images.npy")
LABELS = os.path.join(ROOT, "models", "fashion_mnist_eval_labels.npy")
RUNNER = os.path.join(ROOT, "tools", "ort", "run.mjs")


def model_input(images):
    # The models take float images in [0, 1], (N, 1, 28, 28) (see models/train_fashion_mnist.py).
    return (images.astype(np.float32) / np.float32(255.0)).reshape(-1, 1, 28, 28)


def run_ort(model_path, x, tmp):
    xin = os.path.join(tmp, "x.npy")
    np.save(xin, x)
    name = onnx.load(model_path).graph.input[0].name
    out = os.path.join(tmp, "ort_" + os.path.basename(model_path))
    r = subprocess.run(["node", RUNNER, model_path, "--input", f"{name}={xin}", "--output-dir", out],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"tools/ort/run.mjs failed: {r.stderr[-2000:]}")
    return {f[:-4]: np.load(os.path.join(out, f)) for f in os.listdir(out) if f.endswith(".npy")}


def expose_first_quantized(tmp):
    # A copy of the model whose outputs also include the QuantizeLinear output
    # (uint8 codes), so the integer tensors are compared too, not only logits.
    m = onnx.load(MODEL)
    q = next(n for n in m.graph.node if n.op_type == "QuantizeLinear")
    vi = onnx.helper.make_tensor_value_info(q.output[0], onnx.TensorProto.UINT8, None)
    m.graph.output.append(vi)
    path = os.path.join(tmp, "int8_with_codes.onnx")
    onnx.save(m, path)
    return path, q.output[0]


def main():
    ort_dir = os.environ.get("NPUKIT_ORT_DIR", os.path.join(ROOT, ".cache", "onnxruntime"))
    if not os.path.exists(os.path.join(ort_dir, "node_modules", "onnxruntime-node")):
        print(f"ONNX Runtime not found in {ort_dir}: run scripts/install-onnxruntime.sh")
        print("0 passed, 1 failed")
        return 1
    images = np.load(IMAGES)
    labels = np.load(LABELS)
    x = model_input(images)
    passed = failed = 0
    tmp = tempfile.mkdtemp(prefix="npukit_int8_")
    try:
        path, codes_name = expose_first_quantized(tmp)
        want = run_ort(path, x, tmp)
        name = onnx.load(MODEL).graph.input[0].name
        got = npukit.run_model(path, {name: x}, profile="onnxruntime")
        for out in ("logits", codes_name):
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

#!/usr/bin/python3
"""Issue 4: on the full 10,000-image Fashion-MNIST test set (Debian package
dataset-fashion-mnist, IDX files under /usr/share/datasets/fashion-mnist/),
the bundled int8 model's top-1 accuracy (profile onnxruntime) is within 1 point
of the fp32 model's. Both accuracies are printed. The IDX files are read here
with numpy (independently of the CLI's reader); the labels come from the
dataset, not from any model.
"""
import gzip
import os
import sys
import time

import numpy as np

import npukit

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DATA = "/usr/share/datasets/fashion-mnist"
FP32 = os.path.join(ROOT, "models", "fashion_mnist_fp32.onnx")
INT8 = os.path.join(ROOT, "models", "fashion_mnist_int8.onnx")


def read_idx(name):
    # IDX: two zero bytes, type 0x08 (unsigned byte), rank, big-endian int32 dims, data.
    with gzip.open(os.path.join(DATA, name), "rb") as f:
        raw = f.read()
    assert raw[:3] == b"\x00\x00\x08", f"{name}: not an IDX file of unsigned bytes"
    rank = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * i: 8 + 4 * i], "big") for i in range(rank)]
    data = np.frombuffer(raw, np.uint8, offset=4 + 4 * rank)
    assert data.size == int(np.prod(dims)), f"{name}: truncated"
    return data.reshape(dims)


def accuracy(model, x, labels, profile):
    name = "image"
    hits = 0
    for s in range(0, len(x), 2000):  # batches keep the buffers small
        out = npukit.run_model(model, {name: x[s:s + 2000]}, profile=profile)
        hits += int(np.count_nonzero(np.argmax(out["logits"], axis=1) == labels[s:s + 2000]))
    return hits / len(x)


def main():
    if not os.path.exists(os.path.join(DATA, "t10k-images-idx3-ubyte.gz")):
        print(f"FAIL {DATA} missing: install the Debian package dataset-fashion-mnist")
        print("0 passed, 1 failed")
        return 1
    t0 = time.time()
    images = read_idx("t10k-images-idx3-ubyte.gz")
    labels = read_idx("t10k-labels-idx1-ubyte.gz")
    passed = failed = 0
    if images.shape == (10000, 28, 28) and labels.shape == (10000,):
        passed += 1
        print("PASS test set: 10000 images 28x28 with 10000 labels")
    else:
        failed += 1
        print(f"FAIL test set shapes {images.shape} {labels.shape}")
    # The models take float images in [0, 1], (N, 1, 28, 28) (models/train_fashion_mnist.py).
    x = (images.astype(np.float32) / np.float32(255.0)).reshape(-1, 1, 28, 28)
    acc_fp32 = accuracy(FP32, x, labels, "onnxruntime")
    acc_int8 = accuracy(INT8, x, labels, "onnxruntime")
    gap = abs(acc_int8 - acc_fp32) * 100
    print(f"top-1 on {len(labels)} images: fp32 {acc_fp32 * 100:.2f}%, int8 {acc_int8 * 100:.2f}% "
          f"(profile onnxruntime, u8 x s8 {npukit.onnxruntime_accumulation('onnxruntime')}), "
          f"gap {gap:.2f} points, {time.time() - t0:.1f} s")
    if gap <= 1.0:
        passed += 1
        print("PASS |int8 - fp32| <= 1 point")
    else:
        failed += 1
        print("FAIL |int8 - fp32| > 1 point")
    # Guard against a degenerate model: both must be far above chance (10%).
    if min(acc_fp32, acc_int8) > 0.8:
        passed += 1
        print("PASS both accuracies above 80%")
    else:
        failed += 1
        print("FAIL an accuracy is implausibly low")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

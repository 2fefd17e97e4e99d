#!/usr/bin/python3
"""Trains the bundled Fashion-MNIST CNN and writes the files of the main job.

    /usr/bin/python3 models/train_fashion_mnist.py train      # train, export fp32 ONNX, eval subset
    /usr/bin/python3 models/train_fashion_mnist.py quantize   # int8 QOperator model (needs npukit built)

Both stages run by default. Data: Debian's dataset-fashion-mnist (IDX files in
/usr/share/datasets/fashion-mnist/). Model: conv 3x3 (8) -> relu -> max pool 2
-> conv 3x3 (16) -> relu -> average pool 2 -> fully connected (10).

Outputs (in models/):
  fashion_mnist_fp32.onnx   float model, input "image" (N, 1, 28, 28) float32 in [0, 1]
  fashion_mnist_int8.onnx   QOperator model with the same input and output (float logits)
  fashion_mnist_eval_images.npy / _labels.npy   the first 1,000 test images (uint8) and labels
  fashion_mnist_weights.pt  trained weights (input of the quantize stage; not committed)
"""
import gzip
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.environ.get("NPUKIT_FASHION_MNIST", "/usr/share/datasets/fashion-mnist")
EVAL_COUNT = 1000
CALIB_COUNT = 2000  # training images used to calibrate the int8 model


def read_idx(name):
    """An IDX file (gzip or plain) as a numpy array (big-endian header, uint8 data)."""
    path = os.path.join(DATA, name)
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        raw = f.read()
    ndim = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(raw, np.uint8, offset=4 + 4 * ndim).reshape(dims)


def load_split(split):
    prefix = "train" if split == "train" else "t10k"
    images = read_idx(f"{prefix}-images-idx3-ubyte.gz")
    labels = read_idx(f"{prefix}-labels-idx1-ubyte.gz")
    return images, labels


def make_net():
    import torch.nn as nn

    return nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.AvgPool2d(2, count_include_pad=False),  # no padding; avoids an exported Pad
        nn.Flatten(), nn.Linear(16 * 7 * 7, 10))


def to_float(images):
    return (images.astype(np.float32) / np.float32(255.0)).reshape(-1, 1, 28, 28)


def train(epochs=2):
    import torch

    torch.manual_seed(0)
    torch.set_num_threads(1)  # the build machine is shared
    net = make_net()
    x_train, y_train = load_split("train")
    x_test, y_test = load_split("test")
    xt = torch.from_numpy(to_float(x_train))
    yt = torch.from_numpy(y_train.astype(np.int64))
    opt = torch.optim.Adam(net.parameters(), lr=2e-3)
    loss_fn = torch.nn.CrossEntropyLoss()
    gen = torch.Generator().manual_seed(0)
    for epoch in range(epochs):
        start = time.time()
        perm = torch.randperm(len(xt), generator=gen)
        net.train()
        for i in range(0, len(xt), 64):
            idx = perm[i:i + 64]
            opt.zero_grad()
            loss = loss_fn(net(xt[idx]), yt[idx])
            loss.backward()
            opt.step()
        acc = evaluate(net, x_test, y_test)
        print(f"epoch {epoch + 1}: loss {loss.item():.3f}, test accuracy {acc:.2%} "
              f"({time.time() - start:.0f} s)", flush=True)
    torch.save(net.state_dict(), os.path.join(HERE, "fashion_mnist_weights.pt"))
    export_fp32(net)
    np.save(os.path.join(HERE, "fashion_mnist_eval_images.npy"), x_test[:EVAL_COUNT].copy())
    np.save(os.path.join(HERE, "fashion_mnist_eval_labels.npy"), y_test[:EVAL_COUNT].copy())


def evaluate(net, images, labels):
    import torch

    net.eval()
    with torch.no_grad():
        pred = net(torch.from_numpy(to_float(images))).argmax(1).numpy()
    return float((pred == labels).mean())


def export_fp32(net):
    import torch

    net.eval()
    path = os.path.join(HERE, "fashion_mnist_fp32.onnx")
    torch.onnx.export(net, torch.zeros(1, 1, 28, 28), path, input_names=["image"],
                      output_names=["logits"], dynamic_axes={"image": {0: "N"}, "logits": {0: "N"}},
                      opset_version=13, do_constant_folding=True)
    print(f"wrote {path}")


if __name__ == "__main__":
    stages = sys.argv[1:] or ["train", "quantize"]
    if "train" in stages:
        train()
    if "export" in stages:  # re-export the saved weights
        import torch
        net = make_net()
        net.load_state_dict(torch.load(os.path.join(HERE, "fashion_mnist_weights.pt")))
        export_fp32(net)
    if "quantize" in stages:
        sys.path.insert(0, HERE)
        from quantize_fashion_mnist import quantize
        quantize()

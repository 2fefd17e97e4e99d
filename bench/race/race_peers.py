#!/usr/bin/python3
"""PyTorch's side of npukit_race, and the ONNX models of its ONNX Runtime side.

    /usr/bin/python3 bench/race/race_peers.py DIR [--threads 1,2] [--quick] [--stat median|min]
                                              [--torchvision]

DIR is what `npukit_race --export DIR` wrote (cases.tsv and the inputs). For
every case and thread count this times PyTorch (NCHW and channels_last; 8-bit
cases on quantized tensors, scale 1 and zero point 0 as npukit_race uses) and
writes DIR/results-torch.tsv plus each output as NCHW .npy under DIR/out/;
npukit_race --results DIR checks them. It also writes one single-node ONNX
model per case under DIR/onnx/ for race_ort.mjs. Times are the median of
repeats after warm-up, taken around the Python call (what a PyTorch user pays).
"""
import argparse
import csv
import os
import statistics
import sys
import time

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper


def read_cases(d):
    with open(os.path.join(d, "cases.tsv"), newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def median_seconds(fn, quick, minimum=False):
    """Median (or minimum) of repeats after warm-up; the same budget as npukit_race."""
    warmup, target, lo, hi = (1, 0.01, 3, 20) if quick else (2, 0.1, 3, 200)
    first = 0.0
    for _ in range(warmup):
        t0 = time.perf_counter()
        fn()
        first = time.perf_counter() - t0
    reps = min(hi, max(lo, int(target / first))) if first > 0 else lo
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times) if minimum else statistics.median(times)


def geometry(c):
    h = int(c["h"])
    if c["global"] == "1":
        return h, 1, 0
    return int(c["kernel"]), int(c["stride"]), int(c["pad"])


def torch_call(c, x):
    """The PyTorch call for case c on tensor x (float or quantized)."""
    k, s, p = geometry(c)
    if c["op"] == "max":
        return lambda: F.max_pool2d(x, k, s, p)
    if c["op"] == "avg_calibrated":
        # Quantized avg_pool2d keeps the input's scale and zero point.
        def unsupported():
            raise NotImplementedError("no separate output scale (QLinearAveragePool's y_scale)")
        return unsupported
    include = c["op"] == "avg_include_pad"
    return lambda: F.avg_pool2d(x, k, s, p, count_include_pad=include)


def torch_input(c, arr, layout):
    t = torch.from_numpy(arr)
    if c["dtype"] != "f32":
        # Quantized tensors over the same codes: quint8 for u8, qint8 for s8.
        t = torch._make_per_tensor_quantized_tensor(t, float(c["scale"]), int(c["zero_point"]))
    if layout == "nhwc":
        t = t.contiguous(memory_format=torch.channels_last)
    return t


def to_numpy(y):
    y = y.contiguous()
    return (y.int_repr() if y.is_quantized else y).numpy()


ONNX_TYPE = {"f32": TensorProto.FLOAT, "u8": TensorProto.UINT8, "s8": TensorProto.INT8}
NP_TYPE = {"f32": np.float32, "u8": np.uint8, "s8": np.int8}


def onnx_model(c):
    """One ONNX node computing case c with ONNX Runtime's operators."""
    n, ch, h, w = (int(c[k]) for k in ("n", "c", "h", "w"))
    k, s, p = geometry(c)
    dt = c["dtype"]
    glob = c["global"] == "1"
    inits, domain, opset = [], "", 13
    if c["op"] == "max":
        if glob and dt == "f32":
            node = helper.make_node("GlobalMaxPool", ["x"], ["y"])
        else:
            node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[k, k], strides=[s, s],
                                    pads=[p] * 4)
    elif dt == "f32":
        if glob:
            node = helper.make_node("GlobalAveragePool", ["x"], ["y"])
        else:
            node = helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[k, k],
                                    strides=[s, s], pads=[p] * 4,
                                    count_include_pad=int(c["op"] == "avg_include_pad"))
    else:
        domain = "com.microsoft"
        names = ["x", "x_scale", "x_zero_point", "y_scale", "y_zero_point"]
        zp = np.array(int(c["zero_point"]), NP_TYPE[dt])
        sc = np.float32(float(c["scale"]))
        yzp = np.array(int(c["y_zero_point"]), NP_TYPE[dt])
        ysc = np.float32(float(c["y_scale"]))
        inits = [numpy_helper.from_array(sc, "x_scale"), numpy_helper.from_array(zp, "x_zero_point"),
                 numpy_helper.from_array(ysc, "y_scale"), numpy_helper.from_array(yzp, "y_zero_point")]
        if glob:
            node = helper.make_node("QLinearGlobalAveragePool", names, ["y"], domain=domain,
                                    channels_last=0)
        else:
            node = helper.make_node("QLinearAveragePool", names, ["y"], domain=domain,
                                    kernel_shape=[k, k], strides=[s, s], pads=[p] * 4,
                                    count_include_pad=int(c["op"] != "avg_exclude_pad"))
    g = helper.make_graph([node], c["id"], [helper.make_tensor_value_info("x", ONNX_TYPE[dt],
                                                                         [n, ch, h, w])],
                          [helper.make_tensor_value_info("y", ONNX_TYPE[dt], None)],
                          initializer=inits)
    ops = [helper.make_opsetid("", opset)] + ([helper.make_opsetid(domain, 1)] if domain else [])
    m = helper.make_model(g, opset_imports=ops)
    m.ir_version = 8
    return m


def export_torchvision(d):
    """resnet18 and mobilenet_v2 from torchvision with seeded random weights (no
    download), exported to ONNX in fp32 and in int8 (QOperator by
    scripts/make_int8_torchvision.py, QDQ by scripts/make_qdq_torchvision.py,
    which calibrates with npukit's Python module: PYTHONPATH), with one seeded
    1x3x224x224 input; listed in DIR/models.tsv for npukit_race and
    race_ort.mjs. The int8 rows must give ONNX Runtime's exact bytes."""
    import subprocess
    import torchvision
    os.makedirs(os.path.join(d, "models"), exist_ok=True)
    torch.manual_seed(0)
    x = torch.randn(1, 3, 224, 224)
    data = os.path.abspath(os.path.join(d, "models", "input224.npy"))
    np.save(data, x.numpy())
    scripts = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts")
    with open(os.path.join(d, "models.tsv"), "a") as f:
        for name in ("resnet18", "mobilenet_v2"):
            model = getattr(torchvision.models, name)(weights=None).eval()
            path = os.path.abspath(os.path.join(d, "models", name + ".onnx"))
            torch.onnx.export(model, x, path, input_names=["input"], output_names=["logits"],
                              opset_version=13)
            f.write(f"{name}\t{path}\t{data}\tclose\n")
        for name in ("resnet18", "mobilenet_v2"):
            for kind, script in (("int8", "make_int8_torchvision.py"),
                                 ("qdq", "make_qdq_torchvision.py")):
                path = os.path.abspath(os.path.join(d, "models", f"{name}_{kind}.onnx"))
                print(f"race_peers.py: {script} {name}", file=sys.stderr)
                r = subprocess.run([sys.executable, os.path.join(scripts, script), name, path],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                if r.returncode != 0:  # say why the row is missing, then go on
                    tail = (r.stderr.strip().splitlines() or ["no message"])[-1]
                    print(f"race_peers.py: {script} {name} failed: {tail}", file=sys.stderr)
                    continue
                f.write(f"{name}_{kind}\t{path}\t{data}\texact\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--stat", choices=["median", "min"], default="median")
    ap.add_argument("--torchvision", action="store_true",
                    help="also export resnet18 and mobilenet_v2 (random weights, batch 1; "
                         "fp32, int8 QOperator and QDQ) for the models table")
    a = ap.parse_args()
    threads = [int(t) for t in a.threads.split(",")]
    if a.torchvision:
        export_torchvision(a.dir)
    cases = read_cases(a.dir)
    os.makedirs(os.path.join(a.dir, "out"), exist_ok=True)
    os.makedirs(os.path.join(a.dir, "onnx"), exist_ok=True)
    for c in cases:
        onnx.save(onnx_model(c), os.path.join(a.dir, "onnx", c["id"] + ".onnx"))
    note = f"torch {torch.__version__}, quantized engine {torch.backends.quantized.engine}"
    rows = []
    for i, c in enumerate(cases):
        arr = np.load(os.path.join(a.dir, c["input"]))
        for layout in ("nchw", "nhwc"):
            x = torch_input(c, arr, layout)
            fn = torch_call(c, x)
            for t in threads:
                torch.set_num_threads(t)
                print(f"[{i + 1}/{len(cases)}] PyTorch {c['id']} {layout} threads {t}",
                      file=sys.stderr)
                try:
                    y = fn()
                    out = f"out/torch-{c['id']}-{layout}-t{t}.npy"
                    np.save(os.path.join(a.dir, out), to_numpy(y))
                    rows.append([c["id"], "PyTorch", layout, t, f"{median_seconds(fn, a.quick, a.stat == 'min'):.9f}",
                                 out, note])
                except Exception as e:  # a case PyTorch does not offer: say why
                    rows.append([c["id"], "PyTorch", layout, t, "-1", "",
                                 f"PyTorch: {type(e).__name__}: {str(e).splitlines()[0][:120]}"])
    with open(os.path.join(a.dir, "results-torch.tsv"), "w", newline="") as f:
        w = csv.writer(f, delimiter="\t", lineterminator="\n")
        w.writerow(["id", "peer", "layout", "threads", "seconds", "output", "note"])
        w.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())

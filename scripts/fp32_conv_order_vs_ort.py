#!/usr/bin/python3
"""Which fp32 summation order does ONNX Runtime 1.30 use for Conv on this host?

Runs single Conv (+ Relu) models with the shapes of resnet18's and
mobilenet_v2's convolutions in ORT (tools/ort/run.mjs, opt level "all", 1
thread) and compares its outputs bit for bit with numpy models of candidate
orders (float64 products are exact; an FMA is modelled as one rounding of
product + accumulator, which can differ from a true FMA only by a double
rounding, about 1 in 2^29 operations):

  seq-muladd  npukit's `sequential`: taps (ic, kh, kw) in order, a rounded
              multiply and a rounded add each, then + bias
  seq-fma     the same order with one FMA per tap
  mlas        MLAS's NCHWc order read from its source (snchwc.cpp and the
              kernels): input channels in blocks of B (16 with AVX-512, 8 with
              AVX2); each block is an FMA chain from 0 over (kh, kw, ic in
              block) [pointwise: over the ics of 128-channel batches]; the
              block sums are added to the output one by one (out = chain +
              out), then + bias; a stem with fewer than B input channels:
              one chain per input channel over (kh, kw); depthwise: one chain
              over (kh, kw); groups = 1 convs whose input channels are not a
              multiple of B run as im2col + SGEMM: one FMA chain over the K
              taps (ic, kh, kw), then + bias.

    /usr/bin/python3 scripts/fp32_conv_order_vs_ort.py [--block 16] [--seed S]
Prints per layer: elements, and how many differ from ORT's bits per model.
"""
import argparse
import os
import sys
import tempfile

import numpy as np
import onnx
from onnx import helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "python"))
import harness  # noqa: E402

# (name, IC, OC, H, K, stride, pad, groups)
RESNET18 = [("r.stem", 3, 64, 224, 7, 2, 3, 1), ("r.l1.3x3", 64, 64, 56, 3, 1, 1, 1),
            ("r.l2.3x3s2", 64, 128, 56, 3, 2, 1, 1), ("r.l2.3x3", 128, 128, 28, 3, 1, 1, 1),
            ("r.l2.down", 64, 128, 56, 1, 2, 0, 1), ("r.l3.3x3", 256, 256, 14, 3, 1, 1, 1),
            ("r.l4.3x3", 512, 512, 7, 3, 1, 1, 1), ("r.l4.down", 256, 512, 14, 1, 2, 0, 1)]
MOBILENET = [("m.stem", 3, 32, 224, 3, 2, 1, 1), ("m.dw32", 32, 32, 112, 3, 1, 1, 32),
             ("m.pw32-16", 32, 16, 112, 1, 1, 0, 1), ("m.pw16-96", 16, 96, 112, 1, 1, 0, 1),
             ("m.dw96s2", 96, 96, 112, 3, 2, 1, 96), ("m.pw96-24", 96, 24, 56, 1, 1, 0, 1),
             ("m.pw24-144", 24, 144, 56, 1, 1, 0, 1), ("m.dw144", 144, 144, 56, 3, 1, 1, 144),
             ("m.pw192-64", 192, 64, 14, 1, 1, 0, 1), ("m.pw576-160", 576, 160, 7, 1, 1, 0, 1),
             ("m.pw960-320", 960, 320, 7, 1, 1, 0, 1), ("m.pw320-1280", 320, 1280, 7, 1, 1, 0, 1)]


def taps(x, K, stride, pad, OH):
    """(IC, K, K, OH*OH) float64 inputs of every tap, and a validity mask."""
    IC, H = x.shape[1], x.shape[2]
    xp = np.zeros((IC, H + 2 * pad, H + 2 * pad), np.float64)
    xp[:, pad:pad + H, pad:pad + H] = x[0]
    valid = np.zeros((H + 2 * pad, H + 2 * pad), bool)
    valid[pad:pad + H, pad:pad + H] = True
    t = np.empty((IC, K, K, OH * OH))
    v = np.empty((K, K, OH * OH), bool)
    for kh in range(K):
        for kw in range(K):
            sl = (slice(kh, kh + stride * (OH - 1) + 1, stride), slice(kw, kw + stride * (OH - 1) + 1, stride))
            t[:, kh, kw] = xp[(slice(None),) + sl].reshape(IC, -1)
            v[kh, kw] = valid[sl].reshape(-1)
    return t, v


def chain(terms, fma):
    """One chain from 0 over a list of (x (P,), w (OC,), valid (P,)) terms."""
    acc = None
    for x, w, ok in terms:
        prod = x[:, None] * w[None, :].astype(np.float64)
        if acc is None:
            new = prod.astype(np.float32)
            acc = np.where(ok[:, None], new, np.float32(0))
            continue
        new = (prod + acc).astype(np.float32) if fma else \
            (prod.astype(np.float32).astype(np.float64) + acc).astype(np.float32)
        acc = np.where(ok[:, None], new, acc)
    return acc


def model(x, w, b, K, stride, pad, groups, OH, how, block, residual=None):
    IC, OC = x.shape[1], w.shape[0]
    t, v = taps(x, K, stride, pad, OH)
    if groups > 1:  # depthwise: a chain per channel over (kh, kw), + bias
        out = np.empty((OH * OH, OC), np.float32)
        for c in range(OC):
            terms = [(t[c, kh, kw], w[c:c + 1, 0, kh, kw], v[kh, kw]) for kh in range(K) for kw in range(K)]
            out[:, c:c + 1] = chain(terms, how != "seq-muladd")
        return (out + b[None, :]).astype(np.float32)
    order = [(ic, kh, kw) for ic in range(IC) for kh in range(K) for kw in range(K)]
    if how in ("seq-muladd", "seq-fma"):
        segments = [order]
    elif IC < block:  # NCHW stem kernel: one chain per input channel
        segments = [[(ic, kh, kw) for kh in range(K) for kw in range(K)] for ic in range(IC)]
    elif IC % block:  # im2col + SGEMM: one chain over K = IC*KH*KW taps
        segments = [order]
    elif K == 1:  # pointwise: chains over 128-channel batches
        segments = [[(ic, 0, 0) for ic in range(s, min(s + 128, IC))] for s in range(0, IC, 128)]
    else:
        segments = [[(ic, kh, kw) for kh in range(K) for kw in range(K) for ic in range(s, s + block)]
                    for s in range(0, IC, block)]
    out = residual if how == "mlas-sum" else None
    for seg in segments:
        part = chain([(t[ic, kh, kw], w[:, ic, kh, kw], v[kh, kw]) for ic, kh, kw in seg],
                     how != "seq-muladd")
        out = part if out is None else (part.astype(np.float64) + out).astype(np.float32)
    out = (out + b[None, :]).astype(np.float32)
    if residual is not None and how != "mlas-sum":
        out = (out + residual).astype(np.float32)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=20261127)
    ap.add_argument("--block", type=int, default=16)
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--add", action="store_true",
                    help="Conv -> Add(residual) -> Relu models (ORT fuses the Add into the conv)")
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    layers = [l for l in RESNET18 + MOBILENET if not args.only or l[0] in args.only]
    if args.add:
        layers = [l for l in layers if l[7] == 1]
    with tempfile.TemporaryDirectory() as tmp:
        jobs, geos = [], []
        for i, (name, IC, OC, H, K, s, p, g) in enumerate(layers):
            x = np.maximum(rng.standard_normal((1, IC, H, H)), 0).astype(np.float32)
            w = (rng.standard_normal((OC, IC // g, K, K)) * np.sqrt(2.0 / (IC // g * K * K))).astype(np.float32)
            b = (rng.standard_normal(OC) * 0.1).astype(np.float32)
            OH = (H + 2 * p - K) // s + 1
            r = rng.standard_normal((1, OC, OH, OH)).astype(np.float32)
            nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c" if args.add else "y"], kernel_shape=[K, K],
                                      strides=[s, s], pads=[p] * 4, group=g)]
            ins = [harness.value_info("x", x)]
            if args.add:
                nodes += [helper.make_node("Add", ["c", "r"], ["a"]), helper.make_node("Relu", ["a"], ["y"])]
                ins.append(harness.value_info("r", r))
            m = harness.single_node_model(nodes, ins, [harness.value_info("y", np.float32, [1, OC, OH, OH])],
                                          [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
            d = os.path.join(tmp, str(i))
            os.makedirs(d)
            onnx.save(m, os.path.join(d, "m.onnx"))
            np.save(os.path.join(d, "x.npy"), x)
            np.save(os.path.join(d, "r.npy"), r)
            inputs = {"x": f"{i}/x.npy"}
            if args.add:
                inputs["r"] = f"{i}/r.npy"
            jobs.append({"model": f"{i}/m.onnx", "inputs": inputs, "output_dir": f"{i}/out"})
            geos.append((name, (x, w, b, K, s, p, g, OH), r[0].reshape(OC, -1).T if args.add else None))
        res, _ = harness.run_ort_batch(jobs, tmp)
        print(f"seed {args.seed}, block {args.block}{', Conv+Add+Relu' if args.add else ''}; "
              "differing elements / total")
        print(f"{'layer':14s} {'total':>8s} {'seq-muladd':>9s} {'seq-fma':>9s} {'mlas':>9s}"
              + (f" {'mlas-sum':>9s}" if args.add else ""))
        for i, (name, geo, resid) in enumerate(geos):
            if i >= len(res) or not res[i].get("ok"):
                print(name, "ORT failed", res[i] if i < len(res) else "")
                continue
            got = np.load(os.path.join(tmp, str(i), "out", "y.npy"))
            ref = got[0].reshape(geo[1].shape[0], -1).T
            row = [name, ref.size]
            for how in ("seq-muladd", "seq-fma", "mlas") + (("mlas-sum",) if args.add else ()):
                mine = model(*geo, how=how, block=args.block, residual=resid)
                if args.add:
                    mine = np.maximum(mine, np.float32(0))
                row.append(int((mine.view(np.uint32) != ref.view(np.uint32)).sum()))
            print(f"{row[0]:14s} {row[1]:8d} " + " ".join(f"{v:9d}" for v in row[2:]), flush=True)


if __name__ == "__main__":
    main()

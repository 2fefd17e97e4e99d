#!/usr/bin/python3
"""ONNX Runtime 1.30 differential of npukit's ConvTranspose and Resize (fp32, NCHW).

Random single-node models (seed NPUKIT_SEED, printed) run by npukit's ONNX
runner and by ONNX Runtime (tools/ort/run.mjs). Shapes must agree exactly, and
a configuration npukit rejects must be rejected by ONNX Runtime too. Values:
Resize nearest must agree bit for bit; Resize linear and ConvTranspose sum in
another order than ONNX Runtime (docs/semantics.md), so they must agree within
|d| <= 4 ulp-of-float * (sum of |terms| + 1) per element; the count of
bit-exact elements is printed. Each failure prints a repro line.
"""
import json
import os
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import npukit
from harness import run_ort_batch
from ort_diff import SEED, count, ort_missing

EPS = float(np.finfo(np.float32).eps)


class Case:
    def __init__(self, op, config, node_op, x, attrs, consts, opset, order, bound):
        self.op, self.config, self.node_op = op, config, node_op
        self.x, self.attrs, self.consts, self.opset, self.order = x, attrs, consts, opset, order
        self.bound = bound  # per-element sum of |terms| (None: bit-exact required)
        self.expect = None

    def model(self):
        node = helper.make_node(self.node_op, self.order, ["y"], **self.attrs)
        ins = [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(self.x.shape))]
        inits = [numpy_helper.from_array(v, k) for k, v in self.consts.items()]
        out = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
        g = helper.make_graph([node], "g", ins, [out], initializer=inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", self.opset)])
        m.ir_version = 8
        return m

    def repro(self, i):
        return (f"repro: NPUKIT_SEED={SEED} op={self.op} case={i} "
                f"config={json.dumps(self.config, sort_keys=True)}")


def npukit_answer(c, d):
    path = os.path.join(d, "m.onnx")
    onnx.save(c.model(), path)
    try:
        c.expect = npukit.run_model(path, {"x": c.x})["y"]
    except npukit.Error:
        c.expect = None


def conv_transpose_bound(x, w, attrs, y_shape):
    """sum |x * w| of each output: a float64 ConvTranspose of |x| and |w| via numpy."""
    N, C, H, W = x.shape
    G = attrs.get("group", 1)
    Mg, kh, kw = w.shape[1], w.shape[2], w.shape[3]
    s = attrs.get("strides", [1, 1])
    dl = attrs.get("dilations", [1, 1])
    full_h = (H - 1) * s[0] + (kh - 1) * dl[0] + 1 + 64
    full_w = (W - 1) * s[1] + (kw - 1) * dl[1] + 1 + 64
    acc = np.zeros((N, Mg * G, full_h, full_w))
    # Non-finite inputs count 0 here: outputs they reach must then agree bit for bit.
    ax = np.abs(np.nan_to_num(x.astype(np.float64), nan=0, posinf=0, neginf=0))
    aw = np.abs(w.astype(np.float64))
    Cg = C // G
    for g in range(G):
        xs = ax[:, g * Cg:(g + 1) * Cg]
        for i in range(kh):
            for j in range(kw):
                contrib = np.einsum("nchw,cm->nmhw", xs, aw[g * Cg:(g + 1) * Cg, :, i, j])
                acc[:, g * Mg:(g + 1) * Mg, i * dl[0]:i * dl[0] + (H - 1) * s[0] + 1:s[0],
                    j * dl[1]:j * dl[1] + (W - 1) * s[1] + 1:s[1]] += contrib
    # The output window is unknown here (pads): bound every output by the largest sum.
    return np.full(y_shape, acc.max(axis=(2, 3), keepdims=True).max() + 1.0)


def gen_conv_transpose(rng, d):
    out = []
    for i in range(count(160)):
        N, G = int(rng.integers(1, 3)), int(rng.choice([1, 1, 2, 3]))
        C, Mg = G * int(rng.integers(1, 4)), int(rng.integers(1, 4))
        H, W = int(rng.integers(1, 7)), int(rng.integers(1, 7))
        kh, kw = int(rng.integers(1, 5)), int(rng.integers(1, 5))
        s = [int(rng.integers(1, 4)), int(rng.integers(1, 4))]
        dl = [int(rng.integers(1, 3)), int(rng.integers(1, 3))]
        attrs = {"strides": s}
        if dl != [1, 1]:
            attrs["dilations"] = dl
        if G > 1:
            attrs["group"] = G
        if rng.random() < 0.5:
            attrs["kernel_shape"] = [kh, kw]
        r = rng.random()
        if r < 0.45:
            attrs["pads"] = [int(rng.integers(0, kh)), int(rng.integers(0, kw)),
                             int(rng.integers(0, kh)), int(rng.integers(0, kw))]
        elif r < 0.7:
            attrs["auto_pad"] = str(rng.choice(["VALID", "SAME_UPPER", "SAME_LOWER"]))
        elif r < 0.85:
            full = [(H - 1) * s[0] + (kh - 1) * dl[0] + 1, (W - 1) * s[1] + (kw - 1) * dl[1] + 1]
            os_ = [max(1, full[0] - int(rng.integers(0, 3))), max(1, full[1] - int(rng.integers(0, 3)))]
            attrs["output_shape"] = os_ if rng.random() < 0.9 else [N, Mg * G] + os_  # 4: rejected
            if rng.random() < 0.3:
                attrs["auto_pad"] = "SAME_UPPER"
        if rng.random() < 0.3:
            lim = s if rng.random() < 0.85 else [max(a, b) for a, b in zip(s, dl)]
            attrs["output_padding"] = [int(rng.integers(0, lim[0])), int(rng.integers(0, lim[1]))]
        if rng.random() < 0.03:  # bad attributes: both must reject
            attrs["output_padding"] = [max(s[0], dl[0]), 0]
        x = rng.uniform(-2, 2, size=(N, C, H, W)).astype(np.float32)
        if rng.random() < 0.2:
            x.flat[int(rng.integers(0, x.size))] = rng.choice([np.nan, np.inf, -0.0, 1e-40])
        w = rng.uniform(-1, 1, size=(C, Mg, kh, kw)).astype(np.float32)
        consts, order = {"w": w}, ["x", "w"]
        if rng.random() < 0.6:
            consts["b"] = rng.uniform(-1, 1, size=(Mg * G,)).astype(np.float32)
            order.append("b")
        cfg = {"x": [N, C, H, W], "w": list(w.shape), "bias": "b" in consts, **attrs}
        c = Case("ConvTranspose", cfg, "ConvTranspose", x, attrs, consts, 13, order, None)
        npukit_answer(c, d)
        if c.expect is not None:
            c.bound = conv_transpose_bound(x, w, attrs, c.expect.shape)
        out.append(c)
    return out


MODES = ["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn"]
NEAREST = ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"]


def gen_resize(rng, d):
    out = []
    for i in range(count(200)):
        N, C = int(rng.integers(1, 3)), int(rng.integers(1, 4))
        H, W = int(rng.integers(1, 9)), int(rng.integers(1, 9))
        mode = "linear" if rng.random() < 0.5 else "nearest"
        ctm = str(rng.choice(MODES[:4] if mode == "linear" else MODES))
        attrs = {"mode": mode, "coordinate_transformation_mode": ctm}
        if mode == "nearest":
            attrs["nearest_mode"] = str(rng.choice(NEAREST))
        opset = int(rng.choice([11, 13, 18, 19]))
        x = rng.uniform(-4, 4, size=(N, C, H, W)).astype(np.float32)
        if rng.random() < 0.2:
            x.flat[int(rng.integers(0, x.size))] = rng.choice([np.nan, np.inf, -0.0, 1e-40])
        roi = np.zeros((0,), np.float32)
        if rng.random() < 0.5:
            sc = [float(rng.choice([0.5, 0.6, 0.75, 1.0, 1.3, 1.5, 2.0, 2.5, 3.0, 0.34]))
                  for _ in range(2)]
            consts = {"roi": roi, "scales": np.array([1, 1] + sc, np.float32)}
            order = ["x", "roi", "scales"]
            cfg_s = {"scales": sc}
        else:
            sz = [int(rng.integers(1, 13)), int(rng.integers(1, 13))]
            consts = {"roi": roi, "scales": np.zeros((0,), np.float32),
                      "sizes": np.array([N, C] + sz, np.int64)}
            order = ["x", "roi", "scales", "sizes"]
            if opset >= 13 and rng.random() < 0.5:
                order, consts = ["x", "", "", "sizes"], {"sizes": consts["sizes"]}
            cfg_s = {"sizes": sz}
        cfg = {"x": [N, C, H, W], "opset": opset, **attrs, **cfg_s}
        c = Case("Resize", cfg, "Resize", x, attrs, consts, opset, order, None)
        npukit_answer(c, d)
        if c.expect is not None and mode == "linear":
            c.bound = np.full(c.expect.shape, float(np.nanmax(np.abs(x[np.isfinite(x)]),
                                                              initial=0)) + 1.0)
        out.append(c)
    return out


def run(cases, tmp):
    jobs = []
    for i, c in enumerate(cases):
        os.makedirs(os.path.join(tmp, str(i)))
        onnx.save(c.model(), os.path.join(tmp, str(i), "m.onnx"))
        np.save(os.path.join(tmp, str(i), "x.npy"), c.x)
        jobs.append({"model": f"{i}/m.onnx", "inputs": {"x": f"{i}/x.npy"},
                     "output_dir": f"{i}/out"})
    return run_ort_batch(jobs, tmp)[0]


def compare(cases, results, tmp):
    stats, passed, failed, shown = {}, 0, 0, 0
    for i, c in enumerate(cases):
        key = c.op + ("" if c.op != "Resize" else "/" + c.attrs["mode"])
        st = stats.setdefault(key, {"configs": 0, "elements": 0, "exact": 0, "failed": 0,
                                    "both_reject": 0, "max_ulps_rel": 0.0})
        st["configs"] += 1
        res = results[i] if i < len(results) else {"ok": False, "error": "no result"}
        msg = None
        if c.expect is None:
            if res["ok"]:
                msg = "npukit rejected a configuration ORT runs"
            else:
                st["both_reject"] += 1
        elif not res["ok"]:
            msg = f"ORT error: {res['error'][:300]}"
        else:
            got = np.load(os.path.join(tmp, str(i), "out", "y.npy"))
            if got.shape != c.expect.shape:
                msg = f"shape ORT {got.shape} npukit {c.expect.shape}"
            else:
                st["elements"] += got.size
                same = (got.view(np.uint32) == c.expect.view(np.uint32)) | (
                    np.isnan(got) & np.isnan(c.expect))
                st["exact"] += int(same.sum())
                if c.bound is None:
                    bad = ~same
                else:
                    with np.errstate(invalid="ignore"):
                        diff = np.abs(got.astype(np.float64) - c.expect.astype(np.float64))
                        tol = 4 * EPS * c.bound
                        bad = ~same & ~(diff <= tol)
                        rel = np.where(same, 0, diff / (EPS * c.bound))
                    st["max_ulps_rel"] = max(st["max_ulps_rel"], float(np.nanmax(rel, initial=0)))
                if bad.any():
                    idx = tuple(int(v) for v in np.argwhere(bad)[0])
                    msg = (f"{int(bad.sum())} of {got.size} elements differ, first at {idx}: "
                           f"ORT {got[idx]!r} npukit {c.expect[idx]!r}")
        if msg:
            failed += 1
            st["failed"] += 1
            if shown < 20:
                print(f"FAIL {msg}\n  {c.repro(i)}")
                shown += 1
        else:
            passed += 1
    print(f"\n{'operator':<22}{'configs':>8}{'elements':>10}{'bit-exact':>10}{'failed':>8}"
          f"{'both reject':>12}{'max |d|/(eps*sum|t|)':>22}")
    for op, st in sorted(stats.items()):
        print(f"{op:<22}{st['configs']:>8}{st['elements']:>10}{st['exact']:>10}{st['failed']:>8}"
              f"{st['both_reject']:>12}{st['max_ulps_rel']:>22.3f}")
    return passed, failed, stats


def main():
    missing = ort_missing()
    if missing:
        print("SKIP:", missing)
        return 0
    print(f"seed NPUKIT_SEED={SEED}")
    rng = np.random.default_rng(SEED)
    t0 = time.time()
    with tempfile.TemporaryDirectory() as d:
        cases = gen_conv_transpose(rng, d) + gen_resize(rng, d)
    with tempfile.TemporaryDirectory(prefix="npukit_ort_") as tmp:
        results = run(cases, tmp)
        passed, failed, stats = compare(cases, results, tmp)
    print(f"\n{passed} passed, {failed} failed ({time.time() - t0:.1f} s)")
    weak = [op for op, st in stats.items() if st["elements"] == 0]
    if weak:
        print("FAIL: operators with no compared element:", weak)
        return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

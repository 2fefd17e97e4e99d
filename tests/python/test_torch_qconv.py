#!/ usr / bin / python3
"""npukit.qlinear_conv(profile="pytorch") against PyTorch 1.13's quantized
Conv2d module (engine qnnpack, the one Debian's torch has) on random scales:
QNNPACK requantizes with (w_scale * x_scale) * (1 / y_scale) in fp32, ONNX
Runtime with (x_scale * w_scale) / y_scale, one ulp apart for some scales
(QLinearConvParams::multiplier). Every output code must match.

Shapes, groups, strides, pads, dilations, per-tensor and per-channel weight
scales, weight zero points and biases are random; scales are fp32 values (torch
keeps doubles, QNNPACK uses floats) and biases sit a quarter step off the int32
grid so torch's bias quantization cannot round them to another integer. The
profile onnxruntime's differing codes are counted too: if no case tells the two
orders apart the test could not fail, so that is an error.

    PYTHONPATH=build/python /usr/bin/python3 tests/python/test_torch_qconv.py
"""
import os
import sys

import numpy as np
import torch

import npukit

SEED = int(os.environ.get("NPUKIT_SEED", "20261127"))
CASES = int(os.environ.get("NPUKIT_CASES", "400"))


def f32(v):
    return float(np.float32(v))


def random_case(rng):
    groups = int(rng.choice([1, 1, 2, 3]))
    ic = groups * int(rng.integers(1, 5))
    oc = groups * int(rng.integers(1, 6))
    kh, kw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    dil = (int(rng.integers(1, 3)), int(rng.integers(1, 3)))
    pad = (int(rng.integers(0, kh)), int(rng.integers(0, kw)))
    stride = (int(rng.integers(1, 3)), int(rng.integers(1, 3)))
    h = int(rng.integers((kh - 1) * dil[0] + 1, 10))
    w = int(rng.integers((kw - 1) * dil[1] + 1, 10))
    n = int(rng.integers(1, 3))
    return dict(n=n, ic=ic, oc=oc, h=h, w=w, k=(kh, kw), stride=stride, pad=pad, dil=dil,
                groups=groups, per_channel=bool(rng.random() < 0.5), bias=bool(rng.random() < 0.7))


def multipliers(x_scale, w_scale, y_scale):
    xs, ws, ys = np.float32(x_scale), np.float32(w_scale), np.float32(y_scale)
    return (xs * ws) / ys, (ws * xs) * (np.float32(1) / ys)  # ORT's, PyTorch's


def aim_at_a_flip(x, x_zp, y_zp, w, w_zps, w_scales, x_scale, y_scale, b, c):
    """Random scales rarely move a code (one in ~10^5 where the orders differ
    by an ulp): where they differ for a channel, pick its bias so that the
    first output's accumulator is one whose code the two orders round apart."""
    acc0 = npukit.conv_integer(
        x, w, np.uint8(x_zp), w_zps, group=c["groups"], strides=list(c["stride"]),
        pads=[c["pad"][0], c["pad"][1], c["pad"][0], c["pad"][1]], dilations=list(c["dil"]))
    accs = np.arange(-(1 << 18), 1 << 18, dtype=np.int64)
    for o in range(c["oc"]):
        m_ort, m_pt = multipliers(x_scale, w_scales[o % len(w_scales)], y_scale)
        if m_ort == m_pt:
            continue
        v_ort = np.rint(accs.astype(np.float32) * m_ort)
        v_pt = np.rint(accs.astype(np.float32) * m_pt)
        ok = (v_ort != v_pt) & (v_pt >= -y_zp) & (v_pt <= 255 - y_zp) & (v_ort >= -y_zp) & (
            v_ort <= 255 - y_zp)
        hits = accs[ok]
        if hits.size:
            b[o] = np.int32(hits[hits.size // 2] - int(acc0[0, o, 0, 0]))


def run_case(rng, c):
    x_scale = f32(np.exp(rng.uniform(np.log(1e-3), np.log(0.5))))
    y_scale = f32(np.exp(rng.uniform(np.log(1e-3), np.log(2.0))))
    x_zp, y_zp = int(rng.integers(0, 256)), int(rng.integers(0, 256))
    noc = c["oc"] if c["per_channel"] else 1
    w_scales = np.array([f32(np.exp(rng.uniform(np.log(1e-4), np.log(0.05)))) for _ in range(noc)],
                        np.float32)
    w_zps = rng.integers(-8, 9, size=noc).astype(np.int8)
    x = rng.integers(0, 256, size=(c["n"], c["ic"], c["h"], c["w"])).astype(np.uint8)
    wshape = (c["oc"], c["ic"] // c["groups"]) + c["k"]
    w = rng.integers(-128, 128, size=wshape).astype(np.int8)
    b = rng.integers(-20000, 20000, size=c["oc"]).astype(np.int32) if c["bias"] else None
    if b is not None:
        aim_at_a_flip(x, x_zp, y_zp, w, w_zps, w_scales, x_scale, y_scale, b, c)

    mod = torch.nn.quantized.Conv2d(c["ic"], c["oc"], c["k"], stride=c["stride"], padding=c["pad"],
                                    dilation=c["dil"], groups=c["groups"], bias=c["bias"])
    if c["per_channel"]:
        qw = torch._make_per_channel_quantized_tensor(
            torch.from_numpy(w), torch.from_numpy(w_scales.astype(np.float64)),
            torch.from_numpy(w_zps.astype(np.int64)), 0)
    else:
        qw = torch._make_per_tensor_quantized_tensor(torch.from_numpy(w), float(w_scales[0]),
                                                     int(w_zps[0]))
    fb = None
    if b is not None:
#A quarter step off the grid of x_scale* w_scale(per channel).
        ws = np.broadcast_to(w_scales, (c["oc"],))
        off = 0.25 * np.sign(b.astype(np.float64))
        fb = torch.from_numpy(((b.astype(np.float64) + off) * (ws.astype(np.float64) * x_scale))
                              .astype(np.float32))
    mod.set_weight_bias(qw, fb)
    mod.scale, mod.zero_point = y_scale, y_zp
    qx = torch._make_per_tensor_quantized_tensor(torch.from_numpy(x), x_scale, x_zp)
    want = mod(qx).int_repr().numpy()

    def npk(profile):
        return npukit.qlinear_conv(
            x, np.float32(x_scale), np.uint8(x_zp), w, w_scales, w_zps, np.float32(y_scale),
            np.uint8(y_zp), b, group=c["groups"], strides=list(c["stride"]),
            pads=[c["pad"][0], c["pad"][1], c["pad"][0], c["pad"][1]], dilations=list(c["dil"]),
            profile=profile)

    got = npk("pytorch")
    if got.shape != want.shape:
        return want.size, -1, 0, dict(x_scale=x_scale, y_scale=y_scale)
    bad = int((got != want).sum())
    ort_bad = int((npk("onnxruntime") != want).sum())
    return want.size, bad, ort_bad, dict(x_scale=x_scale, y_scale=y_scale, x_zp=x_zp, y_zp=y_zp,
                                         w_scales=w_scales.tolist(), w_zps=w_zps.tolist())


def main():
    torch.backends.quantized.engine = "qnnpack"
    print(f"seed {SEED}, {CASES} cases")
    rng = np.random.default_rng(SEED)
    failed = total = ort_total = 0
    for i in range(CASES):
        c = random_case(rng)
        size, bad, ort_bad, scales = run_case(rng, c)
        total += size
        ort_total += ort_bad
        if bad:
            failed += 1
            what = "output shape differs" if bad < 0 else f"{bad} of {size} codes differ"
            print(f"FAIL case {i}: {what}\n  repro: NPUKIT_SEED={SEED} case={i} {c} {scales}")
    print(f"{CASES - failed} of {CASES} cases equal torch ({total} codes); the onnxruntime "
          f"multiplier order differs from torch in {ort_total} codes")
    if ort_total == 0:
        print("FAIL: no case tells the two multiplier orders apart (the test could not fail)")
        failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

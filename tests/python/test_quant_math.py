"""npukit's quantization math from Python, against independent oracles:
exact rationals (fractions.Fraction), numpy float32 arithmetic and PyTorch's
float64 convolution. Seeded; every failure prints its case."""
import random
import sys
from fractions import Fraction
import math

import numpy as np
import torch

import npukit

SEED = 20261125
passed = failed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL:", what)


def frac_round(fr, rule):
    """Reference rounding of a Fraction, written from each rule's definition."""
    fl = math.floor(fr)
    rest = fr - fl
    if rest == 0:
        return fl
    if rule == "floor":
        return fl
    if rule == "ceil":
        return fl + 1
    if rule == "toward_zero":
        return fl + 1 if fr < 0 else fl
    if rest < Fraction(1, 2):
        return fl
    if rest > Fraction(1, 2):
        return fl + 1
    return {"half_to_even": fl if fl % 2 == 0 else fl + 1, "half_up": fl + 1, "half_down": fl,
            "half_away_from_zero": fl if fr < 0 else fl + 1,
            "half_toward_zero": fl + 1 if fr < 0 else fl}[rule]


def test_rounding(rng):
    rules = npukit.roundings()
    check(len(rules) == 8, "8 rounding rules")
    nums = np.array([rng.randint(-10**12, 10**12) >> rng.randint(0, 40) for _ in range(3000)], np.int64)
    dens = np.array([(rng.randint(1, 10**6) >> rng.randint(0, 19)) or 1 for _ in range(3000)], np.int64)
    dens *= np.where(np.arange(3000) % 2 == 0, 1, -1)
    for rule in rules:
        got = npukit.div_round(nums, dens, rule)
        bad = [(int(a), int(b)) for a, b, g in zip(nums, dens, got) if frac_round(Fraction(int(a), int(b)), rule) != g]
        check(not bad, f"div_round {rule}: mismatches {bad[:3]}")
        got = npukit.shift_round(nums, 7, rule)
        bad = [int(a) for a, g in zip(nums, got) if frac_round(Fraction(int(a), 128), rule) != g]
        check(not bad, f"shift_round {rule}: mismatches {bad[:3]}")
        xs = np.array([rng.randint(-4000, 4000) / 8.0 for _ in range(2000)])
        got = npukit.round_to_int(xs, rule)
        bad = [x for x, g in zip(xs, got) if frac_round(Fraction(float(x)), rule) != g]
        check(not bad, f"round_to_int {rule}: mismatches {bad[:3]}")
    # numpy's rint rounds half to even
    xs = np.arange(-50, 50) + 0.5
    check((npukit.round_to_int(xs, "half_to_even") == np.rint(xs)).all(), "half_to_even == np.rint")
    try:
        npukit.div_round(1, 0)
        check(False, "div_round by 0 raises")
    except npukit.Error as e:
        check("den" in str(e), f"div_round error names den: {e}")


def test_tflite_multiplier(rng):
    for _ in range(3000):
        M = math.ldexp(rng.random() + 0.5, rng.randint(-30, 10))
        m, shift = npukit.quantize_multiplier(M)
        # frexp, then round half away from zero (std::round), from exact rationals
        q, e = math.frexp(M)
        want = math.floor(Fraction(q) * 2**31 + Fraction(1, 2))
        if want == 2**31:
            want, e = 2**30, e + 1
        check((m, shift) == (want, e), f"quantize_multiplier({M!r}) = {(m, shift)} want {(want, e)}")
    check(npukit.quantize_multiplier(2.0**-40) == (0, 0), "tiny multiplier flushed like TFLite")
    check(npukit.quantize_multiplier(2.0**31, single_rounding=True) == (2**31 - 1, 30), "single rounding saturates")
    try:
        npukit.quantize_multiplier(2.0**-40, checked=True)
        check(False, "checked raises")
    except npukit.Error as e:
        check("[-31, 30]" in str(e), f"checked error names the limit: {e}")
    # single rounding is the exact product rounded half up
    xs = np.array([rng.randint(-2**31, 2**31 - 1) for _ in range(2000)], np.int32)
    m, shift = npukit.quantize_multiplier(0.0123)
    got = npukit.multiply_by_quantized_multiplier(xs, m, shift, single_rounding=True)
    want = [math.floor(Fraction(int(x) * m, 2**(31 - shift)) + Fraction(1, 2)) for x in xs]
    check(list(got) == want, "single rounding == floor(x*m/2^(31-shift) + 1/2)")
    # double rounding differs on 5 * 0.25 (hand-computed: 3 then 2)
    check(npukit.multiply_by_quantized_multiplier(5, 2**30, -1) == 2, "double rounding 5*0.25 -> 2")
    check(npukit.saturating_rounding_doubling_high_mul(-1, 2**30) == 0, "SRDHM -0.5 -> 0")
    check(npukit.rounding_divide_by_pot(-3, 1) == -2, "RDBPOT -1.5 -> -2")


def test_xnnpack(rng):
    check(npukit.xnnpack_multiplier(0.75) == (12582912, 24), "xnnpack multiplier of 0.75")
    accs = np.array([rng.randint(-2**31, 2**31 - 1) >> rng.randint(0, 31) for _ in range(3000)], np.int32)
    scale = np.float32(0.0037)
    mant, shift = npukit.xnnpack_multiplier(float(scale))
    check(Fraction(mant, 2**shift) == Fraction(float(scale)), "xnnpack multiplier is the float exactly")
    got = npukit.xnnpack_requantize(accs, float(scale), 3, -128, 127, "rndnu")
    want = [min(max(math.floor(Fraction(int(a)) * Fraction(float(scale)) + Fraction(1, 2)), -131), 124) + 3 for a in accs]
    check(list(got) == want, "rndnu == exact product rounded half up, clamped")
    got = npukit.xnnpack_requantize(accs, float(scale), 3, -128, 127, "fp32")
    f = np.clip(accs.astype(np.float32) * scale, np.float32(-131), np.float32(124))
    check((got == np.rint(f).astype(np.int64) + 3).all(), "fp32 == numpy float32 product, rint")


def test_cvm(rng):
    check(npukit.cvm_float(0.1, 8) == (102, -10), "cvm_float(0.1, 8)")
    check(npukit.cvm_float(1.25, 3) == (2, -1), "cvm_float ties to even like Python round")
    for _ in range(500):
        r = math.ldexp(rng.random() + 0.01, rng.randint(-20, 20))
        frac, exp = npukit.cvm_float(r, 16)
        check(0 < frac < 2**15 and abs(math.ldexp(frac, exp) - r) <= r * 2**-14, f"cvm_float({r!r}) = {(frac, exp)}")
    x = np.arange(-70000, 70001, dtype=np.int64)
    for b in (1, 2, 5, 13):
        want = np.clip(((x >> (b - 1)) + 1) >> 1, -127, 127)
        check((npukit.cvm_right_shift(x, b, 8) == want).all(), f"cvm_right_shift shift {b}")
    check(npukit.cvm_requantize(100, 102, -10, 8) == 10, "cvm_requantize 100 * 102 / 1024")


def test_calibration(rng):
    nrng = np.random.default_rng(SEED)
    for P in (2, 4, 8, 12, 16):
        x = (nrng.standard_normal((2, 3, 4, 5)) * 3).astype(np.float32)
        p = npukit.mrt_calibrate(x, "symmetric", P)
        sc = (2**(P - 1) - 1) / np.abs(x.astype(np.float64)).max()
        check(p.sc == [sc], f"symmetric sc P={P}")
        want = np.clip(np.floor(sc * x.astype(np.float64)), -(2**(P - 1) - 1), 2**(P - 1) - 1)
        check((npukit.mrt_quantize(x, p) == want).all(), f"symmetric Xq P={P}")
        q = npukit.mrt_quantize(x, p)
        check(np.array_equal(npukit.mrt_dequantize(q, p), (q / sc).astype(np.float32)), f"symmetric dequant P={P}")
        # zero point, channel-wise on axis 1
        p = npukit.mrt_calibrate(x, "zero_point", P, 1)
        xd = x.astype(np.float64)
        lo, hi = xd.min(axis=(0, 2, 3)), xd.max(axis=(0, 2, 3))
        sc = (2**P - 1) / (hi - lo)
        zp = np.ceil(-sc * lo)
        check(np.array_equal(p.sc, sc) and np.array_equal(p.zp, zp), f"zero-point sc/zp P={P}")
        want = np.clip(np.floor(sc[None, :, None, None] * xd + zp[None, :, None, None]), 0, 2**P - 1)
        check((npukit.mrt_quantize(x, p) == want).all(), f"zero-point Xq P={P}")
        # the seed's affine formulas as written
        p = npukit.mrt_calibrate(x, "seed_affine", P)
        sc = (2**P - 1) / (xd.max() - xd.min())
        zp = xd.min() * (2**P - 1) / (xd.max() - xd.min())
        want = np.clip(np.floor(sc * xd - zp), 0, 2**P - 1)
        check(p.sc == [sc] and p.zp == [zp] and (npukit.mrt_quantize(x, p) == want).all(), f"seed affine P={P}")
    for bad in (1, 17):
        try:
            npukit.mrt_calibrate(np.ones(3, np.float32), "symmetric", bad)
            check(False, f"precision {bad} raises")
        except npukit.Error as e:
            check("[2, 16]" in str(e), f"precision error names the range: {e}")
    # ONNX-style, per tensor and per axis, against numpy float32 arithmetic
    for dtype, lo, hi in (("uint8", 0, 255), ("int8", -128, 127)):
        x = (nrng.standard_normal((3, 8)) * 2).astype(np.float32)
        for axis in (-1, 0, 1):
            p = npukit.onnx_calibrate(x, dtype, axis=axis)
            scale = np.array(p.scale, np.float32)
            zp = np.array(p.zero_point, np.int64)
            shape = (-1, 1) if axis == 0 else (1, -1) if axis == 1 else (1, 1)
            want = np.clip(np.rint(x / scale.reshape(shape)).astype(np.int64) + zp.reshape(shape), lo, hi)
            q = npukit.onnx_quantize(x, p)
            check(q.dtype == np.dtype(dtype) and (q == want).all(), f"onnx_quantize {dtype} axis {axis}")
            back = ((q.astype(np.int64) - zp.reshape(shape)).astype(np.float32) * scale.reshape(shape))
            check(np.array_equal(npukit.onnx_dequantize(q, p), back), f"onnx_dequantize {dtype} axis {axis}")
        rlo, rhi = min(0.0, float(x.min())), max(0.0, float(x.max()))
        p = npukit.onnx_calibrate(x, dtype)
        s = (np.float32(rhi) - np.float32(rlo)) / np.float32(hi - lo)
        check(p.scale[0] == s, f"onnx scale {dtype}")
        check(p.zero_point[0] == int(np.rint(np.clip(np.float32(lo) - np.float32(rlo) / s, lo, hi))), f"onnx zp {dtype}")


def test_conv(rng):
    for i in range(60):
        g, icg, opg = rng.randint(1, 3), rng.randint(1, 3), rng.randint(1, 3)
        kh, kw = rng.randint(1, 3), rng.randint(1, 3)
        s, d = [rng.randint(1, 2), rng.randint(1, 3)], [rng.randint(1, 2), rng.randint(1, 2)]
        pad = [rng.randint(0, 2) for _ in range(2)]  # symmetric, as the seed writes padding
        h, w = (kh - 1) * d[0] + rng.randint(1, 5), (kw - 1) * d[1] + rng.randint(1, 5)
        x = np.array([[[[rng.randint(0, 255) for _ in range(w)] for _ in range(h)] for _ in range(g * icg)]], np.uint8)
        wt = np.array([[[[rng.randint(-128, 127) for _ in range(kw)] for _ in range(kh)] for _ in range(icg)] for _ in range(g * opg)], np.int8)
        case = f"case {i}: x{x.shape} w{wt.shape} group {g} strides {s} dilations {d} pads {pad}"
        y = npukit.seed_conv2d(x, wt, strides=s, dilations=d, pads=[pad[0], pad[1], pad[0], pad[1]], group=g)
        ref = torch.nn.functional.conv2d(torch.from_numpy(x.astype(np.float64)), torch.from_numpy(wt.astype(np.float64)),
                                         stride=s, padding=pad, dilation=d, groups=g).numpy()
        check(y.dtype == np.int32 and np.array_equal(y, ref), "seed_conv2d vs torch " + case)
        zx, zw = rng.randint(0, 255), rng.randint(-128, 127)
        y = npukit.zero_point_conv2d(x, wt, zx, zw, strides=s, dilations=d, pads=[pad[0], pad[1], pad[0], pad[1]], group=g)
        ref = torch.nn.functional.conv2d(torch.from_numpy(x.astype(np.float64) - zx), torch.from_numpy(wt.astype(np.float64) - zw),
                                         stride=s, padding=pad, dilation=d, groups=g).numpy()
        check(np.array_equal(y, ref), f"zero_point_conv2d vs torch on (x - {zx})(w - {zw}) " + case)
        y2 = npukit.mrt_conv2d(x, wt, zx, zw, 3, -9, 8, strides=s, dilations=d, pads=[pad[0], pad[1], pad[0], pad[1]], group=g)
        want = np.clip(np.floor(ref * 3 / 512 + 0.5), -127, 127)
        check(np.array_equal(y2, want), "mrt_conv2d requantization " + case)


def main():
    rng = random.Random(SEED)
    print(f"seed {SEED}")
    for t in (test_rounding, test_tflite_multiplier, test_xnnpack, test_cvm, test_calibration, test_conv):
        t(rng)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""npukit.bm_pool_quantized (BM168x bm_atomic_{avg,max}_pool_quantized) against
hand-computed cases and an independent numpy model of docs/semantics.md, "Rounding and requantization" and "Pooling geometry and divisors":
int32 sum (avg) or max, (acc + 2^(r-1)) >> r (arithmetic, ties up) for both,
saturate by sign, relu;
max pads with the type's lowest value; ins zeros are elements of value 0."""
import sys

import numpy as np

import npukit

passed = failed = 0


def check(name, cond, detail=""):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL", name, detail)


def model(x, mode, k, s, pad, ins, dil, r, relu):
    n, c, h, w = x.shape
    info = np.iinfo(x.dtype)
    eh, ew = (h - 1) * (ins[0] + 1) + 1, (w - 1) * (ins[1] + 1) + 1
    fill = info.min if mode == "max" else 0
    big = np.full((n, c, eh + pad[0] + pad[1], ew + pad[2] + pad[3]), fill, dtype=np.int64)
    # inserted zeros are real (value 0) elements, padding is `fill`
    big[:, :, pad[0]:pad[0] + eh, pad[2]:pad[2] + ew] = 0
    big[:, :, pad[0]:pad[0] + eh:ins[0] + 1, pad[2]:pad[2] + ew:ins[1] + 1] = x
    kh, kw = (k[0] - 1) * dil[0] + 1, (k[1] - 1) * dil[1] + 1
    oh, ow = (big.shape[2] - kh) // s[0] + 1, (big.shape[3] - kw) // s[1] + 1
    out = np.zeros((n, c, oh, ow), dtype=np.int64)
    for i in range(oh):
        for j in range(ow):
            win = big[:, :, i * s[0]:i * s[0] + kh:dil[0], j * s[1]:j * s[1] + kw:dil[1]]
            acc = win.max(axis=(2, 3)) if mode == "max" else win.sum(axis=(2, 3))
            # rshift_bit shifts the int32 result of both pools (seed 002)
            out[:, :, i, j] = (acc + (1 << (r - 1))) >> r if r > 0 else acc
    out = np.clip(out, info.min, info.max)
    if relu:
        out = np.maximum(out, 0)
    return out.astype(x.dtype)


# Hand-computed: 2x2 avg of [[1, 2], [3, 5]] = sum 11; rshift 2: (11 + 2) >> 2 = 3.
x = np.array([[[[1, 2], [3, 5]]]], dtype=np.int8)
y = npukit.bm_pool_quantized(x, mode="avg", kernel=[2, 2], rshift=2)
check("avg sum 11 >> 2 rounds to 3", y.item() == 3, str(y))
# Ties round up: sum -10, rshift 2: (-10 + 2) >> 2 = -2 (-2.5 -> -2).
x = np.array([[[[-4, -6]]]], dtype=np.int8)
check("tie -2.5 -> -2", npukit.bm_pool_quantized(x, kernel=[1, 2], rshift=2).item() == -2)
# Saturation: 127 + 127 = 254 with rshift 0 -> 127; relu clamps negatives.
x = np.array([[[[127, 127]]]], dtype=np.int8)
check("saturate 254 -> 127", npukit.bm_pool_quantized(x, kernel=[1, 2]).item() == 127)
x = np.array([[[[-100, -1]]]], dtype=np.int8)
check("relu", npukit.bm_pool_quantized(x, kernel=[1, 2], relu=True).item() == 0)
# uint8: 200 + 100 = 300 saturates to 255.
x = np.array([[[[200, 100]]]], dtype=np.uint8)
check("u8 saturate", npukit.bm_pool_quantized(x, kernel=[1, 2]).item() == 255)
# Max pads with -128 (s8): window [pad, -128] -> -128; [pad, -5] -> -5.
x = np.array([[[[-5]]]], dtype=np.int8)
check("max pad s8", npukit.bm_pool_quantized(x, mode="max", kernel=[1, 2], pad=[0, 0, 1, 0]).item() == -5)
# An inserted zero beats negatives in max: [-3, 0(ins), -4] -> 0.
x = np.array([[[[-3, -4]]]], dtype=np.int8)
check("max sees inserted zero", npukit.bm_pool_quantized(x, mode="max", kernel=[1, 3], ins=[0, 1]).item() == 0)
# Max is shifted too: max(-3, 7) = 7, rshift 1 -> (7 + 1) >> 1 = 4; -3 alone -> (-3 + 1) >> 1 = -1.
x = np.array([[[[-3, 7]]]], dtype=np.int8)
check("max rshift", npukit.bm_pool_quantized(x, mode="max", kernel=[1, 2], rshift=1).item() == 4)
check("max rshift negative", npukit.bm_pool_quantized(x[:, :, :, :1], mode="max", kernel=[1, 1], rshift=1).item() == -1)

# if_relu on max: a window of negatives -> 0; relu after saturation on u8 is a no-op.
x = np.array([[[[-3, -100]]]], dtype=np.int8)
check("max relu", npukit.bm_pool_quantized(x, mode="max", kernel=[1, 2], relu=True).item() == 0)
# u8 max pads with 0: a window of padding and 7 -> 7; dilation 2 skips the middle element.
x = np.array([[[[7, 250, 9]]]], dtype=np.uint8)
check("u8 max dilation 2", npukit.bm_pool_quantized(x, mode="max", kernel=[1, 2], dilation=[1, 2]).item() == 9)
# ins_h: rows [1, 2] become [1, 0, 2]; a 3x1 avg sums 3, rshift 1 -> (3 + 1) >> 1 = 2.
x = np.array([[[[1], [2]]]], dtype=np.int8)
check("ins_h avg", npukit.bm_pool_quantized(x, kernel=[3, 1], ins=[1, 0], rshift=1).item() == 2)
# int32 accumulation at the proven limit: 8421504 taps of 255 = 2147483520 <= 2^31 - 1,
# rshift 24: (2147483520 + 2^23) >> 24 = floor(128.4999) = 128.
big = np.full((1, 1, 1, 8421504), 255, np.uint8)
check("int32 limit", npukit.bm_pool_quantized(big, kernel=[1, 8421504], rshift=24).item() == 128)
try:
    npukit.bm_pool_quantized(np.full((1, 1, 1, 8421505), 1, np.uint8), kernel=[1, 8421505])
    check("rejects a window past the int32 limit", False)
except ValueError as e:
    check("rejects a window past the int32 limit", "kernel_h*kernel_w" in str(e), str(e))
for bad, what in ((dict(mode="mean"), "mode"), (dict(pad=[1, 1]), "pad"), (dict(rshift=32), "rshift"),
                  (dict(kernel=[4, 1]), "kernel_h")):
    try:
        npukit.bm_pool_quantized(np.zeros((1, 1, 2, 2), np.int8), **dict(dict(kernel=[1, 1]), **bad))
        check(f"rejects {bad}", False)
    except ValueError as e:
        check(f"rejects {bad}", what in str(e), str(e))

seed = 168
rng = np.random.default_rng(seed)
for case in range(150):
    dt = np.int8 if rng.integers(2) else np.uint8
    info = np.iinfo(dt)
    n, c, h, w = (int(v) for v in rng.integers(1, [6, 4, 9, 9], endpoint=True))
    k = [int(v) for v in rng.integers(1, 4, size=2, endpoint=True)]
    s = [int(v) for v in rng.integers(1, 3, size=2, endpoint=True)]
    pad = [int(v) for v in rng.integers(0, 2, size=4, endpoint=True)]
    ins = [int(v) for v in rng.integers(0, 1, size=2, endpoint=True)]
    dil = [int(v) for v in rng.integers(1, 2, size=2, endpoint=True)]
    r = int(rng.integers(0, 6))
    relu = bool(rng.integers(2))
    mode = "avg" if rng.integers(2) else "max"
    x = rng.integers(info.min, info.max, size=(n, c, h, w), endpoint=True).astype(dt)
    cfg = dict(mode=mode, kernel=k, stride=s, pad=pad, ins=ins, dilation=dil, rshift=r, relu=relu)
    eh, ew = (h - 1) * (ins[0] + 1) + 1 + pad[0] + pad[1], (w - 1) * (ins[1] + 1) + 1 + pad[2] + pad[3]
    if (k[0] - 1) * dil[0] + 1 > eh or (k[1] - 1) * dil[1] + 1 > ew:
        continue
    got = npukit.bm_pool_quantized(x, **cfg)
    want = model(x, mode, k, s, pad, ins, dil, r, relu)
    check(f"random case {case} seed {seed} {dt.__name__} {x.shape} {cfg}",
          got.shape == want.shape and np.array_equal(got, want))

try:
    npukit.bm_pool_quantized(np.zeros((1, 1, 2, 2), np.float32), kernel=[1, 1])
    check("rejects float input", False)
except ValueError as e:
    check("rejects float input", "s8 (input_sign) or u8" in str(e), str(e))

print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)

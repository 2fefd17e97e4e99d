"""npukit's quantized operators against PyTorch 1.13's quantized ops where the
semantics coincide (profile pytorch):

- torch.quantize_per_tensor vs npukit.quantize_linear(profile="pytorch"):
  PyTorch multiplies by the fp32 reciprocal, nearbyint(x * (1.0f / scale)) +
  zero_point (QuantizeParams::multiply_by_reciprocal); every scale must match.
  ONNX divides by the scale (profile onnxruntime): how often the two differ is
  printed for information.
- quantized avg_pool2d (quint8 / qint8, NCHW and channels_last, kernel, stride,
  padding, ceil_mode, count_include_pad) vs npukit.qlinear_average_pool(
  profile="pytorch") with y = x's scale and zero point (PyTorch keeps them):
  acc = sum - zp*valid, v = acc * (scale / scale / divisor), divisor = the window
  clipped to input + padding (count_include_pad) or the valid taps; its NCHW
  kernel rounds v + zp, its channels-last kernel (also any C == 1 tensor) rounds
  v and adds zp. Must match exactly.
- quantized max_pool2d (quint8 / qint8, kernel, stride, padding, dilation,
  ceil_mode) vs npukit.max_pool on the integer codes: must match exactly.
Seeded; a failure prints a one-line repro.
"""
import os
import sys

import numpy as np
import torch

import npukit

SEED = int(os.environ.get("NPUKIT_SEED", "4242"))


def main():
    print(f"seed {SEED}")
    rng = np.random.default_rng(SEED)
    passed = failed = 0
    info_diff = info_total = 0
    for i in range(600):
        pow2 = i % 2 == 0
        shape = [int(rng.integers(1, 6)) for _ in range(int(rng.integers(1, 5)))]
        signed = rng.random() < 0.5
        scale = float(2.0 ** int(rng.integers(-6, 3))) if pow2 else float(
            np.float32(np.exp(rng.uniform(np.log(1e-3), np.log(2.0)))))
        zp = int(rng.integers(-128, 128)) if signed else int(rng.integers(0, 256))
        x = (rng.integers(-300, 300, size=shape) * np.float32(scale)
             + rng.choice(np.array([0, 0.5, -0.5, 0.3], np.float32), size=shape) * np.float32(scale)
             ).astype(np.float32)
        q = torch.quantize_per_tensor(torch.from_numpy(x), scale, zp,
                                      torch.qint8 if signed else torch.quint8)
        want = q.int_repr().numpy()
        got = npukit.quantize_linear(x, np.float32(scale), np.array(zp, np.int8 if signed else np.uint8),
                                     profile="pytorch")
        bad = int((got.astype(np.int32) != want.astype(np.int32)).sum())
        if bad:
            failed += 1
            print(f"FAIL quantize_per_tensor: {bad} of {x.size} differ\n  repro: NPUKIT_SEED={SEED} "
                  f"case={i} shape={shape} scale={scale} zero_point={zp} signed={signed}")
        else:
            passed += 1
        onnx = npukit.quantize_linear(x, np.float32(scale),
                                      np.array(zp, np.int8 if signed else np.uint8),
                                      profile="onnxruntime")
        info_diff += int((onnx.astype(np.int32) != want.astype(np.int32)).sum())
        info_total += x.size

    for i in range(600):
        N, C = int(rng.integers(1, 3)), int(rng.integers(1, 4))
        H, W = int(rng.integers(1, 10)), int(rng.integers(1, 10))
        k = [int(rng.integers(1, 4)), int(rng.integers(1, 4))]
        d = [int(rng.integers(1, 3)), int(rng.integers(1, 3))]
        # PyTorch: pad <= kernel / 2 and the dilated kernel must fit the padded input.
        p = [int(rng.integers(0, k[0] // 2 + 1)), int(rng.integers(0, k[1] // 2 + 1))]
        if (k[0] - 1) * d[0] + 1 > H + 2 * p[0] or (k[1] - 1) * d[1] + 1 > W + 2 * p[1]:
            continue
        s = [int(rng.integers(1, 4)), int(rng.integers(1, 4))]
        ceil = bool(rng.random() < 0.5)
        signed = rng.random() < 0.5
        t = np.int8 if signed else np.uint8
        info = np.iinfo(t)
        codes = rng.integers(info.min, info.max + 1, size=(N, C, H, W)).astype(t)
        qx = torch._make_per_tensor_quantized_tensor(torch.from_numpy(codes), 0.1, 0)
        qy = torch.nn.functional.max_pool2d(qx, k, s, p, d, ceil_mode=ceil)
        want = qy.int_repr().numpy()
        got = npukit.max_pool(codes, kernel_shape=k, strides=s, pads=[p[0], p[1], p[0], p[1]],
                              dilations=d, ceil_mode=int(ceil), profile="pytorch")
        if got.shape != want.shape or (got != want).any():
            failed += 1
            print(f"FAIL quantized max_pool2d: shapes {got.shape} {want.shape}\n  repro: "
                  f"NPUKIT_SEED={SEED} case={i} x={codes.shape} {codes.dtype} kernel={k} stride={s} "
                  f"pad={p} dilation={d} ceil_mode={ceil}")
        else:
            passed += 1
    avg_configs = 0
    for i in range(700):
        N, C = int(rng.integers(1, 3)), int(rng.integers(1, 5))
        H, W = int(rng.integers(1, 9)), int(rng.integers(1, 9))
        k = [int(rng.integers(1, 4)), int(rng.integers(1, 4))]
        p = [int(rng.integers(0, k[0] // 2 + 1)), int(rng.integers(0, k[1] // 2 + 1))]
        s = [int(rng.integers(1, 4)), int(rng.integers(1, 4))]
        ceil, cip, cl = bool(rng.random() < 0.5), bool(rng.random() < 0.5), bool(rng.random() < 0.4)
        signed = rng.random() < 0.5
        if k[0] > H + 2 * p[0] or k[1] > W + 2 * p[1]:
            continue
        t = np.int8 if signed else np.uint8
        info = np.iinfo(t)
        codes = rng.integers(info.min, info.max + 1, size=(N, C, H, W)).astype(t)
        scale = float(np.float32(np.exp(rng.uniform(np.log(1e-3), np.log(2.0)))))
        zp = int(rng.integers(info.min, info.max + 1))
        qx = torch._make_per_tensor_quantized_tensor(torch.from_numpy(codes), scale, zp)
        if cl:
            qx = qx.contiguous(memory_format=torch.channels_last)
        qy = torch.nn.functional.avg_pool2d(qx, k, s, p, ceil_mode=ceil, count_include_pad=cip)
        want = qy.int_repr().numpy()
        x_in = np.ascontiguousarray(codes.transpose(0, 2, 3, 1)) if cl else codes
        got = npukit.qlinear_average_pool(
            x_in, np.float32(scale), zp, np.float32(scale), zp, kernel_shape=k, strides=s,
            pads=[p[0], p[1], p[0], p[1]], ceil_mode=int(ceil), count_include_pad=int(cip),
            channels_last=int(cl), profile="pytorch")
        if cl:
            got = got.transpose(0, 3, 1, 2)
        avg_configs += 1
        if got.shape != want.shape or (got != want).any():
            failed += 1
            nbad = int((got != want).sum()) if got.shape == want.shape else -1
            print(f"FAIL quantized avg_pool2d: {nbad} differ, shapes {got.shape} {want.shape}\n  "
                  f"repro: NPUKIT_SEED={SEED} case={i} x={codes.shape} {codes.dtype} kernel={k} "
                  f"stride={s} pad={p} ceil_mode={ceil} count_include_pad={cip} channels_last={cl} "
                  f"scale={scale} zero_point={zp}")
        else:
            passed += 1
    print(f"quantized avg_pool2d: {avg_configs} configurations compared")
    print(f"quantize_per_tensor vs ONNX's division (profile onnxruntime): {info_diff} of "
          f"{info_total} codes differ (information, not a failure)")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""npukit's quantized operators against PyTorch 1.13's quantized ops where the
semantics coincide (profile pytorch):

- torch.quantize_per_tensor vs npukit.quantize_linear: PyTorch's x86 kernel
  multiplies by the fp32 reciprocal 1/scale and adds the zero point before
  rounding; ONNX divides by the scale. The two coincide exactly when the scale
  is a power of two (the reciprocal is exact) -- those configurations must match
  element for element. With arbitrary scales the disagreement count is printed
  for information (it is a real semantic difference, not a failure).
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
        if pow2:
            if bad:
                failed += 1
                print(f"FAIL quantize_per_tensor: {bad} of {x.size} differ\n  repro: NPUKIT_SEED={SEED} "
                      f"case={i} shape={shape} scale={scale} zero_point={zp} signed={signed}")
            else:
                passed += 1
        else:
            info_diff += bad
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
    print(f"quantize_per_tensor with non-power-of-two scales (reciprocal multiply, zero point "
          f"inside the rounding): {info_diff} of {info_total} codes differ from ONNX's "
          f"QuantizeLinear (information, not a failure)")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""int8 models quantized and exported by PyTorch itself: torchvision's
quantizable networks (random weights, fixed seed), post-training quantization
with torch.ao.quantization (engine qnnpack, the one Debian's torch has),
then torch.onnx.export at opset 13, which writes QuantizeLinear ->
Cast(uint8) -> DequantizeLinear around float Conv / Add / Gemm and builds bias
zero points with ConstantOfShape -> Cast.

- profile onnxruntime: npukit applies ORT's level-1 cleanups and QDQ rules and
  must give ONNX Runtime 1.30's output bytes exactly;
- profile pytorch: the same groups run as PyTorch's quantized operators and
  must give the torch module's own output exactly (its convolutions requantize
  with QNNPACK's (w_scale * x_scale) * (1 / y_scale), which the planner hands
  the kernels). One difference the ONNX file cannot undo: torch.onnx folds the
  int32 biases to trunc(bias / scale) where PyTorch rounds, and the float bias
  is gone from the file (docs/qdq.md); with these seeds (torchvision's
  BatchNorm init makes the fused conv biases 0; fc's biases differ by at most
  one step of x_scale * w_scale) no output code changes;
- NPUKIT_QDQ=literal runs the graph in float (dequantize, float operator,
  quantize): it must differ from both, or the model could not tell them apart.

    PYTHONPATH=build/python /usr/bin/python3 tests/python/test_torch_int8_export.py [--nets resnet18,googlenet]
"""
import argparse
import os
import sys
import tempfile
import warnings

import numpy as np

from harness import ort_missing, run_ort_model

SEED = int(os.environ.get("NPUKIT_SEED", "20261126"))
# Networks also compared with torch's own result and the literal reading
# (googlenet's random-weight logits take too few values to tell readings apart).
TORCH_CHECKED = {"resnet18"}


def export(name, path, seed, size, zero_bias=False):
    import torch
    import torchvision
    torch.manual_seed(seed)
    torch.backends.quantized.engine = "qnnpack"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = getattr(torchvision.models.quantization, name)(weights=None, quantize=False).eval()
        m.fuse_model()
        if zero_bias:
            # torch.onnx writes int32 biases as Cast(bias / scale), which truncates,
            # while PyTorch's kernels round: without biases the two graphs agree.
            with torch.no_grad():
                for mod in m.modules():
                    if isinstance(mod, (torch.nn.Conv2d, torch.nn.Linear)) and mod.bias is not None:
                        mod.bias.zero_()
        m.qconfig = torch.ao.quantization.get_default_qconfig("qnnpack")
        torch.ao.quantization.prepare(m, inplace=True)
        g = torch.Generator().manual_seed(seed + 1)
        for _ in range(4):
            m(torch.randn(2, 3, size, size, generator=g))
        torch.ao.quantization.convert(m, inplace=True)
        x = torch.randn(2, 3, size, size, generator=g)
        y = m(x).detach().numpy()
        torch.onnx.export(m, x, path, opset_version=13, input_names=["x"], output_names=["y"])
    return x.numpy(), y


def run_ort(model, xfile, outdir):
    return run_ort_model(model, {"x": xfile}, outdir)["y"]


def differ(a, b):
    return int(np.count_nonzero(a.view(np.uint32) != b.view(np.uint32)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nets", default="resnet18,googlenet")
    ap.add_argument("--size", type=int, default=64)
    a = ap.parse_args()
    missing = ort_missing()
    if missing:
        print("SKIP", missing)
        return 0
    import npukit
    failed = passed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name in a.nets.split(","):
            path = os.path.join(tmp, f"{name}_int8.onnx")
            x, want_torch = export(name, path, SEED, a.size)
            xfile = os.path.join(tmp, f"{name}_x.npy")
            np.save(xfile, x)
            want_ort = run_ort(path, xfile, os.path.join(tmp, f"{name}_ort"))
            steps = np.unique(want_ort).size
            got = {p: npukit.OnnxModel(path, profile=p).run({"x": x})["y"]
                   for p in ("onnxruntime", "pytorch")}
            os.environ["NPUKIT_QDQ"] = "literal"
            try:
                literal = npukit.OnnxModel(path, profile="onnxruntime").run({"x": x})["y"]
            finally:
                del os.environ["NPUKIT_QDQ"]
            checks = [("onnxruntime vs ONNX Runtime", differ(got["onnxruntime"], want_ort), True)]
            checks.append(("profile pytorch vs torch's quantized module",
                           differ(got["pytorch"], want_torch), True))
            if name in TORCH_CHECKED:
                lit = differ(literal, want_torch)
                checks += [("literal float reading vs ONNX Runtime", differ(literal, want_ort), False)]
                print(f"     {name}: vs torch's quantized module, the literal float reading differs "
                      f"in {lit} of {want_torch.size} (not required)")
            if steps < 20:
                checks.append((f"ORT's output has only {steps} distinct values", 1, True))
            for label, n, must_match in checks:
                ok = (n == 0) if must_match else (n > 0)
                passed += ok
                failed += not ok
                print(f"{'PASS' if ok else 'FAIL'} {name} (seed {SEED}, {list(x.shape)}): {label}: "
                      f"{n} of {want_ort.size} differ ({'must be 0' if must_match else 'must differ'})")
    print(f"\n{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

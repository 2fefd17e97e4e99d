#!/usr/bin/python3
"""Every profile runs every model: torchvision resnet18 and mobilenet_v3_small
(fp32, random weights, 64x64) and resnet18 quantized to QDQ by
scripts/make_qdq_torchvision.py, under each of npukit's profiles. A profile
that covers every node runs the model as is; one that does not must refuse it
naming the profile, and run it with --fallback (those nodes then follow
onnxruntime, docs/models.md). Each run's output must be finite, and a profile
that covers the whole model without falling back must give the same shape as
onnxruntime. The table of which profiles need --fallback is printed.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

import npukit
from test_torchvision_fp32 import ROOT, SEED, export

PROFILES = ["onnxruntime", "pytorch", "bm1684", "ghp_rtl", "ghp_golden", "cvm", "tflite", "mico",
            "onnxruntime_avx2", "onnxruntime_vnni"]
# Profiles that must run these models without --fallback (they cover every node).
# bm1684 covers resnet18's convolutions and pools but not its Add and Gemm
# (IEEE arithmetic in the runner, not the chip's FTZ/DAZ units): --fallback.
MUST_COVER = {"resnet18": {"onnxruntime", "pytorch", "onnxruntime_avx2", "onnxruntime_vnni"},
              "mobilenet_v3_small": {"onnxruntime", "onnxruntime_avx2", "onnxruntime_vnni"},
              "resnet18_qdq": {"onnxruntime", "pytorch", "onnxruntime_avx2", "onnxruntime_vnni"}}


def main():
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        models = {}
        for name in ("resnet18", "mobilenet_v3_small"):
            path = os.path.join(tmp, name + ".onnx")
            x, _, err = export(name, path, SEED)
            if x is None:
                print(f"FAIL {name}: torch.onnx.export: {err}")
                return 1
            models[name] = (path, {"x": x})
        qdq = os.path.join(tmp, "resnet18_qdq.onnx")
        r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "make_qdq_torchvision.py"),
                            "resnet18", qdq, "--size", "64"], capture_output=True, text=True)
        if r.returncode != 0:
            print("FAIL make_qdq_torchvision.py:", r.stderr[-800:])
            return 1
        x = np.random.default_rng(SEED).standard_normal((1, 3, 64, 64)).astype(np.float32)
        models["resnet18_qdq"] = (qdq, {"image": x})
        for name, (path, ins) in models.items():
            row, ref_shape = [], None
            for prof in PROFILES:
                try:
                    y = next(iter(npukit.OnnxModel(path, profile=prof).run(ins).values()))
                    how = "runs"
                except npukit.Error as e:
                    if prof in MUST_COVER[name] or prof not in str(e):
                        failed += 1
                        print(f"FAIL {name} under {prof}: {str(e)[:400]}")
                        continue
                    try:
                        y = next(iter(npukit.OnnxModel(path, profile=prof, fallback=True)
                                      .run(ins).values()))
                        how = "--fallback"
                    except npukit.Error as e2:
                        failed += 1
                        print(f"FAIL {name} under {prof} --fallback: {str(e2)[:400]}")
                        continue
                if prof == "onnxruntime":
                    ref_shape = y.shape
                if not np.isfinite(y).all() or y.shape != ref_shape:
                    failed += 1
                    print(f"FAIL {name} under {prof}: shape {y.shape}, finite {np.isfinite(y).all()}")
                    continue
                row.append(f"{prof} {how}")
            print(f"{name}: " + ", ".join(row))
    print(f"\nseed {SEED}: {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

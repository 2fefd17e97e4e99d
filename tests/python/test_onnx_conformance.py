#!/usr/bin/python3
"""Every ONNX backend node test case in ../shared/conformance/onnx-node/ on npukit's runner.

Comparison rule (the folder's README, the ONNX backend runner's defaults):
integer outputs exactly, float outputs within rtol 1e-3 / atol 1e-7.
Cases run under profile onnxruntime (npukit's default). One line per case.
"""
import glob
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper

import npukit

ROOT = os.path.join(os.environ.get("NPUKIT_SHARED", os.path.join(os.path.dirname(__file__), "../../../shared")),
                    "conformance", "onnx-node")


def load_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def run_case(case_dir):
    model_path = os.path.join(case_dir, "model.onnx")
    model = onnx.load(model_path)
    init = {i.name for i in model.graph.initializer}
    input_names = [i.name for i in model.graph.input if i.name not in init]
    output_names = [o.name for o in model.graph.output]
    sets = sorted(glob.glob(os.path.join(case_dir, "test_data_set_*")))
    if not sets:
        return "no test data"
    for ds in sets:
        inputs = [load_pb(p) for p in sorted(glob.glob(os.path.join(ds, "input_*.pb")),
                                             key=lambda p: int(p.rsplit("_", 1)[1][:-3]))]
        expected = [load_pb(p) for p in sorted(glob.glob(os.path.join(ds, "output_*.pb")),
                                               key=lambda p: int(p.rsplit("_", 1)[1][:-3]))]
        feeds = dict(zip(input_names, inputs))
        got = npukit.run_model(model_path, feeds)
        for name, want in zip(output_names, expected):
            y = got[name]
            if y.shape != want.shape:
                return f"{os.path.basename(ds)} output '{name}': shape {y.shape} != {want.shape}"
            if y.dtype != want.dtype:
                return f"{os.path.basename(ds)} output '{name}': dtype {y.dtype} != {want.dtype}"
            if np.issubdtype(want.dtype, np.integer):
                bad = np.count_nonzero(y != want)
                if bad:
                    return f"{os.path.basename(ds)} output '{name}': {bad} of {y.size} integers differ"
            elif not np.allclose(y, want, rtol=1e-3, atol=1e-7):
                err = np.max(np.abs(y.astype(np.float64) - want))
                return f"{os.path.basename(ds)} output '{name}': max abs error {err:g} beyond rtol 1e-3/atol 1e-7"
    return None


def main():
    cases = sorted(glob.glob(os.path.join(ROOT, "*", "test_*")))
    if not cases:
        print(f"no cases found under {ROOT}")
        print("0 passed, 1 failed")
        return 1
    passed = failed = 0
    for case in cases:
        label = os.path.relpath(case, ROOT)
        try:
            problem = run_case(case)
        except Exception as e:  # an error from the runner is a failing case, reported in full
            problem = f"{type(e).__name__}: {e}"
        if problem is None:
            passed += 1
            print(f"PASS {label}")
        else:
            failed += 1
            print(f"FAIL {label}: {problem}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""Runs an int8 QOperator ONNX model with ONNX Runtime (tools/ort/run.mjs) and
with npukit (`npukit run`, profile onnxruntime) on one input, every
node's output exposed as a graph output for ONNX Runtime and dumped by npukit
(`--dump-all`, the model as given), and compares them bit for bit:
the integer codes of every QLinearConv / QLinearAdd / MaxPool / pooling node
and the float outputs; of a QDQ model, every QuantizeLinear output (the codes
of each fused group) and the graph outputs. Prints one line per tensor that differs and a summary.

  /usr/bin/python3 scripts/check_int8_model_ort.py MODEL.onnx INPUT.npy [--threads N]

Needs ONNX Runtime for Node.js ($NPUKIT_ORT_DIR or .cache/onnxruntime) and
the npukit CLI ($NPUKIT_BIN or build/bin/npukit).
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("input")
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    m = onnx.load(a.model)
    # ORT's copy names every node output v<i>: run.mjs writes <name>.npy, and
    # names such as "/features/Conv_output_0" (torch exports, the QDQ models)
    # would become paths. original[v<i>] is the name npukit dumps.
    original, types, renamed = {}, {}, {}
    for n in m.graph.node:
        for i, o in enumerate(n.output):
            if o:
                renamed[o] = f"v{len(renamed)}"
                original[renamed[o]], types[renamed[o]] = o, n.op_type
                n.output[i] = renamed[o]
    for n in m.graph.node:
        for i, v in enumerate(n.input):
            n.input[i] = renamed.get(v, v)
    for o in m.graph.output:
        o.name = renamed.get(o.name, o.name)
    # A QDQ model's computed tensors are its QuantizeLinear outputs (each fused
    # DQ -> op -> Q group's codes); exposing a float tensor inside a group would
    # stop ORT's fusion, and npukit does not materialize those.
    # (A QOperator model has QLinear* nodes, and Q / DQ only at its ends.)
    ops = {n.op_type for n in m.graph.node}
    qdq = "DequantizeLinear" in ops and not any(o.startswith("QLinear") or o == "QGemm" for o in ops)
    have = {o.name for o in m.graph.output}
    for v in original:
        if v not in have and (not qdq or types[v] == "QuantizeLinear"):
            m.graph.output.append(onnx.helper.make_empty_tensor_value_info(v))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "all_outputs.onnx")
        onnx.save(m, path)
        name = m.graph.input[0].name
        ort_dir, npk_dir = os.path.join(tmp, "ort"), os.path.join(tmp, "npk")
        r = subprocess.run(["node", os.path.join(ROOT, "tools", "ort", "run.mjs"), path, "--input",
                            f"{name}={a.input}", "--output-dir", ort_dir], capture_output=True, text=True)
        if r.returncode:
            sys.exit("ONNX Runtime failed: " + r.stderr[-2000:])
        npukit = os.environ.get("NPUKIT_BIN", os.path.join(ROOT, "build", "bin", "npukit"))
        env = dict(os.environ, NPUKIT_NUM_THREADS=str(a.threads))
        # npukit runs the model as given (its int8 layout pass then keeps
        # activations channels-last between integer nodes) and dumps every value.
        r = subprocess.run([npukit, "run", a.model, "--input", f"{name}={a.input}", "-o", npk_dir,
                            "--dump-all", npk_dir], capture_output=True, text=True, env=env)
        if r.returncode:
            sys.exit("npukit failed: " + r.stderr[-2000:])
        with open(os.path.join(npk_dir, "values.tsv")) as index:
            file_of = {row[1]: row[0] for row in (line.rstrip("\n").split("\t") for line in index)}
        bad = compared = values = 0
        for f in sorted(os.listdir(ort_dir)):
            if not f.endswith(".npy"):
                continue
            v = original.get(f[:-4], f[:-4])
            if v not in file_of:
                bad += 1
                print(f"MISSING {v} ({types.get(f[:-4], 'output')}): not dumped by npukit")
                continue
            x, y = np.load(os.path.join(ort_dir, f)), np.load(os.path.join(npk_dir, file_of[v]))
            compared += 1
            values += x.size
            if x.dtype != y.dtype or x.shape != y.shape or x.tobytes() != y.tobytes():
                bad += 1
                diff = int((x.view(np.uint8) != y.view(np.uint8)).sum()) if x.shape == y.shape else -1
                print(f"DIFF {v} ({types.get(f[:-4], 'output')}): {diff} bytes differ")
        print(f"{os.path.basename(a.model)}: {compared} tensors, {values} values, {bad} differ")
        sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()

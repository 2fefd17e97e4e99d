#!/usr/bin/python3
"""QDQ models (QuantizeLinear/DequantizeLinear around float operators, as ONNX
Runtime's quantizer writes them) of torchvision networks: npukit's runner
under profile onnxruntime, which applies ONNX Runtime's QDQ fusion before
running, against ONNX Runtime 1.30 itself (npm onnxruntime-node, default
optimization level, one thread).

Each network (random weights, fixed seed, 64x64 images: no download) is
exported, calibrated and quantized by scripts/make_qdq_torchvision.py. Every
graph output is compared byte for byte, and so are the uint8 codes of every
QuantizeLinear (exposed as extra outputs: the intermediate activations after
each fused integer operator). npukit runs in four settings: its fast kernels,
NPUKIT_MAX_ISA=avx2 with 3 threads, NPUKIT_IMPL=reference, and profile
onnxruntime_avx2 (ORT's QDQ path stores weights beyond 7 bits as u8 on x86,
so its result does not depend on the host's u8 x s8 kernel). The fused graph
must hold no float Conv or Gemm (the fusion happened) and the literal float
simulation of the same model (ORT with optimizations disabled) must differ
from the fused result somewhere (the test can tell the two apart).

  PYTHONPATH=build/python /usr/bin/python3 tests/python/test_qdq_models.py [--size 64] [--nets resnet18,...]

A longer run: --size 224 --nets resnet18,mobilenet_v2,googlenet --batch 8.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx

from harness import ROOT, ort_missing, read_outputs, run_ort_model

sys.path.insert(0, os.path.join(ROOT, "scripts"))

SETTINGS = [
    ("fast kernels", {}, 1),
    ("NPUKIT_MAX_ISA=avx2, 3 threads", {"NPUKIT_MAX_ISA": "avx2"}, 3),
    ("NPUKIT_IMPL=reference, 2 threads", {"NPUKIT_IMPL": "reference"}, 2),
    # ORT stores s8 weights beyond 7 bits as u8 on x86, so even the u8 x s8
    # int16-pair kernel of AVX2 hosts never runs on them: the forced AVX2
    # profile must give the same bytes.
    ("profile onnxruntime_avx2", {"NPUKIT_TEST_PROFILE": "onnxruntime_avx2"}, 1),
]


LITERAL_TRIES = 8


def expose_codes(path, out_path):
    m = onnx.load(path)
    have = {o.name for o in m.graph.output}
    names = []
    for n in m.graph.node:
        if n.op_type == "QuantizeLinear" and n.output[0] not in have:
            m.graph.output.append(onnx.helper.make_tensor_value_info(n.output[0], onnx.TensorProto.UINT8, None))
            names.append(n.output[0])
    onnx.save(m, out_path)
    return names


def run_ort(model, x, out_dir, opt_level="all"):
    os.makedirs(out_dir, exist_ok=True)
    xin = os.path.join(out_dir, "x.npy")
    np.save(xin, x)
    return run_ort_model(model, {"image": xin}, out_dir, opt_level)


def run_npukit(model, x, out_dir, env, threads):
    """Runs npukit in a child process (the ISA cap and kernel choice are read at start-up)."""
    os.makedirs(out_dir, exist_ok=True)
    xin = os.path.join(out_dir, "x.npy")
    np.save(xin, x)
    r = subprocess.run([sys.executable, __file__, "--worker", model, xin, out_dir, str(threads)],
                       env={**os.environ, **env}, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"npukit worker failed: {r.stderr[-3000:]}")
    info = json.loads(r.stdout.strip().splitlines()[-1])
    outs = read_outputs(out_dir)
    return outs, info


def worker(model, xin, out_dir, threads):
    import npukit
    npukit.set_num_threads(int(threads))
    m = npukit.OnnxModel(model, os.environ.get("NPUKIT_TEST_PROFILE", "onnxruntime"), False)
    out = m.run({"image": np.load(xin)})
    for k, v in out.items():
        np.save(os.path.join(out_dir, k + ".npy"), np.asarray(v))
    ops = {}
    for t in m.layer_times():
        op = t[1] if isinstance(t, (tuple, list)) else t["op_type"]
        ops[op] = ops.get(op, 0) + 1
    print(json.dumps({"ops": ops}))


def same_bytes(a, b):
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--nets", default="resnet18,mobilenet_v2,googlenet,mobilenet_v3_small,shufflenet_v2_x0_5,"
                    "efficientnet_b0")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--opset", type=int, default=13, help="export opset (14: hard-swish as one HardSwish node)")
    a = ap.parse_args()
    if ort_missing():
        print(ort_missing())
        print("0 passed, 1 failed")
        return 1
    import make_qdq_torchvision as mk
    passed = failed = 0
    tmp = tempfile.mkdtemp(prefix="npukit_qdq_")
    try:
        for net in a.nets.split(","):
            print(f"--- {net} (seed {a.seed}, {a.batch}x3x{a.size}x{a.size}, opset {a.opset})")
            qdq = mk.build(net, os.path.join(tmp, net + ".onnx"), a.size, a.seed, opset=a.opset)
            path = os.path.join(tmp, net + "_codes.onnx")
            codes = expose_codes(qdq, path)
            # Fused and literal codes part only where a sum lands near a rounding
            # boundary, which small nets on a few 64x64 images may never do: the
            # images are the first of seeds seed+1 .. seed+LITERAL_TRIES on which they part.
            for x_seed in range(a.seed + 1, a.seed + 1 + LITERAL_TRIES):
                rng = np.random.default_rng(x_seed)
                x = (rng.random((a.batch, 3, a.size, a.size), dtype=np.float32) * 2 - 1).astype(np.float32)
                want = run_ort(path, x, os.path.join(tmp, f"{net}_ort_{x_seed}"))
                literal = run_ort(path, x, os.path.join(tmp, f"{net}_ort_literal_{x_seed}"), "disabled")
                n_lit = sum(int(np.count_nonzero(literal[k] != want[k])) for k in codes)
                if n_lit:
                    break
            if n_lit:
                passed += 1
                print(f"PASS the literal float simulation (ORT, optimizations disabled) differs in "
                      f"{n_lit} codes on the images of seed {x_seed}: the model tells fused from unfused")
            else:
                failed += 1
                print(f"FAIL ORT's literal and fused runs agree on the images of seeds {a.seed + 1} .. "
                      f"{a.seed + LITERAL_TRIES}: this model cannot test the fusion")
            cli = os.environ.get("NPUKIT_BIN")
            if cli:  # `npukit info` shows the fused graph (onnxruntime, pytorch), the file's with NPUKIT_QDQ=literal
                def info_of(p, literal=False):
                    env = dict(os.environ, NPUKIT_QDQ="literal") if literal else None
                    return json.loads(subprocess.run([cli, "info", qdq, "--json", "--profile", p], capture_output=True,
                                                     text=True, env=env).stdout or "{}")
                info = {"onnxruntime": info_of("onnxruntime"), "pytorch": info_of("pytorch"),
                        "literal": info_of("onnxruntime", True)}
                fused = {o["op"] for o in info["onnxruntime"].get("ops", [])}
                if (info["onnxruntime"].get("runnable") and len(info["onnxruntime"].get("rewrites", [])) > 10
                        and "QLinearConv" in fused and "Conv" not in fused
                        and info["pytorch"].get("rewrites")
                        and set(info["pytorch"]["rewrites"]) <= set(info["onnxruntime"]["rewrites"])
                        and not info["literal"].get("rewrites")):
                    passed += 1
                    print(f"PASS npukit info: {len(info['onnxruntime']['rewrites'])} rewrites under onnxruntime "
                          f"({len(info['pytorch']['rewrites'])} under pytorch), none with NPUKIT_QDQ=literal")
                else:
                    failed += 1
                    print(f"FAIL npukit info --json: {str(info)[:600]}")
            for label, env, threads in SETTINGS:
                got, info = run_npukit(path, x, os.path.join(tmp, f"{net}_npk_{label.replace(' ', '_').replace(',', '')}"),
                                       env, threads)
                float_ops = {k: v for k, v in info["ops"].items() if k in ("Conv", "Gemm", "MatMul")}
                bad = []
                for k in sorted(want):
                    if k not in got or not same_bytes(np.asarray(got[k]), want[k]):
                        g = np.asarray(got.get(k, np.zeros(0)))
                        n = int(np.count_nonzero(g != want[k])) if g.shape == want[k].shape else -1
                        bad.append(f"{k} ({n} of {want[k].size} differ)")
                if bad or float_ops:
                    failed += 1
                    print(f"FAIL {net} [{label}]: {len(bad)} of {len(want)} outputs differ: "
                          f"{', '.join(bad[:5])}; float ops left: {float_ops}; ops {info['ops']}")
                else:
                    passed += 1
                    total = sum(v.size for v in want.values())
                    print(f"PASS {net} [{label}]: {len(want)} outputs ({total} values, "
                          f"{len(codes)} code tensors) bit-identical; ops {info['ops']}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(*sys.argv[2:6])
        sys.exit(0)
    sys.exit(main())

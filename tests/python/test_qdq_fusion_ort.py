#!/usr/bin/python3
"""ONNX Runtime's QDQ fusion, one pattern at a time: small QDQ graphs (float
input -> QuantizeLinear -> DequantizeLinear -> op -> QuantizeLinear ->
DequantizeLinear -> float output) with random scales, zero points, shapes and
attributes (fixed seed), run by npukit under profile onnxruntime (which fuses
them as ORT does) and by ONNX Runtime 1.30 (tools/ort/run.mjs, default
optimization level). Every output and every QuantizeLinear's codes must be
bit-identical, in four npukit settings (fast kernels; NPUKIT_MAX_ISA=avx2
with 3 threads; NPUKIT_IMPL=reference with 2 threads; profile
onnxruntime_avx2, whose u8 x s8 int16-pair kernel ORT's QDQ path avoids by
storing weights beyond 7 bits as u8).

Patterns: Sigmoid, LeakyRelu (-> QLinearSigmoid / QLinearLeakyRelu lookup
tables; also with inputs covering every code), AveragePool and
GlobalAveragePool, Add, Mul (broadcast, scalar), SiLU = x * Sigmoid(x)
(efficientnet), a 4-D channel shuffle (shufflenet), int8 activations
(Conv, Add, Concat, LeakyRelu, MaxPool), Concat (inputs with and
without the output's quantization), Conv -> Relu -> Q and Conv -> Clip -> Q
(ReluQuantFusion / ClipQuantFusion at opset 13; at opsets 14 and 19, where
those rules do not match, the selectors' redundant-activation test; each also
with an activation that the Q does not make redundant), MaxPool / Reshape / Transpose on codes (and a MaxPool whose
Q differs from its DQ: no fusion), MatMul, Gemm with and without transB.
Each case prints its seed and configuration when it fails.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from harness import ort_missing, read_outputs, run_ort_batch
SEED = 1234
SETTINGS = [
    ("fast kernels", {}, 1),
    ("NPUKIT_MAX_ISA=avx2, 3 threads", {"NPUKIT_MAX_ISA": "avx2"}, 3),
    ("NPUKIT_IMPL=reference, 2 threads", {"NPUKIT_IMPL": "reference"}, 2),
    # ORT stores s8 weights beyond 7 bits as u8 on x86, so even the u8 x s8
    # int16-pair kernel of AVX2 hosts never runs on them: the forced AVX2
    # profile must give the same bytes.
    ("profile onnxruntime_avx2", {"NPUKIT_TEST_PROFILE": "onnxruntime_avx2"}, 1),
]


class G:
    """A QDQ graph under construction."""

    def __init__(self, rng):
        self.rng, self.nodes, self.inits, self.inputs, self.outputs, self.n = rng, [], [], [], [], 0
        self.codes = []
        self.data = {}  # input name -> values (else random)
        self.opset = 13
        self.s8 = False  # int8 activations (ORT on x86 turns their Q -> DQ pairs into u8)

    def name(self, p):
        self.n += 1
        return f"{p}{self.n}"

    def const(self, arr, p="k"):
        n = self.name(p)
        self.inits.append(numpy_helper.from_array(np.asarray(arr), n))
        return n

    def qparams(self, lo=-1.0, hi=1.0):
        s = np.float32(self.rng.uniform(0.3, 1.5) * (hi - lo) / 255.0)
        z = int(np.clip(round(-lo / float(s)) + self.rng.integers(-3, 4), 0, 255))
        z = np.int8(z - 128) if self.s8 else np.uint8(z)
        return self.const(s, "s"), self.const(z, "z")

    def q(self, x, sz):
        y = self.name("q")
        self.nodes.append(helper.make_node("QuantizeLinear", [x, *sz], [y], name=y))
        self.codes.append(y)
        return y

    def dq(self, x, sz):
        y = self.name("dq")
        self.nodes.append(helper.make_node("DequantizeLinear", [x, *sz], [y], name=y))
        return y

    def fixed(self, scale, zp):
        return self.const(np.float32(scale), "s"), self.const(np.uint8(zp), "z")

    def input(self, shape, data=None, sz=None):
        x = self.name("x")
        self.inputs.append((x, shape))
        if data is not None:
            self.data[x] = np.asarray(data, np.float32).reshape(shape)
        sz = sz or self.qparams()
        return self.dq(self.q(x, sz), sz), sz

    def op(self, op, ins, **attrs):
        y = self.name(op.lower())
        self.nodes.append(helper.make_node(op, ins, [y], name=y, **attrs))
        return y

    def output(self, y, sz=None, lo=-1.0, hi=1.0):
        sz = sz or self.qparams(lo, hi)
        self.outputs.append(self.dq(self.q(y, sz), sz))

    def weights(self, shape, axis=0, bits=8):
        lim = 127 if bits == 8 else 64  # 7-bit weights stay s8 in ORT (no u8 conversion)
        w = self.rng.integers(-lim, lim + 1, size=shape).astype(np.int8)
        n = shape[axis]
        s = self.const((self.rng.uniform(0.5, 2.0, n) / 127 / np.sqrt(np.prod(shape) / n)).astype(np.float32), "ws")
        y = self.name("wdq")
        self.nodes.append(helper.make_node("DequantizeLinear", [self.const(w, "w"), s, self.const(np.zeros(n, np.int8), "wz")],
                                           [y], name=y, axis=axis))
        return y, s

    def bias(self, n, x_scale_name, w_scale_name):
        xs = numpy_helper.to_array(next(t for t in self.inits if t.name == x_scale_name))
        ws = numpy_helper.to_array(next(t for t in self.inits if t.name == w_scale_name))
        b = self.rng.integers(-2000, 2000, size=n).astype(np.int32)
        y = self.name("bdq")
        self.nodes.append(helper.make_node("DequantizeLinear", [self.const(b, "b"), self.const((xs * ws).astype(np.float32), "bs"),
                                                                 self.const(np.zeros(n, np.int32), "bz")], [y], name=y, axis=0))
        return y

    def save(self, path):
        opset = self.opset
        ins = [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(s)) for n, s in self.inputs]
        outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in self.outputs]
        # Exposing int8 codes would stop ORT's s8 -> u8 rewrite (a Q feeding a
        # graph output is not converted): s8 graphs compare their float outputs.
        if not self.s8:
            outs += [helper.make_tensor_value_info(n, TensorProto.UINT8, None) for n in self.codes]
        g = helper.make_graph(self.nodes, "qdq", ins, outs, self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
        m.ir_version = 8
        onnx.save(m, path)


def mul_rounding_witnesses(n):
    """n parameter sets (a_s, a_zp, b_s, b_zp, c_s, c_zp) for which some pair of
    u8 codes gives a different product code under ONNX's definition
    (fp32 dequantize, multiply, divide, round) and under ORT's x86 kernel
    (float(int product) * ((a_s*b_s)/c_s) + c_zp, round)."""
    f = np.float32
    rng = np.random.default_rng(7)
    a = np.arange(256, dtype=np.int32)[:, None]
    b = np.arange(256, dtype=np.int32)[None, :]
    out = []
    while len(out) < n:
        sa, sb, sc = (f(rng.uniform(0.002, 0.02)) for _ in range(3))
        za, zb, zc = (int(rng.integers(0, 256)) for _ in range(3))
        ort = np.clip(np.rint((((a - za) * (b - zb)).astype(f) * f(f(sa * sb) / sc)).astype(f) + f(zc)), 0, 255)
        w = ((sa * (a - za).astype(f)) * (sb * (b - zb).astype(f))).astype(f) / sc
        onnx_def = np.rint(np.clip(w, f(-zc), f(255 - zc))) + zc
        if np.any(ort != onnx_def):
            out.append((float(sa), za, float(sb), zb, float(sc), zc))
    return out


def cases(rng):
    """(label, builder) pairs; each builder fills a G."""
    out = []
    for k in range(3):
        alpha = float(rng.uniform(0.01, 0.5))
        out.append((f"LeakyRelu alpha={alpha:.3f} #{k}", lambda g, a=alpha: g.output(g.op("LeakyRelu", [g.input((2, 3, 5, 7))[0]], alpha=a))))
        out.append((f"Sigmoid #{k}", lambda g: g.output(g.op("Sigmoid", [g.input((2, 3, 5, 7))[0]]), lo=0.0, hi=1.0)))
    for ceil in (0, 1):
        for cip in (0, 1):
            out.append((f"AveragePool k3 s2 p1 ceil={ceil} count_include_pad={cip}",
                        lambda g, c=ceil, p=cip: g.output(g.op("AveragePool", [g.input((2, 5, 9, 8))[0]], kernel_shape=[3, 3],
                                                                strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=c, count_include_pad=p))))
    out.append(("GlobalAveragePool", lambda g: g.output(g.op("GlobalAveragePool", [g.input((2, 7, 6, 5))[0]]))))
    out.append(("Add broadcast", lambda g: g.output(g.op("Add", [g.input((2, 4, 3, 5))[0], g.input((4, 1, 5))[0]]), lo=-2, hi=2)))

    def concat(g):
        a, asz = g.input((2, 3, 4, 5))
        b, _ = g.input((2, 2, 4, 5))
        c, _ = g.input((2, 1, 4, 5))
        g.output(g.op("Concat", [a, b, c], axis=1), sz=asz)  # input 0 has the output's quantization: copied
    out.append(("Concat axis 1 (one input copied)", concat))
    out.append(("Concat axis -1", lambda g: g.output(g.op("Concat", [g.input((2, 3, 4))[0], g.input((2, 3, 6))[0]], axis=-1))))

    def conv_act(g, act, covered, opset=13):
        g.opset = opset
        x, (xs, _) = g.input((2, 4, 7, 6))
        w, ws = g.weights((6, 4, 3, 3))
        y = g.op("Conv", [x, w, g.bias(6, xs, ws)], kernel_shape=[3, 3], pads=[1, 1, 1, 1])
        if act == "Relu":
            y = g.op("Relu", [y])
            z = (0 if covered else 10) - (128 if g.s8 else 0)
            g.output(y, sz=(g.const(np.float32(0.02), "s"), g.const(np.int8(z) if g.s8 else np.uint8(z), "z")))
        else:
            lo, hi = g.const(np.float32(0.0), "lo"), g.const(np.float32(6.0), "hi")
            y = g.op("Clip", [y, lo, hi])
            g.output(y, sz=(g.const(np.float32(6.0 / 255 if covered else 8.0 / 255), "s"),
                            g.const(np.int8(-128) if g.s8 else np.uint8(0), "z")))
    for act in ("Relu", "Clip"):
        for covered in (True, False):
            out.append((f"Conv -> {act} -> Q ({'redundant' if covered else 'kept'})", lambda g, a=act, c=covered: conv_act(g, a, c)))
            # Relu 14 and QuantizeLinear 19 are outside the rewrite rules: the
            # selectors' own redundant-activation test decides.
            for opset in (14, 19):
                out.append((f"Conv -> {act} -> Q at opset {opset} ({'redundant' if covered else 'kept'})",
                            lambda g, a=act, c=covered, o=opset: conv_act(g, a, c, o)))

    def drop(g, op, same):
        x, sz = g.input((2, 3, 6, 5))
        if op == "MaxPool":
            y = g.op("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1)
        elif op == "Reshape":
            y = g.op("Reshape", [x, g.const(np.array([2, -1], np.int64), "shape")])
        else:
            y = g.op("Transpose", [x], perm=[0, 2, 3, 1])
        g.output(y, sz=sz if same else None)
    for op in ("MaxPool", "Reshape", "Transpose"):
        out.append((f"{op} on codes", lambda g, o=op: drop(g, o, True)))
    out.append(("MaxPool with another output quantization (not fused)", lambda g: drop(g, "MaxPool", False)))

    def matmul(g):
        x, _ = g.input((2, 3, 8))
        w, _ = g.weights((8, 5), axis=1)
        g.output(g.op("MatMul", [x, w]), lo=-3, hi=3)
    out.append(("MatMul", matmul))

    def conv7(g):
        x, (xs, _) = g.input((2, 8, 6, 6), np.linspace(-2, 2, 576))
        w, ws = g.weights((5, 8, 3, 3), bits=7)
        g.output(g.op("Conv", [x, w, g.bias(5, xs, ws)], kernel_shape=[3, 3], strides=[2, 2]), lo=-3, hi=3)
    out.append(("Conv with 7-bit weights (kept s8)", conv7))

    def gemm(g, trans_b):
        x, (xs, _) = g.input((3, 16))
        w, ws = g.weights((10, 16) if trans_b else (16, 10), axis=0 if trans_b else 1)
        g.output(g.op("Gemm", [x, w, g.bias(10, xs, ws)], transB=int(trans_b)), lo=-3, hi=3)
    out.append(("Gemm transB=1", lambda g: gemm(g, True)))
    out.append(("Gemm transB=0", lambda g: gemm(g, False)))
    out.append(("Mul broadcast", lambda g: g.output(g.op("Mul", [g.input((2, 4, 3, 5))[0], g.input((4, 1, 5))[0]]))))
    out.append(("Mul by a scalar", lambda g: g.output(g.op("Mul", [g.input((2, 3, 4, 5))[0], g.input(())[0]]))))

    def silu(g):  # efficientnet's SiLU in QDQ form: x * Sigmoid(x)
        x, _ = g.input((2, 4, 5, 6))
        sq = g.qparams(0.0, 1.0)
        s = g.dq(g.q(g.op("Sigmoid", [x]), sq), sq)
        g.output(g.op("Mul", [x, s]))
    out.append(("SiLU = x * Sigmoid(x) -> QLinearSigmoid + Mul", silu))

    for k in range(6):  # 65536 products: every pair of input codes
        out.append((f"Mul every pair of codes #{k}", lambda g: g.output(g.op("Mul", [
            g.input((1, 1, 256, 1), np.linspace(-2, 2, 256))[0], g.input((1, 1, 1, 256), np.linspace(-2, 2, 256))[0]]),
            lo=-1.5, hi=1.5)))

    # Scales and zero points where ONNX's dequantize-multiply-quantize and ORT's
    # integer product times (a_scale*b_scale)/c_scale round differently (found
    # by a seeded search): these pin the kernel's arithmetic, not just the fusion.
    for k, (sa, za, sb, zb, sc, zc) in enumerate(mul_rounding_witnesses(3)):
        codes = np.arange(256, dtype=np.float32)
        out.append((f"Mul where the two roundings differ #{k}", lambda g, q=(sa, za, sb, zb, sc, zc): g.output(g.op("Mul", [
            g.input((1, 1, 256, 1), (codes - q[1]) * q[0], g.fixed(q[0], q[1]))[0],
            g.input((1, 1, 1, 256), (codes - q[3]) * q[2], g.fixed(q[2], q[3]))[0]]), sz=g.fixed(q[4], q[5]))))

    def all_codes(g, op):  # 1024 inputs over a range wider than the Q's: every code appears
        x, _ = g.input((1, 1, 16, 64), np.linspace(-2, 2, 1024))
        g.output(g.op(op, [x], **({"alpha": 0.2} if op == "LeakyRelu" else {})), lo=-0.5, hi=1.0)
    out.append(("every code through LeakyRelu", lambda g: all_codes(g, "LeakyRelu")))
    out.append(("every code through Sigmoid", lambda g: all_codes(g, "Sigmoid")))

    def shuffle(g):  # shufflenet's channel shuffle, in 4-D
        x, sz = g.input((2, 8, 3, 3))
        y = g.op("Reshape", [x, g.const(np.array([2, 2, 4, 9], np.int64), "shape")])
        y = g.op("Transpose", [y], perm=[0, 2, 1, 3])
        y = g.op("Reshape", [y, g.const(np.array([2, 8, 3, 3], np.int64), "shape")])
        g.output(y, sz=sz)
    out.append(("channel shuffle Reshape/Transpose/Reshape", shuffle))

    def s8(build):
        def run(g):
            g.s8 = True
            build(g)
        return run
    out.append(("s8 activations: Conv -> Relu", s8(lambda g: conv_act(g, "Relu", True))))
    out.append(("s8 activations: Conv -> Clip", s8(lambda g: conv_act(g, "Clip", True))))
    out.append(("s8 activations: Add", s8(lambda g: g.output(g.op("Add", [g.input((2, 4, 3, 5))[0], g.input((4, 1, 5))[0]]), lo=-2, hi=2))))
    out.append(("s8 activations: Concat", s8(concat)))
    out.append(("s8 activations: LeakyRelu", s8(lambda g: g.output(g.op("LeakyRelu", [g.input((2, 3, 5, 7))[0]], alpha=0.1)))))
    out.append(("s8 activations: MaxPool", s8(lambda g: drop(g, "MaxPool", True))))
    return out


# The operator each case must contain after fusion (first matching label part).
# A kept float Conv -> Relu/Clip becomes one FusedConv (ORT's ConvActivationFusion).
EXPECT = [("s8 activations: Conv", "QLinearConv"), ("s8 activations: Add", "QLinearAdd"),
          ("s8 activations: Concat", "QLinearConcat"), ("s8 activations: LeakyRelu", "QLinearLeakyRelu"),
          ("s8 activations: MaxPool", "MaxPool"), ("7-bit", "QLinearConv"), ("MatMul", "QLinearMatMul"), ("roundings differ", "QLinearMul"), ("SiLU", "QLinearMul"), ("Mul ", "QLinearMul"), ("LeakyRelu", "QLinearLeakyRelu"), ("Sigmoid", "QLinearSigmoid"),
          ("GlobalAveragePool", "QLinearGlobalAveragePool"), ("AveragePool", "QLinearAveragePool"),
          ("Add", "QLinearAdd"), ("Concat", "QLinearConcat"), ("(redundant)", "QLinearConv"),
          ("(kept)", "FusedConv"), ("not fused", "DequantizeLinear"), ("MaxPool", "MaxPool"),
          ("Reshape", "Reshape"), ("shuffle", "Transpose"), ("Transpose", "Transpose"), ("MatMul", "QLinearMatMul"),
          ("Gemm", "QGemm")]


def worker(jobs_file, out_root, threads):
    import npukit
    npukit.set_num_threads(int(threads))
    for j in json.load(open(jobs_file)):
        d = os.path.join(out_root, j["name"])
        os.makedirs(d, exist_ok=True)
        try:
            m = npukit.OnnxModel(j["model"], os.environ.get("NPUKIT_TEST_PROFILE", "onnxruntime"), False)
            res = m.run({k: np.load(v) for k, v in j["inputs"].items()})
            for k, v in res.items():
                np.save(os.path.join(d, k + ".npy"), np.asarray(v))
            json.dump([t[1] for t in m.layer_times()], open(os.path.join(d, "ops.json"), "w"))
        except Exception as e:  # reported by the parent as a failure of this case
            open(os.path.join(d, "error.txt"), "w").write(str(e))


def load_dir(d):
    return read_outputs(d, skip=())


def main():
    if ort_missing():
        print(ort_missing())
        print("0 passed, 1 failed")
        return 1
    rng = np.random.default_rng(SEED)
    tmp = tempfile.mkdtemp(prefix="npukit_qdqf_")
    passed = failed = 0
    try:
        jobs = []
        for i, (label, build) in enumerate(cases(rng)):
            g = G(np.random.default_rng(SEED + i))
            build(g)
            model = os.path.join(tmp, f"case{i}.onnx")
            g.save(model)
            inputs = {}
            for n, shape in g.inputs:
                x = g.data.get(n)
                if x is None:
                    x = np.asarray(np.random.default_rng(SEED + 100 + i).uniform(-1.3, 1.3, shape), np.float32)
                inputs[n] = os.path.join(tmp, f"case{i}_{n}.npy")
                np.save(inputs[n], x)
            expect = next(v for k, v in EXPECT if k in label)
            jobs.append({"name": f"case{i}", "label": label, "expect": expect, "model": model, "inputs": inputs,
                         "output_dir": os.path.join(tmp, "ort", f"case{i}")})
        results, _ = run_ort_batch(jobs, tmp)
        jf = os.path.join(tmp, "jobs.json")  # written by run_ort_batch; the workers read it too
        ort_ok = {res["job"]: res for res in results}
        for label, env, threads in SETTINGS:
            root = os.path.join(tmp, f"npk{len(env)}{threads}{'p' if 'NPUKIT_TEST_PROFILE' in env else ''}")
            w = subprocess.run([sys.executable, __file__, "--worker", jf, root, str(threads)],
                               env={**os.environ, **env}, capture_output=True, text=True)
            if w.returncode != 0:
                failed += 1
                print(f"FAIL [{label}] npukit worker: {w.stderr[-2000:]}")
                continue
            for i, j in enumerate(jobs):
                tag = f"seed {SEED + i} case {i} '{j['label']}' [{label}]"
                if not ort_ok.get(i, {}).get("ok"):
                    failed += 1
                    print(f"FAIL {tag}: ORT: {ort_ok.get(i)}")
                    continue
                d = os.path.join(root, j["name"])
                if os.path.exists(os.path.join(d, "error.txt")):
                    failed += 1
                    print(f"FAIL {tag}: npukit: {open(os.path.join(d, 'error.txt')).read()[:500]}")
                    continue
                ops = json.load(open(os.path.join(d, "ops.json")))
                if j["expect"] not in ops:
                    failed += 1
                    print(f"FAIL {tag}: the fused graph has no {j['expect']}: {ops}")
                    continue
                want, got = load_dir(j["output_dir"]), load_dir(d)
                bad = [k for k in want if k not in got or got[k].shape != want[k].shape
                       or got[k].tobytes() != want[k].tobytes()]
                if bad:
                    failed += 1
                    k = bad[0]
                    g = got.get(k)
                    n = int(np.count_nonzero(g != want[k])) if g is not None and g.shape == want[k].shape else -1
                    print(f"FAIL {tag}: {len(bad)} of {len(want)} outputs differ; {k}: {n} of {want[k].size} values")
                else:
                    passed += 1
            print(f"[{label}] done: {passed} passed, {failed} failed so far")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(*sys.argv[2:5])
        sys.exit(0)
    sys.exit(main())

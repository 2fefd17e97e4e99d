#!/usr/bin/python3
"""One test per (operator family, profile) pair of the profile table, through
the ONNX runner: a one-node model of the family runs under every profile; a
pair the table supports runs, an unsupported one fails with the table's
refusal (parameter 'profile' and the reason), and with fallback it runs with
ONNX Runtime's semantics. Families the runner does not reach (the C faces,
OKKernel's series, MRT's chain) are covered by tests/unit/test_profile_support.cpp."""
import os
import sys
import tempfile

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import npukit

TMP = tempfile.mkdtemp(prefix="npukit_pairs_")
F, U8, S8, I32, I64 = (TensorProto.FLOAT, TensorProto.UINT8, TensorProto.INT8, TensorProto.INT32,
                       TensorProto.INT64)
results = {"passed": 0, "failed": 0}


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def const(name, value, dtype):
    return numpy_helper.from_array(np.array(value, dtype=dtype), name)


def q_inits(prefix_scale, prefix_zp, scale, zp, dtype=np.uint8):
    return [const(prefix_scale, scale, np.float32), const(prefix_zp, zp, dtype)]


def model(node, inputs, outputs, inits=(), opset=17):
    g = helper.make_graph([node], "g", inputs, outputs, list(inits))
    opsets = [helper.make_opsetid("", opset), helper.make_opsetid("com.microsoft", 1)]
    return helper.make_model(g, opset_imports=opsets)


RNG = np.random.default_rng(12)  # seed of every input below
X4 = RNG.standard_normal((1, 2, 4, 4)).astype(np.float32)
Q4 = RNG.integers(0, 256, (1, 2, 4, 4)).astype(np.uint8)


def one_input(op, x, elem, out_shape, out_elem=None, inits=(), extra_inputs=(), domain="",
              **attrs):
    node = helper.make_node(op, ["x", *extra_inputs], ["y"], domain=domain or None, **attrs)
    return (model(node, [vi("x", elem, list(x.shape))], [vi("y", out_elem or elem, out_shape)],
                  inits), {"x": x})


# One representative ONNX node per family the runner maps (src/onnx/op_families.cpp).
def cases():
    w = RNG.standard_normal((3, 2, 3, 3)).astype(np.float32)
    c = {}
    c["elementwise"] = one_input("Relu", X4, F, [1, 2, 4, 4])
    c["pool2d"] = one_input("MaxPool", X4, F, [1, 2, 2, 2], kernel_shape=[2, 2], strides=[2, 2])
    c["conv2d"] = one_input("Conv", X4, F, [1, 3, 2, 2], inits=[numpy_helper.from_array(w, "w")],
                            extra_inputs=["w"])
    c["gemm"] = one_input("MatMul", X4.reshape(8, 4), F, [8, 3],
                            inits=[numpy_helper.from_array(w.reshape(18, 3)[:4], "w")],
                            extra_inputs=["w"])
    c["quantize_linear"] = one_input("QuantizeLinear", X4, F, [1, 2, 4, 4], U8,
                                     inits=q_inits("s", "z", 0.05, 128), extra_inputs=["s", "z"])
    qi = q_inits("xs", "xz", 0.05, 128) + q_inits("ys", "yz", 0.05, 128)
    # Zero points 0 and one scale: TFLite keeps the input's quantization, MiCo has no zero point.
    q0 = q_inits("xs", "xz", 0.05, 0) + q_inits("ys", "yz", 0.05, 0)
    c["qlinear_average_pool"] = one_input("QLinearAveragePool", Q4, U8, [1, 2, 2, 2], inits=q0,
                                          extra_inputs=["xs", "xz", "ys", "yz"],
                                          domain="com.microsoft", kernel_shape=[2, 2],
                                          strides=[2, 2], count_include_pad=1)
    wq = RNG.integers(-20, 20, (3, 2, 3, 3)).astype(np.int8)
    c["qlinear_conv"] = one_input(
        "QLinearConv", Q4, U8, [1, 3, 2, 2],
        inits=q_inits("xs", "xz", 0.05, 128) + [numpy_helper.from_array(wq, "w")] +
        q_inits("ws", "wz", 0.02, 0, np.int8) + q_inits("ys", "yz", 0.1, 128),
        extra_inputs=["xs", "xz", "w", "ws", "wz", "ys", "yz"])
    bq = RNG.integers(-20, 20, (4, 3)).astype(np.int8)
    q2 = Q4.reshape(8, 4)
    c["qlinear_matmul"] = one_input(
        "QLinearMatMul", q2, U8, [8, 3],
        inits=q_inits("xs", "xz", 0.05, 128) + [numpy_helper.from_array(bq, "b")] +
        q_inits("bs", "bz", 0.02, 0, np.int8) + q_inits("ys", "yz", 0.1, 128),
        extra_inputs=["xs", "xz", "b", "bs", "bz", "ys", "yz"])
    c["matmul_integer"] = one_input("MatMulInteger", q2, U8, [8, 3], I32,
                                    inits=[numpy_helper.from_array(bq, "b")], extra_inputs=["b"])
    c["qlinear_add"] = one_input(
        "QLinearAdd", Q4, U8, [1, 2, 4, 4], domain="com.microsoft",
        inits=q_inits("xs", "xz", 0.05, 128) + [numpy_helper.from_array(Q4[:, :, ::-1].copy(), "b")]
        + q_inits("bs", "bz", 0.05, 128) + q_inits("ys", "yz", 0.1, 128),
        extra_inputs=["xs", "xz", "b", "bs", "bz", "ys", "yz"])
    c["float_math"] = one_input("Exp", X4, F, [1, 2, 4, 4])
    c["reduce"] = one_input("ReduceSum", X4, F, [1, 1, 1, 1], keepdims=1)
    c["layer_norm"] = one_input("LayerNormalization", X4, F, [1, 2, 4, 4],
                                inits=[const("g", np.ones(4), np.float32)], extra_inputs=["g"])
    c["conv_transpose"] = one_input("ConvTranspose", X4, F, [1, 3, 6, 6],
                                    inits=[numpy_helper.from_array(w.transpose(1, 0, 2, 3).copy(),
                                                                   "w")], extra_inputs=["w"])
    c["resize"] = one_input("Resize", X4, F, [1, 2, 8, 8],
                            inits=[const("scales", [1, 1, 2, 2], np.float32)],
                            extra_inputs=["", "scales"], mode="nearest")
    c["data_movement"] = one_input("Transpose", X4, F, [1, 2, 4, 4], perm=[0, 1, 3, 2])
    c["qlinear_mul"] = one_input(
        "QLinearMul", Q4, U8, [1, 2, 4, 4], domain="com.microsoft",
        inits=q_inits("xs", "xz", 0.05, 128) + [numpy_helper.from_array(Q4[:, ::-1].copy(), "b")]
        + q_inits("bs", "bz", 0.05, 128) + q_inits("ys", "yz", 0.1, 128),
        extra_inputs=["xs", "xz", "b", "bs", "bz", "ys", "yz"])
    c["qlinear_lookup"] = one_input("QLinearSigmoid", Q4, U8, [1, 2, 4, 4], domain="com.microsoft",
                                    inits=qi, extra_inputs=["xs", "xz", "ys", "yz"])
    bg = RNG.integers(-20, 20, (4, 3)).astype(np.int8)
    c["qgemm"] = one_input(
        "QGemm", q2, U8, [8, 3], domain="com.microsoft",
        inits=q_inits("xs", "xz", 0.05, 128) + [numpy_helper.from_array(bg, "b")] +
        q_inits("bs", "bz", 0.02, 0, np.int8) + q_inits("ys", "yz", 0.1, 128),
        extra_inputs=["xs", "xz", "b", "bs", "bz", "", "ys", "yz"])
    c["binary"] = one_input("Add", X4, F, [1, 2, 4, 4], inits=[const("b", X4[0, ::-1], np.float32)],
                            extra_inputs=["b"])
    c["clip"] = one_input("Clip", X4, F, [1, 2, 4, 4], inits=[const("lo", -0.5, np.float32)],
                          extra_inputs=["lo"])
    ch = [const(n, v, np.float32) for n, v in
          (("g", [1.5, -0.5]), ("bb", [0.1, 0.2]), ("mu", [0.3, -0.1]), ("var", [0.7, 2.0]))]
    c["batch_norm"] = one_input("BatchNormalization", X4, F, [1, 2, 4, 4], inits=ch,
                                extra_inputs=["g", "bb", "mu", "var"])
    c["softmax"] = one_input("Softmax", X4, F, [1, 2, 4, 4], axis=-1)
    c["dequantize_linear"] = one_input("DequantizeLinear", Q4, U8, [1, 2, 4, 4], F,
                                       inits=q_inits("s", "z", 0.05, 128),
                                       extra_inputs=["s", "z"])
    return c


def specials(rng, n):
    """n floats over the whole exponent range with NaN, +-inf, +-0 and denormals mixed in."""
    x = (rng.standard_normal(n) * 10.0 ** rng.integers(-40, 38, n)).astype(np.float32)
    for v, frac in ((np.nan, 10), (-0.0, 20), (0.0, 20), (np.inf, 20), (-np.inf, 20),
                    (1e-41, 20), (-3e-39, 20)):
        x[rng.integers(0, n, n // frac)] = np.float32(v)
    return x


def same_bits(a, b):
    return a.shape == b.shape and np.array_equal(np.asarray(a).view(np.uint32),
                                                 np.asarray(b).view(np.uint32))


def run_one(node, inputs, inits=(), profile="pytorch"):
    g = helper.make_graph([node], "g", [vi(k, F, list(v.shape)) for k, v in inputs.items()],
                          [vi("y", F, None)], list(inits))
    path = os.path.join(TMP, "torch_pair.onnx")
    with open(path, "wb") as f:
        f.write(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
                .SerializeToString())
    return npukit.run_model(path, inputs, profile=profile)["y"]


def pytorch_rows_match_pytorch():
    """The binary, clip and dequantize_linear rows claim PyTorch's bits: check them
    against PyTorch itself (NaN, +-inf, -0, denormals; broadcasting; absent bounds)."""
    try:
        import torch
    except ImportError:
        print("SKIP pytorch rows: no torch")
        return
    rng = np.random.default_rng(41)  # seed of the PyTorch checks
    a, b = specials(rng, 4096).reshape(4, 1024), specials(rng, 4096).reshape(4, 1024)
    for op, fn in (("Add", torch.add), ("Mul", torch.mul)):
        for bb in (b, b[:1], b[:, :1]):
            got = run_one(helper.make_node(op, ["a", "b"], ["y"]), {"a": a, "b": bb})
            want = fn(torch.from_numpy(a), torch.from_numpy(bb)).numpy()
            assert same_bits(got, want), f"{op} x pytorch, b shape {bb.shape}"
    bounds = (-0.0, 0.0, -1.0, 2.0, -np.inf, np.inf, None)
    for lo in bounds:
        for hi in bounds:
            names = ["x", "" if lo is None else "lo", "" if hi is None else "hi"]
            while names[-1] == "":
                names.pop()
            inits = [const(n, v, np.float32) for n, v in (("lo", lo), ("hi", hi)) if v is not None]
            got = run_one(helper.make_node("Clip", names, ["y"]), {"x": a}, inits)
            want = torch.clamp(torch.from_numpy(a), lo, hi).numpy() if (lo, hi) != (None, None) \
                else a
            assert same_bits(got, want), f"Clip x pytorch, min {lo} max {hi}"
    for dt, qt, elem in ((np.uint8, torch.quint8, U8), (np.int8, torch.qint8, S8)):
        info = np.iinfo(dt)
        q = rng.integers(info.min, info.max + 1, 4096).astype(dt)
        for _ in range(50):
            scale = np.float32(rng.random() * 0.1 + 1e-6)
            zp = int(rng.integers(info.min, info.max + 1))
            node = helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"])
            g = helper.make_graph([node], "g", [vi("q", elem, [4096])], [vi("y", F, [4096])],
                                  [const("s", scale, np.float32), const("z", zp, dt)])
            path = os.path.join(TMP, "torch_dq.onnx")
            with open(path, "wb") as f:
                f.write(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
                        .SerializeToString())
            got = npukit.run_model(path, {"q": q}, profile="pytorch")["y"]
            want = torch._make_per_tensor_quantized_tensor(torch.from_numpy(q), float(scale),
                                                           zp).dequantize().numpy()
            assert same_bits(got, want), f"DequantizeLinear x pytorch, {dt.__name__} scale " \
                f"{scale!r} zero point {zp}"


def save(m, name):
    path = os.path.join(TMP, name)
    with open(path, "wb") as f:
        f.write(m.SerializeToString())
    return path


def runner_applies_each_profile():
    """A supported pair runs the profile's semantics, not ONNX Runtime's: the
    BM1684's Relu and Conv; ONNX Runtime's pooling geometry for its variants."""
    rng = np.random.default_rng(43)  # seed of these checks
    x = np.array([[np.nan, -0.0, -1.0, 2.0]], np.float32)
    path = save(model(helper.make_node("Relu", ["x"], ["y"]), [vi("x", F, [1, 4])],
                      [vi("y", F, [1, 4])]), "relu.onnx")
    y = npukit.run_model(path, {"x": x}, profile="bm1684")["y"]
    assert same_bits(y, np.array([[0.0, 0.0, 0.0, 2.0]], np.float32)), f"Relu x bm1684: {y}"
    y = npukit.run_model(path, {"x": x}, profile="onnxruntime")["y"]
    assert np.isnan(y[0, 0]) and same_bits(y[:, 1:], np.array([[-0.0, 0.0, 2.0]], np.float32))
    xc = rng.standard_normal((1, 8, 6, 6)).astype(np.float32)
    w = rng.standard_normal((4, 8, 3, 3)).astype(np.float32)
    path = save(model(helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1]),
                      [vi("x", F, [1, 8, 6, 6])], [vi("y", F, [1, 4, 6, 6])],
                      [numpy_helper.from_array(w, "w")]), "conv.onnx")
    bm = npukit.conv(xc, w, pads=[1, 1, 1, 1], profile="bm1684")
    ort = npukit.conv(xc, w, pads=[1, 1, 1, 1])
    assert not same_bits(bm, ort), "the BM1684's conv summation should differ on this input"
    pt = npukit.conv(xc, w, pads=[1, 1, 1, 1], profile="pytorch")  # sequential, ORT's is MLAS's FMA order
    for profile, want in (("bm1684", bm), ("onnxruntime", ort), ("pytorch", pt)):
        got = npukit.run_model(path, {"x": xc}, profile=profile)["y"]
        assert same_bits(got, want), f"Conv x {profile}: the runner is not npukit.conv's profile"
    # SAME_UPPER with dilation: ONNX Runtime pads for the undilated kernel.
    xp = rng.standard_normal((1, 2, 7, 7)).astype(np.float32)
    attrs = dict(kernel_shape=[3, 3], auto_pad="SAME_UPPER", dilations=[2, 2])
    path = save(model(helper.make_node("MaxPool", ["x"], ["y"], **attrs),
                      [vi("x", F, [1, 2, 7, 7])], [vi("y", F, None)]), "same_pool.onnx")
    want = npukit.max_pool(xp, **attrs, profile="onnxruntime")
    onnx_geometry = npukit.max_pool(xp, **attrs, profile="pytorch")
    assert not same_bits(want, onnx_geometry), "the two geometries should differ here"
    for profile in ("onnxruntime", "onnxruntime_avx2", "onnxruntime_vnni"):
        got = npukit.run_model(path, {"x": xp}, profile=profile)["y"]
        assert same_bits(got, want), f"MaxPool SAME_UPPER dilated x {profile}: not ORT's geometry"
        got = npukit.max_pool(xp, **attrs, profile=profile)
        assert same_bits(got, want), f"npukit.max_pool(profile={profile}): not ORT's geometry"


def python_pools_equal_runner():
    """Python's ONNX-named pools take profile= with the runner's semantics
    (NaN rules included) under every profile that covers pool2d."""
    x = np.random.default_rng(44).standard_normal((2, 3, 4, 5)).astype(np.float32)
    x[0, 1, 2, 3] = x[1, 2, 0, 0] = np.nan
    x[1, 0, 1, 1] = -0.0
    for op, fn in (("GlobalMaxPool", npukit.global_max_pool),
                   ("GlobalAveragePool", npukit.global_average_pool)):
        path = save(model(helper.make_node(op, ["x"], ["y"]), [vi("x", F, list(x.shape))],
                          [vi("y", F, None)]), op + ".onnx")
        for profile in npukit.profiles():
            try:
                want = npukit.run_model(path, {"x": x}, profile=profile)["y"]
            except npukit.Error:
                continue  # a profile the table refuses for pool2d
            got = fn(x, profile=profile)
            assert same_bits(got, want), f"npukit.{fn.__name__}(profile={profile}) != runner"


def grouped_conv_follows_runner_gap():
    """A grouped Conv under bm1684 (the table covers conv2d, the runner models
    dense ones only: runner_gap): refused without fallback naming 'profile', with
    fallback the node follows onnxruntime and gives its bits; a dense Conv keeps
    bm1684."""
    x = np.random.default_rng(45).standard_normal((1, 4, 5, 5)).astype(np.float32)
    w = np.random.default_rng(46).standard_normal((4, 2, 3, 3)).astype(np.float32)
    node = helper.make_node("Conv", ["x", "w"], ["y"], group=2)
    path = save(model(node, [vi("x", F, list(x.shape))], [vi("y", F, None)],
                      [numpy_helper.from_array(w, "w")]), "grouped_conv.onnx")
    try:
        npukit.OnnxModel(path, profile="bm1684")
        raise AssertionError("grouped Conv x bm1684 loaded without fallback")
    except npukit.Error as e:
        assert "'profile'" in str(e) and "group = 2" in str(e), f"not the runner's refusal: {e}"
    fb = npukit.OnnxModel(path, profile="bm1684", fallback=True)
    assert [n["profile"] for n in fb.nodes()] == ["onnxruntime"], fb.nodes()
    got = npukit.run_model(path, {"x": x}, profile="bm1684", fallback=True)["y"]
    want = npukit.run_model(path, {"x": x}, profile="onnxruntime")["y"]
    assert same_bits(got, want), "grouped Conv x bm1684 with fallback is not onnxruntime's"
    dense = save(model(helper.make_node("Conv", ["x", "w"], ["y"]), [vi("x", F, list(x.shape))],
                       [vi("y", F, None)], [numpy_helper.from_array(w[:, :2].repeat(2, 1), "w")]),
                 "dense_conv.onnx")
    nodes = npukit.OnnxModel(dense, profile="bm1684").nodes()
    assert [n["profile"] for n in nodes] == ["bm1684"], nodes


def check_pair(family, profile, row, path, feeds):
    label = f"{family} x {profile}"
    try:
        npukit.run_model(path, feeds, profile=profile)
        ran, err = True, ""
    except Exception as e:  # the refusal is an npukit error
        ran, err = False, str(e)
    if row["supported"]:
        assert ran, f"{label}: the table supports it but the runner refused: {err}"
        return
    assert not ran, f"{label}: the table refuses it but the runner ran it"
    assert "'profile'" in err and row["semantics"] in err, f"{label}: not the table's refusal: {err}"
    # With fallback, the node keeps ONNX Runtime's semantics and runs.
    npukit.run_model(path, feeds, profile=profile, fallback=True)


def main():
    table = {(r["family"], r["profile"]): r for r in npukit.profile_table()}
    profiles = list(npukit.profiles())  # base profiles and the onnxruntime variants
    built = cases()
    mapped = {f for (f, _) in table} - {"depthwise2d", "matmul", "fp32_series",
                                         "bm_pool_quantized", "mico_pool", "mrt_conv"}
    missing = mapped - set(built)
    if missing:
        print(f"FAIL no runner case for families {sorted(missing)}")
        results["failed"] += 1
    for family, (m, feeds) in sorted(built.items()):
        path = os.path.join(TMP, family + ".onnx")
        with open(path, "wb") as f:
            f.write(m.SerializeToString())
        for profile in profiles:
            base = profile if (family, profile) in table else "onnxruntime"  # variants
            try:
                check_pair(family, profile, table[(family, base)], path, feeds)
                results["passed"] += 1
            except Exception as e:  # report every pair, then fail
                results["failed"] += 1
                print(f"FAIL {family} x {profile}: {type(e).__name__}: {e}")
    for check in (pytorch_rows_match_pytorch, runner_applies_each_profile,
                  python_pools_equal_runner, grouped_conv_follows_runner_gap):
        try:
            check()
            results["passed"] += 1
        except AssertionError as e:
            results["failed"] += 1
            print(f"FAIL {check.__name__}: {e}")
    print(f"{results['passed']} pairs passed, {results['failed']} failed")
    return 1 if results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())

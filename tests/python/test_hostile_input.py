#!/usr/bin/python3
"""Hostile input to the Python face (issue #11): None, strings, objects,
floats for integers, integers beyond 64 bits, big-endian arrays, pools with
pads >= kernel and invalid MRT scales all raise npukit.Error (a ValueError)
naming the function and parameter; nothing segfaults or wraps silently. And
one OnnxModel shared by several threads returns the right outputs.
"""
import os
import sys
import threading

import numpy as np

import npukit
from harness import MODELS, Checks

CHECKS = Checks()
test = CHECKS.test

FP32 = os.path.join(MODELS, "fashion_mnist_fp32.onnx")




def expect_error(f, function, parameter, what):
    try:
        f()
    except npukit.Error as e:
        msg = str(e)
        assert msg.startswith(function + ": parameter '" + parameter + "'"), (what, msg)
        assert "is not allowed (allowed:" in msg, (what, msg)
        return
    raise AssertionError(f"no npukit.Error for {what}")


BAD_INTS = [None, "12", b"12", object(), 2**64, -(2**70), [1, 2**70], 3.7, np.array([1.5]),
            {"a": 1}]


@test
def scalar_primitives_refuse_non_integers():
    cases = {
        "div_round": (lambda b: npukit.div_round(b, 3), "num"),
        "shift_round": (lambda b: npukit.shift_round(b, 2), "x"),
        "multiply_by_quantized_multiplier":
            (lambda b: npukit.multiply_by_quantized_multiplier(b, 1 << 30, 0), "x"),
        "xnnpack_requantize": (lambda b: npukit.xnnpack_requantize(b, 0.5), "acc"),
        "cvm_right_shift": (lambda b: npukit.cvm_right_shift(b, 2, 8), "x"),
        "cvm_clip": (lambda b: npukit.cvm_clip(b, 8), "x"),
        "cvm_requantize": (lambda b: npukit.cvm_requantize(b, 3, -2, 8), "x"),
        "saturating_rounding_doubling_high_mul":
            (lambda b: npukit.saturating_rounding_doubling_high_mul(b, 5), "a"),
        "rounding_divide_by_pot": (lambda b: npukit.rounding_divide_by_pot(b, 2), "x"),
    }
    for name, (call, param) in cases.items():
        for bad in BAD_INTS:
            expect_error(lambda: call(bad), "npukit." + name, param, f"{name}({bad!r})")


@test
def round_to_int_refuses_non_numbers():
    for bad in [None, "1.5", object(), 2**70, [1, 2**70]]:
        expect_error(lambda: npukit.round_to_int(bad), "npukit.round_to_int", "x", repr(bad))
    assert npukit.round_to_int(2.5) == 2 and npukit.round_to_int(np.float32(3.5)) == 4


@test
def scalar_parameters_checked():
    expect_error(lambda: npukit.shift_round(5, 2.0), "npukit.shift_round", "shift", "float shift")
    expect_error(lambda: npukit.shift_round(5, 64), "npukit.shift_round", "shift", "shift 64")
    expect_error(lambda: npukit.shift_round(5, None), "npukit.shift_round", "shift", "None")
    expect_error(lambda: npukit.div_round(5, 2, None), "npukit.div_round", "rounding", "None")
    expect_error(lambda: npukit.cvm_requantize(5, 2**64, 0, 8), "npukit.cvm_requantize", "frac",
                 "frac beyond int64")
    expect_error(lambda: npukit.multiply_by_quantized_multiplier(5, 2**31, 0),
                 "npukit.multiply_by_quantized_multiplier", "multiplier", "2^31")
    expect_error(lambda: npukit.xnnpack_requantize(5, "0.5"), "npukit.xnnpack_requantize",
                 "scale", "string scale")
    expect_error(lambda: npukit.xnnpack_requantize(5, 0.5, 3.7), "npukit.xnnpack_requantize",
                 "zero_point", "float zero point")


@test
def int64_does_not_wrap_to_int32():
    for v in [np.int64(2**40), np.uint64(2**63), 2**31, -(2**31) - 1]:
        expect_error(lambda: npukit.saturating_rounding_doubling_high_mul(v, 3),
                     "npukit.saturating_rounding_doubling_high_mul", "a", repr(v))
    # In range: int64 and uint64 arrays are fine.
    got = npukit.saturating_rounding_doubling_high_mul(np.array([2**30], np.int64), 2**30)
    assert int(got[0]) == 2**29, got


@test
def cvm_requantize_saturates():
    assert int(npukit.cvm_requantize([2**40], 2**62, 0, 8)[0]) == 127
    assert int(npukit.cvm_requantize([-(2**40)], 2**62, 0, 8)[0]) == -127
    assert int(npukit.cvm_requantize([2**40], 2**62, -32, 8)[0]) == 127
    assert int(npukit.cvm_requantize([-(2**62)], 2**62, 5, 16)[0]) == -32767
    assert int(npukit.cvm_requantize([2**62], -(2**62), -1, 32)[0]) == -(2**31 - 1)
    # Unchanged where nothing overflows: round(5 * 3 / 4) = 3.75 -> 4.
    assert int(npukit.cvm_requantize(5, 3, -2, 8)) == 4


@test
def integers_given_as_booleans_and_unsigned_are_values():
    assert list(npukit.div_round(np.array([7, 9], np.uint8), 2)) == [4, 4]
    assert int(npukit.div_round(True, 1)) == 1


@test
def mrt_params_reject_nan_zero_scales():
    for sc in [float("nan"), 0.0, -1.0, float("inf")]:
        expect_error(lambda: npukit.MrtQuantParams("symmetric", 8, -1, [sc], [0.0]),
                     "npukit.MrtQuantParams", "sc", repr(sc))
    expect_error(lambda: npukit.MrtQuantParams("symmetric", 8, -1, [1.0], [float("nan")]),
                 "npukit.MrtQuantParams", "zp", "NaN zp")
    expect_error(lambda: npukit.MrtQuantParams("symmetric", 40, -1, [1.0], [0.0]),
                 "npukit.MrtQuantParams", "precision", "precision 40")
    expect_error(lambda: npukit.MrtQuantParams("symmetric", 8, -1, [1.0, 2.0], [0.0]),
                 "npukit.MrtQuantParams", "sc", "length mismatch")


@test
def pools_refuse_pads_not_below_kernel():
    x = np.zeros((1, 1, 4, 4), np.float32)
    u = np.zeros((1, 1, 4, 4), np.uint8)
    for pads, name in [([2, 0, 0, 0], "pad_top"), ([0, 3, 0, 0], "pad_left"),
                       ([0, 0, 2, 0], "pad_bottom"), ([0, 0, 0, 5], "pad_right")]:
        expect_error(lambda: npukit.max_pool(x, kernel_shape=[2, 2], pads=pads),
                     "npukit.max_pool", name, f"max_pool {pads}")
        expect_error(lambda: npukit.average_pool(x, kernel_shape=[2, 2], pads=pads),
                     "npukit.average_pool", name, f"average_pool {pads}")
        expect_error(lambda: npukit.qlinear_average_pool(u, 0.1, 0, 0.1, 0, kernel_shape=[2, 2],
                                                         pads=pads),
                     "npukit.qlinear_average_pool", name, f"qlinear_average_pool {pads}")
        expect_error(lambda: npukit.ghp_avg_pool(u, [2, 2], 0.1, 0, 0.1, 0, pads=pads),
                     "npukit.ghp_avg_pool", name, f"ghp_avg_pool {pads}")
    # pad = kernel - 1 is the largest allowed.
    assert npukit.max_pool(x, kernel_shape=[2, 2], pads=[1, 1, 1, 1]).shape == (1, 1, 5, 5)
    expect_error(lambda: npukit.ghp_avg_pool(u, [0, 2], 0.1, 0, 0.1, 0), "npukit.ghp_avg_pool",
                 "kernel_h", "kernel 0")


@test
def zero_points_are_integers():
    u = np.zeros((1, 1, 4, 4), np.uint8)
    for zp in [3.7, "3", object(), 2**40]:
        expect_error(lambda: npukit.qlinear_average_pool(u, 0.1, zp, 0.1, 0, kernel_shape=[2, 2]),
                     "npukit.qlinear_average_pool", "x_zero_point", repr(zp))
    expect_error(lambda: npukit.qlinear_average_pool(u, "0.1", 0, 0.1, 0, kernel_shape=[2, 2]),
                 "npukit.qlinear_average_pool", "x_scale", "string scale")


@test
def big_endian_arrays_are_converted():
    x = np.arange(16, dtype=">f4").reshape(1, 1, 4, 4)
    want = npukit.max_pool(x.astype("<f4"), kernel_shape=[2, 2], strides=[2, 2])
    got = npukit.max_pool(x, kernel_shape=[2, 2], strides=[2, 2])
    assert np.array_equal(got, want), (got, want)
    try:
        npukit.max_pool(np.zeros((1, 1, 4, 4), ">i8"), kernel_shape=[2, 2])
        raise AssertionError("int64 accepted")
    except npukit.Error as e:
        assert ("int64" in str(e) or "s64" in str(e)) and "is not allowed" in str(e), str(e)


@test
def onnx_model_shared_by_threads():
    m = npukit.OnnxModel(FP32)
    rng = np.random.default_rng(11)
    # Different batch sizes make the threads replan the shared model.
    xs = [rng.random((1 + t % 3, 1, 28, 28), dtype=np.float32) for t in range(6)]
    want = [npukit.OnnxModel(FP32).run({"image": x})["logits"] for x in xs]
    bad = []

    def worker(t):
        for _ in range(15):
            got = m.run({"image": xs[t]})["logits"]
            if not np.array_equal(got, want[t]):
                bad.append(t)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(len(xs))]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not bad, f"wrong outputs in threads {sorted(set(bad))}"


def model_error(model):
    import tempfile
    import onnx
    path = os.path.join(tempfile.mkdtemp(prefix="npukit_hostile_"), "m.onnx")
    onnx.save(model, path)
    try:
        npukit.OnnxModel(path)
    except npukit.Error as e:
        return str(e)
    raise AssertionError("the model loaded")


@test
def onnx_loader_reports_declared_problems():
    from onnx import TensorProto, helper
    # A negative declared dimension is shown with its value, not as an empty name.
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [-5, 3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [-5, 3])])
    msg = model_error(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]))
    assert "negative dimension [-5, 3]" in msg, msg
    # A com.microsoft node without that domain's opset import.
    node = helper.make_node("QLinearAdd", ["a", "as", "az", "b", "bs", "bz", "cs", "cz"], ["c"],
                            domain="com.microsoft")
    ins = [helper.make_tensor_value_info(n, TensorProto.UINT8, [1, 4]) for n in ("a", "b")]
    inits = [helper.make_tensor(n, TensorProto.FLOAT, [], [0.1]) for n in ("as", "bs", "cs")] + \
            [helper.make_tensor(n, TensorProto.UINT8, [], [0]) for n in ("az", "bz", "cz")]
    g = helper.make_graph([node], "g", ins,
                          [helper.make_tensor_value_info("c", TensorProto.UINT8, [1, 4])], inits)
    msg = model_error(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]))
    assert "com.microsoft has no opset import" in msg, msg
    # A NUL byte in a name does not cut the message.
    g = helper.make_graph([helper.make_node("Sin", ["x"], ["y"], name="bad\0name")], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3])])
    msg = model_error(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]))
    assert "bad\\0name" in msg and "unsupported operator" in msg, msg


def pybind_params(fn):
    """[(name, has_default, keyword_only)] from the pybind11 signature line of fn's docstring."""
    line = (fn.__doc__ or "").splitlines()[0] if fn.__doc__ else ""
    inner = line[line.index("(") + 1:line.rindex(") ->")] if "(" in line else ""
    parts, depth, cur = [], 0, ""
    for ch in inner:
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    out, kw = [], False
    for p in parts:
        if p == "*":
            kw = True
            continue
        name = p.split(":")[0].split("=")[0].strip()
        if name == "self":
            continue
        out.append((name, "=" in p, kw))
    return out


def public_callables():
    """Every public function and class constructor of npukit, plus OnnxModel.run."""
    out = []
    for name in sorted(dir(npukit)):
        obj = getattr(npukit, name)
        if name.startswith("_") or not callable(obj) or isinstance(obj, type) and \
                issubclass(obj, BaseException):
            continue
        doc_of = obj.__init__ if isinstance(obj, type) else obj
        out.append(("npukit." + name, obj, pybind_params(doc_of)))
    model = npukit.OnnxModel(FP32)
    out.append(("npukit.OnnxModel.run", model.run, pybind_params(npukit.OnnxModel.run)))
    return out


SWEEP_BAD = [None, "12", b"12", object(), 3.5, 2**70, -(2**70), {"a": 1}, [object()]]


@test
def no_generic_type_errors_in_any_public_function():
    # Issue #11: pybind11's "incompatible function arguments" / "Unable to cast"
    # TypeErrors name neither the parameter nor what it accepts. Every public
    # function gets each hostile value in each parameter (required parameters
    # that are not under test get the same value); the answer must be a result
    # or npukit.Error in npukit's format (function, parameter, value, allowed).
    calls, generic, wrong_format = 0, [], []
    funcs = public_callables()
    # Functions without parameters (profiles(), num_threads(), ...) take no wrong types.
    assert sum(1 for f in funcs if f[2]) > 50, [f[0] for f in funcs if f[2]]
    for qual, fn, params in funcs:
        for k, (name, _, _) in enumerate(params):
            for bad in SWEEP_BAD:
                pos, kw = [], {}
                for j, (other, has_default, kw_only) in enumerate(params):
                    if j != k and has_default:
                        continue
                    if kw_only or has_default:
                        kw[other] = bad
                    else:
                        pos.append(bad)
                calls += 1
                try:
                    fn(*pos, **kw)
                except npukit.Error as e:
                    # Conversion errors name the Python function; checks further in
                    # may name the C++ function that made them (npukit::...).
                    msg = str(e)
                    if not (msg.startswith("npukit") and ": parameter '" in msg
                            and "is not allowed (allowed:" in msg):
                        wrong_format.append(f"{qual}({name}={bad!r}): {msg}")
                except TypeError as e:
                    generic.append(f"{qual}({name}={bad!r}): {e}".splitlines()[0])
                except (ValueError, OverflowError, MemoryError) as e:
                    wrong_format.append(f"{qual}({name}={bad!r}): {type(e).__name__} {e}")
    print(f"      {calls} calls to {len(funcs)} functions")
    assert not generic, f"{len(generic)} generic TypeErrors, e.g.\n" + "\n".join(generic[:20])
    assert not wrong_format, f"{len(wrong_format)} not in npukit's format:\n" + \
        "\n".join(wrong_format[:20])


@test
def typed_parameters_are_named():
    # Parameters pybind11 used to convert itself, one per kind (str, int, bool,
    # float, list, dict, bytes, class).
    u = np.zeros((1, 1, 4, 4), np.uint8)
    x = np.zeros((1, 1, 4, 4), np.float32)
    expect_error(lambda: npukit.set_num_threads(None), "npukit.set_num_threads", "n", "None")
    expect_error(lambda: npukit.set_num_threads(2**70), "npukit.set_num_threads", "n", "2**70")
    expect_error(lambda: npukit.supports(3, "onnxruntime"), "npukit.supports", "family", "int")
    expect_error(lambda: npukit.max_pool(x, kernel_shape=[2, 2], ceil_mode="1"),
                 "npukit.max_pool", "ceil_mode", "str ceil_mode")
    expect_error(lambda: npukit.max_pool(x, kernel_shape=[2, 2.5]), "npukit.max_pool",
                 "kernel_shape", "float in a list")
    expect_error(lambda: npukit.run_model(FP32, {"image": x}, fallback=None), "npukit.run_model",
                 "fallback", "None for a bool")
    expect_error(lambda: npukit.run_model(FP32, [x]), "npukit.run_model", "inputs", "list")
    expect_error(lambda: npukit.ghp_disassemble("AVGP"), "npukit.ghp_disassemble", "data", "str")
    expect_error(lambda: npukit.ghp_assemble(None), "npukit.ghp_assemble", "text", "None")
    expect_error(lambda: npukit.ghp_avg_pool(u, [2, 2], "0.1", 0, 0.1, 0), "npukit.ghp_avg_pool",
                 "x_scale", "str scale")
    expect_error(lambda: npukit.OnnxModel(None), "npukit.OnnxModel", "path", "None")
    p = npukit.MrtQuantParams("symmetric", 8, -1, [1.0], [0.0])
    expect_error(lambda: npukit.mrt_quantize(np.zeros(3), None), "npukit.mrt_quantize", "params",
                 "None params")
    assert npukit.mrt_quantize(np.zeros(3), p).shape == (3,)


if __name__ == "__main__":
    sys.exit(CHECKS.finish())

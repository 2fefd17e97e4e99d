#!/usr/bin/python3
"""The Python face of the fp32 operators: names, keyword attributes and their
defaults (ONNX names where ONNX has the operator, the seed names otherwise),
hand-computed results, and errors (npukit.Error, a ValueError, naming the
parameter) for bad input, including integer arrays passed to fp32 operators.
"""
import re
import sys

import numpy as np

import npukit
from harness import Checks

CHECKS = Checks()
test = CHECKS.test





def f32(values, shape):
    return np.array(values, dtype=np.float32).reshape(shape)


def iota(shape, first=1.0):
    return (np.arange(np.prod(shape), dtype=np.float32) + first).reshape(shape)


def expect_equal(got, want):
    want = np.asarray(want, dtype=np.float32)
    assert isinstance(got, np.ndarray), type(got)
    assert got.dtype == np.float32, got.dtype
    assert got.shape == want.shape, f"shape {got.shape}, expected {want.shape}"
    assert np.array_equal(got, want, equal_nan=True), f"\n{got}\nexpected\n{want}"


def expect_error(call, parameter, function=None):
    """call() must raise npukit.Error whose message names `parameter` (and `function`)."""
    try:
        call()
    except npukit.Error as e:
        msg = str(e)
        assert isinstance(e, ValueError)
        assert f"parameter '{parameter}'" in msg, f"message does not name '{parameter}': {msg}"
        if function:
            assert msg.startswith(function + ":"), f"message does not name {function}: {msg}"
        assert "allowed" in msg, msg
        return
    raise AssertionError(f"no npukit.Error naming '{parameter}'")


def signature(fn):
    """(name, default) pairs from pybind11's first docstring line, in order."""
    line = fn.__doc__.splitlines()[0]
    args = line[line.index("(") + 1:line.rindex(")")]
    out = []
    for part in re.split(r",\s*(?![^\[]*\])", args):
        part = part.strip()
        if part in ("*", ""):
            out.append((part, None))
            continue
        name = part.split(":")[0].strip()
        default = part.split("=", 1)[1].strip() if "=" in part else None
        out.append((name, default))
    return out


# ------------------------------------------------------------ names and keywords

@test
def module_exposes_every_operator():
    for name in ["average_pool", "max_pool", "global_average_pool", "global_max_pool", "conv",
                 "mat_mul", "relu", "bias", "scale", "scale_bias", "depthwise2d", "sum_pool",
                 "pool2d", "matmul", "Error", "set_num_threads", "num_threads", "profiles"]:
        assert hasattr(npukit, name), name
    assert issubclass(npukit.Error, ValueError)
    assert "pytorch" in npukit.profiles() and "onnxruntime" in npukit.profiles()
    assert re.match(r"\d+\.\d+\.\d+", npukit.__version__)


@test
def onnx_attribute_order_and_defaults():
    # ONNX lists attributes alphabetically; npukit keeps that order after the inputs.
    assert signature(npukit.average_pool) == [
        ("x", None), ("*", None), ("auto_pad", "'NOTSET'"), ("ceil_mode", "0"),
        ("count_include_pad", "0"), ("dilations", "None"), ("kernel_shape", "None"),
        ("pads", "None"), ("strides", "None"), ("profile", "'onnxruntime'"), ("opset", "0")]
    assert signature(npukit.max_pool) == [
        ("x", None), ("*", None), ("auto_pad", "'NOTSET'"), ("ceil_mode", "0"),
        ("dilations", "None"), ("kernel_shape", "None"), ("pads", "None"),
        ("storage_order", "0"), ("strides", "None"), ("profile", "'onnxruntime'")]
    sig = signature(npukit.conv)
    assert sig[:3] == [("x", None), ("w", None), ("b", "None")], sig
    assert sig[3:10] == [("*", None), ("auto_pad", "'NOTSET'"), ("dilations", "None"),
                         ("group", "1"), ("kernel_shape", "None"), ("pads", "None"),
                         ("strides", "None")], sig
    assert signature(npukit.mat_mul) == [("a", None), ("b", None), ("*", None),
                                         ("profile", "'onnxruntime'")]
    for pool in (npukit.global_average_pool, npukit.global_max_pool):
        assert signature(pool) == [("x", None), ("*", None), ("profile", "'onnxruntime'")]
    # The profile decides NaN: onnxruntime's max ignores it, pytorch's propagates it.
    x = np.array([[[[1.0, np.nan], [3.0, 2.0]]]], np.float32)
    assert npukit.global_max_pool(x)[0, 0, 0, 0] == 3.0
    assert np.isnan(npukit.global_max_pool(x, profile="pytorch")[0, 0, 0, 0])
    assert signature(npukit.relu)[0] == ("x", None)


@test
def help_shows_parameter_types():
    # The checked wrapper takes every argument unconverted, but help() and
    # __doc__ show each parameter's real type (not "object").
    line = npukit.max_pool.__doc__.splitlines()[0]
    # x is "object" on purpose: it takes any array-like and converts it itself.
    assert line.startswith("max_pool(x: object, *, auto_pad: str = 'NOTSET'") and \
        line.count(": object") == 1, line
    assert "ceil_mode: int" in line and "profile: str" in line, line
    assert "kernel_shape: Optional[List[int]]" in line, line
    assert "run_model(path: str, inputs: dict" in npukit.run_model.__doc__.splitlines()[0]


@test
def seed_operator_keywords():
    sig = dict(signature(npukit.pool2d))
    for name, default in [("mode", "'avg'"), ("kernel_h", "1"), ("kernel_w", "1"),
                          ("stride_h", "1"), ("stride_w", "1"), ("dilation_h", "1"),
                          ("dilation_w", "1"), ("ins_h", "0"), ("ins_w", "0"), ("pad_top", "0"),
                          ("pad_bottom", "0"), ("pad_left", "0"), ("pad_right", "0"),
                          ("ceil_mode", "False"), ("divisor", "'kernel_area'"),
                          ("pad_value", "'neg_inf'"), ("nan", "'propagate'"), ("coeff", "1.0")]:
        assert sig.get(name) == default, (name, sig.get(name))
    sig = dict(signature(npukit.sum_pool))
    for name in ["kernel_h", "kernel_w", "stride_h", "stride_w", "ins_h", "ins_w", "pad", "coeff"]:
        assert name in sig, name
    for fn, names in [(npukit.bias, ["x", "b"]), (npukit.scale, ["x", "s"]),
                      (npukit.scale_bias, ["x", "s", "b"]),
                      (npukit.depthwise2d, ["x", "w", "b"]), (npukit.matmul, ["a", "b", "bias"])]:
        got = [n for n, _ in signature(fn)]
        assert got[:len(names)] == names, (fn.__name__, got)
        assert "result_add" in got and "y" in got, (fn.__name__, got)


# ------------------------------------------------------------ pooling

X44 = iota((1, 1, 4, 4))  # 1..16


@test
def average_pool_issue_example():
    # k3 s2 pads 1 on 1..16 (4x4): windows start at -1 and 1.
    #   (0,0) rows/cols {0,1}: 1+2+5+6 = 14 over 4 valid       -> 3.5
    #   (0,1) rows {0,1} cols {1,2,3}: 2+3+4+6+7+8 = 30 over 6 -> 5
    #   (1,0) rows {1,2,3} cols {0,1}: 5+6+9+10+13+14 = 57 / 6 -> 9.5
    #   (1,1) rows/cols {1,2,3}: 99 over 9                     -> 11
    got = npukit.average_pool(X44, kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
                              ceil_mode=0, count_include_pad=0)
    expect_equal(got, f32([3.5, 5, 9.5, 11], (1, 1, 2, 2)))
    # The defaults are ceil_mode=0, count_include_pad=0.
    expect_equal(npukit.average_pool(X44, kernel_shape=[3, 3], strides=[2, 2],
                                     pads=[1, 1, 1, 1]), got)
    # count_include_pad=1 (ONNX Runtime): always / 9.
    got = npukit.average_pool(X44, kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
                              count_include_pad=1)
    expect_equal(got, f32([14 / 9, 30 / 9, 57 / 9, 11], (1, 1, 2, 2)))


@test
def average_pool_defaults_are_unit_strides_and_no_pads():
    # k2 on 1..16: window means (1+2+5+6)/4 = 3.5, then +1 per column and +4 per row.
    want = f32([3.5 + c + 4 * r for r in range(3) for c in range(3)], (1, 1, 3, 3))
    expect_equal(npukit.average_pool(X44, kernel_shape=[2, 2]), want)


@test
def average_pool_ceil_mode_profiles():
    # 1..9 in 3x3, k2 s2 ceil: windows {1,2,4,5} {3,6} {7,8} {9}, sums 12, 9, 15, 9.
    # ONNX Runtime 1.30 runs ceil_mode with count_include_pad in its own loop, which
    # divides by the window cut at the padded input's end (here no pads: the input).
    x = iota((1, 1, 3, 3))
    args = dict(kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1, count_include_pad=1)
    expect_equal(npukit.average_pool(x, **args), f32([3, 4.5, 7.5, 9], (1, 1, 2, 2)))
    expect_equal(npukit.average_pool(x, profile="pytorch", **args),
                 f32([3, 4.5, 7.5, 9], (1, 1, 2, 2)))


@test
def average_pool_auto_pad():
    # SAME_UPPER, k2 s1 on 1..16: out 4x4, pad 1 at the end; last column windows {c3, pad}.
    # count_include_pad=0: (0,3) = (4 + 8) / 2 = 6, (3,3) = 16 / 1 = 16.
    got = npukit.average_pool(X44, kernel_shape=[2, 2], auto_pad="SAME_UPPER")
    assert got.shape == (1, 1, 4, 4), got.shape
    assert got[0, 0, 0, 3] == 6 and got[0, 0, 3, 3] == 16 and got[0, 0, 0, 0] == 3.5
    # SAME_LOWER: the pad goes first: (0,0) = 1 / 1, (3,3) = (11+12+15+16)/4 = 13.5.
    got = npukit.average_pool(X44, kernel_shape=[2, 2], auto_pad="SAME_LOWER")
    assert got[0, 0, 0, 0] == 1 and got[0, 0, 3, 3] == 13.5
    # ONNX: pads "cannot be used simultaneously with auto_pad" (every face refuses it alike).
    expect_equal(npukit.average_pool(X44, kernel_shape=[2, 2], auto_pad="VALID"),
                 npukit.average_pool(X44, kernel_shape=[2, 2]))
    expect_error(lambda: npukit.average_pool(X44, kernel_shape=[2, 2], pads=[1, 1, 1, 1],
                                             auto_pad="VALID"), "pads")


@test
def max_pool_with_dilations():
    # k2 d2 on 1..16: taps (i, j), (i, j+2), (i+2, j), (i+2, j+2): maxima 11, 12, 15, 16.
    expect_equal(npukit.max_pool(X44, kernel_shape=[2, 2], dilations=[2, 2]),
                 f32([11, 12, 15, 16], (1, 1, 2, 2)))
    # Pads [top, left, bottom, right] = [1, 0, 0, 0] on -x, k2 s2: rows {-1,0} and {1,2};
    # -inf padding never wins: max(-1,-2) = -1, max(-3,-4) = -3, rows 1-2: -5, -7.
    expect_equal(npukit.max_pool(-X44, kernel_shape=[2, 2], strides=[2, 2], pads=[1, 0, 0, 0]),
                 f32([-1, -3, -5, -7], (1, 1, 2, 2)))


@test
def max_pool_integers_and_profiles():
    x = np.array([[[[-5, -100], [-128, -7]]]], dtype=np.int8)
    got = npukit.max_pool(x, kernel_shape=[2, 2], pads=[1, 1, 1, 1])
    assert got.dtype == np.int8
    assert got.tolist() == [[[[-5, -5, -100], [-5, -5, -7], [-128, -7, -7]]]], got.tolist()
    xu = np.array([[[[200, 3], [255, 0]]]], dtype=np.uint8)
    got = npukit.max_pool(xu, kernel_shape=[2, 2])
    assert got.dtype == np.uint8 and got.tolist() == [[[[255]]]]
    # NaN: PyTorch propagates it; ONNX Runtime's and OKKernel's strict compare skip it.
    xn = f32([np.nan, 1, 2, 3], (1, 1, 2, 2))
    assert np.isnan(npukit.max_pool(xn, kernel_shape=[2, 2], profile="pytorch")).all()
    expect_equal(npukit.max_pool(xn, kernel_shape=[2, 2], profile="bm1684"),
                 f32([3], (1, 1, 1, 1)))


@test
def global_pools():
    x = np.concatenate([X44, -X44], axis=1)  # C = 2
    expect_equal(npukit.global_average_pool(x), f32([8.5, -8.5], (1, 2, 1, 1)))
    expect_equal(npukit.global_max_pool(x), f32([16, -1], (1, 2, 1, 1)))
    assert npukit.global_max_pool(x.astype(np.int8)).dtype == np.int8


@test
def pool2d_zero_insertion():
    # [[1,2],[3,4]] with ins 1 -> [[1,0,2],[0,0,0],[3,0,4]]; k3: sum 10, * coeff 0.5 = 5;
    # avg kernel_area 10/9; max 4.
    x = iota((1, 1, 2, 2))
    expect_equal(npukit.pool2d(x, mode="sum", kernel_h=3, kernel_w=3, ins_h=1, ins_w=1,
                               coeff=0.5), f32([5], (1, 1, 1, 1)))
    expect_equal(npukit.pool2d(x, kernel_h=3, kernel_w=3, ins_h=1, ins_w=1),
                 f32([10 / 9], (1, 1, 1, 1)))
    expect_equal(npukit.pool2d(x, mode="max", kernel_h=3, kernel_w=3, ins_h=1, ins_w=1),
                 f32([4], (1, 1, 1, 1)))
    # ins_h only + pads: rows [1 2] [0 0] [3 4], pad_top 1 (zero), k (2, 1) s (2, 1):
    # windows rows {-1,0} and {1,2}: sums 1, 2, 3, 4 -> valid_count: 1/1, 2/1, 3/2, 4/2.
    expect_equal(npukit.pool2d(x, kernel_h=2, kernel_w=1, stride_h=2, ins_h=1, pad_top=1,
                               divisor="valid_count"), f32([1, 2, 1.5, 2], (1, 1, 2, 2)))


@test
def pool2d_pad_values():
    # 1x1 of -8 with k2 pads 2 (see the unit tests): window (0,0) is all padding.
    x = f32([-8], (1, 1, 1, 1))
    args = dict(mode="max", kernel_h=2, kernel_w=2, pad_top=2, pad_bottom=2, pad_left=2,
                pad_right=2)
    assert npukit.pool2d(x, pad_value="neg_inf", **args)[0, 0, 0, 0] == -np.inf
    assert npukit.pool2d(x, pad_value="neg_flt_max", **args)[0, 0, 0, 0] == \
        -np.finfo(np.float32).max
    got = npukit.pool2d(x, pad_value="zero", **args)
    assert got[0, 0, 0, 0] == 0 and got[0, 0, 1, 1] == 0


@test
def sum_pool_seed_pad_order():
    # pad = [top, bottom, left, right] = [1, 0, 0, 0], k2 s2 on 1..16:
    # rows {-1,0} and {1,2}: 1+2 = 3, 3+4 = 7, 5+6+9+10 = 30, 7+8+11+12 = 38; coeff 2.
    expect_equal(npukit.sum_pool(X44, kernel_h=2, kernel_w=2, stride_h=2, stride_w=2,
                                 pad=[1, 0, 0, 0], coeff=2.0), f32([6, 14, 60, 76], (1, 1, 2, 2)))


# ------------------------------------------------------------ convolution and matmul

X33 = iota((1, 1, 3, 3))
W22 = f32([1, 2, 3, 4], (1, 1, 2, 2))


@test
def conv_onnx_attributes():
    # Valid: 37 47 67 77 (1*1+2*2+4*3+5*4 = 37, ...).
    expect_equal(npukit.conv(X33, W22), f32([37, 47, 67, 77], (1, 1, 2, 2)))
    # b, positional; pads [top, left, bottom, right] = [1, 0, 0, 1]:
    # rows -1..2, cols 0..3: 11 18 9 / 37 47 21 / 67 77 33, + 0.5.
    got = npukit.conv(X33, W22, f32([0.5], (1,)), pads=[1, 0, 0, 1])
    expect_equal(got, f32([11, 18, 9, 37, 47, 21, 67, 77, 33], (1, 1, 3, 3)) + 0.5)
    # strides and dilations on x(r, c) = 5r + c (5x5), w [[1,10],[100,1000]]:
    # 13020 15242 24130 26352 (see the unit tests).
    x = iota((1, 1, 5, 5), first=0)
    w = f32([1, 10, 100, 1000], (1, 1, 2, 2))
    expect_equal(npukit.conv(x, w, strides=[2, 2], dilations=[2, 2]),
                 f32([13020, 15242, 24130, 26352], (1, 1, 2, 2)))
    # group = 2: C 4 (1, 2, 3, 4), w0 = [10, 100] -> 210, w1 = [1000, 1] -> 3004.
    got = npukit.conv(iota((1, 4, 1, 1)), f32([10, 100, 1000, 1], (2, 2, 1, 1)), group=2)
    expect_equal(got, f32([210, 3004], (1, 2, 1, 1)))
    # kernel_shape, when given, must agree with w.
    expect_equal(npukit.conv(X33, W22, kernel_shape=[2, 2]), npukit.conv(X33, W22))


@test
def conv_result_add_keeps_y():
    y = f32([100, 200, 300, 400], (1, 1, 2, 2))
    got = npukit.conv(X33, W22, y=y, result_add=True)
    expect_equal(got, f32([137, 247, 367, 477], (1, 1, 2, 2)))
    expect_equal(y, f32([100, 200, 300, 400], (1, 1, 2, 2)))  # not modified


@test
def depthwise2d_multiplier():
    # C 2 (3 and 5), multiplier 2: w [1, 2, 3, 4] -> 3, 6, 15, 20; bias [1, 1, 1, -20].
    x = f32([3, 5], (1, 2, 1, 1))
    w = f32([1, 2, 3, 4], (4, 1, 1, 1))
    expect_equal(npukit.depthwise2d(x, w), f32([3, 6, 15, 20], (1, 4, 1, 1)))
    expect_equal(npukit.depthwise2d(x, w, f32([1, 1, 1, -20], (4,))),
                 f32([4, 7, 16, 0], (1, 4, 1, 1)))
    # pad = [top, bottom, left, right] (seed order), stride: 1..9, k2 s2 pad 1, w = 1:
    # window sums 1, 5, 11, 28.
    got = npukit.depthwise2d(X33, np.ones((1, 1, 2, 2), np.float32), stride=[2, 2],
                             pad=[1, 1, 1, 1])
    expect_equal(got, f32([1, 5, 11, 28], (1, 1, 2, 2)))


@test
def mat_mul_broadcasting():
    a = f32([1, 2, 3, 4], (2, 2))
    b = f32([5, 6, 7, 8], (2, 2))
    expect_equal(npukit.mat_mul(a, b), f32([19, 22, 43, 50], (2, 2)))
    # 1-D . 1-D = 0-D: 1*4 + 2*5 + 3*6 = 32.
    got = npukit.mat_mul(f32([1, 2, 3], (3,)), f32([4, 5, 6], (3,)))
    assert got.shape == () and got == 32
    # (2,) @ (2,2,2) -> (2,2): [1,2] @ [[1,2],[3,4]] = [7, 10]; @ [[5,6],[7,8]] = [19, 22].
    expect_equal(npukit.mat_mul(f32([1, 2], (2,)), iota((2, 2, 2))), f32([7, 10, 19, 22], (2, 2)))
    # (2,1,1,2) @ (3,2,1) -> (2,3,1,1): a_i . (j+1, 1) = 3 4 5 / 7 10 13.
    got = npukit.mat_mul(iota((2, 1, 1, 2)), f32([1, 1, 2, 1, 3, 1], (3, 2, 1)))
    expect_equal(got, f32([3, 4, 5, 7, 10, 13], (2, 3, 1, 1)))


@test
def matmul_seed_form():
    a, b = f32([1, 2, 3, 4, 5, 6], (2, 3)), f32([7, 8, 9, 10, 11, 12], (3, 2))
    expect_equal(npukit.matmul(a, b), f32([58, 64, 139, 154], (2, 2)))
    expect_equal(npukit.matmul(a, b, f32([1, 2], (2,))), f32([59, 66, 140, 156], (2, 2)))
    y = np.full((2, 2), 1000, np.float32)
    expect_equal(npukit.matmul(a, b, f32([1, 2], (2,)), y=y, result_add=True),
                 f32([1059, 1066, 1140, 1156], (2, 2)))


# ------------------------------------------------------------ element-wise

@test
def relu_profiles():
    x = f32([-1, 0, 2.5, np.nan, -0.0, np.inf, -np.inf], (7,))
    got = npukit.relu(x)
    expect_equal(got, f32([0, 0, 2.5, np.nan, 0, np.inf, 0], (7,)))
    assert np.signbit(got[4])  # max(-0, 0) keeps -0, as torch.relu does
    got = npukit.relu(x, profile="bm1684")
    expect_equal(got, f32([0, 0, 2.5, 0, 0, np.inf, 0], (7,)))
    assert not np.signbit(got[4]) and not np.isnan(got[3])
    expect_equal(npukit.relu(x[:3], y=f32([1, 1, 1], (3,)), result_add=True), f32([1, 1, 3.5], (3,)))
    # Any rank 0..4.
    assert npukit.relu(np.float32(-3.0) * np.ones((), np.float32)).shape == ()
    assert npukit.relu(np.ones((2, 3, 4), np.float32)).shape == (2, 3, 4)


@test
def channel_operators():
    x = f32([1, 2, 3, 4], (1, 2, 1, 2))
    s, b = f32([2, -1], (2,)), f32([1, 10], (2,))
    expect_equal(npukit.bias(x, b), f32([2, 3, 13, 14], (1, 2, 1, 2)))
    expect_equal(npukit.scale(x, s), f32([2, 4, -3, -4], (1, 2, 1, 2)))
    expect_equal(npukit.scale_bias(x, s, b), f32([3, 5, 7, 6], (1, 2, 1, 2)))
    # (1, C, 1, 1) operands and result_add onto y.
    y = f32([10, 10, 10, 10], (1, 2, 1, 2))
    expect_equal(npukit.scale_bias(x, s.reshape(1, 2, 1, 1), b.reshape(1, 2, 1, 1), y=y,
                                   result_add=True), f32([13, 15, 17, 16], (1, 2, 1, 2)))
    expect_equal(npukit.bias(x, b, y=y, result_add=True), f32([12, 13, 23, 24], (1, 2, 1, 2)))
    expect_equal(npukit.scale(x, s, y=y, result_add=True), f32([12, 14, 7, 6], (1, 2, 1, 2)))


# ------------------------------------------------------------ arrays

@test
def float64_is_rounded_and_layouts_do_not_matter():
    x64 = X44.astype(np.float64)
    expect_equal(npukit.average_pool(x64, kernel_shape=[2, 2]),
                 npukit.average_pool(X44, kernel_shape=[2, 2]))
    # A non-contiguous view (NHWC data transposed to NCHW) gives the same result.
    rng = np.random.default_rng(5)
    nhwc = rng.standard_normal((2, 5, 6, 3)).astype(np.float32)
    view = nhwc.transpose(0, 3, 1, 2)
    assert not view.flags.c_contiguous
    expect_equal(npukit.max_pool(view, kernel_shape=[3, 2], strides=[2, 1]),
                 npukit.max_pool(np.ascontiguousarray(view), kernel_shape=[3, 2], strides=[2, 1]))
    w = rng.standard_normal((4, 3, 2, 2)).astype(np.float32)
    expect_equal(npukit.conv(view, w), npukit.conv(np.ascontiguousarray(view), w))


@test
def inputs_are_not_modified():
    x = X44.copy()
    npukit.relu(-x)
    npukit.average_pool(x, kernel_shape=[2, 2])
    expect_equal(x, X44)


# ------------------------------------------------------------ bad input

@test
def integer_arrays_are_rejected_by_fp32_operators():
    xi = X44.astype(np.int32)
    expect_error(lambda: npukit.average_pool(xi, kernel_shape=[2, 2]), "x.dtype",
                 "npukit.average_pool")
    expect_error(lambda: npukit.global_average_pool(xi.astype(np.int8)), "x.dtype",
                 "npukit.global_average_pool")
    expect_error(lambda: npukit.conv(xi, W22), "x.dtype", "npukit.conv")
    expect_error(lambda: npukit.conv(X33, W22.astype(np.int8)), "w.dtype", "npukit.conv")
    expect_error(lambda: npukit.conv(X33, W22, np.array([1], np.int32)), "b.dtype", "npukit.conv")
    expect_error(lambda: npukit.mat_mul(np.ones((2, 2), np.int64), np.ones((2, 2), np.float32)),
                 "a.dtype", "npukit.mat_mul")
    expect_error(lambda: npukit.matmul(np.ones((2, 2), np.float32), np.ones((2, 2), np.uint8)),
                 "b.dtype", "npukit.matmul")
    expect_error(lambda: npukit.relu(np.array([1, -2], np.int8)), "x.dtype", "npukit.relu")
    expect_error(lambda: npukit.relu([1, -2]), "x.dtype", "npukit.relu")  # a list of ints
    expect_error(lambda: npukit.bias(xi, f32([1], (1,))), "x.dtype", "npukit.bias")
    expect_error(lambda: npukit.scale(X44, np.array([1], np.int16)), "s.dtype", "npukit.scale")
    expect_error(lambda: npukit.depthwise2d(xi, W22), "x.dtype", "npukit.depthwise2d")
    expect_error(lambda: npukit.sum_pool(xi, kernel_h=2, kernel_w=2), "x.dtype",
                 "npukit.sum_pool")
    # avg pooling of int8 goes through the quantized operators, not pool2d.
    expect_error(lambda: npukit.pool2d(xi.astype(np.int8), kernel_h=2, kernel_w=2), "x.dtype",
                 "npukit::pool2d")
    # max pooling takes int8/uint8 but not wider integers or other dtypes.
    expect_error(lambda: npukit.max_pool(xi.astype(np.int16), kernel_shape=[2, 2]), "x.dtype",
                 "npukit::pool2d")
    expect_error(lambda: npukit.max_pool(X44.astype(np.float16), kernel_shape=[2, 2]), "x.dtype",
                 "npukit.max_pool")
    expect_error(lambda: npukit.relu(None), "x", "npukit.relu")


@test
def pool_attribute_errors():
    ap = npukit.average_pool
    expect_error(lambda: ap(X44), "kernel_shape", "npukit.average_pool")
    expect_error(lambda: ap(X44, kernel_shape=[2]), "kernel_shape")
    expect_error(lambda: ap(X44, kernel_shape=[0, 2]), "kernel_h")
    expect_error(lambda: ap(X44, kernel_shape=[2, 2], strides=[0, 1]), "stride_h")
    expect_error(lambda: ap(X44, kernel_shape=[2, 2], strides=[1, -1]), "stride_w")
    expect_error(lambda: ap(X44, kernel_shape=[2, 2], strides=[1, 1, 1]), "strides")
    expect_error(lambda: ap(X44, kernel_shape=[2, 2], pads=[1, 1]), "pads")
    expect_error(lambda: ap(X44, kernel_shape=[2, 2], pads=[0, -1, 0, 0]), "pad_left")
    expect_error(lambda: ap(X44, kernel_shape=[2, 2], dilations=[0, 1]), "dilation_h")
    expect_error(lambda: ap(X44, kernel_shape=[2, 2], ceil_mode=2), "ceil_mode")
    expect_error(lambda: ap(X44, kernel_shape=[2, 2], count_include_pad=-1), "count_include_pad")
    expect_error(lambda: ap(X44, kernel_shape=[2, 2], auto_pad="SAME"), "auto_pad")
    # A zero stride with SAME padding is an error, not a division by zero.
    expect_error(lambda: ap(X44, kernel_shape=[2, 2], strides=[0, 1], auto_pad="SAME_UPPER"),
                 "stride_h")
    expect_error(lambda: npukit.conv(X33, W22, strides=[1, 0], auto_pad="SAME_LOWER"),
                 "stride_w")
    expect_error(lambda: ap(X44, kernel_shape=[2, 2], profile="torch"), "profile",
                 "npukit.average_pool")
    expect_error(lambda: ap(X44, kernel_shape=[2, 2], profile="cvm"), "profile")
    expect_error(lambda: ap(X44, kernel_shape=[6, 2]), "kernel_h")  # larger than 4 + 0 pads
    expect_error(lambda: ap(X44, kernel_shape=[2, 3], pads=[0, 0, 0, 0], dilations=[1, 2]),
                 "kernel_w")  # extent 5 > 4
    expect_error(lambda: ap(X44[0], kernel_shape=[2, 2]), "x")
    expect_error(lambda: ap(np.zeros((1, 1, 0, 4), np.float32), kernel_shape=[1, 1]), "x.H")
    expect_error(lambda: ap(np.zeros((0, 1, 4, 4), np.float32), kernel_shape=[1, 1]), "x.N")
    expect_error(lambda: npukit.max_pool(X44, kernel_shape=[2, 2], storage_order=1),
                 "storage_order")
    expect_error(lambda: npukit.global_max_pool(X44[0, 0]), "x", "npukit.global_max_pool")
    p2 = npukit.pool2d
    expect_error(lambda: p2(X44, mode="median"), "mode", "npukit.pool2d")
    expect_error(lambda: p2(X44, divisor="area"), "divisor")
    expect_error(lambda: p2(X44, pad_value="-inf"), "pad_value")
    expect_error(lambda: p2(X44, nan="skip"), "nan")
    expect_error(lambda: p2(X44, ins_h=-1), "ins_h")
    expect_error(lambda: p2(X44, kernel_w=3, stride_w=0), "stride_w")
    expect_error(lambda: npukit.sum_pool(X44, kernel_h=2, kernel_w=2, pad=[1, 1, 1]), "pad")
    expect_error(lambda: npukit.sum_pool(X44, kernel_h=5, kernel_w=2), "kernel_h")


@test
def conv_and_matmul_errors():
    expect_error(lambda: npukit.conv(X33, W22[0]), "w", "npukit.conv")
    expect_error(lambda: npukit.conv(X33[0], W22), "x", "npukit.conv")
    expect_error(lambda: npukit.conv(X33, np.ones((1, 2, 2, 2), np.float32)), "w")
    expect_error(lambda: npukit.conv(iota((1, 4, 2, 2)), np.ones((2, 1, 1, 1), np.float32),
                                     group=3), "groups")
    expect_error(lambda: npukit.conv(iota((1, 4, 2, 2)), np.ones((3, 2, 1, 1), np.float32),
                                     group=2), "groups")  # 2 does not divide 3 outputs
    expect_error(lambda: npukit.conv(X33, W22, group=0), "groups")
    expect_error(lambda: npukit.conv(X33, W22, strides=[0, 1]), "stride_h")
    expect_error(lambda: npukit.conv(X33, W22, dilations=[1, 0]), "dilation_w")
    expect_error(lambda: npukit.conv(X33, W22, pads=[0, 0, -1, 0]), "pad_bottom")
    expect_error(lambda: npukit.conv(X33, W22, dilations=[3, 1]), "kernel_h")  # extent 4 > 3
    expect_error(lambda: npukit.conv(X33, W22, kernel_shape=[3, 3]), "kernel_shape")
    expect_error(lambda: npukit.conv(X33, W22, f32([1, 2], (2,))), "bias")
    expect_error(lambda: npukit.conv(X33, W22, result_add=True), "y")
    expect_error(lambda: npukit.conv(X33, W22, y=np.zeros((1, 1, 3, 3), np.float32),
                                     result_add=True), "y")
    expect_error(lambda: npukit.depthwise2d(iota((1, 2, 3, 3)), np.ones((3, 1, 2, 2), np.float32)),
                 "w", "npukit.depthwise2d")
    expect_error(lambda: npukit.depthwise2d(iota((1, 2, 3, 3)), np.ones((1, 1, 2, 2), np.float32)),
                 "w", "npukit.depthwise2d")
    expect_error(lambda: npukit.depthwise2d(iota((1, 2, 3, 3)), np.ones((2, 1, 2, 2), np.float32),
                                            pad=[1, 1]), "pad")
    expect_error(lambda: npukit.depthwise2d(iota((1, 2, 3, 3)), np.ones((2, 1, 2, 2), np.float32),
                                            stride=[0, 1]), "stride_h", "npukit::depthwise2d")
    mm = npukit.mat_mul
    expect_error(lambda: mm(np.ones((2, 3), np.float32), np.ones((2, 3), np.float32)), "b")
    expect_error(lambda: mm(np.ones((2, 2, 3), np.float32), np.ones((3, 3, 2), np.float32)), "b")
    expect_error(lambda: mm(np.ones((1, 1, 1, 1, 2), np.float32), np.ones((2,), np.float32)), "a")
    expect_error(lambda: mm(np.ones((0, 3), np.float32), np.ones((3, 2), np.float32)), "a")
    # profile= as the runner's MatMul: gemm-family profiles run (same bits), others refused.
    a23, b32 = iota((2, 3)), iota((3, 2))
    want = mm(a23, b32)
    for prof in ("pytorch", "onnxruntime_avx2"):
        assert np.array_equal(mm(a23, b32, profile=prof), want), prof
    expect_error(lambda: mm(a23, b32, profile="bm1684"), "profile", "npukit.mat_mul")
    expect_error(lambda: mm(a23, b32, profile="nonsense"), "profile")
    expect_error(lambda: npukit.matmul(np.ones((2, 3), np.float32), np.ones((3,), np.float32)), "b")
    expect_error(lambda: npukit.matmul(np.ones((2, 3), np.float32), np.ones((3, 2), np.float32),
                                       f32([1, 2, 3], (3,))), "bias")
    expect_error(lambda: npukit.matmul(np.ones((2, 3), np.float32), np.ones((3, 2), np.float32),
                                       result_add=True), "y")


@test
def elementwise_errors():
    x = iota((1, 2, 2, 2))
    expect_error(lambda: npukit.bias(x, f32([1, 2, 3], (3,))), "b", "npukit::bias")
    expect_error(lambda: npukit.bias(x[0], f32([1, 2], (2,))), "x", "npukit.bias")
    expect_error(lambda: npukit.scale(x, f32([1, 2], (1, 2))), "s", "npukit::scale")
    expect_error(lambda: npukit.scale_bias(x, f32([1, 2], (2,)), f32([1], (1,))), "b")
    expect_error(lambda: npukit.relu(x, profile="tflite"), "profile", "npukit.relu")
    expect_error(lambda: npukit.relu(x, y=np.zeros((2, 2), np.float32), result_add=True), "y")
    expect_error(lambda: npukit.relu(np.zeros((2, 0), np.float32)), "x", "npukit::relu")
    expect_error(lambda: npukit.set_num_threads(-1), "n", "npukit::set_num_threads")


if __name__ == "__main__":
    sys.exit(CHECKS.finish())

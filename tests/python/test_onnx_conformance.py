#!/usr/bin/python3
"""ONNX's own backend node test cases for npukit's operators, on npukit's runner.

Two sources:
- generated: the case generators of Debian's python3-onnx
  (onnx.backend.test.case.node.<op>), built in memory at test time, so a bare
  clone runs them;
- stored: the cases under ../shared/conformance/onnx-node/ (node and
  pytorch-converted, some from newer ONNX releases), when that folder exists.
A stored case with the same name as a generated one runs once (stored data).

Comparison rule (the ONNX backend runner's defaults): integer outputs exactly,
float outputs within rtol 1e-3 / atol 1e-7. Cases run under profile
onnxruntime (npukit's default). Cases on 1-D or 3-D tensors and MaxPool's
second (indices) output are outside npukit's 2-D operators: they are listed
as SKIP and counted apart, never as passed.
"""
import glob
import importlib
import os
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

import npukit

SHARED = os.path.join(os.environ.get("NPUKIT_SHARED",
                                     os.path.join(os.path.dirname(__file__), "../../../shared")),
                      "conformance", "onnx-node")

# The python3-onnx generator modules of the operators npukit implements.
GENERATOR_MODULES = ["averagepool", "maxpool", "conv", "convinteger", "dequantizelinear", "gemm",
                     "globalaveragepool", "globalmaxpool", "matmul", "matmulinteger", "qlinearconv",
                     "qlinearmatmul", "quantizelinear", "relu",
                     # float math (ops_math.cpp, ops_reduce.cpp, ops_norm.cpp)
                     "sigmoid", "hardsigmoid", "hardswish", "tanh", "leakyrelu", "erf", "sqrt",
                     "exp", "log", "neg", "abs", "reciprocal", "sub", "div", "pow", "min", "max",
                     "reducesum", "reducemean", "reducemax", "reducemin", "reducel2", "layernormalization",
                     "logsoftmax",
                     "dropout",
                     # tensor / shape / index operators
                     "gather", "slice", "pad", "cast", "expand", "where", "equal", "less",
                     "greater", "less_equal", "greater_equal", "not", "and", "or", "xor", "shape",
                     "size", "unsqueeze", "squeeze", "split", "constantofshape", "reshape",
                     "transpose", "concat", "flatten", "identity",
                     "convtranspose", "resize"]  # ops_deconv.cpp
# Outside npukit's scope by design (2-D operators only; MaxPool's indices output).
# LayerNormalization takes any rank: its 3-D cases run (IN_SCOPE_3D).
OUT_OF_SCOPE = ("_1d_", "_3d_", "maxpool_with_argmax")
IN_SCOPE_3D = ("layer_normalization_3d_",)
# Element types the runner does not hold (float16, double, strings, ...): Cast cases to or from them.
OUT_OF_SCOPE_TYPES = ("FLOAT16", "DOUBLE", "STRING", "BFLOAT16", "FLOAT8", "_bfloat16", "_float16",
                      "_double", "_string", "uint16", "uint32", "uint64", "int16",
                      # optional and sequence values (not tensors)
                      "identity_opt", "identity_sequence")
# Outside the float math operators' scope (MATH_CASES only): integer element
# types (these operators are float), Dropout's bool mask and training
# mode.
MATH_OUT_OF_SCOPE_TYPES = ("_uint8", "_int8", "_int16", "_int32", "_int64", "_uint16", "_uint32",
                      "_uint64", "float16", "float64", "_float32_int", "_float32_uint",
                      "training_dropout")
# Resize variants ops_deconv.cpp refuses with an npukit::Error (cubic interpolation,
# tf_crop_and_resize's region of interest).
RESIZE_OUT_OF_SCOPE = ("resize_upsample_scales_cubic", "resize_downsample_scales_cubic",
                       "resize_upsample_sizes_cubic", "resize_downsample_sizes_cubic",
                       "resize_tf_crop_and_resize",
                       # ONNX's reference takes align_corners' resized length as scale * in
                       # (2.4); ONNX Runtime 1.30 and npukit take the output size (2): checked
                       # against ONNX Runtime by test_ort_ops_deconv_resize.py.
                       "resize_downsample_scales_linear_align_corners",
                       # 1-D and 3-D ConvTranspose: npukit's operators are 2-D.
                       "convtranspose_1d", "convtranspose_3d")
# Inputs npukit needs known when planning (Resize's roi, scales, sizes), fed as graph
# inputs by the generators: each case has one data set, so they become initializers.
# ReduceSum's axes (opset 13) likewise: npukit plans with known axes, as ORT's
# optimizer folds them from an initializer.
CONSTANT_INPUTS = {"Resize": (1, 2, 3), "ReduceSum": (1,)}


def load_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def lift_opset(model, floor=13):
    """The generators import the opset of each operator's first definition (1
    for the global pools, older than the runner's floor of 6). Where the
    operator's definition is the same at `floor`, import `floor` instead: the
    model means exactly the same."""
    for imp in model.opset_import:
        if imp.domain in ("", "ai.onnx") and imp.version < floor:
            same = all(onnx.defs.get_schema(n.op_type, floor).since_version <= imp.version
                       for n in model.graph.node)
            if same:
                imp.version = floor
    return model


def generated_cases():
    """{name: (model, [(inputs, outputs), ...])} from python3-onnx's generators."""
    import onnx.backend.test.case.node as node_cases
    for m in GENERATOR_MODULES:
        importlib.import_module("onnx.backend.test.case.node." + m)
    return {t.name: (lift_opset(t.model), [(list(i), list(o)) for i, o in t.data_sets])
            for t in node_cases._NodeTestCases if t.kind == "node"}


def stored_cases():
    """{label: (model path, [(inputs, outputs), ...])} from the shared folder."""
    cases = {}
    for case_dir in sorted(glob.glob(os.path.join(SHARED, "*", "test_*"))):
        sets = []
        for ds in sorted(glob.glob(os.path.join(case_dir, "test_data_set_*"))):
            def numbered(pattern):
                files = glob.glob(os.path.join(ds, pattern))
                return [load_pb(p) for p in sorted(files, key=lambda p: int(p.rsplit("_", 1)[1][:-3]))]
            sets.append((numbered("input_*.pb"), numbered("output_*.pb")))
        cases[os.path.relpath(case_dir, SHARED)] = (os.path.join(case_dir, "model.onnx"), sets)
    return cases


def compare(got, want, where):
    if got.shape != want.shape:
        return f"{where}: shape {got.shape} != {want.shape}"
    if got.dtype != want.dtype:
        return f"{where}: dtype {got.dtype} != {want.dtype}"
    if np.issubdtype(want.dtype, np.integer):
        bad = np.count_nonzero(got != want)
        return f"{where}: {bad} of {got.size} integers differ" if bad else None
    if not np.allclose(got, want, rtol=1e-3, atol=1e-7):
        err = np.max(np.abs(got.astype(np.float64) - want))
        return f"{where}: max abs error {err:g} beyond rtol 1e-3/atol 1e-7"
    return None


def constant_inputs(model_path, data_sets):
    """The model with CONSTANT_INPUTS turned into initializers from its only data set."""
    model = onnx.load(model_path)
    node = model.graph.node[0] if len(model.graph.node) == 1 else None
    if node is None or node.op_type not in CONSTANT_INPUTS or len(data_sets) != 1:
        return model_path, data_sets
    names = [i.name for i in model.graph.input]
    inputs = dict(zip(names, data_sets[0][0]))
    lifted = {node.input[k] for k in CONSTANT_INPUTS[node.op_type] if k < len(node.input)}
    lifted &= set(names)
    for name in lifted:
        model.graph.initializer.append(numpy_helper.from_array(inputs[name], name))
    keep = [i for i in model.graph.input if i.name not in lifted]
    del model.graph.input[:]
    model.graph.input.extend(keep)
    fd, path = tempfile.mkstemp(suffix=".onnx")  # never beside a stored (read-only) model
    os.close(fd)
    onnx.save(model, path)
    return path, [([inputs[i.name] for i in keep], data_sets[0][1])]


def run_case(model_path, data_sets):
    model_path, data_sets = constant_inputs(model_path, data_sets)
    model = onnx.load(model_path)
    init = {i.name for i in model.graph.initializer}
    input_names = [i.name for i in model.graph.input if i.name not in init]
    output_names = [o.name for o in model.graph.output]
    if not data_sets:
        return "no test data"
    for k, (inputs, expected) in enumerate(data_sets):
        got = npukit.run_model(model_path, dict(zip(input_names, inputs)))
        for name, want in zip(output_names, expected):
            problem = compare(got[name], want, f"data set {k} output '{name}'")
            if problem:
                return problem
    return None


MATH_CASES = ("test_sub_", "test_div_", "test_pow_", "test_min_", "test_max_", "test_dropout_",
              "test_training_dropout", "test_layer_normalization_", "test_reduce_sum_")


def out_of_type_scope(label):
    return (any("/" + p in label for p in MATH_CASES)
            and any(t in label for t in MATH_OUT_OF_SCOPE_TYPES))


def main():
    stored = stored_cases()
    stored_names = {label.split("/", 1)[1] for label in stored}
    generated = {n: c for n, c in generated_cases().items() if n not in stored_names}
    print(f"{len(generated)} generated cases (python3-onnx {onnx.__version__}), "
          f"{len(stored)} stored cases ({SHARED if stored else 'folder absent'})")
    passed = failed = skipped = 0
    with tempfile.TemporaryDirectory() as tmp:
        work = []
        for name, (model, sets) in sorted(generated.items()):
            path = os.path.join(tmp, name + ".onnx")
            onnx.save(model, path)
            work.append(("generated/" + name, path, sets))
        work += [("stored/" + label, path, sets) for label, (path, sets) in sorted(stored.items())]
        for label, path, sets in work:
            if any(tag in label for tag in OUT_OF_SCOPE_TYPES):
                skipped += 1
                print(f"SKIP {label}: an element type the runner does not hold")
                continue
            if any(tag in label for tag in OUT_OF_SCOPE) and not any(
                    tag in label for tag in IN_SCOPE_3D):
                skipped += 1
                print(f"SKIP {label}: not a 2-D operator case (npukit's operators are 2-D)")
                continue
            if any(tag in label for tag in RESIZE_OUT_OF_SCOPE):
                skipped += 1
                print(f"SKIP {label}: outside ops_deconv.cpp's scope (see RESIZE_OUT_OF_SCOPE)")
                continue
            if out_of_type_scope(label):
                skipped += 1
                print(f"SKIP {label}: element type, bool mask, run-time axes or function "
                      "expansion outside the float operators")
                continue
            try:
                problem = run_case(path, sets)
            except Exception as e:  # an error from the runner is a failing case, reported in full
                problem = f"{type(e).__name__}: {e}"
            if problem is None:
                passed += 1
                print(f"PASS {label}")
            else:
                failed += 1
                print(f"FAIL {label}: {problem}")
    if passed + failed == 0:
        print("no case ran")
        failed = 1
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""ONNX external data (models over 2 GB): initializers saved outside the
.onnx file run and give the inline model's exact outputs; hostile entries
(absolute path, '..' escape, symbolic link out of the directory, offset or
length out of range, a missing file, non-numeric offset) are npukit errors
naming the initializer and the reason, never crashes.
"""
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import npukit
from harness import Checks

SEED = 13
RNG = np.random.default_rng(SEED)
CHECKS = Checks(SEED)
test = CHECKS.test




def small_model():
    w = RNG.standard_normal((4, 3, 3, 3)).astype(np.float32)
    b = RNG.standard_normal(4).astype(np.float32)
    c = RNG.standard_normal((1, 4, 1, 1)).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["y"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["y"], ["r"]),
        helper.make_node("Add", ["r", "c"], ["out"]),
    ]
    g = helper.make_graph(
        nodes, "ext", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 6, 5])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, 4, 6, 5])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b"),
         numpy_helper.from_array(c, "c")])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def save_external(model, path, data_name="weights.bin"):
    onnx.save_model(model, path, save_as_external_data=True, all_tensors_to_one_file=True,
                    location=data_name, size_threshold=0)


def set_entry(model, tensor_name, key, value):
    for t in model.graph.initializer:
        if t.name == tensor_name:
            for kv in t.external_data:
                if kv.key == key:
                    kv.value = value
                    return
            t.external_data.add(key=key, value=value)
            return
    raise KeyError(tensor_name)


def expect_load_error(path, *fragments):
    try:
        npukit.OnnxModel(path)
    except npukit.Error as e:
        msg = str(e)
        for f in fragments:
            assert f in msg, (f, msg)
        return
    raise AssertionError(f"no npukit.Error for {path}")


@test
def external_equals_inline():
    with tempfile.TemporaryDirectory() as d:
        m = small_model()
        inline = os.path.join(d, "inline.onnx")
        onnx.save_model(m, inline)
        sub = os.path.join(d, "sub")
        os.mkdir(sub)
        ext = os.path.join(sub, "ext.onnx")
        save_external(onnx.load(inline), ext)
        assert os.path.getsize(os.path.join(sub, "weights.bin")) > 0
        stored = onnx.load(ext, load_external_data=False)
        assert all(t.data_location == TensorProto.EXTERNAL for t in stored.graph.initializer)
        x = RNG.standard_normal((1, 3, 6, 5)).astype(np.float32)
        a = npukit.OnnxModel(inline).run({"x": x})["out"]
        # Relative path from another working directory: data is found next to the model.
        cwd = os.getcwd()
        try:
            os.chdir(d)
            b = npukit.OnnxModel(os.path.join("sub", "ext.onnx")).run({"x": x})["out"]
        finally:
            os.chdir(cwd)
        assert a.tobytes() == b.tobytes(), np.abs(a - b).max()


def hostile(mutate, *fragments, extra=None):
    with tempfile.TemporaryDirectory() as d:
        sub = os.path.join(d, "m")
        os.mkdir(sub)
        path = os.path.join(sub, "ext.onnx")
        save_external(small_model(), path)
        m = onnx.load(path, load_external_data=False)
        mutate(m, sub, d)
        onnx.save_model(m, path)  # keeps the entries as they are
        expect_load_error(path, "initializer 'w'", *fragments)


@test
def absolute_location_refused():
    hostile(lambda m, sub, d: set_entry(m, "w", "location", os.path.join(sub, "weights.bin")),
            "absolute path")


@test
def dotdot_escape_refused():
    def mut(m, sub, d):
        shutil.copy(os.path.join(sub, "weights.bin"), os.path.join(d, "weights.bin"))
        set_entry(m, "w", "location", "../weights.bin")
    hostile(mut, "leaves the model's directory")


@test
def symlink_escape_refused():
    def mut(m, sub, d):
        shutil.copy(os.path.join(sub, "weights.bin"), os.path.join(d, "outside.bin"))
        os.symlink(os.path.join(d, "outside.bin"), os.path.join(sub, "link.bin"))
        set_entry(m, "w", "location", "link.bin")
    hostile(mut, "resolves outside the model's directory")


@test
def missing_file_named():
    hostile(lambda m, sub, d: set_entry(m, "w", "location", "nowhere.bin"),
            "nowhere.bin", "does not exist")


@test
def offset_past_end_refused():
    hostile(lambda m, sub, d: set_entry(m, "w", "offset", str(1 << 40)), "runs past the end")


@test
def offset_near_end_refused():
    def mut(m, sub, d):
        size = os.path.getsize(os.path.join(sub, "weights.bin"))
        set_entry(m, "w", "offset", str(size - 8))
    hostile(mut, "runs past the end")


@test
def offset_overflow_refused():
    hostile(lambda m, sub, d: set_entry(m, "w", "offset", "18446744073709551615"),
            "not a byte count")


@test
def negative_offset_refused():
    hostile(lambda m, sub, d: set_entry(m, "w", "offset", "-4"), "not a byte count")


@test
def wrong_length_refused():
    hostile(lambda m, sub, d: set_entry(m, "w", "length", "12"), "does not match")


@test
def directory_as_data_refused():
    def mut(m, sub, d):
        os.mkdir(os.path.join(sub, "adir"))
        set_entry(m, "w", "location", "adir")
    hostile(mut, "not a regular file")


@test
def no_location_refused():
    def mut(m, sub, d):
        for t in m.graph.initializer:
            if t.name == "w":
                keep = [(kv.key, kv.value) for kv in t.external_data if kv.key != "location"]
                del t.external_data[:]
                for k, v in keep:
                    t.external_data.add(key=k, value=v)
    hostile(mut, "without a 'location'")


@test
def memory_budget_checked_before_reading():
    # w claims 1M floats (4 MiB) under a 1 MiB budget: refused before any
    # allocation or read (the file is far smaller; the budget speaks first).
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "ext.onnx")
        save_external(small_model(), path)
        m = onnx.load(path, load_external_data=False)
        for t in m.graph.initializer:
            if t.name == "w":
                del t.dims[:]
                t.dims.extend([1 << 10, 1 << 10])
                set_entry(m, "w", "length", str(4 << 20))
        onnx.save_model(m, path)
        code = ("import npukit\ntry:\n    npukit.OnnxModel(%r)\nexcept npukit.Error as e:\n"
                "    print(e)\n    raise SystemExit(3)\n" % path)
        env = dict(os.environ, NPUKIT_MEMORY_LIMIT="1M")
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                           timeout=120)
        assert r.returncode == 3, (r.returncode, r.stdout, r.stderr)
        assert "initializer 'w' [1024, 1024]" in r.stdout, r.stdout
        assert "4194304 bytes" in r.stdout or "4 MiB" in r.stdout or "4.0 MiB" in r.stdout, r.stdout


if __name__ == "__main__":
    sys.exit(CHECKS.finish())

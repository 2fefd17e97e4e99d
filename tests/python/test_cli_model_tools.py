#!/usr/bin/python3
"""The CLI's model tools: `npukit run` (pictures as inputs, --dump-all,
warm-up, per-operator --layers), `npukit info` (inferred shapes, --operators,
JSON shapes as arrays) and `npukit compare MODEL` (per-layer divergence table
and SVG heat map). Expected values come from numpy/PIL and the Python API,
never from the CLI itself."""
import json
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from PIL import Image

import npukit
from harness import Checks

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "..", "..", "models")
FP32 = os.path.join(MODELS, "fashion_mnist_fp32.onnx")
INT8 = os.path.join(MODELS, "fashion_mnist_int8.onnx")
BIN = os.environ.get("NPUKIT_BIN")
TMP = tempfile.mkdtemp(prefix="npukit_cli_tools_")
CHECKS = Checks()
case = CHECKS.test
rng = np.random.default_rng(20261126)
print(f"seed 20261126, temporary files in {TMP}")


def cli(*args, ok=True, env=None):
    r = subprocess.run([BIN, *args], capture_output=True, text=True,
                       env=None if env is None else {**os.environ, **env})
    if ok:
        assert r.returncode == 0, (args, r.returncode, r.stderr)
    return r


def images(n):
    return np.load(os.path.join(MODELS, "fashion_mnist_eval_images.npy"))[:n]


def npukit_supported():
    text = cli("info", "--operators").stdout
    return [l for l in text.splitlines()[1:] if l.strip() and not l.endswith("--profiles")]


@case
def picture_inputs_match_the_npy_route():
    pic = images(1)[0]  # uint8 28x28, the model's own size: no resizing
    png = os.path.join(TMP, "item.png")
    Image.fromarray(pic, mode="L").save(png)
    out = os.path.join(TMP, "pic_out")
    cli("run", FP32, "--input", f"image={png}", "--output-dir", out)
    x = (pic.astype(np.float32) / np.float32(255))[None, None]
    want = npukit.OnnxModel(FP32).run({"image": x})["logits"]
    got = np.load(os.path.join(out, "logits.npy"))
    assert np.array_equal(got, want), (got, want)
    # An RGB JPEG becomes luma (BT.601) then /255; PIL decodes with the same libjpeg.
    rgb = rng.integers(0, 256, (28, 28, 3), dtype=np.uint8)
    jpg = os.path.join(TMP, "item.jpg")
    Image.fromarray(rgb, mode="RGB").save(jpg, quality=95)
    dec = np.asarray(Image.open(jpg).convert("RGB")).astype(np.float64)
    luma = np.rint(0.299 * dec[..., 0] + 0.587 * dec[..., 1] + 0.114 * dec[..., 2])
    dump = os.path.join(TMP, "jpg_dump")
    cli("run", FP32, "--input", jpg, "--output-dir", out, "--dump-all", dump)
    seen = np.load(os.path.join(dump, "image.npy"))
    want_x = (luma.astype(np.float32) / np.float32(255))[None, None]
    assert np.array_equal(seen, want_x), np.abs(seen - want_x).max()


@case
def pictures_are_resized_bilinearly():
    # 56x56 -> 28x28 with half-pixel centres: each output is the mean of a 2x2 block.
    big = rng.integers(0, 256, (56, 56), dtype=np.uint8)
    png = os.path.join(TMP, "big.png")
    Image.fromarray(big, mode="L").save(png)
    dump = os.path.join(TMP, "big_dump")
    cli("run", FP32, "--input", png, "--output-dir", TMP, "--dump-all", dump)
    seen = np.load(os.path.join(dump, "image.npy"))[0, 0]
    block = big.astype(np.float64).reshape(28, 2, 28, 2).mean(axis=(1, 3))
    assert np.abs(seen - block / 255).max() < 1e-6, np.abs(seen - block / 255).max()


@case
def bad_pictures_get_clear_errors():
    fake = os.path.join(TMP, "fake.png")
    with open(fake, "w") as f:
        f.write("not a picture at all")
    r = cli("run", FP32, "--input", fake, ok=False)
    assert r.returncode != 0 and "first bytes are neither" in r.stderr, r.stderr
    good = os.path.join(TMP, "trunc_src.png")
    Image.fromarray(images(1)[0], mode="L").save(good)
    data = open(good, "rb").read()
    trunc = os.path.join(TMP, "trunc.png")
    open(trunc, "wb").write(data[: len(data) // 2])
    r = cli("run", FP32, "--input", trunc, ok=False)
    assert r.returncode != 0 and "a readable PNG file" in r.stderr, r.stderr
    jtrunc = os.path.join(TMP, "trunc.jpg")
    Image.fromarray(images(1)[0], mode="L").save(os.path.join(TMP, "j.jpg"))
    open(jtrunc, "wb").write(open(os.path.join(TMP, "j.jpg"), "rb").read()[:40])
    r = cli("run", FP32, "--input", jtrunc, ok=False)
    assert r.returncode != 0 and "JPEG" in r.stderr, r.stderr
    r = cli("run", INT8, "--input", good, "--preprocess", "raw", ok=False)
    assert r.returncode != 0 and "--preprocess" in r.stderr, r.stderr
    r = cli("run", FP32, "--input", good, "--preprocess", "sepia", ok=False)
    assert r.returncode != 0 and "raw, unit or imagenet" in r.stderr, r.stderr


@case
def dump_all_writes_every_value_with_sanitized_names():
    # Value names with path separators and dots must not escape the directory.
    x = helper.make_tensor_value_info("in/../x", TensorProto.FLOAT, [1, 3])
    y = helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, 3])
    nodes = [helper.make_node("Relu", ["in/../x"], ["../mid:1"], name="r1"),
             helper.make_node("Relu", ["../mid:1"], ["out"], name="r2")]
    m = helper.make_model(helper.make_graph(nodes, "g", [x], [y]),
                          opset_imports=[helper.make_opsetid("", 13)])
    path = os.path.join(TMP, "names.onnx")
    onnx.save(m, path)
    xin = os.path.join(TMP, "names_in.npy")
    np.save(xin, np.array([[-1, 0, 2]], np.float32))
    dump = os.path.join(TMP, "names_dump")
    cli("run", path, "--input", f"in/../x={xin}", "--output-dir", TMP, "--dump-all", dump)
    files = sorted(os.listdir(dump))
    # Inside the directory, none hidden: no separators, no leading dot.
    assert all("/" not in f and not f.startswith(".") for f in files), files
    rows = [line.split("\t") for line in open(os.path.join(dump, "values.tsv")).read().splitlines()]
    assert rows[0][:3] == ["file", "value", "node"], rows[0]
    by_value = {r[1]: r for r in rows[1:]}
    assert set(by_value) == {"in/../x", "../mid:1", "out"}, by_value
    assert by_value["../mid:1"][2] == "r1", by_value
    mid = np.load(os.path.join(dump, by_value["../mid:1"][0]))
    assert np.array_equal(mid, np.array([[0, 0, 2]], np.float32)), mid


@case
def repeat_excludes_warmup_and_layers_sum_per_operator():
    xin = os.path.join(TMP, "x4.npy")
    np.save(xin, (images(4).astype(np.float32) / 255)[:, None])
    r = cli("run", INT8, "--input", xin, "--output-dir", TMP, "--repeat", "3", "--json")
    info = json.loads(r.stdout)
    assert info["runs"] == 3 and info["warmup_runs"] == 1, info
    t = info["seconds_per_run"]
    assert t["min"] <= t["median"] and t["min"] > 0, t
    # Each node's best run: one of the 3 runs (not their sum), so at most their mean.
    for layer in info["layers"]:
        best, mean = layer["best_seconds"], layer["seconds_per_run"]
        assert 0 <= best <= mean * (1 + 1e-6) + 1e-9, layer
        assert best > 0 or layer["op"] == "Reshape", layer
    r = cli("run", INT8, "--input", xin, "--output-dir", TMP, "--repeat", "2", "--warmup", "0",
            "--json")
    assert json.loads(r.stdout)["warmup_runs"] == 0
    r = cli("run", INT8, "--input", xin, "--output-dir", TMP, "--repeat", "2", "--layers")
    text = r.stdout
    assert re.search(r"\nnode .* ms per run\s+share\s+best ms\n", text), text
    per_op = text.split("\noperator")[1].split("\n\n")[0].splitlines()[1:]
    ops = [line.split() for line in per_op if not line.startswith("total")]
    times = [float(p[2]) for p in ops]
    assert times == sorted(times, reverse=True), per_op
    counts = {p[0]: int(p[1]) for p in ops}
    assert counts == {"QLinearConv": 3, "MaxPool": 1, "QLinearAveragePool": 1, "Reshape": 2,
                      "QuantizeLinear": 1, "DequantizeLinear": 1}, counts
    r = cli("run", INT8, "--input", xin, "--warmup", "-2", ok=False)
    assert r.returncode != 0 and "--warmup" in r.stderr, r.stderr


@case
def info_shows_inferred_shapes_and_operators():
    r = cli("info", FP32, "--json")
    info = json.loads(r.stdout)
    assert info["inputs"][0]["shape"] == ["N", 1, 28, 28], info["inputs"]
    shapes = {n["name"]: n["outputs"][0]["shape"] for n in info["nodes"]}
    assert shapes["/0/Conv"] == ["N", 8, 28, 28], shapes
    assert shapes["/6/Flatten"] == ["N", 784], shapes
    assert info["nodes"][-1]["outputs"][0]["name"] == "logits"
    text = cli("info", FP32).stdout
    assert re.search(r"/6/Flatten\s+Flatten\s+onnxruntime\s+\S+ float \[N, 784\]", text), text
    ops = json.loads(cli("info", "--operators", "--json").stdout)
    names = {(o["domain"], o["op"]) for o in ops}
    assert ("ai.onnx", "Conv") in names and ("com.microsoft", "QLinearAveragePool") in names
    conv = next(o for o in ops if o["op"] == "Conv")
    assert conv["min_opset"] <= 13 <= conv["max_opset"], conv
    assert len(ops) == len(npukit_supported()), (len(ops), len(npukit_supported()))
    # An unknown operator: the summary says why, the status is non-zero.
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3])
    m = helper.make_model(helper.make_graph([helper.make_node("Frobnicate", ["x"], ["y"])], "g",
                                            [x], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3])]),
                          opset_imports=[helper.make_opsetid("", 13)])
    path = os.path.join(TMP, "frob.onnx")
    onnx.save(m, path)
    r = cli("info", path, ok=False)
    assert r.returncode != 0 and "NO: no such operator" in r.stdout, r.stdout


@case
def compare_model_finds_where_profiles_part_ways():
    xin = os.path.join(TMP, "x8.npy")
    x = (images(8).astype(np.float32) / 255)[:, None]
    np.save(xin, x)
    svg = os.path.join(TMP, "cmp.svg")
    r = cli("compare", INT8, "--input", f"image={xin}", "--profiles",
            "onnxruntime,pytorch,onnxruntime_vnni", "--svg", svg)
    # The expectation from the Python API: per profile, does the last value differ?
    ref = npukit.OnnxModel(INT8, profile="onnxruntime").run({"image": x})["logits"]
    pyt = npukit.OnnxModel(INT8, profile="pytorch").run({"image": x})["logits"]
    differs = int(np.count_nonzero(ref != pyt))
    last = [l for l in r.stdout.splitlines() if l.startswith("dequantize")][0]
    if differs:
        assert f"{differs}/80" in last, (differs, last)
    else:
        assert last.split()[2] == "=", last
    assert "first divergence from onnxruntime" in r.stdout, r.stdout
    tree = ET.parse(svg)
    cells = [e for e in tree.iter() if e.get("class") == "cell"]
    layers = [e for e in tree.iter() if e.get("class") == "layer"]
    assert len(layers) == 9 and len(cells) == 9 * 2, (len(layers), len(cells))
    r = cli("compare", INT8, "--input", xin, "--profiles", "onnxruntime,bogus", ok=False)
    assert r.returncode != 0 and "bogus" in r.stderr, r.stderr
    # Profiles that cannot run the model are named with the reason, and do not stop the others.
    r = cli("compare", INT8, "--input", xin, "--profiles", "onnxruntime,ghp_rtl,pytorch")
    assert "ghp_rtl: does not run this model" in r.stdout, r.stdout


@case
def compare_op_defaults_to_the_profiles_that_cover_it():
    r = cli("compare", "qlinear_add")
    listed = [l.split()[0] for l in r.stdout.splitlines()
              if l and l.split()[0] in {"onnxruntime", "pytorch", "ghp_rtl", "ghp_golden", "bm1684",
                                        "cvm", "tflite", "mico"}]
    covering = [p for p in ["onnxruntime", "pytorch", "ghp_rtl", "ghp_golden", "bm1684", "cvm",
                            "tflite", "mico"]
                if npukit.supports("qlinear_add", p)]
    assert listed == covering, (listed, covering)


@case
def the_profile_table_decides_fallback():
    # Relu belongs to the elementwise family, which ghp_rtl does not cover
    # (npukit.supports): without fallback the load fails naming the profile,
    # with fallback the node follows onnxruntime and says so.
    assert not npukit.supports("elementwise", "ghp_rtl") and npukit.supports("elementwise", "bm1684")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3])
    m = helper.make_model(helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="r")], "g",
                                            [x], [y]), opset_imports=[helper.make_opsetid("", 13)])
    path = os.path.join(TMP, "relu.onnx")
    onnx.save(m, path)
    try:
        npukit.OnnxModel(path, profile="ghp_rtl")
        raise AssertionError("ghp_rtl loaded a Relu without fallback")
    except npukit.Error as e:
        assert "parameter 'profile' = ghp_rtl" in str(e) and "elementwise" in str(e), str(e)
    fb = npukit.OnnxModel(path, profile="ghp_rtl", fallback=True)
    out = fb.run({"x": np.array([[-1, 0, 2]], np.float32)})["y"]
    assert np.array_equal(out, np.array([[0, 0, 2]], np.float32))
    assert [n["profile"] for n in fb.nodes()] == ["onnxruntime"], fb.nodes()
    covered = npukit.OnnxModel(path, profile="bm1684")
    assert [n["profile"] for n in covered.nodes()] == ["bm1684"], covered.nodes()


@case
def dump_all_and_compare_keep_the_fused_convs_outputs():
    # Under onnxruntime Conv + Relu/Clip run as one FusedConv, which never
    # stores the conv's own output. --dump-all and compare MODEL ask for every
    # value the file names: the convs' outputs must be there, equal to the
    # reference kernels' (NPUKIT_IMPL=reference, no fusion) bit for bit, and
    # the graph outputs must not change.
    x = rng.uniform(-2, 2, (2, 3, 7, 5)).astype(np.float32)
    x[1, 1, 3, 2] = np.nan
    w = rng.uniform(-1, 1, (4, 3, 3, 3)).astype(np.float32)
    inits = [numpy_helper.from_array(w, "w"),
             numpy_helper.from_array(np.array(-0.25, np.float32), "lo"),
             numpy_helper.from_array(np.array(0.5, np.float32), "hi")]
    nodes = [helper.make_node("Conv", ["x", "w"], ["c1"], pads=[1, 1, 1, 1], name="conv1"),
             helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
             helper.make_node("Conv", ["x", "w"], ["c2"], name="conv2"),
             helper.make_node("Clip", ["c2", "lo", "hi"], ["k2"], name="clip2")]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 7, 5])],
                          [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in ["r1", "k2"]],
                          inits)
    path = os.path.join(TMP, "conv_act_dump.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)
    # The plain load does fuse (else this test could not fail).
    fused = sorted(t[1] for t in npukit.OnnxModel(path).layer_times())
    assert fused == ["FusedConv", "FusedConv"], fused
    xin = os.path.join(TMP, "conv_act_dump_x.npy")
    np.save(xin, x)

    def dump(profile, tag, env=None):
        d, out = os.path.join(TMP, "dump_" + tag), os.path.join(TMP, "out_" + tag)
        cli("run", path, "--profile", profile, "-i", f"x={xin}", "-o", out, "--dump-all", d, env=env)
        rows = [l.split("\t") for l in open(os.path.join(d, "values.tsv")).read().splitlines()[1:]]
        return {r[1]: (r[2], np.load(os.path.join(d, r[0]))) for r in rows}, out

    ort, ort_out = dump("onnxruntime", "ort")
    pyt, _ = dump("onnxruntime", "ref", {"NPUKIT_IMPL": "reference"})
    assert set(ort) == {"x", "c1", "r1", "c2", "k2"}, sorted(ort)
    assert ort["c1"][0] == "conv1" and ort["k2"][0] == "clip2", {k: v[0] for k, v in ort.items()}
    for name, (_, v) in ort.items():
        assert v.tobytes() == pyt[name][1].tobytes(), name
    c1, c2 = ort["c1"][1], ort["c2"][1]
    assert (c1 < 0).any() and (c2 > 0.5).any() and np.isnan(c1).any()  # the clips had work to do
    assert np.array_equal(ort["r1"][1], np.where(c1 < 0, np.float32(0), c1), equal_nan=True)
    # The outputs equal a plain (fused) run's.
    plain = npukit.OnnxModel(path).run({"x": x})
    for o in ["r1", "k2"]:
        assert np.load(os.path.join(ort_out, o + ".npy")).tobytes() == plain[o].tobytes(), o
    # compare MODEL lines up conv1's output across profiles (all equal: with 3
    # input channels, MLAS's order is one FMA chain per channel at either
    # NCHWc block; pytorch's sequential sum would part ways).
    r = cli("compare", path, "--input", f"x={xin}", "--profiles", "onnxruntime,onnxruntime_avx2")
    rows = [l.split() for l in r.stdout.splitlines()
            if l.split()[:1] in (["conv1"], ["relu1"], ["conv2"], ["clip2"])]
    assert [row[:2] for row in rows] == [["conv1", "(Conv)"], ["relu1", "(Relu)"], ["conv2", "(Conv)"],
                                         ["clip2", "(Clip)"]], r.stdout
    assert all(row[2] == "=" for row in rows), r.stdout


sys.exit(CHECKS.finish())

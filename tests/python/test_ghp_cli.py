#!/usr/bin/env python3
"""`npukit isa golden/exec/encode/decode/disasm` end to end.

1. `isa golden` writes vectors for a YAML list of cases (avgp with pads,
   strides and ceil_mode, global avgp, maxp, add, and the public testbench's
   own config keys); re-running it gives identical files (seeded).
2. `isa exec` re-executes every ins.txt / program.asm line on the written X
   files and reproduces the Y files byte for byte.
3. Every Y is checked against an independent NumPy model of docs/ghp-isa.md
   "The arithmetic" (X_z padding, 14-bit window sum, m1 multiply, 10-bit register,
   round half up, clamps) driven only by the manifest's field values.
4. encode/decode/disasm round trips; bad input exits non-zero with a message.
"""
import filecmp
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

BIN = os.environ.get("NPUKIT_BIN", "npukit")
passed = failed = 0

CASES_YAML = """
hw: M64P64Q16R16S8
seed: 77
cases:
  - {op: avgp, C: 8, H: 9, W: 11, kernel_shape: [3, 3], strides: [2, 2], pads: [1, 1, 1, 1]}
  - {op: avgp, C: 16, H: 7, W: 7, kernel_shape: [2, 2], strides: [2, 2], ceil_mode: 1,
     x_scale: 0.05, x_zero_point: 250, y_scale: 0.01, y_zero_point: 3}
  - {op: avgp, C: 8, H: 6, W: 5, kernel_shape: [2, 3], strides: [1, 2], pads: [1, 2, 0, 2],
     x_scale: 0.02, x_zero_point: 0, y_scale: 0.005, y_zero_point: 0}
  - {op: gavgp, C: 8, H: 7, W: 7}
  - {op: maxp, C: 8, H: 8, W: 8, kernel_shape: [3, 3], strides: [2, 2], pads: [1, 1, 1, 1]}
  - {op: add, elements: 256}
  - {OC: 8, INC: 8, INH_: 10, INW_: 10, KH: 2, KW: 2, strideH: 2, strideW: 2,
     padL: 0, padR: 0, padU: 0, padD: 0}
  - {op: avgp, C: 8, H: 2, W: 2, kernel_shape: [2, 2], data: [255, 255, 255, 255, 0, 0, 0, 0,
     1, 2, 3, 4, 9, 9, 9, 9, 200, 100, 50, 25, 7, 7, 7, 8, 255, 0, 255, 0, 13, 14, 15, 16],
     x_scale: 1.0, x_zero_point: 0, y_scale: 0.5, y_zero_point: 0}
"""


def report(ok, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL:", what)


def run(*args, expect_ok=True):
    r = subprocess.run([BIN, *args], capture_output=True, text=True)
    if expect_ok and r.returncode != 0:
        print("command failed:", " ".join(args), r.stderr)
    return r


def wrap(v, bits):
    v = np.asarray(v, dtype=np.int64) & ((1 << bits) - 1)
    return np.where(v >= 1 << (bits - 1), v - (1 << bits), v)


def ppu_rtl(acc, m1, n1, yz):
    t = wrap((wrap(acc, 35) * m1) >> (n1 - 1), 10)
    r = np.clip((t >> 1) + (t & 1), -256, 255)
    return np.clip(r + yz, 0, 255).astype(np.uint8)


def model_pool(x, f, maxp):
    """docs/ghp-isa.md, "The arithmetic" from the fields alone (real values of the manifest)."""
    c, inh, inw = f["OC"], f["INH2"] - f["padU"], f["INW_"]
    sh, sw, kh, kw = f["strideH"], f["strideW"], f["KH"], f["KW"]
    oh, ow = f["row_bound"] // sh + 1, f["col_bound"] // sw + 1
    x = x.reshape(c, inh, inw).astype(np.int64)
    pu, pl = f["padU"], f["padL"]
    big = np.full((c, pu + (oh - 1) * sh + kh + inh, pl + (ow - 1) * sw + kw + inw), f["X_z"],
                  dtype=np.int64)
    big[:, pu:pu + inh, pl:pl + inw] = x
    neg = ((f["obj2"] << 8) | f["obj1"])
    neg = neg - 65536 if neg >= 32768 else neg
    y = np.zeros((c, oh, ow), dtype=np.uint8)
    for i in range(oh):
        for j in range(ow):
            win = big[:, i * sh:i * sh + kh, j * sw:j * sw + kw]
            v = win.max(axis=(1, 2)) if maxp else win.sum(axis=(1, 2)) & 0x3FFF
            y[:, i, j] = ppu_rtl(v + neg, f["m1"], f["n1"], f["Y_z"])
    return y.reshape(-1)


def model_add(a, b, f):
    p = (a.astype(np.int64) - f["A_z"]) * f["m1"] + (b.astype(np.int64) - f["B_z"]) * f["m2"]
    t = wrap(p >> (f["n"] - 1), 10)
    r = np.clip((t >> 1) + (t & 1), -256, 255)
    return np.clip(r + f["C_z"], 0, 255).astype(np.uint8)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        cfg = os.path.join(tmp, "cases.yaml")
        with open(cfg, "w") as f:
            f.write(CASES_YAML)
        out, again = os.path.join(tmp, "out"), os.path.join(tmp, "again")
        report(run("isa", "golden", "--config", cfg, "--out", out).returncode == 0, "golden")
        report(run("isa", "golden", "--config", cfg, "--out", again).returncode == 0, "golden 2")
        names = sorted(os.listdir(out))
        same = filecmp.cmpfiles(out, again, names, shallow=False)[0]
        report(same == names, f"golden is reproducible ({len(same)}/{len(names)} files equal)")
        with open(os.path.join(out, "manifest.json")) as f:
            man = json.load(f)
        report(len(man["cases"]) == 8, "manifest lists 8 cases")

        for c in man["cases"]:
            k, fields = c["index"], c["fields"]
            x = np.fromfile(os.path.join(out, c["x_file"]), dtype=np.uint8)
            y = np.fromfile(os.path.join(out, c["y_file"]), dtype=np.uint8)
            report(y.size == int(np.prod(c["y_shape"])), f"case {k}: Y size")
            mostly_same = np.bincount(y, minlength=256).max() / max(y.size, 1)
            report(mostly_same < 0.9 or k == 7, f"case {k}: Y not degenerate ({mostly_same:.2f})")
            for src in (["--asm", os.path.join(out, "program.asm")],
                        ["--ins-txt", os.path.join(out, "ins.txt"), "--op",
                         "maxp" if c["opcode"] == "MAXP" else "avgp"]):
                o = os.path.join(tmp, f"y{k}.bin")
                args = ["isa", "exec", *src, "--line", str(k), "--input",
                        os.path.join(out, c["x_file"]), "--output", o]
                if c["opcode"] == "ADD":
                    args += ["--input-b", os.path.join(out, c["b_file"])]
                r = run(*args)
                report(r.returncode == 0 and filecmp.cmp(o, os.path.join(out, c["y_file"]),
                                                         shallow=False),
                       f"case {k}: isa exec {src[0]} reproduces {c['y_file']}")
            if c["opcode"] == "ADD":
                b = np.fromfile(os.path.join(out, c["b_file"]), dtype=np.uint8)
                want = model_add(x, b, fields)
            else:
                want = model_pool(x, fields, c["opcode"] == "MAXP")
            bad = int(np.count_nonzero(want != y))
            report(bad == 0, f"case {k} ({c['op']}): {bad} outputs differ from the NumPy model")
        # Hand-checked case 7: M = 1/(4*0.5) = 0.5, windows of 4 values.
        y7 = np.fromfile(os.path.join(out, "Y7.bin"), dtype=np.uint8)
        # sums 1020, 0, 10, 36, 375, 29, 510, 58; *0.5, round half up, 10-bit wrap for 1020
        report(list(y7) == [0, 0, 5, 18, 188, 15, 255, 29], f"case 7 by hand: {list(y7)}")

        # encode / decode / disasm
        prog_bin = os.path.join(tmp, "p.bin")
        report(run("isa", "encode", "--asm", os.path.join(out, "program.asm"), "--out",
                   prog_bin).returncode == 0, "encode")
        report(filecmp.cmp(prog_bin, os.path.join(out, "program.bin"), shallow=False),
               "encode(program.asm) == program.bin")
        r = run("isa", "decode", "--bin", prog_bin, "--format", "ins-txt")
        with open(os.path.join(out, "ins.txt")) as f:
            report(r.returncode == 0 and r.stdout == f.read(), "decode --format ins-txt == ins.txt")
        r = run("isa", "decode", "--bin", prog_bin)
        with open(os.path.join(out, "program.asm")) as f:
            report(r.returncode == 0 and r.stdout == f.read(), "decode == program.asm")

        # issue #11: a text line naming only some fields is an error (it used to
        # assemble with the rest 0), and decode exits 1 on an invalid instruction
        # while still printing it.
        with open(os.path.join(out, "program.asm")) as f:
            pool_line = next(l for l in f.read().splitlines() if l.startswith(("AVGP", "MAXP")))
        partial = os.path.join(tmp, "partial.asm")
        with open(partial, "w") as f:
            f.write(pool_line + "\nAVGP KH=2\n")
        for sub in (["decode"], ["encode", "--out", os.path.join(tmp, "partial.bin")]):
            r = run("isa", *sub, "--asm", partial, expect_ok=False)
            report(r.returncode != 0 and "line 2" in r.stderr and "missing: xphs_addr" in r.stderr
                   and "strideH" in r.stderr, f"isa {sub[0]} of a partial line: rc "
                   f"{r.returncode}, stderr {r.stderr.strip()}")
        stride0 = os.path.join(tmp, "stride0.asm")
        with open(stride0, "w") as f:
            f.write(pool_line + "\n" + re.sub(r"strideH=\d+(:\d+)?", "strideH=0", pool_line) + "\n")
        r = run("isa", "decode", "--asm", stride0, expect_ok=False)
        report(r.returncode == 1 and r.stdout.count("\n") == 2 and "# invalid" in r.stdout
               and "instruction 1 " in r.stderr and "strideH" in r.stderr
               and "1 of 2 instructions invalid" in r.stderr,
               f"decode of strideH=0 exits 1: rc {r.returncode}, stderr {r.stderr.strip()}")
        r = run("isa", "decode", "--asm", stride0, "--format", "ins-txt", expect_ok=False)
        report(r.returncode == 1 and r.stdout.count("\n") == 2,
               f"decode --format ins-txt of strideH=0 exits 1: rc {r.returncode}")
        r = run("isa", "disasm", "--bin", prog_bin)
        report(r.returncode == 0 and "# 8 instructions, 0 problems" in r.stdout,
               "disasm reports no consistency problem")
        # issue #11: disasm lists every instruction and exits 1 when one is invalid.
        r = run("isa", "disasm", "--asm", stride0, expect_ok=False)
        report(r.returncode == 1 and r.stdout.count("# [") == 2 and "#   error:" in r.stdout
               and "strideH" in r.stdout and "# 2 instructions, 1 problems" in r.stdout
               and "npukit isa disasm: 1 problems in 2 instructions" in r.stderr,
               f"disasm of strideH=0 exits 1: rc {r.returncode}, stderr {r.stderr.strip()}")

        # issue #11: `isa exec` of a line whose fields describe an output far
        # larger than its input (here a 1-wide input padded to 60,000 columns)
        # is refused before anything is allocated or written.
        wide = re.sub(r"INW_=\d+", "INW_=1", pool_line)
        wide = re.sub(r"INW2=\d+", "INW2=60000", wide)
        wide = re.sub(r"strideW=\d+(:\d+)?", "strideW=1", wide)
        wide = re.sub(r"col_bound=\d+", "col_bound=59998", wide)
        wide_asm, x_small, y_wide = (os.path.join(tmp, n) for n in ("wide.asm", "xs.bin", "yw.bin"))
        with open(wide_asm, "w") as f:
            f.write(wide + "\n")
        with open(x_small, "wb") as f:
            f.write(bytes(1))
        r = run("isa", "exec", "--asm", wide_asm, "--line", "0", "--input", x_small, "--output",
                y_wide, expect_ok=False)
        need = re.search(r"allowed: (\d+) bytes", r.stderr)
        if need:
            with open(x_small, "wb") as f:
                f.write(bytes(int(need.group(1))))
            r = run("isa", "exec", "--asm", wide_asm, "--line", "0", "--input", x_small, "--output",
                    y_wide, expect_ok=False)
        report(r.returncode != 0 and "at most 256 x its input + 1 MiB" in r.stderr
               and not os.path.exists(y_wide),
               f"isa exec refuses an output 256x its input: rc {r.returncode}, {r.stderr.strip()}")

        # bad input: non-zero exit and a message naming the problem
        x0 = os.path.join(out, "X0.bin")
        y0 = os.path.join(tmp, "bad.bin")
        asm = os.path.join(out, "program.asm")
        bad_cases = [
            (["isa", "exec", "--asm", asm, "--line", "99", "--input", x0, "--output", y0], "--line"),
            (["isa", "exec", "--asm", asm, "--line", "1", "--input", x0, "--output", y0], "bytes"),
            (["isa", "exec", "--asm", asm, "--line", "0", "--input", x0, "--output", y0, "--hw",
              "Q9"], "hw_preset"),
            (["isa", "exec", "--asm", asm, "--line", "0", "--input", x0, "--output", y0,
              "--profile", "onnxruntime"], "ghp_rtl or ghp_golden"),
            (["isa", "exec", "--asm", "/nonexistent", "--line", "0", "--input", x0, "--output",
              y0], "readable"),
            (["isa", "exec", "--asm", asm, "--ins-txt", asm, "--line", "0", "--input", x0,
              "--output", y0], "exactly one"),
            (["isa", "golden", "--config", x0, "--out", tmp + "/g"], "YAML"),
            (["isa", "decode", "--bin", os.path.join(tmp, "op9.bin")], "op_type"),
        ]
        with open(os.path.join(tmp, "op9.bin"), "wb") as f:
            f.write(bytes([9]))
        bad_yaml = os.path.join(tmp, "bad.yaml")
        with open(bad_yaml, "w") as f:
            f.write("cases:\n  - {op: avgp, C: 8, H: 4, W: 4, kernel_shape: [2, 2], "
                    "count_include_pad: 0}\n")
        bad_cases.append((["isa", "golden", "--config", bad_yaml, "--out", tmp + "/g"],
                          "count_include_pad"))
        for args, needle in bad_cases:
            r = run(*args, expect_ok=False)
            report(r.returncode != 0 and needle in r.stderr,
                   f"{' '.join(args[:2])} {needle}: rc {r.returncode}, stderr {r.stderr.strip()}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

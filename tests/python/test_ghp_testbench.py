#!/usr/bin/env python3
"""The public GHP-FPGA testbench vectors, reproduced byte for byte.

wkid-neu/GHP-FPGA-CNN publishes FPGA_linux/hdl/tb/sim_avgp (6 QLinearAveragePool
cases) and sim_add (7 QLinearAdd cases): ins.txt plus raw uint8 X/Y (A/B/C)
dumps. The dumps are too large to commit, so this test regenerates the inputs
with the generator's documented recipe (numpy legacy RNG seeded 2023, randn,
quant_auto = min/max affine uint8), proves them identical to the published
files by SHA-256, runs `npukit isa exec` on the published ins.txt lines under
ghp_rtl and ghp_golden, and compares the outputs with the published outputs'
SHA-256. It also checks that the multipliers of the published lines follow from
the regenerated scales (npukit.ghp_decompose_multiplier / ghp_add_params).
"""
import hashlib
import os
import subprocess
import sys
import tempfile

import numpy as np

import npukit

BIN = os.environ.get("NPUKIT_BIN", "npukit")
SEED = 2023  # the generator's default rand_state

AVGP_INS = [
    "0 0 0 0 0 0 1 8 0 2 1 1 1 1 0 0 2 2 1 1 1 0 0 0 4 3 138 0 155 53270447 25 216 253 0 0",
    "1 0 0 0 0 2 9 8 0 10 1 1 2 2 0 0 10 10 7 2 2 0 8 8 4 3 138 0 132 37191739 25 216 253 0 0",
    "2 0 0 0 0 11 20 8 0 12 1 1 2 2 0 0 12 12 9 3 3 0 10 10 4 3 124 0 122 39785584 25 16 254 0 0",
    "3 0 0 0 0 23 30 8 0 10 1 1 2 2 0 0 10 10 7 2 2 0 8 8 4 3 122 0 121 46856268 25 24 254 0 0",
    "4 2 0 0 0 32 84 32 3 14 2 2 1 1 1 1 15 15 13 13 1 0 13 13 9 8 136 0 130 50294988 26 56 251 0 0",
    "7 2 0 0 0 136 1160 128 15 32 1 1 2 2 0 0 32 32 64 16 4 0 30 30 4 3 132 0 129 36500560 25 240 253 0 0",
]
# cfg_avgp.yaml: C, H, W, kernel, stride, pad
AVGP_CFG = [(8, 2, 2, 2, 1, 0), (8, 10, 10, 2, 2, 0), (8, 12, 12, 2, 2, 0),
            (8, 10, 10, 2, 2, 0), (32, 14, 14, 3, 1, 1), (128, 32, 32, 2, 2, 0)]
AVGP_SHA = [  # (X<k>.hex, Y<k>.hex)
    ("5323a915567cdc5e6ea1b4f19c06bdbca166bbf7fdfe26db77b9f410e5eaeebe",
     "8d013f25b9bc960d15f4a8ddb4eeb21bb8325ca5ac61465c7e712e8220e81397"),
    ("9dd71f08b237d254b5c5a6fcc8436f361a989dd13a761923d691a4144a6ec6b3",
     "ebadd0c0e33525a141fd13ccc8d86024cc5a939ba22a03164e408b6901344b2b"),
    ("b79b96e95c6ac0d2e76afc943f4efde579035f6d57c854b14c36d839f37cd6e0",
     "ab5b856917463b582973755fec4762f1208a77f0f88739095dab06ba87ca2413"),
    ("ba74d97c4b003d7f0379028ebebb940d0b4c94735df3ee19380d688f321c1dd2",
     "5389d5d576d36622f3148558c6737cddfc6507be8d753e540d19f1f38ffe9c10"),
    ("459bc65527ff66f96355eddf2fceb23ae46197ae8c3d71fe28f004225a6608ae",
     "50add87d6e4de55df97f7275010802cc0061dc0d79eb3e09faa2e5403ee37325"),
    ("2f3c68ef57706b403114510a3491e09c512e89bc33c1fa12bc012cb899cb408a",
     "bc8b8319f6ec2556e8f443197ff0e40e3613be9fdbde40065efe7b1a4492ae5b"),
]
ADD_INS = [
    "0 1 2 0 51528330 45064676 25 138 124 133",
    "3 5 7 1 47386660 44623578 25 135 121 108",
    "9 13 17 3 42431579 45419412 25 137 120 132",
    "21 29 37 7 49356163 48305688 25 122 131 128",
    "45 61 77 15 48345575 51428062 25 132 136 124",
    "93 125 157 31 51567410 52829793 25 119 135 133",
    "189 253 317 63 52926707 47406083 25 127 135 126",
]
ADD_SIZES = [128, 256, 512, 1024, 2048, 4096, 8192]  # cfg_add.yaml
ADD_SHA = [  # (A<k>.hex, B<k>.hex, C<k>.hex)
    ("77d617a1ae42534e79b59547b579f0c9975ff878d134bd3a4e2243ca754270e5",
     "0d91e7ec226ddd1f3a715ef433ec1206fbdfe609124eedca1a643a50989d920f",
     "05f0c9bea06d94a97f1b44e52c4b071d4734500edff45886c0cd898d63d2342a"),
    ("1330271e4fe27f8a23384b0093945465979c084c401730b249b5b596ce92fca7",
     "3964310878f0967f15a9571a81cc4fe5ee892da81974c3be99bbdd0100cf7c4b",
     "ef537e285b5983b1e360df817c23db4bd5cb884a3682f459d5b1b477c8790093"),
    ("7663499a443141f9f9390bba99d07166fc02f9859db7313b07a6bc6ae0bcd25f",
     "6b69ebc9bcdfc55367f3039cdf2c069fb625a721e67914cd16c57d42f678d3a6",
     "1120685c31e10407d49d99b5064e5934099817685ec76bb3544f5b00f7bfa305"),
    ("c5737dc11aab9eb17bfab702c667d687114bf398ae018ac6133026b669ba46b8",
     "d05e554a9639fae2bdcf7b46bc2bbfc6363f6eff6ef5078c244e6b52bca504a6",
     "a1a46ccee208ecb16172e8d3ad6e9dce75974e8b9a0b9c5d075f7ceb4734ebd2"),
    ("d54fc6452a5f7c60bb9d31f76d0dc834dcb94daf975cf21abf08647e87e84e0f",
     "230233b3470f8afc99620e68dc1463dc9bdb6a03965253672ac692628d768d89",
     "9df6216d9a3f2078115431889ffe60e3c190a0ed31a7cb3d21d7eef0ae822c4f"),
    ("bd8ee5f7928b1c55e5879549ae7640d0d949b4525517abcd53b6079789f464de",
     "3f6797a51a2dd564331e350a33e022f0c1b22a35db33dd704222c0c85ff6cd69",
     "aed68dc0fa30f9ce4bbeb9882e266a6ec4c8e9e0881d4308d396b37723f5e55d"),
    ("3bfb5f8b6567fe0af51214bb932e475978cca3ec4976a89d8624984d5e546119",
     "8dea1e3ea17b110133f1c62c5bf74cb02f40d1fc80417355934c3ee1acf9b5e2",
     "f8bd93e8bbfc584bf8ef925df1d99ac5ad0675962cba971b55fc7f1228cfe1ed"),
]

passed = failed = 0


def report(ok, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL:", what)


def sha(b):
    return hashlib.sha256(bytes(b)).hexdigest()


def quant_auto(t):
    """The generator's uint8 min/max quantization (facts from its docs)."""
    lo, hi = t.min(), t.max()
    scale = (hi - lo) / 255
    zp = min(max(round(-lo / scale), 0), 255)
    q = np.clip(np.round(np.divide(t, scale)) + zp, 0, 255).astype(np.uint8)
    return q, scale, zp


def avg_pool_f64(x, k, s, p):
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
    oh, ow = (xp.shape[2] - k) // s + 1, (xp.shape[3] - k) // s + 1
    y = np.zeros(x.shape[:2] + (oh, ow))
    for i in range(oh):
        for j in range(ow):
            y[:, :, i, j] = xp[:, :, i * s:i * s + k, j * s:j * s + k].mean(axis=(2, 3))
    return y


def run_exec(tmp, ins_lines, k, inputs, hw, profile):
    ins = os.path.join(tmp, "ins.txt")
    with open(ins, "w") as f:
        f.write("\n".join(ins_lines) + "\n")
    names = []
    for i, data in enumerate(inputs):
        names.append(os.path.join(tmp, f"in{i}.bin"))
        with open(names[-1], "wb") as f:
            f.write(bytes(data))
    out = os.path.join(tmp, "out.bin")
    cmd = [BIN, "isa", "exec", "--ins-txt", ins, "--line", str(k), "--input", names[0],
           "--output", out, "--hw", hw, "--profile", profile]
    if len(names) > 1:
        cmd += ["--input-b", names[1]]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        print(" ".join(cmd), r.stderr)
        return b""
    with open(out, "rb") as f:
        return f.read()


def main():
    print(f"regenerating the public testbench inputs with numpy seed {SEED}")
    with tempfile.TemporaryDirectory() as tmp:
        np.random.seed(SEED)
        for k, (c, h, w, kk, s, p) in enumerate(AVGP_CFG):
            x = np.random.randn(1, c, h, w)
            xq, xs, xz = quant_auto(x)
            _, ys, yz = quant_auto(avg_pool_f64(x, kk, s, p))
            report(sha(xq.tobytes()) == AVGP_SHA[k][0], f"avgp X{k} regenerated")
            fields = [int(v) for v in AVGP_INS[k].split()]
            m1, n1 = npukit.ghp_decompose_multiplier(float(xs) / (float(ys) * kk * kk))
            report((m1, n1 - 1) == (fields[29], fields[30]), f"avgp {k}: m1/n1 {m1} {n1}")
            report((xz, yz) == (fields[26], fields[28]), f"avgp {k}: zero points")
            for profile in ("ghp_rtl", "ghp_golden"):
                y = run_exec(tmp, AVGP_INS, k, [xq.tobytes()], "M32P96Q16R16S8", profile)
                report(sha(y) == AVGP_SHA[k][1], f"avgp Y{k} under {profile}")
            # The Python face computes the same from ONNX-level parameters.
            y = npukit.ghp_avg_pool(xq, [kk, kk], float(xs), xz, float(ys), yz, strides=[s, s],
                                    pads=[p] * 4)
            report(sha(y.tobytes()) == AVGP_SHA[k][1], f"avgp Y{k} via npukit.ghp_avg_pool")

        np.random.seed(SEED)  # add.py is a separate run with the same default seed
        for k, n in enumerate(ADD_SIZES):
            a = np.random.randn(1, 1, 1, n)
            b = np.random.randn(1, 1, 1, n)
            aq, as_, az = quant_auto(a)
            bq, bs, bz = quant_auto(b)
            _, cs, cz = quant_auto(a + b)
            report(sha(aq.tobytes()) == ADD_SHA[k][0], f"add A{k} regenerated")
            report(sha(bq.tobytes()) == ADD_SHA[k][1], f"add B{k} regenerated")
            fields = [int(v) for v in ADD_INS[k].split()]
            m1, m2, nn = npukit.ghp_add_params(float(as_), float(bs), float(cs))
            report((m1, m2, nn - 1) == tuple(fields[4:7]), f"add {k}: m1/m2/n {m1} {m2} {nn}")
            report((az, bz, cz) == tuple(fields[7:10]), f"add {k}: zero points")
            for profile in ("ghp_rtl", "ghp_golden"):
                c = run_exec(tmp, ADD_INS, k, [aq.tobytes(), bq.tobytes()], "M64P64Q16R16S8",
                             profile)
                report(sha(c) == ADD_SHA[k][2], f"add C{k} under {profile}")
            c = npukit.ghp_qlinear_add(aq, float(as_), az, bq, float(bs), bz, float(cs), cz)
            report(sha(c.tobytes()) == ADD_SHA[k][2], f"add C{k} via npukit.ghp_qlinear_add")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

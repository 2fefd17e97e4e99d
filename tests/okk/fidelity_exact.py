#!/usr/bin/env python3
"""conv2d outputs of fidelity_teams.sh runs against the exact sums.

    fidelity_exact.py CASE DUMP [DUMP ...]   (env: NPUKIT_KIT_GIT, NPUKIT_FIDELITY_SEED)

The kit's host check compares a device's conv2d output with its own fp32
reference, one accumulator summed in the order (kh, kw, ic), allowing
1e-4 * max(|out|, |ref|, 1). When a kernel fails that check on both
simulators, this tells which of the two is off: it regenerates the host's
inputs (std::mt19937 seeded as the host is, uniform floats in [-1, 1), input
then kernel), checks the regeneration by redoing the host's reference on
sampled outputs bit for bit, computes every output in float64 (each product
of two floats is exact in a double; the sum's error is ~1e-12 here, far below
the 1e-4 tolerance), and prints per DUMP (the device words; DUMP.ref the
host's reference):
  kit_fail   outputs failing the kit's own check
  dev_off    outputs of the device farther than the kit's tolerance from the exact sum
  ref_off    the same for the host's reference
  ref_farther  of the kit's failures, those where the host's reference is farther
             from the exact sum than the device's output
  dev_max, ref_max, dev_rms, ref_rms   |x - exact|
"""
import os
import re
import subprocess
import sys

import numpy as np

KIT_GIT = os.environ.get("NPUKIT_KIT_GIT", "/work/.mirror/yuanas+tpucontest/repo")
SEED = int(os.environ.get("NPUKIT_FIDELITY_SEED", "20261127"))
TOL = 1e-4


def case_params(case):
    host = subprocess.run(["git", "-C", KIT_GIT, "show", "HEAD:okkernel/host/conv2d.cpp"],
                          capture_output=True, text=True, check=True).stdout
    for line in host.splitlines():
        if re.search(r"\}, // %d$" % case, line.strip()):
            return {k: int(v) for k, v in re.findall(r"\.(\w+) = *(\d+)", line)}
    sys.exit("fidelity_exact: no conv2d case %d in the kit's host" % case)


def host_floats(seed, n):
    """std::uniform_real_distribution<float>{-1, 1} over std::mt19937 as libstdc++ draws it:
    one 32-bit word per float, float(word) / 2^32 (below 1), then u * 2 + -1 in fp32."""
    bits = np.random.MT19937()
    bits._legacy_seeding(seed)  # std::mt19937::seed(value): the same init_genrand
    u = bits.random_raw(n).astype(np.float32) / np.float32(2.0**32)
    u = np.where(u >= 1, np.nextafter(np.float32(1), np.float32(0)), u)
    return u * np.float32(2) + np.float32(-1)


def geometry(p):
    kh_ext = (p["kernel_h"] - 1) * p["dilation_h"] + 1
    kw_ext = (p["kernel_w"] - 1) * p["dilation_w"] + 1
    oh = (p["H"] + p["pad_top"] + p["pad_bottom"] - kh_ext) // p["stride_h"] + 1
    ow = (p["W"] + p["pad_left"] + p["pad_right"] - kw_ext) // p["stride_w"] + 1
    return oh, ow


def tap(x, p, n, kh, kw, oh, ow):
    """Input rows/columns under tap (kh, kw) for every output position: (IC, oh*ow), zeros in padding."""
    ih = np.arange(oh) * p["stride_h"] + kh * p["dilation_h"] - p["pad_top"]
    iw = np.arange(ow) * p["stride_w"] + kw * p["dilation_w"] - p["pad_left"]
    vh, vw = (ih >= 0) & (ih < p["H"]), (iw >= 0) & (iw < p["W"])
    t = np.zeros((p["IC"], oh, ow), dtype=np.float64)
    t[:, vh[:, None] & vw[None, :]] = x[n][:, ih[vh]][:, :, iw[vw]].reshape(p["IC"], -1)
    return t.reshape(p["IC"], -1)


def exact(x, w, p):
    oh, ow = geometry(p)
    out = np.zeros((p["N"], p["OC"], oh * ow))
    for n in range(p["N"]):
        for kh in range(p["kernel_h"]):
            for kw in range(p["kernel_w"]):
                out[n] += w[:, :, kh, kw].astype(np.float64) @ tap(x, p, n, kh, kw, oh, ow)
    return out.reshape(-1)


def host_reference_at(x, w, p, flat):
    """The host's fp32 reference at one output: products rounded to fp32, summed in (kh, kw, ic)."""
    oh, ow = geometry(p)
    n, rest = divmod(flat, p["OC"] * oh * ow)
    oc, rest = divmod(rest, oh * ow)
    y, xo = divmod(rest, ow)
    terms = []
    for kh in range(p["kernel_h"]):
        for kw in range(p["kernel_w"]):
            ih = y * p["stride_h"] + kh * p["dilation_h"] - p["pad_top"]
            iw = xo * p["stride_w"] + kw * p["dilation_w"] - p["pad_left"]
            if 0 <= ih < p["H"] and 0 <= iw < p["W"]:
                terms.append(x[n, :, ih, iw] * w[oc, :, kh, kw])
    if not terms:
        return np.float32(0)
    return np.cumsum(np.concatenate(terms), dtype=np.float32)[-1]


def main():
    case, dumps = int(sys.argv[1]), sys.argv[2:]
    p = case_params(case)
    xs = (p["N"], p["IC"], p["H"], p["W"])
    ws = (p["OC"], p["IC"], p["kernel_h"], p["kernel_w"])
    v = host_floats(SEED, int(np.prod(xs)) + int(np.prod(ws)))
    x, w = v[:np.prod(xs)].reshape(xs), v[np.prod(xs):].reshape(ws)
    want = exact(x, w, p)
    print("case,dump,outputs,kit_fail,dev_off,ref_off,ref_farther,dev_max,ref_max,dev_rms,ref_rms")
    for d in dumps:
        if not (os.path.exists(d) and os.path.exists(d + ".ref")):
            print("%d,%s,no dump" % (case, d))
            continue
        out = np.fromfile(d, dtype=np.float32)
        ref = np.fromfile(d + ".ref", dtype=np.float32)
        if out.size != want.size or ref.size != want.size:
            sys.exit("fidelity_exact: %s holds %d words, case %d has %d outputs" % (d, out.size, case, want.size))
        # The regenerated inputs must give the host's reference bit for bit.
        rng = np.random.default_rng(case)
        for i in rng.choice(want.size, 16, replace=False):
            got = host_reference_at(x, w, p, int(i))
            if got.view(np.uint32) != ref[i].view(np.uint32):
                sys.exit("fidelity_exact: output %d: host reference %r, regenerated %r (inputs differ)" %
                         (i, ref[i], got))
        o64, r64 = out.astype(np.float64), ref.astype(np.float64)
        kit_fail = np.abs(o64 - r64) >= TOL * np.maximum(np.maximum(np.abs(o64), np.abs(r64)), 1)
        bound = TOL * np.maximum(np.abs(want), 1)
        de, re_ = np.abs(o64 - want), np.abs(r64 - want)
        print("%d,%s,%d,%d,%d,%d,%d,%.3g,%.3g,%.3g,%.3g" % (
            case, d, want.size, kit_fail.sum(), (de >= bound).sum(), (re_ >= bound).sum(),
            (re_[kit_fail] > de[kit_fail]).sum(), de.max(), re_.max(), np.sqrt((de**2).mean()),
            np.sqrt((re_**2).mean())))


if __name__ == "__main__":
    main()

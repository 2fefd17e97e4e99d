#!/usr/bin/env python3
"""One fidelity_teams.sh run's output against the kit's check and npukit's run.

    fidelity_compare.py OP DUMP NPUKIT_DUMP

DUMP holds the device's output words and DUMP.ref the host's reference (the
kit's host program, changed by fidelity_teams.sh; without DUMP.ref, DUMP holds
both, one after the other). Prints
`bad_outputs,outputs,worst_tol_ratio,same_as_npukit`: how many outputs miss the
kit's own check (|out - ref| < tol * max(|out|, |ref|, 1), tol 1e-3 for softmax
and 1e-4 otherwise, in the host's float/double arithmetic; both non-finite
passes), the largest |out - ref| / bound, and whether every word equals
NPUKIT_DUMP's (`self` for npukit's own run, empty when either is missing).
"""
import os
import sys

import numpy as np


def load(dump):
    """(device output, host reference) of one run, or None when it wrote none."""
    if not os.path.exists(dump) or os.path.getsize(dump) == 0:
        return None
    words = np.fromfile(dump, dtype=np.float32)
    if os.path.exists(dump + ".ref"):
        return words, np.fromfile(dump + ".ref", dtype=np.float32)
    n = words.size // 2
    return words[:n], words[n:]


def main():
    op, dump, ref_dump = sys.argv[1:4]
    run = load(dump)
    if run is None or run[0].size != run[1].size:
        print(",,,")
        return
    out, ref = run
    n = out.size
    tol = 1e-3 if op == "softmax" else 1e-4
    diff = np.abs(out - ref).astype(np.float64)
    bound = tol * np.maximum(np.maximum(np.abs(out), np.abs(ref)), np.float32(1)).astype(np.float64)
    with np.errstate(invalid="ignore"):
        ok = diff < bound
        ratio = np.where(np.isfinite(diff), diff / bound, np.inf)
    both_nonfinite = ~np.isfinite(out) & ~np.isfinite(ref)
    ok |= both_nonfinite
    ratio[both_nonfinite] = 0
    bad = int(np.count_nonzero(~ok))
    worst = float(ratio.max()) if n else 0.0
    if os.path.abspath(dump) == os.path.abspath(ref_dump):
        same = "self"
    else:
        other = load(ref_dump)
        same = ""
        if other is not None and other[0].size == n:
            differ = int(np.count_nonzero(out.view(np.uint32) != other[0].view(np.uint32)))
            same = "no (%d differ)" % differ if differ else "yes"
    print("%d,%d,%.3g,%s" % (bad, n, worst, same))


if __name__ == "__main__":
    main()

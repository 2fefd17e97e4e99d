#!/usr/bin/env python3
"""One fidelity_teams.sh run's output against the kit's check and npukit's run.

    fidelity_compare.py OP DUMP NPUKIT_DUMP

DUMP holds the device's output words followed by the host's reference (the
kit's host program, changed by fidelity_teams.sh). Prints
`bad_outputs,outputs,worst_tol_ratio,same_as_npukit`: how many outputs miss the
kit's own check (|out - ref| < tol * max(|out|, |ref|, 1), tol 1e-3 for softmax
and 1e-4 otherwise, in the host's float/double arithmetic; both non-finite
passes), the largest |out - ref| / bound, and whether every word equals
NPUKIT_DUMP's (`self` for npukit's own run, empty when either is missing).
"""
import os
import sys

import numpy as np


def main():
    op, dump, ref_dump = sys.argv[1:4]
    if not os.path.exists(dump) or os.path.getsize(dump) == 0:
        print(",,,")
        return
    words = np.fromfile(dump, dtype=np.float32)
    n = words.size // 2
    out, ref = words[:n], words[n:]
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
    elif os.path.exists(ref_dump) and os.path.getsize(ref_dump) == os.path.getsize(dump):
        other = np.fromfile(ref_dump, dtype=np.uint32)[:n]
        same = "yes" if np.array_equal(words.view(np.uint32)[:n], other) else "no"
        if same == "no":
            same = "no (%d differ)" % int(np.count_nonzero(words.view(np.uint32)[:n] != other))
    else:
        same = ""
    print("%d,%d,%.3g,%s" % (bad, n, worst, same))


if __name__ == "__main__":
    main()

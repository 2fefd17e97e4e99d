#!/usr/bin/env python3
"""fidelity_teams.sh's results.csv as the markdown table of docs/npu-simulator.md.

    fidelity_table.py RESULTS.csv

One row per kernel and team: cases passing the kit's check under npukit and
under the vendor's C-model, how many of the cases both ran gave the same output
words, the wall time summed over the cases and the slowest case on each side,
npukit's rule warnings, and every case that did not pass on either side with
its figures (outputs off the tolerance, worst ratio to it).
"""
import csv
import sys
from collections import defaultdict

OPS = ["conv2d", "depthwise", "matmul", "softmax", "avg_pool", "max_pool"]


def describe(r):
    if r["status"] == "fail":
        return "fail, %s of %s outputs off, worst %sx tol" % (
            r["bad_outputs"], r["outputs"], r["worst_tol_ratio"])
    if r["status"] == "timeout":
        return "timeout after %s s wall (%s s CPU)" % (r["wall_s"], r["cpu_s"])
    return r["status"]


def main():
    rows = list(csv.DictReader(open(sys.argv[1])))
    runs = defaultdict(dict)  # (op, team) -> case -> side -> row
    for r in rows:
        runs[(r["op"], r["team"])].setdefault(int(r["case"]), {})[r["side"]] = r
    print("| kernel | team | npukit pass | vendor pass | same words | npukit wall / CPU: sum; slowest case |"
          " vendor wall / CPU: sum; slowest case | warnings | cases not passing (npukit / vendor) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for op in OPS:
        for (o, team) in sorted(k for k in runs if k[0] == op):
            cases = runs[(o, team)]
            cells = [op, team.replace("*", "\\*")]
            for side in ("npukit", "vendor"):
                ran = [c for c in cases if side in cases[c]]
                ok = [c for c in ran if cases[c][side]["status"] == "pass"]
                cells.append("%d of %d" % (len(ok), len(ran)) if ran else "not run")
            both = [c for c in cases if "npukit" in cases[c] and "vendor" in cases[c]
                    and cases[c]["vendor"]["same_as_npukit"]]
            same = [c for c in both if cases[c]["vendor"]["same_as_npukit"] == "yes"]
            cells.append("%d of %d" % (len(same), len(both)) if both else "-")
            for side in ("npukit", "vendor"):
                walls = [(float(cases[c][side]["wall_s"]), float(cases[c][side]["cpu_s"]), c)
                         for c in cases if side in cases[c] and cases[c][side]["wall_s"]]
                if walls:
                    top = max(walls)
                    cells.append("%.0f / %.0f s; %d: %.1f / %.1f s" % (
                        sum(w[0] for w in walls), sum(w[1] for w in walls), top[2], top[0], top[1]))
                else:
                    cells.append("-")
            warns = max((int(cases[c]["npukit"]["warnings"] or 0) for c in cases if "npukit" in cases[c]),
                        default=0)
            cells.append(str(warns))
            notes = []
            for c in sorted(cases):
                n = cases[c].get("npukit")
                v = cases[c].get("vendor")
                if (n and n["status"] != "pass") or (v and v["status"] != "pass"):
                    notes.append("%d: %s / %s" % (c, describe(n) if n else "not run",
                                                  describe(v) if v else "not run"))
                elif v and v["same_as_npukit"].startswith("no"):
                    differ = v["same_as_npukit"].split("(")[-1].split()[0]
                    notes.append("%d: %s of %s words differ" % (c, differ, v["outputs"]))
            cells.append("; ".join(notes) if notes else "-")
            print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Re-cost the traces of the contest's team kernels under candidate cost-model
constants, and print the calibration and validation tables
(docs/npu-simulator.md, "Calibration against a real BM1684").

    NPUKIT_TEAMS_WORK=/tmp/teams NPUKIT_TEAMS_TRACE=1 \\
        tests/okk/calibration_teams.sh build depthwise softmax conv2d matmul > /tmp/teams.csv
    tests/okk/calibration_refit.py /tmp/teams.csv /tmp/teams [name=value ...]

The trace details carry every input of the cost formulas (runs, bytes, NPUs,
slots, elements, operations, parallel regions), so this script re-implements
the formulas of src/npu/cost_model.cpp and src/npu/launch.cpp in a few lines.
With no name=value it uses the shipped constants and first checks that its
re-costing reproduces the simulator's own estimate of every trace (so the two
cannot drift apart unnoticed); name=value pairs (e.g. issue_cycles=600
gdma_npu_port_bytes_per_cycle=2.0 bdc_tap_startup_cycles=0, the previous
fit; matrix_chunk_bursts=1, the per-chunk burst candidate, on traces that
name their matrix rows' DDR spacing; launch_overhead_us=28 issue_cycles=500
gdma_descriptor_cycles=1000 bdc_tap_startup_cycles=12 matmul_columns_per_cycle=32
matmul_group_cycles=0, session 8's model before the vendor's figures) show
what other constants would give
(and skip that check, which only holds for traces the current build recorded;
conv_2ic_pairs=0 re-costs conv as it was before whole 2IC pairs;
conv_ic3_mac_factor=0 conv_stride_floor_channels=0 as it was before the vendor's
conv factors (session 10);
gdma_vendor_tensor=1|2|3, gdma_vendor_fixed=1 and gdma_page_cycles=56 re-cost
the GDMA transfers with the vendor's tensor estimate, its fixed term per
direction, or its page term, the candidates that were evaluated and not adopted).

    tests/okk/calibration_refit.py /tmp/teams.csv /tmp/teams --scan \
        launch_overhead_us=22:32:2 issue_cycles=250:2500:250 gdma_descriptor_cycles=0:2500:250

scans a grid of constants (name=first:last:step; others as shipped) over the
fit cases only, prints the grid point the fit rule picks (smallest largest
error, ties within 0.1 percentage point broken by the least-squares error) and
then, for the points that keep every fit case within +-20%, how the validation
count and the rank correlation spread: what the fit leaves undetermined.

    tests/okk/calibration_refit.py /tmp/teams.csv /tmp/teams --describe conv2d 14
    tests/okk/calibration_refit.py --selftest

prints what each team kernel of one case issues (instructions per engine,
parallel regions, bytes, local-memory rows and their average width, busy
time per engine, estimate under the shipped constants).
"""
import bisect
import csv
import glob
import json
import math
import os
import re
import sys

# Best hardware time per case (us): the contest's final leaderboard, README.md
# of github.com/1146877017/tpucontest ("svn update at: Tue Mar 15 14:25:57 CST 2022").
HARDWARE = {
    "depthwise": [310, 371, 1076, 1813, 1154, 347, 345, 142, 1022, 2929],
    "softmax": [103, 47, 176, 136, 103],
    "conv2d": [4351, 98437, 79400, 2558, 4249, 6145, 1034, 2385, 3094, 1064, 4205, 212783, 70633,
               417910, 27188],
    "matmul": [356325, 405, 86903, 3836, 222, 39106, 504, 1758, 1462, 1705, 813, 2333, 473, 2106,
               15088],
}
FIT = ("depthwise", "softmax")  # the validation ops (conv2d, matmul) are never fitted

# BM1684 constants as shipped in include/npukit/npu/cost_model.hpp.
SHIPPED = dict(clock_mhz=550.0, launch_overhead_us=34.0, issue_cycles=1500, bdc_startup_cycles=110,
               gdma_s2l_bytes_per_cycle=42.0, gdma_l2s_bytes_per_cycle=42.0,
               gdma_l2l_bytes_per_cycle=84.0, gdma_s2s_bytes_per_cycle=21.0,
               gdma_npu_port_bytes_per_cycle=0.0, gdma_descriptor_cycles=140, gdma_burst_bytes=64,
               eu=32, conv_2ic_pairs=1, matrix_chunk_bursts=0, bdc_tap_startup_cycles=11,
               matmul_columns_per_cycle=16, matmul_group_cycles=6,
               conv_cycles_per_mac=1.0, conv_ic3_mac_factor=2.5, conv_stride_floor_channels=64,
               depthwise_cycles_per_mac=1.0,
               matmul_cycles_per_mac=1.0, pool_cycles_per_op=1.0, arith_cycles_per_op=1.0,
               sfu_cycles_per_op=1.0, lookup_cycles_per_op=1.0, cast_cycles_per_op=1.0,
               fixed_point_cycles_per_op=1.0,
               # Candidates from the vendor's GDMA tensor estimate (docs: "The vendor's
               # GDMA tensor estimate"); 0 = off, which is the shipped model.
               gdma_vendor_tensor=0, gdma_vendor_fixed=0, gdma_page_cycles=0)
# The vendor tensor estimate's fixed term per direction, GDMA cycles before its
# x1.108 factor, and the factor from its 575 MHz GDMA clock to npukit's 550.
VENDOR_FIXED = dict(s2l=124, s2s=124, l2s=41, l2l=3)
VENDOR_FACTOR = 1.1079546
GDMA_TO_BDC_CLOCK = 550.0 / 575.0
# The per-class rate of src/npu/cost_model.cpp's cycles_per_op (others: arith).
CLASS_RATE = dict(conv="conv_cycles_per_mac", depthwise="depthwise_cycles_per_mac",
                  matmul="matmul_cycles_per_mac", pool="pool_cycles_per_op",
                  sfu="sfu_cycles_per_op", lookup="lookup_cycles_per_op",
                  cast="cast_cycles_per_op", fixed_point="fixed_point_cycles_per_op")

GDMA = re.compile(r"(S2L|L2S|L2L|S2S|fill)\b.*?(\d+) runs of (\d+) B(, unaligned)?, (\d+) NPUs")
BDC = re.compile(r"(\d+) slots x (\d+) elements x (\d+) ops")
KERNEL = re.compile(r"kernel (\d+)x(\d+) stride (\d+)x(\d+)")
CONV_IC = re.compile(r", ic (\d+)")  # the true IC (traces since 2026-11-27, session 10)
# A matrix transfer's rows, columns and columns per NPU, then its DDR row
# spacing and first-row burst offset.
MATRIX_CHUNKS = re.compile(r"matrix (\d+)x(\d+) into \d+x\d+x\d+x(\d+),.* rows (\d+) B apart "
                           r"from burst offset (\d+)")
# The local-memory side of a GDMA detail: a matrix's "into NxCxHxW", else the
# copied shape itself (the local place has the transfer's shape).
LOCAL = re.compile(r"(?:into|S2L|L2S|L2L|fill) (\d+)x(\d+)x(\d+)x(\d+)(?: x(\d+)B)?")


def load(path):
    """Instructions of the trace's first launch, in program order, with the
    parallel region each belongs to (-1: none), and the simulator's estimate."""
    events = json.load(open(path))
    events = events["traceEvents"] if isinstance(events, dict) else events
    if not any(e.get("ph") == "X" for e in events):
        return [], None  # a run stopped before its first launch (timeout, error)
    pid = min(e["pid"] for e in events if e.get("ph") == "X")
    regions, instructions, estimate = [], [], None
    for e in events:
        if e.get("pid") != pid:
            continue
        if e.get("name") == "npukit_launch":
            estimate = e["args"].get("device_us")
        if e.get("ph") != "X":
            continue
        a = e["args"]
        if e.get("cat") == "region":
            regions.append((a["start_cycle"], a["start_cycle"] + a["cycles"]))
            continue
        i = dict(start=a["start_cycle"], engine="gdma" if e["tid"] == 1 else "bdc",
                 cls=a["class"], sim_cycles=a["cycles"])
        d = a.get("detail", "")
        i["detail"] = d
        m = GDMA.search(d) if i["engine"] == "gdma" else BDC.search(d)
        if not m:
            i["fixed"] = a["cycles"]  # an instruction without formula inputs: keep its cost
        elif i["engine"] == "gdma":
            direction = m.group(1)
            if direction == "fill":
                direction = "l2l" if int(m.group(5)) > 0 else "s2s"
            i.update(direction=direction.lower(), runs=int(m.group(2)), run_bytes=int(m.group(3)),
                     aligned=not m.group(4), npus=int(m.group(5)))
            c = MATRIX_CHUNKS.search(d)
            if c:  # traces since 2026-11-27 say where each NPU's chunk of a row lies
                i["chunks"] = tuple(int(g) for g in c.groups())
        else:
            i.update(slots=int(m.group(1)), elements=int(m.group(2)), ops=int(m.group(3)))
            k = KERNEL.search(d)
            if i["cls"] in ("conv", "depthwise") and k:  # the window's taps
                i["taps"] = int(k.group(1)) * int(k.group(2))
                i["stride_w"] = int(k.group(4))
                ic = CONV_IC.search(d)
                if ic:
                    i["ic"] = int(ic.group(1))
        instructions.append(i)
    regions.sort()
    starts = [b for b, _ in regions]
    for i in instructions:  # regions do not overlap: the last one starting at or before i
        k = bisect.bisect_right(starts, i["start"]) - 1
        i["region"] = k if k >= 0 and i["start"] < regions[k][1] else -1
    return instructions, estimate


def chunk_bursts(chunks, burst):
    """A candidate, not the model (docs: "What is still missed"): DDR read or
    written per NPU chunk of each matrix row, each chunk paying the bursts it
    touches at its own offset."""
    rows, cols, per_npu, row_bytes, offset = chunks
    total = 0
    for r in range(rows):
        for first in range(0, cols, per_npu):
            start = (offset + r * row_bytes + first * 4) % burst
            total += -(-(start + min(per_npu, cols - first) * 4) // burst)
    return total


def vendor_tensor_cycles(i, mode):
    """The vendor's tensor estimate on a trace's transfer, in 550 MHz cycles.
    mode 1: every transfer on its unit-stride path (twice the rate, no page
    term); 2: every transfer on its other path; 3: one-run transfers on the
    first, the rest on the second. The rate of a run of k bytes is at most k
    bytes per cycle (the run-length cap)."""
    total = i["runs"] * i["run_bytes"]
    if i["direction"] == "l2l":
        return math.ceil((VENDOR_FIXED["l2l"] + total / 32.0) * GDMA_TO_BDC_CLOCK)
    unit = mode == 1 or (mode == 3 and i["runs"] == 1)
    rate = min(29.565, i["run_bytes"]) * (2 if unit else 1)
    pages = 0 if unit or i["direction"] == "l2s" else total // 4096
    c = (VENDOR_FIXED[i["direction"]] + total / rate + 53 * pages) * VENDOR_FACTOR
    return math.ceil(c * GDMA_TO_BDC_CLOCK)


def conv_mac_factor(m, ic, stride_w):
    """The vendor's conv factors (src/npu/cost_model.cpp, conv_mac_factor)."""
    f = 1.0
    channels = min(ic, int(m["conv_stride_floor_channels"]))
    if channels > 0 and stride_w + 1 > channels:
        f = float(stride_w + 1) / float(channels)
    if ic == 3 and m["conv_ic3_mac_factor"] > 0:
        f *= m["conv_ic3_mac_factor"]
    return f


def cycles(i, m):
    if "fixed" in i:
        return i["fixed"]
    if i["engine"] == "gdma" and m["gdma_vendor_tensor"]:
        return vendor_tensor_cycles(i, int(m["gdma_vendor_tensor"]))
    if i["engine"] == "gdma":
        burst = m["gdma_burst_bytes"]
        bursts = i["runs"] * (-(-i["run_bytes"] // burst) + (0 if i["aligned"] else 1))
        if m["matrix_chunk_bursts"] and "chunks" in i:
            bursts = chunk_bursts(i["chunks"], burst)
        c = bursts * burst / m["gdma_%s_bytes_per_cycle" % i["direction"]]
        if i["npus"] > 0 and m["gdma_npu_port_bytes_per_cycle"] > 0:
            c = max(c, i["runs"] * i["run_bytes"] / (i["npus"] * m["gdma_npu_port_bytes_per_cycle"]))
        descriptor = m["gdma_descriptor_cycles"]
        if m["gdma_vendor_fixed"]:  # the tensor estimate's fixed term per direction
            descriptor = math.ceil(VENDOR_FIXED[i["direction"]] * VENDOR_FACTOR * GDMA_TO_BDC_CLOCK)
        if m["gdma_page_cycles"] and i["direction"] in ("s2l", "s2s") and i["runs"] > 1:
            c += m["gdma_page_cycles"] * -(-(i["runs"] * i["run_bytes"]) // 4096)
        return descriptor + math.ceil(c)
    ops, factor = i["ops"], 1.0
    if i["cls"] == "conv" and "taps" in i:
        # The true IC: named by traces since session 10; older traces' ops
        # are IC x taps (before whole 2IC pairs) or pairs x 2 x taps.
        ic = i.get("ic", ops // i["taps"])
        if m["conv_2ic_pairs"]:
            ops = 2 * -(-ic // 2) * i["taps"]  # whole 2IC pairs
        factor = conv_mac_factor(m, ic, i.get("stride_w", 1))
    rate = m[CLASS_RATE.get(i["cls"], "arith_cycles_per_op")]
    if i["cls"] == "matmul":  # the vendor's FC estimate: column groups, cycles per group
        rows = -(-i["elements"] // int(m["matmul_columns_per_cycle"]))
        return m["bdc_startup_cycles"] + math.ceil(
            i["slots"] * rows * (ops * rate + m["matmul_group_cycles"]))
    rows = -(-i["elements"] // m["eu"])
    taps = i.get("taps", 0)  # conv and depthwise: a start-up per tap pass and lane row
    # the same order of operations as src/npu/cost_model.cpp
    work = float(i["slots"]) * float(rows) * (float(ops) * rate * factor)
    return (m["bdc_startup_cycles"] + math.ceil(work) +
            i["slots"] * rows * taps * int(m["bdc_tap_startup_cycles"]))


def device_us(instructions, m):
    """The launch timeline of src/npu/launch.cpp: issue, then wait, outside a
    region; inside, each engine runs its queue once issued."""
    now, k, n = 0, 0, len(instructions)
    while k < n:
        region = instructions[k]["region"]
        if region < 0:
            now += m["issue_cycles"] + cycles(instructions[k], m)
            k += 1
            continue
        cpu, free = now, {"gdma": now, "bdc": now}
        while k < n and instructions[k]["region"] == region:
            i = instructions[k]
            cpu += m["issue_cycles"]
            free[i["engine"]] = max(cpu, free[i["engine"]]) + cycles(i, m)
            k += 1
        now = max(cpu, free["gdma"], free["bdc"])
    return now / m["clock_mhz"] + m["launch_overhead_us"]


def load_all(table, work):
    """The traces of `work` by (op, case, team), and the set of passing runs."""
    passed = set()
    for r in csv.DictReader(open(table)):
        if r["status"] == "pass":
            passed.add((r["op"], int(r["case"]), r["team"]))
    traces = {}
    for path in glob.glob(os.path.join(work, "*.case*.json")):
        m = re.search(r"^([a-z0-9]+)_(.+)\.case(\d+)\.json$", os.path.basename(path))
        team = m.group(2).replace("xxxx", "****")
        traces[(m.group(1), int(m.group(3)), team)] = load(path)
    return traces, passed


def spearman(a, b):
    def ranks(v):
        order = sorted(range(len(v)), key=lambda i: v[i])
        r = [0.0] * len(v)
        i = 0
        while i < len(v):
            j = i
            while j + 1 < len(v) and v[order[j + 1]] == v[order[i]]:
                j += 1
            for t in range(i, j + 1):
                r[order[t]] = (i + j) / 2
            i = j + 1
        return r
    ra, rb = ranks(a), ranks(b)
    ma, mb = sum(ra) / len(ra), sum(rb) / len(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    return cov / math.sqrt(sum((x - ma) ** 2 for x in ra) * sum((y - mb) ** 2 for y in rb))


def best_estimates(traces, passed, model, ops):
    """Per case of `ops`: (lowest estimate over passing kernels, its team)."""
    best = {}
    for (o, c, t), tr in traces.items():
        if o in ops and (o, c, t) in passed:
            e = device_us(tr[0], model)
            if (o, c) not in best or e < best[(o, c)][0]:
                best[(o, c)] = (e, t)
    return best


def scan(traces, passed, ranges):
    """Grid over `ranges` ({name: [values]}): the fit rule's pick and the
    validation spread over the fit-consistent points."""
    names = sorted(ranges)
    points = [[]]
    for n in names:
        points = [p + [v] for p in points for v in ranges[n]]
    rows = []
    for p in points:
        model = dict(SHIPPED, **dict(zip(names, p)))
        errs = [e / HARDWARE[o][c] - 1
                for (o, c), (e, _) in best_estimates(traces, passed, model, FIT).items()]
        rows.append((max(abs(e) for e in errs), sum(e * e for e in errs), p))
    nfit = len(errs)
    least = min(r[0] for r in rows)
    pick = min((r for r in rows if r[0] <= least + 0.001), key=lambda r: r[1])
    print("%d grid points; the fit rule picks %s (largest fit error %.1f%%)" %
          (len(rows), " ".join("%s=%g" % nv for nv in zip(names, pick[2])), 100 * pick[0]))
    inside = [r for r in rows if r[0] <= 0.20]
    step = max(1, len(inside) // 100)  # at most ~100 validation re-costings
    counts, rhos = {}, []
    for r in [pick] + [r for r in inside[::step] if r is not pick]:
        model = dict(SHIPPED, **dict(zip(names, r[2])))
        est = best_estimates(traces, passed, model, tuple(HARDWARE))
        val = [abs(e / HARDWARE[o][c] - 1) <= 0.30 for (o, c), (e, _) in est.items() if o not in FIT]
        hw = [HARDWARE[o][c] for (o, c) in est]
        rho = spearman(hw, [e for e, _ in est.values()])
        if r is pick:
            print("at the pick: validation %d of %d within +-30%%, Spearman %.3f over %d" %
                  (sum(val), len(val), rho, len(est)))
            continue
        counts[sum(val)] = counts.get(sum(val), 0) + 1
        rhos.append(rho)
    if not counts:
        print("no other grid point keeps the %d fit cases within +-20%%" % nfit)
        return
    print("%d points keep the %d fit cases within +-20%%; over %d of them the validation "
          "count is %d..%d of %d (%s) and Spearman %.3f..%.3f" %
          (len(inside), nfit,
           sum(counts.values()), min(counts), max(counts), len(val),
           ", ".join("%d: %d points" % kv for kv in sorted(counts.items())), min(rhos), max(rhos)))


def describe(table, work, op, case):
    """What each team kernel of one case issues: instructions per engine,
    parallel regions, bytes moved, local-memory rows (N*C*H rows of W
    elements) and their average width, engine busy time and the estimate."""
    passed = {(r["op"], int(r["case"]), r["team"]): r["status"] for r in csv.DictReader(open(table))
              if r["op"] == op and int(r["case"]) == case}
    print("%s %d, hardware %d us" % (op, case, HARDWARE[op][case]))
    for path in sorted(glob.glob(os.path.join(work, "%s_*.case%d.json" % (op, case)))):
        team = re.search(r"^[a-z0-9]+_(.+)\.case\d+\.json$",
                         os.path.basename(path)).group(1).replace("xxxx", "****")
        instructions, _ = load(path)
        if not instructions:
            print("  %s: %s, no launch traced" % (team, passed.get((op, case, team), "?")))
            continue
        gdma = [i for i in instructions if i["engine"] == "gdma"]
        bdc = [i for i in instructions if i["engine"] == "bdc"]
        rows = width = moved = 0
        for i in gdma:
            m = LOCAL.search(i["detail"])
            if m:
                n, c, h, w = (int(m.group(k)) for k in range(1, 5))
                esize = int(m.group(5) or 4)
                rows += n * c * h
                width += n * c * h * w * esize
                moved += n * c * h * w * esize
        regions = len({i["region"] for i in instructions if i["region"] >= 0})
        print("  %s: %s, estimate %.1f us; %d GDMA (%.1f MB, %d local rows of %.0f B on average, "
              "%.0f us busy), %d BDC (%.0f us busy), %d parallel regions" %
              (team, passed.get((op, case, team), "?"), device_us(instructions, SHIPPED), len(gdma),
               moved / 1e6, rows, width / max(rows, 1),
               sum(cycles(i, SHIPPED) for i in gdma) / SHIPPED["clock_mhz"], len(bdc),
               sum(cycles(i, SHIPPED) for i in bdc) / SHIPPED["clock_mhz"], regions))


def selftest():
    """The GDMA formulas on hand-computed transfers; the vendor variant against
    results of the vendor's own function (GDMA cycles at 575 MHz, truncated)."""
    def gdma(direction, runs, run_bytes, **model):
        i = dict(engine="gdma", direction=direction, runs=runs, run_bytes=run_bytes, aligned=True,
                 npus=64)
        return cycles(i, dict(SHIPPED, **model))
    checks = [  # (got, want, what)
        # 140 + ceil(4096 / 42) and 140 + ceil(100 bursts x 64 / 42): a narrow run pays its burst
        (gdma("s2l", 1, 4096), 238, "shipped S2L, one 4 KiB run"),
        (gdma("s2l", 100, 16), 293, "shipped S2L, 100 runs of 16 B"),
        # 140 + ceil(8192 / 42 + 56 x 2 pages)
        (gdma("s2l", 2, 4096, gdma_page_cycles=56), 448, "page term, 2 strided 4 KiB runs"),
        # ceil(41 x 1.108 x 550 / 575) + ceil(4096 / 42)
        (gdma("l2s", 1, 4096, gdma_vendor_fixed=1), 142, "vendor fixed term, L2S"),
        # conv IC 3 (2 pairs) 7x7 at stride 4 on 3 slots x 2 lane rows: 110 + 6 x 196 x 25/6
        # (the vendor's factors) + 6 x 49 taps x 11; an older trace's ops (IC x taps) alike
        (cycles(dict(engine="bdc", cls="conv", slots=3, elements=33, ops=196, taps=49, ic=3,
                     stride_w=4), SHIPPED), 8244, "conv IC 3 at stride 4"),
        (cycles(dict(engine="bdc", cls="conv", slots=3, elements=33, ops=147, taps=49,
                     stride_w=4), SHIPPED), 8244, "conv IC 3 at stride 4, older trace"),
        (cycles(dict(engine="bdc", cls="conv", slots=3, elements=33, ops=196, taps=49, ic=3,
                     stride_w=4), dict(SHIPPED, conv_ic3_mac_factor=0,
                                       conv_stride_floor_channels=0)), 110 + 1176 + 3234,
         "conv without the vendor's factors"),
    ]
    vendor = [  # (direction, runs, run bytes, mode, the vendor function's result for that shape)
        ("s2l", 1, 262144, 1, 5049),  # 1x64x32x32 fp32, dense
        ("s2l", 2048, 128, 2, 13719),  # the same off the fast path (64 pages)
        ("s2l", 2048, 4, 1, 1271),  # 1x64x32x1: 4-byte runs, 8 B per cycle
        ("l2s", 1, 262144, 1, 4957),
        ("l2l", 1, 262144, 1, 8195),
    ]
    for direction, runs, run_bytes, mode, want in vendor:
        got = gdma(direction, runs, run_bytes, gdma_vendor_tensor=mode)
        # npukit rounds 550 MHz cycles up; the vendor truncates its 575 MHz ones
        ok = want * GDMA_TO_BDC_CLOCK <= got <= (want + 1) * GDMA_TO_BDC_CLOCK + 1
        checks.append((got, got if ok else "%.1f" % (want * GDMA_TO_BDC_CLOCK),
                       "vendor tensor %s %dx%d B mode %d" % (direction, runs, run_bytes, mode)))
    bad = [c for c in checks if c[0] != c[1]]
    for got, want, what in bad:
        print("selftest: %s: %s cycles, expected %s" % (what, got, want))
    print("selftest: %d of %d checks pass" % (len(checks) - len(bad), len(checks)))
    sys.exit(1 if bad else 0)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--selftest":
        selftest()
    if len(sys.argv) > 5 and sys.argv[3] == "--describe":
        describe(sys.argv[1], sys.argv[2], sys.argv[4], int(sys.argv[5]))
        return
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    table, work = sys.argv[1], sys.argv[2]
    model = dict(SHIPPED)
    if len(sys.argv) > 3 and sys.argv[3] == "--scan":
        ranges = {}
        for pair in sys.argv[4:]:
            name, spec = pair.split("=")
            if name not in model:
                sys.exit("unknown constant %s (one of %s)" % (name, ", ".join(sorted(model))))
            first, last, step = (float(x) for x in spec.split(":"))
            count = int(round((last - first) / step)) + 1
            ranges[name] = [first + k * step for k in range(count)]
        if not ranges:
            sys.exit("--scan needs at least one name=first:last:step")
        traces, passed = load_all(table, work)
        scan(traces, passed, ranges)
        return
    for pair in sys.argv[3:]:
        name, value = pair.split("=")
        if name not in model:
            sys.exit("unknown constant %s (one of %s)" % (name, ", ".join(sorted(model))))
        model[name] = float(value)
    traces, passed = load_all(table, work)
    if len(sys.argv) == 3:  # the shipped constants must reproduce the simulator
        for key, (instructions, estimate) in sorted(traces.items()):
            if estimate is not None and abs(device_us(instructions, model) - estimate) > 0.01:
                sys.exit("re-costing %s gives %.3f us, the simulator %.3f us: this script and "
                         "src/npu/cost_model.cpp disagree" % (key, device_us(instructions, model),
                                                              estimate))
    print("| case | hardware us | best team kernel us | error | team |")
    print("|---|---|---|---|---|")
    hw_all, est_all, fit_err, val_in, val_n = [], [], [], 0, 0
    for op, times in HARDWARE.items():
        if not any(o == op for (o, _, _) in traces):
            continue
        for case, hw in enumerate(times):
            ests = {t: device_us(tr[0], model) for (o, c, t), tr in traces.items()
                    if o == op and c == case and (o, c, t) in passed}
            if not ests:
                print("| %s %d | %d | (no passing kernel run) | | |" % (op, case, hw))
                continue
            team = min(ests, key=ests.get)
            err = ests[team] / hw - 1
            print("| %s %d | %d | %.1f | %+.1f%% | %s |" % (op, case, hw, ests[team], 100 * err, team))
            hw_all.append(hw)
            est_all.append(ests[team])
            if op in FIT:
                fit_err.append(err)
            else:
                val_n += 1
                val_in += abs(err) <= 0.30
    if fit_err:
        inside = sum(abs(e) <= 0.20 for e in fit_err)
        print("fit cases: %d of %d within +-20%%" % (inside, len(fit_err)))
    if val_n:
        print("validation cases with a passing kernel: %d, within +-30%%: %d (%.0f%%)" %
              (val_n, val_in, 100.0 * val_in / val_n))
    if len(hw_all) > 2:
        print("Spearman rank correlation over %d cases: %.3f" % (len(hw_all),
                                                                 spearman(hw_all, est_all)))


if __name__ == "__main__":
    main()

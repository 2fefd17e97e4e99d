#!/usr/bin/env python3
"""Summarizes an NPUKIT_POOL_TRACE file region by region: where a network's
second thread loses time. Run a model several times with the trace on, e.g.

  NPUKIT_POOL_TRACE=/tmp/trace.tsv build/bin/npukit run MODEL --input input=X.npy \\
      --repeat 50 --threads 2
  scripts/pool_trace.py /tmp/trace.tsv

The regions of one run repeat in every run: the script finds that period in
the middle of the file, takes each region's median over the runs and prints,
in run order, its index count, chunks (caller / helpers), time, the caller's
busy time, the helpers' first-to-last chunk window, how long after the start
the first helper chunk began ("late": ~0.1 us when the CPUs share a cache,
~0.4 when they sit on different chiplets: `npukit info --host`), the time lost to a thread idling at the end
(time - (caller busy + helper window) / 2) and the serial time before it
(the gap since the previous region ended), with the calling function
(addr2line). Totals follow. Times in microseconds.

When FILE.steps exists (the ONNX runner's nodes of unsliced runs), a second
table lays the serial time at each node's door: the time before its first
split region, between its regions, after its last (all of a node that split
nothing) and from its end to the next node's start.
"""
import argparse
import bisect
import collections
import os
import statistics
import subprocess
import sys


def read(path):
    with open(path) as f:
        header = f.readline().rstrip('\n').split('\t')
        rows = [dict(zip(header, line.rstrip('\n').split('\t'))) for line in f]
    for r in rows:
        for k in header[:8]:
            r[k] = int(r[k])
    return rows


def period(keys):
    n = len(keys)
    for p in range(1, n // 3 + 1):
        if all(keys[i] == keys[i + p] for i in range(n // 3, 2 * n // 3)):
            return p
    sys.exit('pool_trace.py: no repeating run of regions (run the model with --repeat 10 or more)')


def names(rows):
    """Function names of the call sites, one addr2line call per module."""
    by_module = collections.defaultdict(set)
    for r in rows:
        by_module[r['module']].add(r['offset'])
    out = {}
    for module, offsets in by_module.items():
        offsets = sorted(offsets)
        try:
            text = subprocess.run(['addr2line', '-f', '-C', '-e', module] + offsets,
                                  capture_output=True, text=True, check=True).stdout.split('\n')
        except (OSError, subprocess.CalledProcessError):
            text = ['?', ''] * len(offsets)
        for i, off in enumerate(offsets):
            out[(module, off)] = text[2 * i].split('(')[0].replace('npukit::', '')[:48]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('trace')
    args = ap.parse_args()
    rows = read(args.trace)
    keys = [(r['module'], r['offset'], r['count']) for r in rows]
    p = period(keys)
    first, last = len(rows) // 3, 2 * len(rows) // 3  # whole periods inside the middle third
    runs = [rows[s:s + p] for s in range(first, last - p + 1, p)]
    med = statistics.median
    stat = []
    for i in range(p):
        regs = [run[i] for run in runs]
        prev = [runs[k][i - 1] if i > 0 else (runs[k - 1][-1] if k > 0 else None) for k in range(len(runs))]
        gaps = [(r['start_ns'] - q['end_ns']) / 1e3 for r, q in zip(regs, prev) if q is not None]
        time = med([(r['end_ns'] - r['start_ns']) / 1e3 for r in regs])
        busy = med([(r['caller_done_ns'] - r['start_ns']) / 1e3 for r in regs])
        helped = [r for r in regs if r['helper_chunks'] > 0]
        window = med([(r['helper_last_ns'] - r['helper_first_ns']) / 1e3 for r in helped]) if helped else 0.0
        late = med([(r['helper_first_ns'] - r['start_ns']) / 1e3 for r in helped]) if helped else float('nan')
        stat.append(dict(r=regs[0], time=time, busy=busy, window=window, late=late,
                         idle=time - (busy + window) / 2 if helped else 0.0, gap=med(gaps) if gaps else 0.0,
                         caller=med([r['caller_chunks'] for r in regs]), helpers=med([r['helper_chunks'] for r in regs])))
    # Printed from where the repeating part of the file begins: the first
    # run's first region (regions split while planning come before it).
    begin = next(b for b in range(first + 1) if all(keys[b + j] == keys[b + j + p] for j in range(p)))
    start = (begin - first) % p
    stat = stat[start:] + stat[:start]
    site = names([s['r'] for s in stat])
    print(f'{len(runs)} runs of {p} split regions; medians over the runs (us)')
    print(f"{'#':>3} {'count':>6} {'chunks':>9} {'time':>8} {'caller':>8} {'helpers':>8} {'late':>6} {'idle':>6} {'gap':>6}  site")
    for i, s in enumerate(stat):
        chunks = f"{s['caller']:g}/{s['helpers']:g}"
        print(f"{i:3d} {s['r']['count']:6d} {chunks:>9} {s['time']:8.1f} {s['busy']:8.1f} {s['window']:8.1f} "
              f"{s['late']:6.1f} {s['idle']:6.1f} {s['gap']:6.1f}  {site[(s['r']['module'], s['r']['offset'])]}")
    total = sum(s['time'] for s in stat)
    print(f"per run: regions {total:.1f}, idle at their ends {sum(s['idle'] for s in stat):.1f}, "
          f"serial between them {sum(s['gap'] for s in stat):.1f}")
    if os.path.exists(args.trace + '.steps'):
        print_steps(read_steps(args.trace + '.steps'), rows)


def read_steps(path):
    with open(path) as f:
        header = f.readline().rstrip('\n').split('\t')
        steps = [dict(zip(header, line.rstrip('\n').split('\t'))) for line in f]
    for s in steps:
        s['start_ns'], s['end_ns'] = int(s['start_ns']), int(s['end_ns'])
    return steps


def print_steps(steps, rows):
    """The serial time of a run laid at the nodes' doors (FILE.steps): per node,
    the time before its first split region ("before"), between its regions
    ("between"), after its last ("after"; a node that split nothing has all its
    time here) and from its end to the next node's start ("next")."""
    keys = [(s['op_type'], s['name']) for s in steps]
    p = period(keys)
    # Whole runs from the middle third, each from the graph's first node on.
    first = next(k for k in range(len(steps) // 3, len(steps)) if keys[k] == keys[0])
    last = 2 * len(steps) // 3
    starts = [r['start_ns'] for r in rows]
    med = statistics.median
    cols = collections.defaultdict(lambda: collections.defaultdict(list))
    for s0 in range(first, last - p + 1, p):
        for i in range(p):
            s = steps[s0 + i]
            k = bisect.bisect_left(starts, s['start_ns'])
            inside = []
            while k < len(rows) and rows[k]['end_ns'] <= s['end_ns']:
                inside.append(rows[k])
                k += 1
            c = cols[i]
            c['time'].append((s['end_ns'] - s['start_ns']) / 1e3)
            if inside:
                c['before'].append((inside[0]['start_ns'] - s['start_ns']) / 1e3)
                c['between'].append(sum(b['start_ns'] - a['end_ns'] for a, b in zip(inside, inside[1:])) / 1e3)
                c['after'].append((s['end_ns'] - inside[-1]['end_ns']) / 1e3)
            else:
                c['before'].append(0.0)
                c['between'].append(0.0)
                c['after'].append(c['time'][-1])
            c['next'].append((steps[s0 + i + 1]['start_ns'] - s['end_ns']) / 1e3 if s0 + i + 1 < len(steps) else 0.0)
            c['regions'].append(len(inside))
    print(f'\n{len(cols[0]["time"])} runs of {p} nodes; medians over the runs (us)')
    print(f"{'#':>3} {'regions':>7} {'time':>8} {'before':>7} {'between':>7} {'after':>7} {'next':>7}  node")
    parts = ('before', 'between', 'after', 'next')
    sums = dict.fromkeys(parts, 0.0)
    for i in range(p):
        c, s = cols[i], steps[first + i]
        m = {k: med(c[k]) for k in parts}
        for k in parts:
            sums[k] += m[k] if k != 'next' or i < p - 1 else 0.0
        print(f"{i:3d} {med(c['regions']):7g} {med(c['time']):8.1f} {m['before']:7.1f} {m['between']:7.1f} "
              f"{m['after']:7.1f} {m['next']:7.1f}  {s['op_type']} {s['name']}")
    # The last node's "next" runs to the next run's first node: the caller's
    # loop and the run's start (input checks and copy), not a node's.
    print('per run: serial in nodes before their regions {before:.1f}, between them {between:.1f}, '
          'after them {after:.1f}; between nodes {next:.1f} (and {last:.1f} from the last node to '
          "the next run's first)".format(**sums, last=med(cols[p - 1]['next'])))


if __name__ == '__main__':
    main()

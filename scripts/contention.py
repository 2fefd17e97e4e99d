#!/usr/bin/python3
"""Issue #9's contention target, measured: with one core busy with another
process, npukit with 2 threads should stay within 1.2x of its 1-thread time.

For each model, times `npukit run` with 1 and 2 threads, first on an idle
machine and then while a busy loop (another process, pinned with taskset to
one CPU) holds a core. Rounds alternate the thread counts so that drift in the
machine's load hits both alike. Prints a Markdown table: per condition and
thread count the median and best seconds per run, and the ratio
"2 threads busy / 1 thread busy" (the target: at most 1.2).

Usage: scripts/contention.py [--npukit build/bin/npukit]
         [--models-dir build/race/models] [--repeat 20] [--rounds 3]
         [--busy-cpu N] [MODEL.onnx ...]
"""
import argparse
import glob
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile


def time_run(npukit, model, inp, threads, repeat):
    """Seconds per run (median, min) of one invocation, and the CPU seconds
    (user + system, all threads) the whole invocation took."""
    with tempfile.TemporaryDirectory() as out:
        cmd = [npukit, "run", model, "--input", inp, "--repeat", str(repeat),
               "--threads", str(threads), "--json", "-o", out]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        res = subprocess.run(cmd, capture_output=True, text=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        if res.returncode != 0:
            sys.exit(f"contention.py: {' '.join(cmd)} failed:\n{res.stderr}")
        # --json prints one object; layers are not needed here.
        report = json.loads(res.stdout)
        s = report["seconds_per_run"]
        return s["median"], s["min"], cpu


def start_busy_loop(cpu):
    """Another process spinning on one CPU (what a user's other job does)."""
    return subprocess.Popen(["taskset", "-c", str(cpu), "sh", "-c", "while :; do :; done"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)


def measure(npukit, model, inp, repeat, rounds):
    """{threads: (median of medians, best, median CPU s per invocation)} with
    rounds alternating 1 and 2 threads."""
    seen = {1: [], 2: []}
    for r in range(rounds):
        order = (1, 2) if r % 2 == 0 else (2, 1)
        for t in order:
            seen[t].append(time_run(npukit, model, inp, t, repeat))
    return {t: (statistics.median(m for m, _, _ in v), min(b for _, b, _ in v),
                statistics.median(c for _, _, c in v)) for t, v in seen.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="*", help="ONNX models (default: every model in --models-dir)")
    ap.add_argument("--npukit", default="build/bin/npukit")
    ap.add_argument("--models-dir", default="build/race/models",
                    help="where scripts/bench.sh --torchvision puts the race models and input224.npy")
    ap.add_argument("--input", help="input .npy (default: MODELS_DIR/input224.npy)")
    ap.add_argument("--repeat", type=int, default=20, help="timed runs per invocation")
    ap.add_argument("--rounds", type=int, default=3, help="invocations per thread count and condition")
    ap.add_argument("--busy-cpu", type=int, default=os.cpu_count() - 1,
                    help="the CPU the busy loop is pinned to (default: the last)")
    args = ap.parse_args()
    models = args.models or sorted(glob.glob(os.path.join(args.models_dir, "*.onnx")))
    inp = args.input or os.path.join(args.models_dir, "input224.npy")
    if not models or not os.path.exists(inp):
        sys.exit(f"contention.py: no models or no input in {args.models_dir} "
                 "(run scripts/bench.sh --torchvision first, or name them)")
    if os.cpu_count() < 2:
        sys.exit("contention.py: needs at least 2 CPUs")
    # Whether the CPUs share a cache: across chiplets 2 threads gain less (npukit info --host).
    host = subprocess.run([args.npukit, "info", "--host"], capture_output=True, text=True)
    print(host.stdout.strip() if host.returncode == 0 else "npukit info --host failed")
    load = os.getloadavg()
    print(f"Load average at start: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; busy loop on CPU "
          f"{args.busy_cpu}; {args.rounds} rounds x {args.repeat} runs; ms per run, median (best); "
          "CPU: median CPU seconds (all threads) per invocation, 2 threads / 1 thread\n")
    print("| model | 1 thr idle | 2 thr idle | 1 thr busy | 2 thr busy | 2 thr busy / 1 thr busy | "
          "target <= 1.2 | CPU idle | CPU busy |")
    print("|---|---:|---:|---:|---:|---:|---|---:|---:|")
    for model in models:
        idle = measure(args.npukit, model, inp, args.repeat, args.rounds)
        busy_proc = start_busy_loop(args.busy_cpu)
        try:
            busy = measure(args.npukit, model, inp, args.repeat, args.rounds)
        finally:
            os.killpg(busy_proc.pid, 9)
            busy_proc.wait()
        ratio = busy[2][0] / busy[1][0]
        cell = lambda m: f"{m[0] * 1e3:.2f} ({m[1] * 1e3:.2f})"
        print(f"| {os.path.basename(model)} | {cell(idle[1])} | {cell(idle[2])} | {cell(busy[1])} | "
              f"{cell(busy[2])} | {ratio:.2f} | {'met' if ratio <= 1.2 else 'missed'} | "
              f"{idle[2][2] / idle[1][2]:.2f} | {busy[2][2] / busy[1][2]:.2f} |", flush=True)


if __name__ == "__main__":
    main()

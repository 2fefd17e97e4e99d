#!/bin/sh
# `npukit info --host`: the CPUs this process may use and the one-way
# cache-line hand-off time from the first to each other one.
# 1. JSON: the CPU list is the affinity's (taskset), one hand-off per other
#    CPU (at most 8), each from the first CPU, a time between 1 ns and 10 us
#    (or null: a thread did not get its CPU within a second).
# 2. Bound to one CPU: that CPU alone, no hand-off; the text says so.
# 3. --host with a model is a usage error.
set -eu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
npukit=$1
cpus=$(taskset -c -p $$ | sed 's/.*: //')
"$npukit" info --host --json > "$tmp/host.json" 2>&1 || { cat "$tmp/host.json"; exit 1; }
/usr/bin/python3 - "$tmp/host.json" "$(nproc)" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
assert len(r["cpus"]) == n, r
assert r["cpus"] == sorted(set(r["cpus"])), r
pairs = r["handoff_ns"]
assert len(pairs) == min(n - 1, 8), r
for k, p in enumerate(pairs):
    assert p["from"] == r["cpus"][0] and p["to"] == r["cpus"][k + 1], r
    assert p["one_way_ns"] is None or 1 <= p["one_way_ns"] <= 10000, r
print("host:", r)
PY
first=$(echo "$cpus" | sed 's/[,-].*//')
taskset -c "$first" "$npukit" info --host --json | grep -qx "{\"cpus\": \[$first\], \"handoff_ns\": \[\]}"
taskset -c "$first" "$npukit" info --host | grep -q 'one CPU: nothing to hand cache lines to'
if "$npukit" info --host "$0" > /dev/null 2>&1; then echo "--host with a model was accepted"; exit 1; fi

#!/bin/sh
# NPUKIT_POOL_TRACE and scripts/pool_trace.py.
# 1. `npukit run` at 2 threads writes the header and one well-formed line per
#    split region (start <= caller done <= end, helpers' window inside the
#    region, a count, chunks, a call-site offset); the first region of a
#    process is always split (no back-off yet), so there is at least one.
#    Exit 77 (skipped) when the process may use one CPU: nothing is split.
# 2. pool_trace.py on a made-up trace (planning regions, then 30 runs of 3
#    regions) finds the period, starts at the file's first region and prints
#    the medians and totals worked out by hand below.
set -eu
npukit=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ "$(nproc)" -ge 2 ] || exit 77

/usr/bin/python3 -c "import numpy as np; np.save('$tmp/x.npy', np.ones((64, 1, 28, 28), np.float32))"
NPUKIT_POOL_TRACE="$tmp/trace.tsv" "$npukit" run "$src/models/fashion_mnist_fp32.onnx" \
  --input "$tmp/x.npy" --repeat 3 --threads 2 -o "$tmp" > /dev/null
head -1 "$tmp/trace.tsv" | grep -q '^start_ns	caller_done_ns	end_ns	helper_first_ns'
awk -F'\t' 'NR > 1 { n++
  ok = $1 <= $2 && $2 <= $3 && $6 > 0 && $7 >= 1 && $10 ~ /^0x[0-9a-f]+$/
  if ($8 > 0) ok = ok && $1 <= $4 && $4 <= $5 && $5 <= $3
  if (!ok) { print "bad line " NR ": " $0; bad++ } }
  END { if (n < 1 || bad) { print n " lines, " bad + 0 " bad"; exit 1 } }' "$tmp/trace.tsv"

/usr/bin/python3 - "$tmp/made.tsv" <<'PY'
import sys
# Each run: a region of 10 us (helper 2 us late, busy 7 us; caller busy 10 us), a gap
# of 5 us, a region of 4 us without helper chunks, a gap of 1 us, a region of 6 us
# (helper busy 6, caller 6), then 3 us to the next run.
rows, t = [], 0
rows.append((t, t + 2000, t + 2000, 0, 0, 9, 1, 0)); t += 50000  # planning: not a run
for run in range(30):
    rows.append((t, t + 10000, t + 10000, t + 2000, t + 9000, 100, 3, 2)); t += 15000
    rows.append((t, t + 4000, t + 4000, 0, 0, 8, 2, 0)); t += 5000
    rows.append((t, t + 6000, t + 6000, t, t + 6000, 50, 2, 2)); t += 9000
with open(sys.argv[1], 'w') as f:
    f.write('start_ns\tcaller_done_ns\tend_ns\thelper_first_ns\thelper_last_ns\tcount\t'
            'caller_chunks\thelper_chunks\tmodule\toffset\n')
    for r in rows:
        f.write('\t'.join(map(str, r)) + '\t/nonexistent\t0x%x\n' % r[5])
PY
/usr/bin/python3 "$src/scripts/pool_trace.py" "$tmp/made.tsv" > "$tmp/out.txt"
cat "$tmp/out.txt"
grep -q '^10 runs of 3 split regions' "$tmp/out.txt"
# In file order from the first run's first region: idle 10 - (10 + 7) / 2 = 1.5, gap 3.
grep -Eq '^  0 +100 +3/2 +10\.0 +10\.0 +7\.0 +2\.0 +1\.5 +3\.0' "$tmp/out.txt"
grep -Eq '^  1 +8 +2/0 +4\.0 +4\.0 +0\.0 +nan +0\.0 +5\.0' "$tmp/out.txt"
grep -q '^per run: regions 20.0, idle at their ends 1.5, serial between them 9.0' "$tmp/out.txt"

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
# 3. The runner's FILE.steps (one line per node run: start <= end, op type,
#    name) and, on the made-up trace with a made-up steps file (two nodes per
#    run: one holding the first two regions, one the third), the serial time
#    laid at each node's door, worked out by hand below.
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
# Steps come from unsliced runs (a batch of 64 runs as concurrent slices): one image.
/usr/bin/python3 -c "import numpy as np; np.save('$tmp/one.npy', np.ones((1, 1, 28, 28), np.float32))"
NPUKIT_POOL_TRACE="$tmp/one.tsv" "$npukit" run "$src/models/fashion_mnist_fp32.onnx" \
  --input "$tmp/one.npy" --repeat 3 --threads 2 -o "$tmp" > /dev/null
head -1 "$tmp/one.tsv.steps" | grep -q '^start_ns	end_ns	op_type	name$'
awk -F'\t' 'NR > 1 { n++; if (!($1 <= $2 && $3 != "")) { print "bad step line " NR ": " $0; bad++ } }
  END { if (n < 4 || bad) { print n " step lines, " bad + 0 " bad"; exit 1 } }' "$tmp/one.tsv.steps"
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
# Nodes: "a" from 1 us before the first region to 0.5 us after the second,
# "b" from 0.8 us after the second region to 1 us after the third.
with open(sys.argv[1] + '.steps', 'w') as f:
    f.write('start_ns\tend_ns\top_type\tname\n')
    for r0, r1, r2 in zip(rows[1::3], rows[2::3], rows[3::3]):
        f.write(f'{r0[0] - 1000}\t{r1[2] + 500}\tConv\ta\n')
        f.write(f'{r1[2] + 800}\t{r2[2] + 1000}\tGemm\tb\n')
PY
/usr/bin/python3 "$src/scripts/pool_trace.py" "$tmp/made.tsv" > "$tmp/out.txt"
cat "$tmp/out.txt"
grep -q '^10 runs of 3 split regions' "$tmp/out.txt"
# In file order from the first run's first region: idle 10 - (10 + 7) / 2 = 1.5, gap 3.
grep -Eq '^  0 +100 +3/2 +10\.0 +10\.0 +7\.0 +2\.0 +1\.5 +3\.0' "$tmp/out.txt"
grep -Eq '^  1 +8 +2/0 +4\.0 +4\.0 +0\.0 +nan +0\.0 +5\.0' "$tmp/out.txt"
grep -q '^per run: regions 20.0, idle at their ends 1.5, serial between them 9.0' "$tmp/out.txt"
# a: before 1, between its regions 5, after 0.5, 0.3 to b; b: before 0.2, after 1,
# then 1 us to the next run's a (3 us after the third region, a starts 1 early).
grep -Eq '^  0 +2 +20\.5 +1\.0 +5\.0 +0\.5 +0\.3  Conv a' "$tmp/out.txt"
grep -Eq '^  1 +1 +7\.2 +0\.2 +0\.0 +1\.0 +1\.0  Gemm b' "$tmp/out.txt"
grep -q "^per run: serial in nodes before their regions 1.2, between them 5.0, after them 1.5; between nodes 0.3 (and 1.0 from the last node to the next run's first)" "$tmp/out.txt"

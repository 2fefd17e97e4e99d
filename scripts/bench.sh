#!/usr/bin/env bash
# The race of issue #9 in one command: npukit against XNNPACK, oneDNN, PyTorch
# and ONNX Runtime on the same pooling problems and data, every output checked,
# plus the bundled models against ONNX Runtime (images/s).
#
#   scripts/bench.sh [--quick] [--stat median|min] [--threads 1,2] [--problems N]
#                    [--torchvision] [--markdown FILE] [--update-docs]
#
# --quick: few repeats (a smoke run); --stat min: report the minimum of the
# repeats instead of the median (closer to the uncontended time on a busy
# machine); --torchvision: add resnet18 and mobilenet_v2 (random weights,
# batch 1) to the models table, in fp32, int8 QOperator and int8 QDQ (the int8
# rows fail the run unless npukit gives ONNX Runtime's exact bytes; the QDQ
# export calibrates with npukit's Python module, built here too);
# --update-docs: put the markdown table into docs/performance.md (between its
# BEGIN/END race table markers).
#
# Installs what is missing (Debian packages of scripts/debian-packages.txt, as
# scripts/setup.sh does; onnxruntime-node through scripts/install-onnxruntime.sh),
# builds npukit_race in Release into build/ (or $NPUKIT_BUILD_DIR), then:
#   1. npukit_race --export DIR       the cases and their inputs (.npy, fixed seeds)
#   2. race_peers.py DIR              PyTorch timings and outputs; ONNX models
#   3. race_ort.mjs DIR               ONNX Runtime timings and outputs
#   4. npukit_race --results DIR      npukit, XNNPACK, oneDNN; checks every output;
#                                     prints the table, writes it as markdown
# DIR is build/race (or $NPUKIT_RACE_DIR). Exit status 1 if any check failed.
# OMP_WAIT_POLICY defaults to passive here (npukit, oneDNN and PyTorch use
# libgomp): on a machine whose cores other work shares, spinning threads lose
# their time slices and a 2-thread region then waits tens of milliseconds.
# Set OMP_WAIT_POLICY=active to time spinning threads on an idle machine.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${NPUKIT_BUILD_DIR:-$root/build}
dir=${NPUKIT_RACE_DIR:-$build/race}
command_line="scripts/bench.sh${*:+ $*}"
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}

quick=() stat=(--stat median) threads=1,2 problems=() torchvision=() markdown=$dir/table.md
update_docs=0
while (($#)); do
  case $1 in
    --quick) quick=(--quick) ;;
    --stat) stat=(--stat "$2"); shift ;;
    --threads) threads=$2; shift ;;
    --problems) problems=(--problems "$2"); shift ;;
    --torchvision) torchvision=(--torchvision) ;;
    --markdown) markdown=$2; shift ;;
    --update-docs) update_docs=1 ;;
    -h|--help) sed -n '2,30p' "$0"; exit 0 ;;
    *) echo "bench.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done

missing=()
while read -r pkg; do
  [[ -z "$pkg" || "$pkg" == \#* ]] && continue
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done < "$root/scripts/debian-packages.txt"
if ((${#missing[@]})); then
  echo "bench.sh: installing ${missing[*]}"
  if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; else SUDO=; fi
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
"$root/scripts/install-onnxruntime.sh" || echo "bench.sh: ONNX Runtime unavailable; its column will say so"

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DNPUKIT_BUILD_BENCH=ON >/dev/null
targets=(npukit_race)
((${#torchvision[@]})) && targets+=(_npukit)  # make_qdq_torchvision.py imports npukit
cmake --build "$build" --target "${targets[@]}" --parallel "$(nproc)"
race=$build/bench/npukit_race
export PYTHONPATH=$build/python${PYTHONPATH:+:$PYTHONPATH}

rm -rf "$dir"
"$race" --export "$dir" "${problems[@]}"
if /usr/bin/python3 -c "import torch, onnx" 2>/dev/null; then
  /usr/bin/python3 "$root/bench/race/race_peers.py" "$dir" --threads "$threads" "${quick[@]}" \
    "${stat[@]}" "${torchvision[@]}"
else
  echo "bench.sh: /usr/bin/python3 lacks torch or onnx (python3-torch, python3-onnx): no PyTorch or ONNX Runtime columns"
fi
if command -v node >/dev/null && [[ -d "$dir/onnx" ]]; then
  node "$root/bench/race/race_ort.mjs" "$dir" --threads "$threads" "${quick[@]}" "${stat[@]}"
fi
status=0
"$race" --results "$dir" --threads "$threads" "${problems[@]}" "${quick[@]}" "${stat[@]}" \
  --models-dir "$root/models" --markdown "$markdown" --command "$command_line" || status=$?
if ((update_docs)); then
  doc=$root/docs/performance.md
  begin='<!-- BEGIN race table: scripts/bench.sh --update-docs writes it -->'
  end='<!-- END race table -->'
  grep -qF "$begin" "$doc" && grep -qF "$end" "$doc" || { echo "bench.sh: $doc lacks the race table markers" >&2; exit 2; }
  awk -v b="$begin" -v e="$end" -v table="$markdown" '
    $0 == b { print; while ((getline line < table) > 0) print line; skip = 1; next }
    $0 == e { skip = 0 }
    !skip' "$doc" > "$doc.tmp" && mv "$doc.tmp" "$doc"
  echo "bench.sh: updated $doc"
fi
exit "$status"

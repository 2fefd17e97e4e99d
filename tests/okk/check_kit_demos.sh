#!/bin/bash
# The contest kit's own kernels (its conv2d, depthwise and matmul demos and its
# avg_pool / max_pool kernels on the kit's pool.dat cases), built from a git
# copy of the kit with its host programs as a user builds them, run to the end
# under npukit with every case passing the kit's check (issue #11; the vendor's
# C-model passes them all). Skipped (77) without the kit's git copy.
set -u
build=${1:?usage: check_kit_demos.sh BUILD_DIR}
here=$(cd "$(dirname "$0")" && pwd)
out=$(NPUKIT_FIDELITY_SIDES=npukit NPUKIT_TEAMS_ONLY=kit NPUKIT_FIDELITY_TIMEOUT=${NPUKIT_FIDELITY_TIMEOUT:-600} \
  "$here/fidelity_teams.sh" "$build" conv2d depthwise matmul avg_pool max_pool)
rc=$?
[ $rc -eq 77 ] && exit 77
echo "$out"
[ $rc -eq 0 ] || { echo "FAIL: fidelity_teams.sh exited $rc"; exit 1; }
rows=$(echo "$out" | grep -c ',kit,npukit,')
[ "$rows" -eq 5 ] || { echo "FAIL: $rows of 5 kit kernels ran"; exit 1; }
if echo "$out" | grep ',kit,npukit,' | grep -v ',kit,npukit,pass,'; then
  echo "FAIL: a kit kernel did not pass"
  exit 1
fi
echo "all 5 kit kernels pass"

#!/bin/bash
# Runs the published season-1 kernels of the OKKernel contest's top teams on
# the contest's cases under npukit with NPUKIT_PROFILE=1 and prints, per case
# and team, whether the kit's host check passed and npukit's estimated device
# time (docs/npu-simulator.md, "Calibration against a real BM1684").
#
# The teams' code is not part of npukit: it is read at run time from a git
# copy of github.com/1146877017/tpucontest (contest_result/perfect_code_show/
# <team>/ok_device_<op>_contest.c) and built, with the contest kit's host
# programs (github.com/sophon-ai-algo/tpucontest, okkernel/host/<op>.cpp),
# in a scratch directory against npukit's build tree, as a user would.
#
#   calibration_teams.sh BUILD_DIR [op ...]      ops: depthwise softmax conv2d matmul
#
# Environment: NPUKIT_TEAMS_GIT (git dir of 1146877017/tpucontest),
# NPUKIT_KIT_GIT (git dir of the contest kit), NPUKIT_TEAMS_WORK (scratch
# directory, default a temporary one), NPUKIT_TEAMS_CASES ("3 5": only these
# case numbers), NPUKIT_TEAMS_TIMEOUT (seconds per case, default 600),
# NPUKIT_TEAMS_TRACE=1 (keep a Chrome trace per case in the scratch directory),
# NPUKIT_TEAMS_ONLY ("181****3709": only these teams).
# Output: CSV on stdout, `op,case,team,status,estimate_us`, status pass /
# fail (host check) / error (stopped, see the log) / timeout. Exit 0 also when
# some kernels fail; exit 77 (ctest's skip code) when the sources are absent.
set -u
build=$(cd "${1:?usage: calibration_teams.sh BUILD_DIR [op ...]}" && pwd)
shift
ops=${*:-depthwise softmax}
src=$(cd "$(dirname "$0")/../.." && pwd)
teams_git=${NPUKIT_TEAMS_GIT:-/work/.mirror/1146877017+tpucontest/repo}
kit_git=${NPUKIT_KIT_GIT:-/work/.mirror/yuanas+tpucontest/repo}
limit=${NPUKIT_TEAMS_TIMEOUT:-600}
teams_dir=contest_result/perfect_code_show

for g in "$teams_git" "$kit_git"; do
  if ! git -C "$g" rev-parse --verify -q HEAD > /dev/null 2>&1; then
    echo "calibration_teams: skipped: no git copy at $g (clone github.com/1146877017/tpucontest" \
      "and github.com/sophon-ai-algo/tpucontest and set NPUKIT_TEAMS_GIT / NPUKIT_KIT_GIT)" >&2
    exit 77
  fi
done
if [ ! -e "$build/libnpukit.so" ]; then
  echo "calibration_teams: $build has no libnpukit.so (build npukit first)" >&2
  exit 2
fi

work=${NPUKIT_TEAMS_WORK:-}
if [ -z "$work" ]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work"
teams=$(git -C "$teams_git" ls-tree --name-only "HEAD:$teams_dir" | grep -v readme)

# The kit's host program, changed in three mechanical ways: OKK_CASE picks one
# case (so each case runs in its own process with its own time limit), the
# demo kernel, which the teams' files do not contain, is skipped, and every
# buffer gets twice its size: the chip's device memory is flat and three
# teams' softmax kernels load rows past the end of their input, which npukit
# refuses when it runs past an allocation.
host_program() {
  local op=$1 out=$work/host_$1
  [ -x "$out" ] && return 0
  git -C "$kit_git" show HEAD:okkernel/host/okk_param.h > "$work/okk_param.h" 2> /dev/null
  git -C "$kit_git" show "HEAD:okkernel/host/$op.cpp" |
    sed -e '1i #include <cstdlib>' \
      -e 's|\(for (unsigned int i = 0; i < sizeof(params) / sizeof(param_t); ++i) {\)|\1 if (std::getenv("OKK_CASE") \&\& std::atoi(std::getenv("OKK_CASE")) != (int)i) continue;|' \
      -e 's|if (\([a-z0-9]*(handle, param, "[a-z0-9]*_demo")\)|if (false \&\& \1|' \
      -e 's|"\([a-z0-9]*\)_demo fail"|"\1_demo skipped"|' \
      -e 's|bm_malloc_device_byte(handle, &\([a-z_0-9]*\), \([a-z_0-9]*\) \* sizeof(float))|bm_malloc_device_byte(handle, \&\1, 2 * \2 * sizeof(float))|' \
      -e 's|new float\[\([a-z_0-9]*\)\]|new float[2 * \1]|' \
      > "$work/host_$op.cpp"
  c++ -O2 -w -DUSING_CMODEL -c "$work/host_$op.cpp" -o "$out.o" -I"$work" -I"$src/include/npukit/compat" &&
    touch "$out"
}

cases_of() {
  git -C "$kit_git" show "HEAD:okkernel/host/$1.cpp" | grep -c '}, // [0-9]'
}

echo "op,case,team,status,estimate_us"
for op in $ops; do
  host_program "$op" || {
    echo "calibration_teams: cannot build the kit's host program for $op" >&2
    continue
  }
  n=$(cases_of "$op")
  for team in $teams; do
    if [ -n "${NPUKIT_TEAMS_ONLY:-}" ] && [[ " $NPUKIT_TEAMS_ONLY " != *" $team "* ]]; then continue; fi
    exe=$work/${op}_${team//\*/x}
    if [ ! -x "$exe" ]; then
      git -C "$teams_git" show "HEAD:$teams_dir/$team/ok_device_${op}_contest.c" > "$exe.c"
      if ! cc -O2 -g -w -c "$exe.c" -o "$exe.o" -I"$src/include/npukit/compat" ||
        ! c++ "$work/host_$op.o" "$exe.o" -o "$exe" -L"$build" -lnpukit -Wl,-rpath,"$build" -lm; then
        echo "calibration_teams: $team $op does not build" >&2
        continue
      fi
    fi
    for ((i = 0; i < n; i++)); do
      if [ -n "${NPUKIT_TEAMS_CASES:-}" ] && [[ " $NPUKIT_TEAMS_CASES " != *" $i "* ]]; then continue; fi
      log=$exe.case$i.log
      trace=
      [ -n "${NPUKIT_TEAMS_TRACE:-}" ] && trace=$exe.case$i.json
      OKK_CASE=$i NPUKIT_PROFILE=1 NPUKIT_TRACE=$trace timeout "$limit" "$exe" > "$log" 2>&1
      rc=$?
      est=$(grep -o 'estimated device time [0-9.]*' "$log" | tail -1 | awk '{print $4}')
      if [ $rc -eq 124 ]; then
        status=timeout
      elif grep -q "^case $i pass" "$log"; then
        status=pass
      elif grep -q "^case $i fail" "$log"; then
        status=fail
      else
        status=error
      fi
      echo "$op,$i,$team,$status,${est:-}"
    done
  done
done

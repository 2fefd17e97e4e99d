#!/bin/bash
# Issue #11 §1's fidelity re-run: every published season-1 contest kernel of
# the five top teams on every contest case, built the way a user builds it,
# once against npukit and once against the vendor's C-model
# (okkernel/lib/cmodel/libbmlib.so of the contest kit), on the same inputs.
# Per run it records the kit's own pass/fail, wall and CPU seconds, npukit's
# rule warnings, and (tests/okk/fidelity_compare.py) how many outputs miss
# the kit's tolerance and whether both simulators wrote the same words.
#
# Neither the teams' code nor the vendor's library is part of npukit: both
# are read at run time from git copies (github.com/1146877017/tpucontest and
# the kit, github.com/yuanas/tpucontest) into a scratch directory.
#
#   fidelity_teams.sh BUILD_DIR [op ...]
#       ops: conv2d depthwise matmul softmax (each team's kernel on every case,
#       and for the first three the kit's demo kernel as team `kit`), avg_pool
#       max_pool (the kit's own pool kernels on the kit's pool.dat cases)
#
# Environment: NPUKIT_TEAMS_GIT, NPUKIT_KIT_GIT (git dirs, as in
# calibration_teams.sh); NPUKIT_FIDELITY_WORK (scratch directory, kept: runs
# already recorded there are not repeated, so the table can be filled in
# several sittings); NPUKIT_FIDELITY_SIDES ("npukit vendor"); NPUKIT_TEAMS_CASES,
# NPUKIT_TEAMS_ONLY (subsets); NPUKIT_FIDELITY_TIMEOUT (seconds per run,
# default 600); NPUKIT_FIDELITY_SEED (the host's input seed, default 20261127).
# NPUKIT_PYTHON (a python3 with numpy, default /usr/bin/python3).
# Output: CSV on stdout (header below), one row per run, also kept as
# WORK/results.csv; fidelity_table.py turns it into the docs' table.
# Each run: `nice -n 10 timeout LIMIT`, one at a time (the machine is shared).
set -u
build=$(cd "${1:?usage: fidelity_teams.sh BUILD_DIR [op ...]}" && pwd)
shift
ops=${*:-conv2d depthwise matmul softmax}
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
teams_git=${NPUKIT_TEAMS_GIT:-/work/.mirror/1146877017+tpucontest/repo}
kit_git=${NPUKIT_KIT_GIT:-/work/.mirror/yuanas+tpucontest/repo}
limit=${NPUKIT_FIDELITY_TIMEOUT:-600}
seed=${NPUKIT_FIDELITY_SEED:-20261127}
sides=${NPUKIT_FIDELITY_SIDES:-npukit vendor}
teams_dir=contest_result/perfect_code_show

for g in "$teams_git" "$kit_git"; do
  if ! git -C "$g" rev-parse --verify -q HEAD > /dev/null 2>&1; then
    echo "fidelity_teams: skipped: no git copy at $g (set NPUKIT_TEAMS_GIT / NPUKIT_KIT_GIT)" >&2
    exit 77
  fi
done
[ -e "$build/libnpukit.so" ] || {
  echo "fidelity_teams: $build has no libnpukit.so (build npukit first)" >&2
  exit 2
}
work=${NPUKIT_FIDELITY_WORK:-}
if [ -z "$work" ]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work/vendor/include"
work=$(cd "$work" && pwd)
teams=$(git -C "$kit_git" rev-parse HEAD > /dev/null && git -C "$teams_git" ls-tree --name-only "HEAD:$teams_dir" | grep -v readme)

# The vendor's side: its headers, its C-model library, and the one function
# current glibc no longer exports (preloaded).
vendor_setup() {
  [ -e "$work/vendor/libyield.so" ] && return 0
  for f in $(git -C "$kit_git" ls-tree --name-only HEAD okkernel/include/); do
    git -C "$kit_git" show "HEAD:$f" > "$work/vendor/include/$(basename "$f")"
  done
  git -C "$kit_git" show HEAD:okkernel/lib/cmodel/libbmlib.so > "$work/vendor/libbmlib.so"
  echo '#include <sched.h>
int pthread_yield(void) { return sched_yield(); }' > "$work/vendor/yield.c"
  cc -shared -fPIC -O2 "$work/vendor/yield.c" -o "$work/vendor/libyield.so"
}

# The kit's host program, changed mechanically as in calibration_teams.sh
# (OKK_CASE picks one case, the demo is skipped, buffers get twice their
# size), plus: the input seed comes from OKK_SEED; OKK_DUMP and OKK_DUMP_REF
# name files that receive the device's output words and the host's reference;
# OKK_DEMO=1 runs the kit's demo kernel; the pool hosts print each case.
host_source() {
  local op=$1 len=output_len
  [ "$op" = softmax ] && len=len
  git -C "$kit_git" show HEAD:okkernel/host/okk_param.h > "$work/okk_param.h" 2> /dev/null
  git -C "$kit_git" show "HEAD:okkernel/host/$op.cpp" |
    sed -e '1i #include <cstdlib>\n#include <cstdio>\nstatic void okk_dump(const char *var, const float *x, long long n) {\n    if (const char *d = std::getenv(var)) { FILE *f = std::fopen(d, "ab"); std::fwrite(x, sizeof(float), n, f); std::fclose(f); }\n}' \
      -e 's|\(for (unsigned int i = 0; i < sizeof(params) / sizeof(param_t); ++i) {\)|\1 if (std::getenv("OKK_CASE") \&\& std::atoi(std::getenv("OKK_CASE")) != (int)i) continue;|' \
      -e 's|if (\([a-z0-9]*(handle, param, "[a-z0-9]*_demo")\)|if (false \&\& \1|' \
      -e 's|"\([a-z0-9]*\)_demo fail"|"\1_demo skipped"|' \
      -e 's|bm_malloc_device_byte(handle, &\([a-z_0-9]*\), \([a-z_0-9]*\) \* sizeof(float))|bm_malloc_device_byte(handle, \&\1, 2 * \2 * sizeof(float))|' \
      -e 's|new float\[\([a-z_0-9]*\)\]|new float[2 * \1]|' \
      -e 's|rng.seed(std::random_device()());|rng.seed(std::strtoul(std::getenv("OKK_SEED"), nullptr, 10));|' \
      -e "s|\(BMLIB_SAFE_CALL(bm_memcpy_d2s(handle, output_host, output_dev));\)|\1 okk_dump(\"OKK_DUMP\", output_host, $len); okk_dump(\"OKK_DUMP_REF\", output_ref, $len);|" \
      -e 's|if (false \&\& |if (std::getenv("OKK_DEMO") \&\& |' \
      -e 's|"\([a-z0-9]*\)_demo skipped"|(std::getenv("OKK_DEMO") ? "\1_demo fail" : "\1_demo skipped")|' \
      -e 's|^\( *\)\([a-z_]*(handle, param, "[a-z_]*_0")\);|\1{ int r = \2; std::cout << "case " << (r >= 0 ? "pass" : "fail") << std::endl; }|'
}

# The device code: a team's contest kernel, or for team `kit` the kit's own
# demo kernel (conv2d, depthwise, matmul) or pool kernel (avg_pool, max_pool).
device_source() {
  local op=$1 team=$2
  if [ "$team" != kit ]; then
    git -C "$teams_git" show "HEAD:$teams_dir/$team/ok_device_${op}_contest.c"
  elif [[ $op == *_pool ]]; then
    git -C "$kit_git" show "HEAD:okkernel/device/ok_device_$op.c"
  else
    git -C "$kit_git" show "HEAD:okkernel/device/ok_device_${op}_demo.c"
  fi
}

# build SIDE OP TEAM -> executable path on stdout
build_exe() {
  local side=$1 op=$2 team=$3 dir=$work/$1
  local exe=$dir/${op}_${team//\*/x}
  if [ ! -x "$exe" ]; then
    mkdir -p "$dir"
    host_source "$op" > "$dir/host_$op.cpp"
    device_source "$op" "$team" > "$exe.c"
    if [ "$side" = npukit ]; then
      local inc=$src/include/npukit/compat
      c++ -O2 -w -DUSING_CMODEL -c "$dir/host_$op.cpp" -o "$exe.host.o" -I"$work" -I"$inc" &&
        cc -O2 -g -w -c "$exe.c" -o "$exe.o" -I"$inc" &&
        c++ "$exe.host.o" "$exe.o" -o "$exe" -L"$build" -lnpukit -Wl,-rpath,"$build" -lm || return 1
    else
      vendor_setup
      local inc=$work/vendor/include
      c++ -O2 -w -DUSING_CMODEL -c "$dir/host_$op.cpp" -o "$exe.host.o" -I"$work" -I"$inc" &&
        cc -O2 -g -w -DUSING_CMODEL -c "$exe.c" -o "$exe.o" -I"$inc" &&
        c++ "$exe.host.o" "$exe.o" -o "$exe" -L"$work/vendor" -lbmlib -lyield -Wl,-rpath,"$work/vendor" \
          -pthread -lm -ldl || return 1
    fi
  fi
  echo "$exe"
}

cases_of() {
  git -C "$kit_git" show "HEAD:okkernel/host/$1.cpp" | grep -c '}, // [0-9]'
}
# The pool hosts read their cases from ./param/pool.dat.
mkdir -p "$work/param"
git -C "$kit_git" show HEAD:okkernel/param/pool.dat > "$work/param/pool.dat"

header=op,case,team,side,status,wall_s,cpu_s,warnings,bad_outputs,outputs,worst_tol_ratio,same_as_npukit
echo "$header"
[ -e "$work/results.csv" ] || echo "$header" > "$work/results.csv"
for op in $ops; do
  n=$(cases_of "$op")
  op_teams=$teams
  [[ $op == *_pool ]] && op_teams=
  [[ $op != softmax ]] && op_teams="$op_teams kit"
  for team in $op_teams; do
    # The kit's demo (or pool) run is one process: recorded as case 0.
    [ "$team" = kit ] && n=1
    if [ -n "${NPUKIT_TEAMS_ONLY:-}" ] && [[ " $NPUKIT_TEAMS_ONLY " != *" $team "* ]]; then continue; fi
    for ((i = 0; i < n; i++)); do
      if [ -n "${NPUKIT_TEAMS_CASES:-}" ] && [[ " $NPUKIT_TEAMS_CASES " != *" $i "* ]]; then continue; fi
      for side in $sides; do
        key="$op,$i,$team,$side,"
        if grep -qF "$key" "$work/results.csv"; then
          grep -F "$key" "$work/results.csv" | tail -1
          continue
        fi
        exe=$(build_exe "$side" "$op" "$team") || {
          echo "fidelity_teams: $team $op does not build for $side" >&2
          continue
        }
        log=$exe.case$i.log dump=$exe.case$i.out
        rm -f "$dump" "$dump.ref"
        pre= demo= okk_case=$i
        [ "$side" = vendor ] && pre=$work/vendor/libyield.so
        [ "$team" = kit ] && demo=1 okk_case=-1
        (cd "$work" && env ${demo:+OKK_DEMO=1} OKK_CASE=$okk_case OKK_SEED=$seed OKK_DUMP=$dump \
          OKK_DUMP_REF=$dump.ref LD_PRELOAD=$pre /usr/bin/time -f '%e %U %S' -o "$exe.case$i.time" \
          nice -n 10 timeout "$limit" "$exe" > "$log" 2>&1)
        rc=$?
        read -r wall user sys < <(tail -1 "$exe.case$i.time")  # after a signal line
        cpu=$(awk -v u="${user:-0}" -v s="${sys:-0}" 'BEGIN { printf "%.1f", u + s }')
        sig=$(grep -o 'terminated by signal [0-9]*' "$exe.case$i.time" | awk '{print $4}')
        if [ $rc -eq 124 ]; then
          status=timeout
        elif [ -n "$sig" ]; then
          status="signal $sig"
        elif [ "$team" = kit ]; then
          status=error
          if [ $rc -eq 0 ] && grep -q "^${op}_demo pass\|^case pass" "$log"; then status=pass; fi
          if grep -q "^${op}_demo fail\|^case fail" "$log"; then status=fail; fi
        elif grep -q "^case $i pass" "$log"; then
          status=pass
        elif grep -q "^case $i fail" "$log"; then
          status=fail
        else
          status=error
        fi
        warns=$(grep -c 'npukit NPU rule warning' "$log")
        cmp=$(${NPUKIT_PYTHON:-/usr/bin/python3} "$here/fidelity_compare.py" "$op" "$dump" "$work/npukit/${op}_${team//\*/x}.case$i.out")
        row="$op,$i,$team,$side,$status,$wall,$cpu,$warns,$cmp"
        echo "$row" >> "$work/results.csv"
        echo "$row"
      done
    done
  done
done

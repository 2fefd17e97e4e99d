#!/bin/sh
# End to end: a kernel run with NPUKIT_TRACE writes a trace whose first launch
# `npukit npu timeline` draws with one bar per instruction, both engine lanes
# and a legend (docs/npu-simulator.md, "The timeline picture").
set -eu
build=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
NPUKIT_TRACE="$dir/trace.json" "$build/tests/okk/okk_gated_exp" > /dev/null
"$build/bin/npukit" npu timeline "$dir/trace.json" -o "$dir/t.svg" > /dev/null
instructions=$(grep -c '"ph":"X","pid":1,"tid":[12],' "$dir/trace.json")
bars=$(grep -c 'class="slice"' "$dir/t.svg")
lanes=$(grep -c 'class="lane"' "$dir/t.svg")
legend=$(grep -c 'class="legend-entry"' "$dir/t.svg")
# Call sites: the kernel function that made each call (npukit is a shared library here):
# "file:line (function)" with debug line tables, "function+offset" without.
sites=$(grep -c '"pid":1,"tid":[12],.*"call_site":"[^"]*gated_exp_contest' "$dir/trace.json")
echo "instructions $instructions, bars $bars, lanes $lanes, legend entries $legend, call sites $sites"
[ "$instructions" -gt 0 ] && [ "$bars" -eq "$instructions" ] && [ "$lanes" -eq 2 ] &&
  [ "$legend" -ge 2 ] && [ "$sites" -eq "$instructions" ]

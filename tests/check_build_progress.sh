#!/usr/bin/env bash
# tools/lib/build.sh's progress filter (issue 20, item 14): given make's output, it prints
# the build's percentage with the elapsed time, a line every 10 % when stderr is not a
# terminal, and nothing for an up-to-date build; tools/run builds the talus target only.
set -euo pipefail
top="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$top/tools/lib/build.sh"
fail() { echo "FAIL: $*" >&2; exit 1; }
make_output=$'-- Configuring done\n[  1%] Building CXX object a.o\n[  5%] Building CXX object b.o\n[ 12%] Building CXX object c.o\nwarning: x\n[ 57%] Linking CXX static library d.a\n[100%] Linking CXX executable ../bin/talus\n'
got="$(printf '%s' "$make_output" | talus_build_progress 0 2>&1 >/dev/null)"
want_pct="1 12 57 100"
pct="$(printf '%s\n' "$got" | sed -n 's/^talus: build *\([0-9]*\) % ([0-9]*:[0-9][0-9])$/\1/p' | tr '\n' ' ' | sed 's/ $//')"
[ "$pct" = "$want_pct" ] || fail "progress lines '$got' (percentages '$pct', expected '$want_pct')"
quiet="$(printf -- '-- Configuring done\n[  4%%] Built target talus_core\n[100%%] Built target talus\n' | talus_build_progress 0 2>&1)"
[ -z "$quiet" ] || fail "an up-to-date build printed '$quiet'"
grep -q -- '^talus_build build --target talus ' "$top/tools/run" || fail "tools/run does not build the talus target alone"
echo "progress lines: $(printf '%s' "$got" | tr '\n' '|')"

#!/usr/bin/env bash
# Configure and build one configuration of Talus. Sourced by tools/run and tools/test.
#   talus_build DIR [--target TARGET] [cmake -D options...]
# Output goes to DIR/build.log; the build's progress (its percentage and elapsed time) is
# shown on stderr: one line rewritten in place on a terminal, a line every 10 % otherwise.
# On failure the log's tail is printed. --target builds only that target (and what it
# needs); the default is all.
# The sanitizer builds' configuration (ASan+UBSan in tools/test, TSan in tools/lib/tsan.sh):
# -O1 -g1 compiles in about half the time of -O2 -g (per file 0.55×), and line tables are all
# the sanitizers' reports need (file and line in every frame).
talus_instrumented_config=(
    -DCMAKE_BUILD_TYPE=RelWithDebInfo
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG"
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG"
)

talus_build() {
    local dir="$1"; shift
    local target=()
    local what="everything"
    if [ "${1:-}" = "--target" ]; then target=(--target "$2"); what="$2"; shift 2; fi
    local top; top="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
    local jobs; jobs="$(nproc 2>/dev/null || echo 2)"
    mkdir -p "$top/$dir"
    echo "talus: building $what in $dir with $jobs jobs (log: $dir/build.log)" >&2
    local tty=0
    [ -t 2 ] && tty=1
    local status
    set +e
    { cmake -S "$top" -B "$top/$dir" "$@" && cmake --build "$top/$dir" -j "$jobs" "${target[@]}"; } \
        2>&1 | tee "$top/$dir/build.log" | talus_build_progress "$tty"
    status=${PIPESTATUS[0]}
    set -e
    if [ "$status" -ne 0 ]; then
        tail -n 40 "$top/$dir/build.log" >&2
        echo "talus: build of $dir failed (full log: $dir/build.log)" >&2
        return 1
    fi
}

# Reads make's output and shows its percentage: "talus: build 42 % (1:07)". A build that is
# already up to date prints nothing more.
talus_build_progress() {
    local tty="$1"
    awk -v tty="$tty" -v start="$(date +%s)" '
        function elapsed(   s) { s = systime() - start; return sprintf("%d:%02d", s / 60, s % 60) }
        match($0, /^\[ *[0-9]+%\] (Building|Linking)/) {
            p = substr($0, 2, index($0, "%") - 2) + 0
            if (tty) { printf "\rtalus: build %3d %% (%s)", p, elapsed() > "/dev/stderr"; shown = 1 }
            else if (p >= next_mark) {
                printf "talus: build %3d %% (%s)\n", p, elapsed() > "/dev/stderr"
                while (next_mark <= p) next_mark += 10
            }
            fflush("/dev/stderr")
        }
        END { if (tty && shown) printf "\rtalus: build done (%s)\033[K\n", elapsed() > "/dev/stderr" }
    '
}

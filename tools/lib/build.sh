#!/usr/bin/env bash
# Configure and build one configuration of Talus. Sourced by tools/run and tools/test.
#   talus_build DIR [--target TARGET] [cmake -D options...]
# Output goes to DIR/build.log; on failure its tail is printed. --target builds only that
# target (and what it needs); the default is all.
talus_build() {
    local dir="$1"; shift
    local target=()
    if [ "${1:-}" = "--target" ]; then target=(--target "$2"); shift 2; fi
    local top; top="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
    local jobs; jobs="$(nproc 2>/dev/null || echo 2)"
    mkdir -p "$top/$dir"
    echo "talus: building $dir (log: $dir/build.log)" >&2
    if ! { cmake -S "$top" -B "$top/$dir" "$@" && cmake --build "$top/$dir" -j "$jobs" "${target[@]}"; } \
            > "$top/$dir/build.log" 2>&1; then
        tail -n 40 "$top/$dir/build.log" >&2
        echo "talus: build of $dir failed (full log: $dir/build.log)" >&2
        return 1
    fi
}

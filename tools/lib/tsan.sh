#!/usr/bin/env bash
# The ThreadSanitizer stage of tools/test. Sourced after deps.sh and build.sh.
#
# Debian's libtbb is not instrumented: TSan cannot see the synchronisation inside TBB's
# task scheduler (a task handed to a worker, a parallel_for joining), so every parallel
# loop looks like a race to it (google/sanitizers#1004, oneTBB#1290). So this stage builds
# oneTBB itself with -fsanitize=thread, from Debian 12's own source package (onetbb, the
# version of the installed libtbb12 when the archive still has it), with upstream's
# TBB_SANITIZE=thread switch. The source comes through a private apt configuration (its
# own deb-src list, package lists and cache, all in build-tsan-deps/apt/): the machine's
# /etc/apt is not touched, and no root is needed for this part.
#
#   talus_tsan_tbb        fetch + build + install the instrumented oneTBB into
#                         build-tsan-deps/tbb/, unless a build with the same recipe is there
#   talus_tsan_build      talus_tsan_tbb, then build build-tsan/ (TALUS_TSAN=ON) against it
#   talus_tsan_run        run the parallel tests of build-tsan/ under TSan: the gtest
#                         filters of tests/tsan_tests.txt (the TSan build compiles only the
#                         test files listed there)
#
# build-tsan-deps/ and build-tsan/ are git-ignored (/build-*/); delete build-tsan-deps/ to
# fetch and build oneTBB again. TALUS_DEBIAN_MIRROR overrides the Debian mirror.

_talus_tsan_top() { (cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd); }

# What the cached oneTBB was built with; a change (compiler, flags) rebuilds it.
_talus_tsan_recipe() {
    echo "onetbb TBB_SANITIZE=thread RelWithDebInfo no-tbbmalloc no-hwloc" \
         "gcc $(gcc -dumpfullversion 2>/dev/null) g++ $(g++ -dumpfullversion 2>/dev/null)"
}

talus_tsan_tbb() {
    local top; top="$(_talus_tsan_top)"
    local deps="$top/build-tsan-deps"
    local prefix="$deps/tbb" recipe; recipe="$(_talus_tsan_recipe)"
    if [ -f "$prefix/talus-recipe.txt" ] && [ "$(cat "$prefix/talus-recipe.txt")" = "$recipe" ]; then
        echo "talus: instrumented oneTBB $(cat "$prefix/talus-version.txt") cached in build-tsan-deps/tbb" >&2
        return 0
    fi
    local log="$deps/tbb-build.log" start; start=$(date +%s)
    rm -rf "$deps/src" "$deps/tbb-build" "$prefix"
    mkdir -p "$deps/apt/lists/partial" "$deps/apt/cache/archives/partial" "$deps/src"
    : > "$log"
    local mirror="${TALUS_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
    local key=/usr/share/keyrings/debian-archive-keyring.gpg
    cat > "$deps/apt/sources.list" <<EOF
deb-src [signed-by=$key] $mirror bookworm main
deb-src [signed-by=$key] $mirror bookworm-updates main
deb-src [signed-by=$key] http://deb.debian.org/debian-security bookworm-security main
EOF
    local apt=(apt-get -q -o "Dir::Etc::SourceList=$deps/apt/sources.list"
               -o Dir::Etc::SourceParts=/dev/null -o "Dir::State::Lists=$deps/apt/lists"
               -o "Dir::Cache=$deps/apt/cache" -o APT::Sandbox::User=root)
    echo "talus: fetching Debian's onetbb source (private apt lists in build-tsan-deps/apt; log: build-tsan-deps/tbb-build.log)" >&2
    # the same version as the installed libtbb12 if the archive still has it, else the newest
    local want; want="$(dpkg-query -W -f='${source:Version}' libtbb12 2>/dev/null || true)"
    if ! { "${apt[@]}" update &&
           (cd "$deps/src" && { { [ -n "$want" ] && "${apt[@]}" source --download-only "onetbb=$want"; } ||
                                "${apt[@]}" source --download-only onetbb; }) &&
           (cd "$deps/src" && dpkg-source -x ./onetbb_*.dsc onetbb); } >> "$log" 2>&1; then
        tail -n 20 "$log" >&2
        echo "talus: could not fetch or unpack the onetbb source package (log: build-tsan-deps/tbb-build.log)" >&2
        return 1
    fi
    local version; version="$(cd "$deps/src/onetbb" && dpkg-parsechangelog -S Version)"
    echo "talus: building oneTBB $version with -fsanitize=thread (about a minute)" >&2
    # TBB_STRICT=OFF: with -fsanitize=thread gcc 12 warns (-Wtsan) that it does not model
    # the seq_cst atomic_thread_fence of TBB's sleep/wake-up protocol (concurrent_monitor,
    # arena), and upstream's -Werror would stop the build. That fence only keeps a worker
    # from missing a wake-up; tasks and their data are handed over by acquire/release
    # atomics, which TSan does see. No tbbmalloc (Talus uses the system allocator), no
    # tests, no hwloc binding (tbbbind).
    if ! { cmake -S "$deps/src/onetbb" -B "$deps/tbb-build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
               -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_INSTALL_LIBDIR=lib \
               -DTBB_SANITIZE=thread -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread \
               -DTBB_STRICT=OFF -DTBB_TEST=OFF -DTBB_EXAMPLES=OFF -DTBBMALLOC_BUILD=OFF \
               -DTBB_ENABLE_IPO=OFF -DTBB_DISABLE_HWLOC_AUTOMATIC_SEARCH=ON &&
           cmake --build "$deps/tbb-build" -j "$(nproc 2>/dev/null || echo 2)" &&
           cmake --install "$deps/tbb-build"; } >> "$log" 2>&1; then
        tail -n 40 "$log" >&2
        echo "talus: build of the instrumented oneTBB failed (log: build-tsan-deps/tbb-build.log)" >&2
        return 1
    fi
    echo "$version" > "$prefix/talus-version.txt"
    echo "$recipe" > "$prefix/talus-recipe.txt"   # written last: marks a complete install
    rm -rf "$deps/tbb-build"
    echo "talus: instrumented oneTBB $version installed in build-tsan-deps/tbb ($(( $(date +%s) - start )) s)" >&2
}

talus_tsan_build() {
    local top; top="$(_talus_tsan_top)"
    talus_tsan_tbb || return 1
    # Only the test binary: the threaded tests need neither the talus command nor the
    # benchmarks. (talus_instrumented_config: tools/lib/build.sh)
    talus_build build-tsan --target talus_tests "${talus_instrumented_config[@]}" -DTALUS_TSAN=ON \
        -DTALUS_SANITIZE=OFF -DTALUS_BUILD_BENCHMARKS=OFF \
        -DTBB_DIR="$top/build-tsan-deps/tbb/lib/cmake/TBB"
}

talus_tsan_run() {
    local top; top="$(_talus_tsan_top)"
    local dir="$top/build-tsan"
    # gcc 12's TSan runtime maps its shadow for at most 28 bits of mmap randomisation; on a
    # kernel set to more it dies at start ("unexpected memory mapping"): run without ASLR.
    local launch=()
    if [ "$(cat /proc/sys/vm/mmap_rnd_bits 2>/dev/null || echo 28)" -gt 28 ]; then
        launch=(setarch "$(uname -m)" -R)
    fi
    local filter
    filter="$(sed -e 's/#.*//' "$top/tests/tsan_tests.txt" | awk 'NF >= 2 { print $2 }' | paste -sd:)"
    echo "talus: running the threaded tests of build-tsan under ThreadSanitizer (tests/tsan_tests.txt)" >&2
    # No suppressions file: with the instrumented oneTBB nothing is reported, from TBB or
    # Talus. halt_on_error: the first report fails the run (exit 66).
    (cd "$dir" && TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1" \
        "${launch[@]}" ./bin/talus_tests --gtest_filter="$filter" --gtest_brief=1)
}

#!/bin/sh
# check_install.sh BUILD_DIR SOURCE_DIR SCRATCH: installs BUILD_DIR into SCRATCH/prefix with
# `cmake --install`, checks what landed (the talus command runs, the CMake package and the
# Python tools are there), then configures, builds and runs tests/install/ against it.
set -eu
build="$1"; src="$2"; scratch="$3"
rm -rf "$scratch"
mkdir -p "$scratch"
cmake --install "$build" --prefix "$scratch/prefix" > "$scratch/install.log"
prefix="$scratch/prefix"
"$prefix/bin/talus" --version
for f in lib/cmake/Talus/TalusConfig.cmake lib/cmake/Talus/TalusTargets.cmake \
         include/talus/io/scene.hpp include/talus/core/body_store.hpp \
         share/talus/python/talus_h5.py lib/libtalus_io.a; do
    [ -e "$prefix/$f" ] || { echo "check_install: $f was not installed" >&2; exit 1; }
done
# the installed loader finds the installed command (no TALUS_BIN, no repository around it)
(cd "$scratch" && env -u TALUS_BIN /usr/bin/python3 "$prefix/share/talus/python/talus_h5.py" \
    "$build/test-output/io/staged_gate.h5" > "$scratch/summary.txt") ||
    { echo "check_install: the installed talus_h5.py could not summarise a run" >&2; exit 1; }
cmake -S "$src/tests/install" -B "$scratch/consumer" -DCMAKE_PREFIX_PATH="$prefix" \
      -DCMAKE_BUILD_TYPE=Release > "$scratch/configure.log"
cmake --build "$scratch/consumer" -j 2 > "$scratch/build.log"
"$scratch/consumer/consumer"

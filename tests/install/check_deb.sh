#!/bin/sh
# check_deb.sh BUILD_DIR SOURCE_DIR SCRATCH: packs BUILD_DIR into a Debian package with
# `cpack -G DEB` and checks it: named talus, its Depends naming the shared libraries the
# command links (HDF5, oneTBB, fmt) and the Python tools' h5py, each dependency a Debian
# package (installed here, since the build needed it), and the files it installs. Then it
# unpacks the package (dpkg-deb -x) and runs a scene with the unpacked /usr/bin/talus, whose
# trajectory the package's own talus_h5.py summarises. Installing it into a bare Debian 12
# with apt is tools/clean_machine_check --deb (root, network).
set -eu
build="$1"; src="$2"; scratch="$3"
fail() { echo "check_deb: $*" >&2; exit 1; }
rm -rf "$scratch"
mkdir -p "$scratch"
(cd "$build" && cpack -G DEB -B "$scratch/pack" > "$scratch/cpack.log" 2>&1) ||
    { cat "$scratch/cpack.log" >&2; fail "cpack failed"; }
deb=$(ls "$scratch"/pack/talus_*.deb)
[ "$(dpkg-deb -f "$deb" Package)" = talus ] || fail "the package is not named talus"
depends=$(dpkg-deb -f "$deb" Depends)
for need in libhdf5 libtbb libfmt python3-h5py python3-numpy python3-tomli-w; do
    case "$depends" in *"$need"*) ;; *) fail "Depends lacks $need: $depends" ;; esac
done
for p in $(echo "$depends" | tr ',' '\n' | sed 's/(.*)//; s/|.*//; s/ //g'); do
    dpkg-query -W "$p" > /dev/null 2>&1 || fail "Depends names $p, which is not a Debian package installed here"
done
dpkg-deb -c "$deb" > "$scratch/contents.txt"
for f in ./usr/bin/talus ./usr/share/talus/python/talus_h5.py ./usr/share/talus/python/talus_measure.py \
         ./usr/share/talus/python/talus_scene.py \
         ./usr/lib/cmake/Talus/TalusConfig.cmake ./usr/include/talus/io/scene.hpp ./usr/lib/libtalus_io.a; do
    grep -q " $f\$" "$scratch/contents.txt" || fail "$f is not in the package"
done
dpkg-deb -x "$deb" "$scratch/root"
"$scratch/root/usr/bin/talus" run "$src/tests/scenes/small_box.toml" -o "$scratch/run.h5" --quiet \
    --set simulation.duration=0.1 || fail "the packaged talus could not run a scene"
# the packaged loader finds the packaged command beside it (no TALUS_BIN, no repository)
(cd "$scratch" && env -u TALUS_BIN /usr/bin/python3 "$scratch/root/usr/share/talus/python/talus_h5.py" \
    "$scratch/run.h5" > "$scratch/summary.txt") || fail "the packaged talus_h5.py could not summarise the run"
grep -q "200" "$scratch/summary.txt" || fail "the summary does not count the 200 beads: $(cat "$scratch/summary.txt")"
echo "check_deb: $(basename "$deb") ($(du -k "$deb" | cut -f1) kB) depends on $depends; unpacked, it ran a scene and summarised it"

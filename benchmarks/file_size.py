#!/usr/bin/python3
"""Trajectory file size against its data (issue 24, part 4.1): runs one scene with two talus
binaries (an older and a newer), then reports for each file its size, what `h5repack` makes
of it (the same datasets stored afresh) and the raw bytes of its datasets.

    /usr/bin/python3 benchmarks/file_size.py OLD/talus NEW/talus SCENE [--set KEY=VALUE ...]

Needs h5repack (Debian hdf5-tools). Files go to a temporary directory.
"""
import os
import subprocess
import sys
import tempfile

import h5py


def raw_bytes(path):
    total = 0
    with h5py.File(path, "r") as f:
        def visit(_, obj):
            nonlocal total
            if isinstance(obj, h5py.Dataset):
                total += obj.size * obj.dtype.itemsize
        f.visititems(visit)
    return total


def main(argv):
    if len(argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    old, new, scene, extra = argv[1], argv[2], argv[3], argv[4:]
    with tempfile.TemporaryDirectory() as tmp:
        for tag, binary in (("old", old), ("new", new)):
            out = os.path.join(tmp, tag + ".h5")
            subprocess.run([binary, "run", "--quiet", "--force", "-o", out, *extra, "--", scene], check=True)
            repacked = os.path.join(tmp, tag + "_repack.h5")
            subprocess.run(["h5repack", out, repacked], check=True)
            with h5py.File(out, "r") as f:
                bodies, frames = int(f["frames/row_count"][0]), len(f["frames/time"])
            size, repack, raw = os.path.getsize(out), os.path.getsize(repacked), raw_bytes(out)
            print(f"{os.path.basename(scene)} {tag}: {bodies} bodies x {frames} frames: file {size / 1e6:.3f} MB, "
                  f"h5repack {repack / 1e6:.3f} MB, raw data {raw / 1e6:.3f} MB, file/h5repack {size / repack:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

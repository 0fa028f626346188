#!/usr/bin/python3
"""Behaviour of tools/talus_h5.py beyond exact readback (that is check_readback.py).

    check_talus_h5.py RUN.h5 SCRATCH_DIR

RUN.h5 is the ParaView fixture (body counts 4, 7, 0, 5). Checks: negative frame indices,
IndexError past the end, an empty frame, the index tiling the body rows, unit quaternions,
incomplete index entries (fill value 2**64-1) not counted, another HDF5 file rejected with
NotATrajectory, and the command line's exit codes. Exit 0 if all hold, 1 otherwise.
"""
import contextlib
import io
import os
import shutil
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import talus_h5  # noqa: E402


def main(argv):
    if len(argv) != 3:
        print("usage: check_talus_h5.py RUN.h5 SCRATCH_DIR", file=sys.stderr)
        return 2
    src, scratch = argv[1], argv[2]
    os.makedirs(scratch, exist_ok=True)
    problems = []

    def expect(cond, what):
        if not cond:
            problems.append(what)

    with talus_h5.load(src) as run:
        n = len(run)
        expect(n == 4, f"len = {n}, expected 4")
        expect(run.frames.row_count.tolist() == [4, 7, 0, 5], f"row counts {run.frames.row_count.tolist()}")
        ends = run.frames.first_row + run.frames.row_count
        expect(run.frames.first_row[0] == 0 and np.array_equal(run.frames.first_row[1:], ends[:-1]),
               "frames do not tile the body rows")
        for i in range(-n, n):
            a, b = run.frame(i), run.frame(i % n)
            expect(all(np.array_equal(a[k], b[k]) for k in a), f"frame({i}) != frame({i % n})")
        for i in (n, -n - 1):
            try:
                run.frame(i)
                problems.append(f"frame({i}) did not raise IndexError")
            except IndexError:
                pass
        empty = run.frame(2)
        expect(empty["position"].shape == (0, 3) and empty["orientation"].shape == (0, 4),
               f"empty frame shapes {empty['position'].shape}, {empty['orientation'].shape}")
        last = run.frame(-1)
        expect(last["position"].shape == (5, 3), f"last frame position shape {last['position'].shape}")
        norms = np.linalg.norm(last["orientation"], axis=1)
        expect(np.allclose(norms, 1.0, rtol=0, atol=1e-15), f"quaternion norms {norms}")
        expect(len(run.diagnostics["step"]) == 4, "diagnostics steps")
        expect(isinstance(run.attrs["scene"], str) and isinstance(run.attrs["overrides"], list),
               "string attributes are not decoded to str / list of str")

    # An index entry whose marker is still the fill value is not a frame (what a reader sees
    # between the writer extending /frames and writing the entry).
    partial = os.path.join(scratch, "partial.h5")
    shutil.copyfile(src, partial)
    with h5py.File(partial, "r+") as f:
        for name in ("time", "step", "first_row", "row_count"):
            f["frames/" + name].resize((5,))
        f["frames/first_row"][4] = 16
        f["diagnostics/step"].resize((5,))  # other diagnostics stay at 4: the minimum counts
        expect(int(f["frames/row_count"][4]) == int(talus_h5.UNWRITTEN), "row_count fill value is not 2**64-1")
    with talus_h5.load(partial) as run:
        expect(len(run) == 4, f"unwritten index entry counted: len = {len(run)}")
        expect(len(run.diagnostics["step"]) == 4, "unwritten diagnostics entry counted")

    other = os.path.join(scratch, "other.h5")
    with h5py.File(other, "w") as f:
        f["x"] = np.arange(3)
    try:
        talus_h5.load(other)
        problems.append("load() accepted an HDF5 file that is not a trajectory")
    except talus_h5.NotATrajectory:
        pass

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        rc_ok = talus_h5.main(["talus_h5.py", src])
        rc_other = talus_h5.main(["talus_h5.py", other])
        rc_missing = talus_h5.main(["talus_h5.py", os.path.join(scratch, "missing.h5")])
    expect(rc_ok == 0 and "frames:     4" in out.getvalue(), f"CLI on the fixture: {rc_ok}, {out.getvalue()!r}")
    expect(rc_other == 1, f"CLI on another HDF5 file exited {rc_other}, expected 1")
    expect(rc_missing == 1, f"CLI on a missing file exited {rc_missing}, expected 1")

    if problems:
        print("check_talus_h5:")
        for p in problems:
            print("  " + p)
        return 1
    print("check_talus_h5: all checks hold")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

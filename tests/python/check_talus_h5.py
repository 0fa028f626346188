#!/usr/bin/python3
"""Behaviour of tools/talus_h5.py beyond exact readback (that is check_readback.py).

    check_talus_h5.py RUN.h5 SCRATCH_DIR [FLOW.h5]

RUN.h5 is the ParaView fixture (body counts 4, 7, 0, 5). Checks: negative frame indices,
IndexError past the end, an empty frame, the index tiling the body rows, unit quaternions,
incomplete index entries (fill value 2**64-1) not counted, another HDF5 file rejected with
NotATrajectory, and the command line's exit codes. FLOW.h5 is a run with emitters and
outlets (tests/scenes/flow_rain.toml): its /flow rows must be consistent (per-frame counts are
the differences of the totals, the body count follows emitted − removed) and no body id may
reappear after it left; track() must follow bodies that arrive and leave. Exit 0 if all
hold, 1 otherwise.
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


def check_flow(path, expect):
    with talus_h5.load(path) as run:
        n = len(run)
        expect(sorted(run.flow) == sorted(talus_h5.FLOW_FIELDS), f"/flow fields {sorted(run.flow)}")
        if sorted(run.flow) != sorted(talus_h5.FLOW_FIELDS):
            return
        for what in ("emitted", "removed"):
            count, total = run.flow[what + "_count"], run.flow[what + "_total_count"]
            mass, total_mass = run.flow[what + "_mass"], run.flow[what + "_total_mass"]
            expect(count.shape == (n, 1), f"{what}_count shape {count.shape}, expected ({n}, 1)")
            expect(np.array_equal(np.cumsum(count, axis=0), total), f"{what}_count does not sum to the totals")
            expect(np.allclose(np.cumsum(mass, axis=0), total_mass, rtol=1e-12, atol=0),
                   f"{what}_mass does not sum to the totals")
            expect(total[0].sum() == 0, f"{what} totals of the initial frame are not 0")
        emitted = run.flow["emitted_total_count"][:, 0].astype(np.int64)
        removed = run.flow["removed_total_count"][:, 0].astype(np.int64)
        rows = run.frames.row_count.astype(np.int64)
        expect(np.array_equal(rows - rows[0], emitted - removed),
               f"body counts {rows.tolist()} do not follow emitted - removed")
        expect(removed[-1] > 0 and emitted[-1] == 120, f"emitted {emitted[-1]}, removed {removed[-1]}")
        gone, previous, reused = set(), set(), []
        for k in range(n):
            now = set(run.frame(k)["id"].tolist())
            gone |= previous - now
            reused += sorted(now & gone)
            previous = now
        expect(not reused, f"ids reused after their body left: {reused[:10]}")
        # track(): following bodies that arrive late and leave early, against a search of
        # every frame by hand; the ids in an order of their own
        early = int(run.frame(0)["id"][0]) if run.frames.row_count[0] else None
        late = int(run.frame(-1)["id"][-1])
        ids = [i for i in (late, min(gone) if gone else None, early) if i is not None]
        for field, width in (("position", 3), ("velocity", 3), ("radius", 1)):
            tracked = run.track(ids, field)
            expect(tracked.shape == (n, len(ids), width), f"track shape {tracked.shape}")
            for k in range(n):
                frame = run.frame(k)
                for j, body in enumerate(ids):
                    where = np.flatnonzero(frame["id"] == body)
                    want = (frame[field][where[0]].reshape(width) if len(where)
                            else np.full(width, np.nan))
                    expect(np.array_equal(tracked[k, j], want, equal_nan=True),
                           f"track {field} of body {body} in frame {k}: {tracked[k, j]} != {want}")
        expect(any(np.isnan(run.track([late])[:, 0, 0])) and not all(np.isnan(run.track([late])[:, 0, 0])),
               "the last emitted body should be missing from the early frames only")
        for bad in (([10**9], "position"), ([late], "no_such_column")):
            try:
                run.track(*bad)
                expect(False, f"track{bad} did not raise KeyError")
            except KeyError:
                pass
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        talus_h5.main(["talus_h5.py", path])
    expect("removed:" in out.getvalue() and "emitted:" in out.getvalue(),
           f"summary lacks the flow totals: {out.getvalue()!r}")


def main(argv):
    if len(argv) not in (3, 4):
        print("usage: check_talus_h5.py RUN.h5 SCRATCH_DIR [FLOW.h5]", file=sys.stderr)
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
        expect(run.flow == {}, f"a run without emitters or outlets has /flow data: {list(run.flow)}")

    if len(argv) == 4:
        check_flow(argv[3], expect)

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
    # the command is `talus info`'s, exit codes included: 4 for a file it cannot use
    expect(rc_other == 4, f"CLI on another HDF5 file exited {rc_other}, expected 4 (talus info)")
    expect(rc_missing == 4, f"CLI on a missing file exited {rc_missing}, expected 4 (talus info)")

    if problems:
        print("check_talus_h5:")
        for p in problems:
            print("  " + p)
        return 1
    print("check_talus_h5: all checks hold")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

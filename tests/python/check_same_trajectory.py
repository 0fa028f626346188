#!/usr/bin/python3
"""Two trajectories hold the same data, bit for bit.

    check_same_trajectory.py A.h5 B.h5            every dataset and attribute: dtype, shape,
                                                  filters, bytes
    check_same_trajectory.py A.h5 B.h5 --frames   the complete frames only (through
                                                  tools/talus_h5.py): index and body rows

Exit 0 if they match, 1 with the differences otherwise.
"""
import os
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import talus_h5  # noqa: E402


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind == "O" or b.dtype.kind == "O":
        return a.shape == b.shape and all(x == y for x, y in zip(a.ravel().tolist(), b.ravel().tolist()))
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def objects(f):
    out = {"/": f}
    f.visititems(lambda name, obj: out.__setitem__("/" + name, obj))
    return out


def compare_all(pa, pb, problems):
    with h5py.File(pa, "r") as fa, h5py.File(pb, "r") as fb:
        oa, ob = objects(fa), objects(fb)
        if sorted(oa) != sorted(ob):
            problems.append(f"objects differ: {sorted(set(oa) ^ set(ob))}")
        for name in sorted(set(oa) & set(ob)):
            a, b = oa[name], ob[name]
            if sorted(a.attrs) != sorted(b.attrs):
                problems.append(f"{name}: attributes {sorted(a.attrs)} vs {sorted(b.attrs)}")
            for k in set(a.attrs) & set(b.attrs):
                if not same(a.attrs[k], b.attrs[k]):
                    problems.append(f"{name}: attribute {k} differs")
            if isinstance(a, h5py.Dataset):
                if (a.dtype, a.shape, a.chunks, a.compression, a.compression_opts, a.shuffle) != \
                        (b.dtype, b.shape, b.chunks, b.compression, b.compression_opts, b.shuffle):
                    problems.append(f"{name}: storage differs")
                elif not same(a[()], b[()]):
                    problems.append(f"{name}: data differ")
        return len(oa)


def compare_frames(pa, pb, problems):
    with talus_h5.load(pa) as ra, talus_h5.load(pb) as rb:
        if len(ra) != len(rb):
            problems.append(f"complete frames: {len(ra)} vs {len(rb)}")
        for field in ("time", "step", "first_row", "row_count"):
            n = min(len(ra), len(rb))
            if not same(getattr(ra.frames, field)[:n], getattr(rb.frames, field)[:n]):
                problems.append(f"frame index {field} differs")
        for k in range(min(len(ra), len(rb))):
            fa, fb = ra.frame(k, native=True), rb.frame(k, native=True)
            for name in fa:
                if not same(fa[name], fb[name]):
                    problems.append(f"frame {k}: {name} differs")
        return len(ra)


def main(argv):
    if len(argv) not in (3, 4) or (len(argv) == 4 and argv[3] != "--frames"):
        print(__doc__, file=sys.stderr)
        return 2
    problems = []
    if len(argv) == 4:
        n = compare_frames(argv[1], argv[2], problems)
        what = f"{n} complete frames"
    else:
        n = compare_all(argv[1], argv[2], problems)
        what = f"{n} objects"
    if problems:
        print("\n".join(problems))
        return 1
    print(f"{argv[1]} and {argv[2]}: {what} identical")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

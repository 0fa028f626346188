#!/usr/bin/python3
"""Compare a trajectory, read through tools/talus_h5.py, with what the writer was given.

    check_readback.py RUN.h5 EXPECTED.txt

EXPECTED.txt is written by tests/unit/io/trajectory/test_writer.cpp, one record a line:
    attr NAME xHEX                 root string attribute (UTF-8 bytes, hex)
    override xHEX                  one --set string, in order
    material xHEX DENSITY FRICTION
    frame TIME STEP ROW_COUNT      followed by ROW_COUNT body lines
    body ID PX PY PZ QW QX QY QZ VX VY VZ WX WY WZ RADIUS MATERIAL
    diag STEP TIME CONTACTS ITERATIONS RESIDUAL KE PE WALL ENVELOPE CONVERGED
Doubles are printed with %.17g, so they parse back to the same bits; every float is compared
bitwise (so -0.0 differs from 0.0). Exit 0 if everything matches, 1 with a list otherwise.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import talus_h5  # noqa: E402


def unhex(token):
    assert token.startswith("x"), token
    return bytes.fromhex(token[1:]).decode("utf-8")


def parse(path):
    exp = {"attrs": {}, "overrides": [], "materials": [], "frames": [], "diag": []}
    for line in open(path, encoding="ascii"):
        t = line.split()
        if not t:
            continue
        kind = t[0]
        if kind == "attr":
            exp["attrs"][t[1]] = unhex(t[2])
        elif kind == "override":
            exp["overrides"].append(unhex(t[1]))
        elif kind == "material":
            exp["materials"].append((unhex(t[1]), float(t[2]), float(t[3])))
        elif kind == "frame":
            exp["frames"].append({"time": float(t[1]), "step": int(t[2]), "count": int(t[3]), "rows": []})
        elif kind == "body":
            exp["frames"][-1]["rows"].append(t[1:])
        elif kind == "diag":
            exp["diag"].append(t[1:])
        else:
            raise ValueError(f"unknown record {kind!r}")
    return exp


def bits(a):
    return np.ascontiguousarray(np.asarray(a, dtype=np.float64)).view(np.uint64)


class Checker:
    def __init__(self):
        self.problems = []

    def equal(self, what, got, want):
        if got != want:
            self.problems.append(f"{what}: got {got!r}, expected {want!r}")

    def same_bits(self, what, got, want):
        got = np.asarray(got)
        if got.dtype != np.float64:
            self.problems.append(f"{what}: dtype {got.dtype}, expected float64")
            return
        want = np.asarray(want, dtype=np.float64)
        if got.shape != want.shape:
            self.problems.append(f"{what}: shape {got.shape}, expected {want.shape}")
            return
        diff = np.flatnonzero(bits(got).ravel() != bits(want).ravel())
        if len(diff):
            i = diff[0]
            self.problems.append(f"{what}: {len(diff)} values differ, first at flat index {i}: "
                                 f"got {got.ravel()[i]!r}, expected {want.ravel()[i]!r}")

    def same_ints(self, what, got, want, dtype):
        got = np.asarray(got)
        if got.dtype != dtype:
            self.problems.append(f"{what}: dtype {got.dtype}, expected {np.dtype(dtype)}")
            return
        if got.shape != (len(want),) or not np.array_equal(got, np.array(want, dtype=dtype)):
            self.problems.append(f"{what}: got {got.tolist()}, expected {want}")


def check(h5_path, expected_path):
    exp = parse(expected_path)
    c = Checker()
    with talus_h5.load(h5_path) as run:
        a = run.attrs
        c.equal("format", a.get("format"), "talus-trajectory")
        c.equal("format_version", int(a.get("format_version", -1)), 1)
        c.equal("units", a.get("units"), "SI")
        c.equal("quaternion_convention", a.get("quaternion_convention"),
                "Hamilton, scalar first (w, x, y, z), body to world")
        for name, value in exp["attrs"].items():
            c.equal(f"attribute {name}", a.get(name), value)
        c.equal("overrides", list(a.get("overrides", [])), exp["overrides"])
        c.equal("material_names", list(a.get("material_names", [])), [m[0] for m in exp["materials"]])
        c.same_bits("material_density", a.get("material_density"), [m[1] for m in exp["materials"]])
        c.same_bits("material_friction", a.get("material_friction"), [m[2] for m in exp["materials"]])

        frames = exp["frames"]
        c.equal("number of frames", len(run), len(frames))
        c.same_bits("frames.time", run.frames.time, [f["time"] for f in frames])
        c.same_ints("frames.step", run.frames.step, [f["step"] for f in frames], np.uint64)
        c.same_ints("frames.row_count", run.frames.row_count, [f["count"] for f in frames], np.uint64)
        c.same_ints("frames.first_row", run.frames.first_row,
                    list(np.cumsum([0] + [f["count"] for f in frames])[:-1]), np.uint64)
        for k, f in enumerate(frames[:len(run)]):
            got = run.frame(k)
            rows = f["rows"]
            c.equal(f"frame {k} body lines", len(rows), f["count"])
            c.same_ints(f"frame {k} id", got["id"], [int(r[0]) for r in rows], np.uint64)
            vals = np.array([[float(x) for x in r[1:15]] for r in rows], dtype=np.float64).reshape(-1, 14)
            c.same_bits(f"frame {k} position", got["position"], vals[:, 0:3])
            c.same_bits(f"frame {k} orientation (w,x,y,z)", got["orientation"], vals[:, 3:7])
            c.same_bits(f"frame {k} velocity", got["velocity"], vals[:, 7:10])
            c.same_bits(f"frame {k} angular_velocity", got["angular_velocity"], vals[:, 10:13])
            c.same_bits(f"frame {k} radius", got["radius"], vals[:, 13])
            c.same_ints(f"frame {k} material", got["material"], [int(r[15]) for r in rows], np.uint32)
            c.equal(f"frame {k} time", float(got["time"]), f["time"])
            c.equal(f"frame {k} step", int(got["step"]), f["step"])
        if len(run):
            last = run.frame(-1)
            c.equal("frame(-1) is the last frame", int(last["step"]), int(run.frames.step[-1]))
            try:
                run.frame(len(run))
                c.problems.append("frame(len) did not raise IndexError")
            except IndexError:
                pass

        d = run.diagnostics
        want = exp["diag"]
        c.equal("diagnostic steps", len(d["step"]), len(want))
        if len(d["step"]) == len(want):
            col = lambda i: [r[i] for r in want]  # noqa: E731
            c.same_ints("diagnostics.step", d["step"], [int(x) for x in col(0)], np.uint64)
            c.same_bits("diagnostics.time", d["time"], [float(x) for x in col(1)])
            c.same_ints("diagnostics.contacts", d["contacts"], [int(x) for x in col(2)], np.uint32)
            c.same_ints("diagnostics.iterations", d["iterations"], [int(x) for x in col(3)], np.uint32)
            for i, name in enumerate(("residual", "kinetic_energy", "potential_energy",
                                      "solver_wall_time", "envelope"), start=4):
                c.same_bits(f"diagnostics.{name}", d[name], [float(x) for x in col(i)])
            c.same_ints("diagnostics.converged", d["converged"], [int(x) for x in col(9)], np.uint8)
    return c.problems


def main(argv):
    if len(argv) != 3:
        print("usage: check_readback.py RUN.h5 EXPECTED.txt", file=sys.stderr)
        return 2
    problems = check(argv[1], argv[2])
    if problems:
        print(f"check_readback: {argv[1]} differs from {argv[2]}:")
        for p in problems:
            print("  " + p)
        return 1
    print(f"check_readback: {argv[1]} matches {argv[2]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/python3
"""The /contacts rows of the simple cubic stack (tests/scenes/cubic_stack.toml), read back
with h5py through tools/talus_h5.py, against the stack's known answer.

    check_contacts_output.py RUN.h5

The scene: 2 × 2 columns of four touching steel beads (r = 0.01 m) on a frictionless floor,
at rest under gravity, dt fixed. In every column the contact under the k-th bead from the
top carries k beads' weight over the step, k m g dt; the 16 contacts between columns touch
(gap 0) but carry nothing; there is no friction. Checked in every frame after the first:
32 contacts (16 vertical, 4 of them on the floor; 16 between columns), each impulse to
1e-6 of m g dt, normals unit and from A to B, points between the centres, segments joining
the bodies' centres, ids that the frame holds, and the per-frame index consistent. Exit 0 if
all hold.
"""
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import talus_h5  # noqa: E402

R, DENSITY, G = 0.01, 7800.0, 9.81
WALL = np.uint64(2**64 - 1)


def main(argv):
    if len(argv) != 2:
        print("usage: check_contacts_output.py RUN.h5", file=sys.stderr)
        return 2
    problems = []

    def expect(cond, what):
        if not cond:
            problems.append(what)

    mass = DENSITY * 4.0 / 3.0 * math.pi * R**3
    with talus_h5.load(argv[1]) as run:
        expect(len(run) == 6, f"{len(run)} frames, expected 6")
        first = run.contacts(0)
        expect(first is not None and len(first["b"]) == 0, "frame 0 has contacts (none solved yet)")
        rows = run._file["contacts/first_row"][: len(run)] + run._file["contacts/row_count"][: len(run)]
        expect(np.all(run._file["contacts/first_row"][1 : len(run)] == rows[:-1]),
               "the frames' contact rows do not follow one another")
        for k in range(1, len(run)):
            c, body = run.contacts(k), run.frame(k)
            where = f"frame {k}"
            n = len(c["b"])
            expect(n == 32, f"{where}: {n} contacts, expected 32")
            if n != 32:
                continue
            weight = mass * G * c["dt"]
            expect(abs(c["dt"] - 1e-3) < 1e-15, f"{where}: dt {c['dt']}")
            pos = {int(i): p for i, p in zip(body["id"], body["position"])}
            top = max(p[2] for p in pos.values())
            on_wall = c["wall"] >= 0
            expect(np.array_equal(on_wall, c["a"] == WALL), f"{where}: wall rows and a = 2^64-1 disagree")
            expect(int(on_wall.sum()) == 4, f"{where}: {int(on_wall.sum())} floor contacts, expected 4")
            expect(np.allclose(np.linalg.norm(c["normal"], axis=1), 1.0, atol=1e-12), f"{where}: normals not unit")
            expect(np.all(np.abs(c["tangential_impulse"]) < 1e-12 * weight + 1e-30),
                   f"{where}: friction impulse on a frictionless stack")
            expect(np.all(np.abs(c["gap"]) < 1e-7), f"{where}: gaps {c['gap'].tolist()}")
            vertical = np.abs(c["normal"][:, 2]) > 0.999
            expect(int(vertical.sum()) == 16, f"{where}: {int(vertical.sum())} vertical contacts, expected 16")
            for j in range(n):
                b = int(c["b"][j])
                expect(b in pos, f"{where}: contact {j} names body {b}, not in the frame")
                if b not in pos:
                    continue
                if vertical[j]:
                    # beads from B (inclusive) to the top rest on this contact
                    above = round((top - pos[b][2]) / (2 * R)) + 1
                    want = above * weight
                    expect(abs(c["normal_impulse"][j] - want) <= 1e-6 * weight,
                           f"{where}: contact {j} under body {b}: impulse {c['normal_impulse'][j]}, "
                           f"expected {above} × m g dt = {want}")
                    expect(c["normal"][j][2] > 0, f"{where}: contact {j}: normal not from A (below) to B")
                else:
                    expect(abs(c["normal_impulse"][j]) <= 1e-6 * weight,
                           f"{where}: side contact {j} carries {c['normal_impulse'][j]}")
                # the segment joins the centres (A's end: the contact point on the floor)
                seg = c["segment"][j]
                expect(np.allclose(seg[1], pos[b], atol=1e-6), f"{where}: contact {j}: segment end {seg[1]} vs B {pos[b]}")
                if on_wall[j]:
                    expect(np.allclose(seg[0], c["point"][j], atol=1e-12), f"{where}: floor contact {j}: segment start")
                else:
                    a = int(c["a"][j])
                    expect(a in pos and np.allclose(seg[0], pos[a], atol=1e-6),
                           f"{where}: contact {j}: segment start {seg[0]} vs A")
                    expect(np.allclose(c["point"][j], 0.5 * (seg[0] + seg[1]), atol=1e-6),
                           f"{where}: contact {j}: point not midway between equal beads")
    if problems:
        print(f"check_contacts_output: {argv[1]}:")
        for p in problems[:40]:
            print("  " + p)
        return 1
    print(f"check_contacts_output: {argv[1]}: 32 contacts per frame, impulses k m g dt to 1e-6, "
          "geometry and ids consistent")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/python3
"""Writes the capsule bed of issue 22's survey (session 57), a scene with only its physics.

    /usr/bin/python3 benchmarks/capsule_bed.py /tmp/capsules.toml   # then: talus run /tmp/capsules.toml

3,000 capsules (radius 1 mm, 4 mm between the end-sphere centres, glass: 2500 kg/m³,
μ = 0.5, e = 0.3) at random orientations and positions in a 0.08 × 0.08 × 0.3 m box,
their bounding spheres apart, poured onto its floor for 0.6 s. Talus's fills take spheres
and clumps only, so the capsules are written as [[body]] entries (about 570 kB), which is
why the scene is made here and not kept. The bed found the explicit gyroscopic term's
runaway spin and the capsule pairs' missing end contacts (benchmarks/README.md, session 57).
"""
import math
import random
import sys

HEADER = """# Written by benchmarks/capsule_bed.py (issue 22, session 57): 3,000 capsules poured, only the physics.
[simulation]
duration = 0.6
gravity = [0.0, 0.0, -9.81]

[output]
path = "capsules.h5"
interval = 0.05

[[material]]
name = "glass"
density = 2500.0
friction = 0.5
restitution = 0.3

[[wall]]
type = "box"
min = [0.0, 0.0, 0.0]
max = [0.08, 0.08, 0.3]
material = "glass"
"""


def uniform_quaternion(rng):
    """A rotation drawn uniformly (Shoemake's method), as w, x, y, z."""
    u1, u2, u3 = rng.random(), rng.random(), rng.random()
    return (math.sqrt(u1) * math.cos(2 * math.pi * u3), math.sqrt(1 - u1) * math.sin(2 * math.pi * u2),
            math.sqrt(1 - u1) * math.cos(2 * math.pi * u2), math.sqrt(u1) * math.sin(2 * math.pi * u3))


def centres(rng, count, bound, lo, hi):
    """`count` points in the box [lo, hi], each 2 `bound` from the others (a hash grid)."""
    grid, points = {}, []
    for _ in range(2000 * count):
        if len(points) == count:
            return points
        p = [lo[k] + rng.random() * (hi[k] - lo[k]) for k in range(3)]
        cell = tuple(int(p[k] // (2 * bound)) for k in range(3))
        near = (q for dx in (-1, 0, 1) for dy in (-1, 0, 1) for dz in (-1, 0, 1)
                for q in grid.get((cell[0] + dx, cell[1] + dy, cell[2] + dz), ()))
        if all(sum((p[k] - q[k]) ** 2 for k in range(3)) >= (2.0001 * bound) ** 2 for q in near):
            grid.setdefault(cell, []).append(p)
            points.append(p)
    sys.exit("capsule_bed.py: the capsules do not fit")


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__)
    rng = random.Random(11)
    radius, length = 0.001, 0.004
    bound = radius + length / 2
    text = HEADER
    for p in centres(rng, 3000, bound, [bound + 5e-4] * 3, [0.08 - bound - 5e-4] * 2 + [0.25]):
        q = uniform_quaternion(rng)
        text += ('\n[[body]]\nshape = "capsule"\nradius = %g\nlength = %g\nmaterial = "glass"\n'
                 'position = [%.7f, %.7f, %.7f]\norientation = [%.9f, %.9f, %.9f, %.9f]\n'
                 % (radius, length, p[0], p[1], p[2], *q))
    with open(argv[1], "w") as f:
        f.write(text)


if __name__ == "__main__":
    main(sys.argv)

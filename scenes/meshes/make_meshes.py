#!/usr/bin/python3
"""Writes the STL meshes the example scenes use (ASCII STL, metres, normals up):

  heap_plate.stl  the plate a heap is poured on: a disc of radius 40 mm in z = 0
  chute_base.stl  the rough base of the periodic chute: square pyramids 4 mm wide and 2 mm
                  high (tops at z = 0), tiling x in [-8, 88] mm and y in [-8, 48] mm; their
                  period divides the chute's periodic box (80 x 40 mm), and the margin lets
                  a grain straddling a periodic face feel the pyramids on both sides

    /usr/bin/python3 scenes/meshes/make_meshes.py      (rewrites them beside this script)
"""
import math
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def normal(a, b, c):
    u = [b[i] - a[i] for i in range(3)]
    v = [c[i] - a[i] for i in range(3)]
    n = (u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0])
    length = math.sqrt(sum(x * x for x in n))
    return tuple(x / length + 0.0 for x in n)  # + 0.0: no "-0" in the file


def write_stl(path, name, triangles):
    with open(path, "w") as f:
        f.write(f"solid {name}\n")
        for a, b, c in triangles:
            n = normal(a, b, c)
            f.write(f"  facet normal {n[0]:.9g} {n[1]:.9g} {n[2]:.9g}\n    outer loop\n")
            for p in (a, b, c):
                f.write(f"      vertex {p[0]:.9g} {p[1]:.9g} {p[2]:.9g}\n")
            f.write("    endloop\n  endfacet\n")
        f.write(f"endsolid {name}\n")


def ring(r, n):
    return [(r * math.cos(2 * math.pi * k / n), r * math.sin(2 * math.pi * k / n), 0.0) for k in range(n)]


def disc(r, n):
    rim = ring(r, n)
    return [((0.0, 0.0, 0.0), rim[k], rim[(k + 1) % n]) for k in range(n)]


def pyramids(x0, x1, y0, y1, width, height):
    """Square pyramids of base `width` and `height`, apexes at z = 0, bases at z = -height,
    on the cells of [x0, x1] x [y0, y1]; four faces each, counter-clockwise seen from above."""
    tris = []
    nx, ny = round((x1 - x0) / width), round((y1 - y0) / width)
    z = -height
    for i in range(nx):
        for j in range(ny):
            xa, ya = x0 + i * width, y0 + j * width
            xb, yb = xa + width, ya + width
            apex = (xa + 0.5 * width, ya + 0.5 * width, 0.0)
            c00, c10, c11, c01 = (xa, ya, z), (xb, ya, z), (xb, yb, z), (xa, yb, z)
            tris += [(c00, c10, apex), (c10, c11, apex), (c11, c01, apex), (c01, c00, apex)]
    return tris


if __name__ == "__main__":
    write_stl(os.path.join(HERE, "heap_plate.stl"), "heap_plate", disc(0.04, 96))
    write_stl(os.path.join(HERE, "chute_base.stl"), "chute_base",
              pyramids(-0.008, 0.088, -0.008, 0.048, 0.004, 0.002))

#!/usr/bin/python3
"""Writes the STL meshes the example scenes use (ASCII STL, metres, normals up):

  silo_floor.stl  the flat floor of the silo: an annulus, inner radius 12 mm (the orifice,
                  24 mm across), outer radius 50 mm, in the plane z = 0
  heap_plate.stl  the plate a heap is poured on: a disc of radius 40 mm in z = 0

    /usr/bin/python3 scenes/meshes/make_meshes.py      (rewrites both beside this script)
"""
import math
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def write_stl(path, name, triangles):
    with open(path, "w") as f:
        f.write(f"solid {name}\n")
        for a, b, c in triangles:
            f.write("  facet normal 0 0 1\n    outer loop\n")
            for p in (a, b, c):
                f.write(f"      vertex {p[0]:.9g} {p[1]:.9g} {p[2]:.9g}\n")
            f.write("    endloop\n  endfacet\n")
        f.write(f"endsolid {name}\n")


def ring(r, n):
    return [(r * math.cos(2 * math.pi * k / n), r * math.sin(2 * math.pi * k / n), 0.0) for k in range(n)]


def annulus(r_in, r_out, n):
    inner, outer = ring(r_in, n), ring(r_out, n)
    tris = []
    for k in range(n):
        j = (k + 1) % n
        tris.append((inner[k], outer[k], outer[j]))  # counter-clockwise seen from +z
        tris.append((inner[k], outer[j], inner[j]))
    return tris


def disc(r, n):
    rim = ring(r, n)
    return [((0.0, 0.0, 0.0), rim[k], rim[(k + 1) % n]) for k in range(n)]


if __name__ == "__main__":
    write_stl(os.path.join(HERE, "silo_floor.stl"), "silo_floor", annulus(0.012, 0.05, 96))
    write_stl(os.path.join(HERE, "heap_plate.stl"), "heap_plate", disc(0.04, 96))

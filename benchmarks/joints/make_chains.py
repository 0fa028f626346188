#!/usr/bin/python3
"""Writes a joint-heavy scene for speed comparisons: a square curtain of hanging chains.

benchmarks/joints/make_chains.py [--side N] [--links K] > chains.toml

N × N chains of K steel spheres (radius 5 mm) each, linked by spherical joints at the
midpoints, the top sphere jointed to the world. Each chain starts straight but tilted
30° from the vertical, all in the same direction, with 11 mm between neighbouring chains,
so they swing down together and knock into each other: contacts and joint rows in the same
colours. A fixed step (dt) so that any two builds take the same steps.
"""
import argparse
import math

parser = argparse.ArgumentParser()
parser.add_argument("--side", type=int, default=30, help="chains per side of the square")
parser.add_argument("--links", type=int, default=12, help="spheres per chain")
parser.add_argument("--duration", type=float, default=0.3)
args = parser.parse_args()

r = 0.005
link = 2.2 * r            # centre-to-centre distance along a chain: a 1 mm gap [m]
pitch = 0.011             # between neighbouring chains [m]
tilt = math.radians(30.0)
top = 1.0
print(f"""# {args.side}x{args.side} hanging chains of {args.links} spheres, spherical joints
# (written by benchmarks/joints/make_chains.py)
[simulation]
dt = 1e-3
duration = {args.duration}
gravity = [0, 0, -9.81]

[solver]
type = "pgs"
max_iterations = 100
tolerance = 1e-4

[output]
path = "chains.h5"
interval = 0.05

[[material]]
name = "steel"
density = 7800
friction = 0.3
""")
body = 0
for i in range(args.side):
    for j in range(args.side):
        x0, y0 = i * pitch, j * pitch
        prev = None
        for k in range(args.links):
            s = (k + 1) * link
            x = x0 + s * math.sin(tilt)
            z = top - s * math.cos(tilt)
            print(f"[[body]]\nshape = \"sphere\"\nradius = {r}\nmaterial = \"steel\"\nposition = [{x:.6f}, {y0:.6f}, {z:.6f}]\n")
            if prev is None:
                print(f"[[joint]]\ntype = \"spherical\"\nbody_a = {body}\nbody_b = \"world\"\nanchor = [{x0:.6f}, {y0:.6f}, {top:.6f}]\n")
            else:
                ax = x0 + (s - 0.5 * link) * math.sin(tilt)
                az = top - (s - 0.5 * link) * math.cos(tilt)
                print(f"[[joint]]\ntype = \"spherical\"\nbody_a = {body}\nbody_b = {prev}\nanchor = [{ax:.6f}, {y0:.6f}, {az:.6f}]\n")
            prev = body
            body += 1

#!/usr/bin/python3
"""Beds in regimes the named ones do not test, each run with only its physics.

Issue 22 says another bed, which nobody has seen, will be checked with the defaults. This
script writes small scenes that each change one thing from a base pour (grain size,
gravity, density, restitution, friction, rolling resistance, ellipsoids, rods) or the container
(a cylinder, periodic axes, a cone hopper, two materials with a [[friction_pair]], a
descending piston, a rotating drum of ellipsoids),
runs them with the defaults, and prints what the goals ask of every bed: the run's exit
code, its time, the share of converged steps, the largest overlap against the smallest
diameter and the final kinetic energy. It looks for defects (an exit 3, an overlap above
1 %, a bed not at rest), not for speed: each run is a few seconds, one at a time.

    /usr/bin/python3 benchmarks/survey_regimes.py                      # every bed, build/bin/talus
    /usr/bin/python3 benchmarks/survey_regimes.py --only base periodic --binary /tmp/talus_old

Results of 2026-12-07: benchmarks/README.md, "Session 64", "Session 65" and "Session 66".
"""
import argparse
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
from settle_benchmark import seconds  # noqa: E402

MATERIAL = """[[material]]
name = "m"
density = {rho}
friction = {mu}
restitution = {e}
{extra}
"""


def header(name, duration, g=9.81, interval=None):
    return f"""[simulation]
duration = {duration}
gravity = [0.0, 0.0, {-g}]
[output]
path = "{name}.h5"
interval = {interval or round(duration / 10, 9)}
"""


def box_pour(name, r, L, H, n, duration, g=9.81, rho=2500, mu=0.5, e=0.3, extra="", grain=None, pad=2.1):
    """n grains placed at random in an L × L × H box and left to fall, each `pad` × r clear of
    the walls: spheres of radius r, or the `grain` lines of [[particles]] (shape and size)."""
    m = pad * r
    grain = grain or f'shape = "sphere"\nmaterial = "m"\nradius = {r}'
    return (header(name, duration, g) + MATERIAL.format(rho=rho, mu=mu, e=e, extra=extra) + f"""
[[wall]]
type = "box"
min = [0.0, 0.0, 0.0]
max = [{L}, {L}, {H}]
material = "m"
[[particles]]
{grain}
random = {{ min = [{m}, {m}, {m}], max = [{L - m}, {L - m}, {H - m}], count = {n}, seed = 1 }}
""")


def base(name, **kw):
    """The base: 5,000 glass grains of 1.5 mm in a 5 × 5 × 15 cm box, 0.3 s."""
    args = dict(r=0.0015, L=0.05, H=0.15, n=5000, duration=0.3)
    args.update(kw)
    return box_pour(name, **args)


def ellipsoid_pour(name, semi_axes, bound, n):
    """n glass ellipsoids of the given semi-axes (largest `bound`) in a 5 × 5 × 20 cm box, 0.5 s."""
    grain = f'shape = "ellipsoid"\nsemi_axes = {semi_axes}\nmaterial = "m"'
    return box_pour(name, bound, 0.05, 0.2, n, 0.5, grain=grain, pad=1.05)


GLASS = MATERIAL.format(rho=2500, mu=0.5, e=0.3, extra="")
FLOOR = """[[wall]]
type = "plane"
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
material = "m"
"""
PERIODIC_XY = """[periodic]
x = [0.0, 0.04]
y = [0.0, 0.04]
"""

# a conical hopper (outlet 16 mm across at z = 2 cm) under a cylinder, grains leaving below
HOPPER = """
[[wall]]
type = "cone"
start = [0.0, 0.0, 0.02]
end = [0.0, 0.0, 0.08]
start_radius = 0.008
end_radius = 0.04
material = "m"
[[wall]]
type = "cylinder"
point = [0.0, 0.0, 0.15]
axis = [0.0, 0.0, 1.0]
radius = 0.04
length = 0.14
inside = true
material = "m"
[[outlet]]
type = "plane"
point = [0.0, 0.0, -0.05]
normal = [0.0, 0.0, 1.0]
"""

SCENES = {
    "base": lambda n: base(n),
    "fine": lambda n: box_pour(n, 0.00025, 0.016, 0.05, 6000, 0.2),
    "gravel": lambda n: box_pour(n, 0.010, 0.6, 2.0, 4000, 1.0),
    "lunar": lambda n: base(n, g=1.62, duration=0.6),
    "steel_e0": lambda n: base(n, rho=7800, e=0.0),
    "e0": lambda n: base(n, e=0.0),
    "frictionless": lambda n: base(n, mu=0.0),
    "rolling": lambda n: base(n, extra="rolling_friction = 0.00015"),
    "rolling_slip": lambda n: base(n, extra="rolling_friction = 0.1"),  # LIGGGHTS's η as a length
    "plastic": lambda n: box_pour(n, 0.002, 0.06, 0.2, 4000, 0.35, rho=1050, mu=0.8, e=0.5),
    "cylinder_lognormal": lambda n: header(n, 0.4) + GLASS + """
[[wall]]
type = "cylinder"
point = [0.0, 0.0, 0.1]
axis = [0.0, 0.0, 1.0]
radius = 0.03
inside = true
material = "m"
""" + FLOOR + """[[particles]]
shape = "sphere"
material = "m"
radius = { distribution = "lognormal", median = 0.001, sigma = 0.4, min = 0.0004, max = 0.003 }
random = { min = [-0.02, -0.02, 0.004], max = [0.02, 0.02, 0.15], count = 6000, seed = 1 }
""",
    "periodic": lambda n: header(n, 0.35) + PERIODIC_XY + GLASS + "\n" + FLOOR + """[[particles]]
shape = "sphere"
material = "m"
radius = { distribution = "uniform", min = 0.001, max = 0.002 }
random = { min = [0.0, 0.0, 0.003], max = [0.04, 0.04, 0.15], count = 3000, seed = 1 }
""",
    "hopper": lambda n: header(n, 0.8) + GLASS + HOPPER + """[[particles]]
shape = "sphere"
material = "m"
radius = 0.0015
random = { min = [-0.025, -0.025, 0.09], max = [0.025, 0.025, 0.21], count = 4000, seed = 1 }
""",
    # rods through the same hopper (session 67: capsules collide with cones and orifices):
    # 1,200 capsules of 2 mm diameter and 6 mm overall; the outlet is 16 mm across
    "hopper_rods": lambda n: header(n, 0.8) + GLASS + HOPPER + """[[particles]]
shape = "capsule"
material = "m"
radius = 0.001
length = 0.004
random = { min = [-0.025, -0.025, 0.09], max = [0.025, 0.025, 0.21], count = 1200, seed = 1 }
""",
    # clumps, rods and ellipsoids together (session 67: every pair of shapes has a routine):
    # 300 dumbbells of two 3 mm spheres, 300 rods 2 mm × 6 mm, 300 ellipsoids 6 × 4 × 3 mm
    "mixed_shapes": lambda n: header(n, 0.5) + GLASS + """
[[wall]]
type = "box"
min = [-0.025, -0.025, 0.0]
max = [0.025, 0.025, 0.3]
material = "m"
[[particles]]
shape = "clump"
spheres = [[-0.0015, 0, 0, 0.0015], [0.0015, 0, 0, 0.0015]]
material = "m"
random = { min = [-0.022, -0.022, 0.003], max = [0.022, 0.022, 0.25], count = 300, seed = 1 }
[[particles]]
shape = "capsule"
radius = 0.001
length = 0.004
material = "m"
random = { min = [-0.022, -0.022, 0.003], max = [0.022, 0.022, 0.25], count = 300, seed = 2 }
[[particles]]
shape = "ellipsoid"
semi_axes = [0.003, 0.002, 0.0015]
material = "m"
random = { min = [-0.022, -0.022, 0.003], max = [0.022, 0.022, 0.25], count = 300, seed = 3 }
""",
    "two_materials": lambda n: header(n, 0.3) + """[[material]]
name = "glass"
density = 2500
friction = 0.3
restitution = 0.5
[[material]]
name = "rubber"
density = 1100
friction = 0.9
restitution = 0.1
[[friction_pair]]
materials = ["glass", "rubber"]
friction = 0.6
restitution = 0.2
[[wall]]
type = "box"
min = [0.0, 0.0, 0.0]
max = [0.05, 0.05, 0.15]
material = "glass"
[[particles]]
shape = "sphere"
material = "glass"
radius = 0.0015
random = { min = [0.002, 0.002, 0.002], max = [0.048, 0.048, 0.148], count = 2500, seed = 1 }
[[particles]]
shape = "sphere"
material = "rubber"
radius = 0.0025
random = { min = [0.003, 0.003, 0.003], max = [0.047, 0.047, 0.147], count = 500, seed = 2 }
""",
    # grains rained from an emitter over a period onto a plane: one landing step left a 2 mm
    # grain 91 µm (4.6 % of d) in the floor (README, "Session 64": a struck grain's margin)
    "periodic_emitter": lambda n: header(n, 0.4) + PERIODIC_XY + GLASS + "\n" + FLOOR + """[[emitter]]
material = "m"
radius = { distribution = "uniform", min = 0.001, max = 0.002 }
rate = 10000
min = [0.0, 0.0, 0.05]
max = [0.04, 0.04, 0.06]
stop = 0.2
seed = 3
""",
    # ellipsoid beds (session 65: ellipsoid pairs and fills): triaxial 6 × 4 × 3 mm grains,
    # and oblate "lentils" 5 × 5 × 2 mm, poured into a box at random orientations
    "ellipsoids": lambda n: ellipsoid_pour(n, "[0.003, 0.002, 0.0015]", 0.003, 1500),
    "lentils": lambda n: ellipsoid_pour(n, "[0.0025, 0.0025, 0.001]", 0.0025, 1500),
    # rods (session 66: capsule fills): 1,500 capsules of 2 mm diameter and 6 mm overall,
    # poured into the ellipsoids' box at random orientations
    "rods": lambda n: box_pour(n, 0.003, 0.05, 0.2, 1500, 0.5, pad=1.05,
                               grain='shape = "capsule"\nradius = 0.001\nlength = 0.004\nmaterial = "m"'),
    # a rotating drum of ellipsoids (session 66: cylinders collide with every shape): radius
    # 4 cm, 4 cm long between two planes, turning at 2 rad/s; flowing, so not at rest
    "drum_ellipsoids": lambda n: header(n, 1.0) + GLASS + """
[[wall]]
type = "cylinder"
point = [0.0, 0.0, 0.0]
axis = [0.0, 1.0, 0.0]
radius = 0.04
inside = true
material = "m"
motion = { type = "rotation", centre = [0.0, 0.0, 0.0], axis = [0.0, 1.0, 0.0], omega = 2.0 }
[[wall]]
type = "plane"
point = [0.0, -0.02, 0.0]
normal = [0.0, 1.0, 0.0]
material = "m"
[[wall]]
type = "plane"
point = [0.0, 0.02, 0.0]
normal = [0.0, -1.0, 0.0]
material = "m"
[[particles]]
shape = "ellipsoid"
semi_axes = [0.003, 0.002, 0.0015]
material = "m"
random = { min = [-0.027, -0.017, -0.027], max = [0.027, 0.017, 0.027], count = 250, seed = 1 }
""",
    # a velocity-driven lid reaching a rigid pack: expected to stop with exit 3 and say why
    "piston": lambda n: header(n, 1.3) + GLASS + """
[[wall]]
type = "box"
min = [0.0, 0.0, 0.0]
max = [0.03, 0.03, 0.2]
material = "m"
[[wall]]
type = "plane"
point = [0.0, 0.0, 0.05]
normal = [0.0, 0.0, -1.0]
velocity = [0.0, 0.0, -0.02]
material = "m"
[[particles]]
shape = "sphere"
material = "m"
radius = 0.0015
random = { min = [0.0016, 0.0016, 0.0016], max = [0.0284, 0.0284, 0.045], count = 900, seed = 1 }
""",
}


def run(binary, out_dir, name, threads):
    scene = os.path.join(out_dir, name + ".toml")
    with open(scene, "w") as f:
        f.write(SCENES[name](name))
    cmd = [binary, "run", "--force", "--threads", str(threads), scene, "-o", os.path.join(out_dir, name + ".h5")]
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - t0
    err = p.stderr
    conv = re.search(r"steps converged \((\S+ %)\)", err)
    pen = re.search(r"largest penetration \S+ m \(([^)]*) of the smallest diameter\)", err)
    ke = re.search(r"kinetic energy at the end (\S+ J)", err)
    steps = re.search(r"steps: ([\d,]+) in ([\d.,]+ (?:µs|ms|s)) ", err)
    note = ""
    if p.returncode != 0:
        lines = [l for l in err.splitlines() if l.startswith("talus:") or l.startswith(scene)]
        note = (lines[-1] if lines else err.strip().splitlines()[-1])[:160]
    return {"bed": name, "exit": p.returncode, "time": f"{seconds(steps.group(2)):.1f} s" if steps else f"{wall:.1f} s",
            "converged": conv.group(1) if conv else "-", "overlap": pen.group(1) if pen else "-",
            "final KE": ke.group(1) if ke else "-", "note": note}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "bin", "talus"))
    ap.add_argument("--out", default="/tmp/survey_regimes", help="where the scenes and runs go")
    ap.add_argument("--only", nargs="*", choices=sorted(SCENES), help="these beds only")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    names = args.only or list(SCENES)
    cols = ["bed", "exit", "time", "converged", "overlap", "final KE", "note"]
    print("| " + " | ".join(cols) + " |")
    print("|" + " --- |" * len(cols))
    for name in names:
        row = run(args.binary, args.out, name, args.threads)
        print("| " + " | ".join(str(row[c]) for c in cols) + " |", flush=True)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""The contact measurements of tools/talus_measure.py (coordination, stress,
force-distribution, force-chains) against known answers.

    check_contact_measures.py TALUS_MEASURE STACK.h5 NO_CONTACTS.h5 OUTDIR

STACK.h5 is tests/scenes/cubic_stack.toml run by talus: 2 x 2 frictionless columns of four
steel beads (r = 0.01 m) on a floor, at rest. Its answers: 12 loaded contacts between beads
(Z = 24/16 = 1.5; 8 rattlers below two contacts), 28 touching ones and 4 on the floor (Z =
60/16 = 3.75 by gap with walls); Love-Weber stress of the box holding the stack: only
sigma_zz = m g / (2 r^2) (the mean overburden), every other component 0; normal forces 1, 2
and 3 m g, four each, <f> = 2 m g. On arrays: a bead resting on a fixed bead (a two-sphere
contact) gives sigma_zz = m g r / V and nothing else; two free beads pressed together give
f l / V along their line; an exponential sample gives a tail decay rate of 1. NO_CONTACTS.h5
is a run without [output] contacts: each tool refuses it, naming the key. Exit 0 if all hold.
"""
import math
import os
import subprocess
import sys

import numpy as np

R, DENSITY, G = 0.01, 7800.0, 9.81


def main(argv):
    if len(argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    tool, stack, bare, out = argv[1:]
    os.makedirs(out, exist_ok=True)
    sys.path.insert(0, os.path.dirname(os.path.abspath(tool)))
    import talus_measure as tm
    import talus_h5
    problems = []

    def expect(cond, what):
        if not cond:
            problems.append(what)

    def close(got, want, rel, what):
        expect(abs(got - want) <= rel * abs(want), f"{what}: {got}, expected {want} (to {rel:g})")

    m = DENSITY * 4.0 / 3.0 * math.pi * R**3
    with talus_h5.load(stack) as run:
        c, f = run.contacts(-1), run.frame(-1)
    z, z_m, counts, rattlers = tm.coordination(f["id"], c, tm.touching(c, "force"))
    close(z, 1.5, 1e-12, "Z by force")
    close(z_m, 2.0, 1e-12, "Z_m by force (the middle beads)")
    close(rattlers, 0.5, 1e-12, "rattler fraction by force (top and bottom beads)")
    z, _, _, _ = tm.coordination(f["id"], c, tm.touching(c, "gap", 1e-7), walls=True)
    close(z, 3.75, 1e-12, "Z by gap with the floor")
    sigma = tm.love_weber_stress(c, [0, 0, 0], [0.04, 0.04, 0.08])
    want = m * G / (2 * R * R)
    close(sigma[2, 2], want, 1e-6, "sigma_zz of the stack")
    off = sigma.copy()
    off[2, 2] = 0.0
    expect(np.abs(off).max() <= 1e-9 * want, f"stack: other stress components {off.tolist()}")
    fn = c["normal_impulse"][(c["normal_impulse"] > 0) & (c["wall"] < 0)] / c["dt"]
    _, _, mean, _, _ = tm.force_distribution(fn)
    close(mean, 2 * m * G, 1e-6, "<f> between beads")
    expect(np.allclose(np.sort(fn), np.repeat([1, 2, 3], 4) * m * G, rtol=1e-6), f"forces {np.sort(fn)}")

    # a two-sphere contact: B (free, above) rests on A (fixed, its end is the contact point)
    dt = 1e-3
    two = {"wall": np.array([-1]), "a": np.array([7], np.uint64), "b": np.array([8], np.uint64),
           "point": np.array([[0.0, 0.0, 0.0]]), "normal": np.array([[0.0, 0.0, 1.0]]),
           "gap": np.array([0.0]), "normal_impulse": np.array([m * G * dt]),
           "tangential_impulse": np.zeros((1, 3)),
           "segment": np.array([[[0.0, 0.0, 0.0], [0.0, 0.0, R]]]), "dt": dt}
    lo, hi = np.array([-R, -R, -R]), np.array([R, R, 2 * R])
    sigma = tm.love_weber_stress(two, lo, hi)
    V = float(np.prod(hi - lo))
    close(sigma[2, 2], m * G * R / V, 1e-12, "two spheres, one fixed: sigma_zz")
    off = sigma.copy()
    off[2, 2] = 0.0
    expect(np.abs(off).max() == 0.0, f"two spheres: other components {off.tolist()}")
    z, _, _, _ = tm.coordination([8], two, tm.touching(two), walls=True)
    close(z, 1.0, 0, "two spheres: the free one's contacts")
    # two free beads pressed together along x by F: the pair adds F 2R / V to sigma_xx
    F = 3.0
    pair = dict(two, normal=np.array([[1.0, 0.0, 0.0]]), normal_impulse=np.array([F * dt]),
                point=np.array([[R, 0.0, 0.0]]), segment=np.array([[[0.0, 0.0, 0.0], [2 * R, 0.0, 0.0]]]))
    lo, hi = np.array([-R, -R, -R]), np.array([3 * R, R, R])
    sigma = tm.love_weber_stress(pair, lo, hi)
    close(sigma[0, 0], F * 2 * R / float(np.prod(hi - lo)), 1e-12, "two free beads: sigma_xx")
    # only B in the box: its half of the pair
    sigma_half = tm.love_weber_stress(pair, np.array([R, -R, -R]), np.array([3 * R, R, R]))
    close(sigma_half[0, 0], F * R / (2 * R * 2 * R * 2 * R), 1e-12, "one of two beads: sigma_xx")
    # the tail of an exponential distribution
    sample = np.random.default_rng(1).exponential(1.0, 200000)
    _, _, _, beta, _ = tm.force_distribution(sample, bins=40)
    close(beta, 1.0, 0.1, "tail decay rate of an exponential sample")

    # the command lines: figures and PNGs; and a file without contacts is refused by name
    runs = {"coordination": ["--by", "gap", "--gap-tolerance", "1e-7", "--walls"],
            "stress": ["--min", "0 0 0", "--max", "0.04 0.04 0.08"],
            "force-distribution": [], "force-chains": ["--view", "x"]}
    for name, extra in runs.items():
        png = os.path.join(out, f"{name}.png")
        r = subprocess.run(["/usr/bin/python3", tool, name, stack, "--png", png] + extra,
                           capture_output=True, text=True)
        drawn = os.path.exists(png) and os.path.getsize(png) > 1000
        expect(r.returncode == 0 and drawn, f"{name}: exit {r.returncode}, {r.stderr.strip()}")
        if name == "coordination":
            expect("Z = 3.7500" in r.stdout, f"coordination: {r.stdout.strip()}")
        if name == "stress":
            expect(f"{want:.6g}" in r.stdout, f"stress: {r.stdout.strip()} lacks {want:.6g}")
        r = subprocess.run(["/usr/bin/python3", tool, name, bare] + extra, capture_output=True, text=True)
        expect(r.returncode != 0 and "output.contacts=true" in r.stderr,
               f"{name} on a file without contacts: exit {r.returncode}, {r.stderr.strip()}")
    if problems:
        print("check_contact_measures:")
        for p in problems:
            print("  " + p)
        return 1
    print("check_contact_measures: coordination, Love-Weber stress, force distribution and force "
          "chains agree with the stack, the two-sphere contacts and the exponential sample")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/python3
"""A scene that starts from a frame of an earlier run ([start] from, frame).

    check_branch.py TALUS SOURCE.h5 BRANCH.toml OUTDIR

SOURCE.h5 is a run of tests/scenes/staged_gate.toml; BRANCH.toml (tests/scenes/
branch_gate.toml) starts from its frame 2 without the gate, in the box tilted. Checks: the branch run under two
friction values (--set material.glass.friction=0.2, 0.8) has a first frame, at t = 0, that
equals the source's frame 2 bit for bit (ids, positions, orientations, velocities, angular
velocities, radii, materials); the two runs then differ, and the same branch run twice gives
the same bits. Refused with exit 2 and the scene line and key: a frame out of range
(start.frame), a file that is not there (start.from), a material the branch lacks, and a
[start] beside [[particles]]. From a checkpoint: a branch run with checkpoints leaves one of
its end state, and a scene starting from it has that state as its first frame bit for bit;
refused: frame with a checkpoint, and a run whose trajectory or checkpoint would be written
over the file it starts from. Exit 0 if all hold.
"""
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import talus_h5  # noqa: E402

FIELDS = ("id", "position", "orientation", "velocity", "angular_velocity", "radius", "material")


def main(argv):
    if len(argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    talus, source, scene, out = argv[1:]
    os.makedirs(out, exist_ok=True)
    problems = []

    def expect(cond, what):
        if not cond:
            problems.append(what)

    def run(name, *sets):
        path = os.path.join(out, name + ".h5")
        r = subprocess.run([talus, "run", scene, "-o", path, "--force", "--quiet",
                            "--set", f"start.from={source}", *[a for s in sets for a in ("--set", s)]],
                           capture_output=True, text=True)
        return r, path

    with talus_h5.load(source) as src:
        want = src.frame(2, native=True)
    ends = {}
    for mu in ("0.2", "0.8"):
        r, path = run(f"mu{mu}", f"material.glass.friction={mu}")
        expect(r.returncode == 0, f"friction {mu}: exit {r.returncode}: {r.stderr.strip()}")
        if r.returncode != 0:
            continue
        with talus_h5.load(path) as b:
            first = b.frame(0, native=True)
            expect(first["time"] == 0.0, f"friction {mu}: first frame at t = {first['time']}")
            for name in FIELDS:
                expect(first[name].dtype == want[name].dtype and np.array_equal(first[name], want[name]),
                       f"friction {mu}: first frame's {name} differs from the source's frame 2")
            ends[mu] = b.frame(-1)["position"]
    if len(ends) == 2:
        expect(not np.array_equal(ends["0.2"], ends["0.8"]), "the two friction values end the same")
    r, again = run("mu0.2_again", "material.glass.friction=0.2")
    if r.returncode == 0 and "0.2" in ends:
        with talus_h5.load(again) as b:
            expect(np.array_equal(b.frame(-1)["position"], ends["0.2"]), "the same branch run twice differs")

    refusals = [
        ("start.frame", ["start.frame=10"]),
        ("start.from", [f"start.from={os.path.join(out, 'missing.h5')}"]),
        # the source's beads are of 'glass', which the branch no longer defines
        ("does not define", ["material.glass.name=sand", "wall.0.material=sand"]),
    ]
    for key, sets in refusals:
        r = subprocess.run([talus, "run", scene, "-o", os.path.join(out, "refused.h5"), "--force", "--quiet",
                            "--set", f"start.from={source}"] + [a for s in sets for a in ("--set", s)],
                           capture_output=True, text=True)
        # a key set by --set is named by its override, the others by the scene's line
        named = key in r.stderr and ("branch_gate.toml:" in r.stderr or "--set" in r.stderr)
        expect(r.returncode == 2 and named, f"{sets}: exit {r.returncode}, {r.stderr.strip()}")
    with open(scene, encoding="utf-8") as f:
        text = f.read()
    mixed = os.path.join(out, "mixed.toml")
    with open(mixed, "w", encoding="utf-8") as f:
        f.write(text + '\n[[particles]]\nshape = "sphere"\nradius = 0.005\nmaterial = "glass"\n'
                       'lattice = { min = [0.01, 0.01, 0.15], max = [0.02, 0.02, 0.16], spacing = 0.011 }\n')
    r = subprocess.run([talus, "check", mixed, "--set", f"start.from={source}"], capture_output=True, text=True)
    expect(r.returncode == 2 and "particles" in r.stderr and "[start]" in r.stderr,
           f"[start] with [[particles]]: exit {r.returncode}, {r.stderr.strip()}")
    # From a checkpoint: a branch run that keeps checkpoints leaves one of its end state,
    # which a third scene starts from, at the branch's last frame bit for bit.
    r, settled = run("settled", "material.glass.friction=0.8", "output.checkpoint_interval=0.1")
    ck = settled[:-3] + ".checkpoint.h5"
    expect(r.returncode == 0 and os.path.exists(ck), f"run with checkpoints: exit {r.returncode}, {ck}")
    start_at = text.index("[start]")
    block_end = text.index("[output]")
    from_ck = os.path.join(out, "from_checkpoint.toml")
    with open(from_ck, "w", encoding="utf-8") as f:
        f.write(text[:start_at] + f'[start]\nfrom = "{ck}"\n\n' + text[block_end:])
    path = os.path.join(out, "from_checkpoint.h5")
    r = subprocess.run([talus, "run", from_ck, "-o", path, "--force", "--quiet",
                        "--set", "simulation.duration=0.05"], capture_output=True, text=True)
    expect(r.returncode == 0, f"start from a checkpoint: exit {r.returncode}: {r.stderr.strip()}")
    if r.returncode == 0 and os.path.exists(ck):
        with talus_h5.load(settled) as s, talus_h5.load(path) as b:
            want, first = s.frame(-1, native=True), b.frame(0, native=True)
            expect(first["time"] == 0.0, f"from a checkpoint: first frame at t = {first['time']}")
            for name in FIELDS:
                expect(np.array_equal(first[name], want[name]),
                       f"from a checkpoint: first frame's {name} differs from the run's end state")
    # a checkpoint holds one state: the branch scene's frame = 2 is refused with it
    r = subprocess.run([talus, "check", scene, "--set", f"start.from={ck}"], capture_output=True, text=True)
    expect(r.returncode == 2 and "start.frame" in r.stderr, f"frame with a checkpoint: exit {r.returncode}, "
           f"{r.stderr.strip()}")
    # a run may not write over the file it starts from
    r = subprocess.run([talus, "run", from_ck, "-o", ck, "--force", "--quiet"], capture_output=True,
                       text=True)
    expect(r.returncode == 2 and "[start]" in r.stderr, f"output over the start: exit {r.returncode}, "
           f"{r.stderr.strip()}")
    r = subprocess.run([talus, "run", from_ck, "-o", path, "--force", "--quiet",
                        "--set", f"output.checkpoint=\"{ck}\""], capture_output=True, text=True)
    expect(r.returncode == 2 and "[start]" in r.stderr, f"checkpoint over the start: exit {r.returncode}, "
           f"{r.stderr.strip()}")
    if problems:
        print("check_branch:")
        for p in problems:
            print("  " + p)
        return 1
    print("check_branch: both branches start bit for bit at the source's frame 2, differ by their "
          "friction, repeat exactly; a start from a checkpoint is its run's end state bit for bit; "
          "bad starts are refused by key")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

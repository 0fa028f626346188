#!/usr/bin/python3
"""What the talus command says to a first-time user (issue 20, items 7, 9, 11).

    check_cli_messages.py TALUS SCENE OUTDIR

SCENE is tests/scenes/small_box.toml. Checked:
- `--threads 0` is refused (exit 2) with a short message, not a range of 309 digits;
  `--threads N` beyond the machine's hardware threads warns and runs;
- `talus run` and `talus check` given an HDF5 file (a trajectory, a checkpoint) say what
  the file is and which command takes it (exit 2), not "invalid utf-8";
- `talus check` writes its counts in words ("1 wall", not "1 walls");
- the end of a run gives the share of converged steps, the largest penetration (in metres
  and as a share of the smallest diameter), the final kinetic energy, the .h5 and the .xmf,
  with rounded numbers (no "26.437201 s");
- that share is of the smallest grain's diameter, the scale the run's targets use: a small
  fixed sphere (an obstacle) does not set it.
Exit status 0 when all hold.
"""
import os
import re
import subprocess
import sys


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def run(*args, expect=None):
    p = subprocess.run(list(args), capture_output=True, text=True)
    if expect is not None and p.returncode != expect:
        fail(f"{' '.join(args)}: exit {p.returncode}, expected {expect}:\n{p.stdout}{p.stderr}")
    return p


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    talus, scene, outdir = sys.argv[1:4]
    os.makedirs(outdir, exist_ok=True)
    out = os.path.join(outdir, "cli.h5")
    short = ["--set", "simulation.duration=0.05"]

    p = run(talus, "run", scene, "-o", out, "--force", "--threads", "0", expect=2)
    if len(p.stderr) > 300 or "1 to 4096" not in p.stderr:
        fail(f"--threads 0: the message is not a short one giving the range:\n{p.stderr}")
    print(f"--threads 0: exit 2, {p.stderr.strip()!r}")

    many = str(os.cpu_count() * 8)
    p = run(talus, "run", scene, "-o", out, "--force", "--threads", many, *short, expect=0)
    if "warning: --threads" not in p.stderr:
        fail(f"--threads {many} on {os.cpu_count()} cores runs without a warning:\n{p.stderr}")
    print(f"--threads {many} on {os.cpu_count()} cores: "
          f"{[l for l in p.stderr.splitlines() if 'warning' in l][0]!r}")

    # the end-of-run lines (the run above)
    err = p.stderr
    for needle, what in ((r"talus: solver: [\d,]+ of [\d,]+ steps? converged \(\d+ %\)", "converged share"),
                         (r"largest penetration [0-9.e+-]+ m \([0-9.e+-]+ % of the smallest diameter\)",
                          "largest penetration"),
                         (r"kinetic energy at the end [0-9.e+-]+ J", "final kinetic energy"),
                         (r"talus: time in the stages: forces \d+ % \(S\), broad phase \d+ % \(S\), "
                          r"narrow phase \d+ % \(S\), colouring and assembly \d+ % \(S\), solve \d+ % \(S\), "
                          r"integration \d+ % \(S\), other \d+ % \(S\)".replace("S", r"[0-9.,]+ (s|ms|µs)"),
                          "where the time went"),
                         (re.escape(out), "the .h5"),
                         (re.escape(os.path.splitext(out)[0] + ".xmf"), "the .xmf")):
        if not re.search(needle, err):
            fail(f"the end of the run does not give {what}:\n{err}")
    if re.search(r"\d\.\d{5,}", err):
        fail(f"the end of the run prints unrounded numbers:\n{err}")
    if re.search(r"\b1 (steps|frames|walls)\b", err):
        fail(f"wrong plural:\n{err}")
    print("end of the run:\n  " + "\n  ".join(l for l in err.splitlines() if l.startswith("talus:")))

    p = run(talus, "run", out, expect=2)
    if "HDF5" not in p.stderr or "info" not in p.stderr or "utf-8" in p.stderr:
        fail(f"talus run on a trajectory:\n{p.stderr}")
    p = run(talus, "check", out, expect=2)
    if "not a scene file" not in p.stderr:
        fail(f"talus check on a trajectory:\n{p.stderr}")
    print(f"talus run on a trajectory: exit 2, {p.stderr.strip()!r}")
    ck = os.path.join(outdir, "cli_stop.checkpoint.h5")
    run(talus, "run", scene, "-o", os.path.join(outdir, "cli_stop.h5"), "--force", "--quiet",
        "--stop-after-steps", "3", expect=143)
    p = run(talus, "run", ck, expect=2)
    if "is a checkpoint" not in p.stderr or f"--resume {ck}" not in p.stderr:
        fail(f"talus run on a checkpoint does not say to resume it:\n{p.stderr}")
    print(f"talus run on a checkpoint: exit 2, {p.stderr.strip()!r}")

    # grains of 2 mm poured beside a fixed sphere of 0.5 mm: the share is of 4 mm
    obstacle = os.path.join(outdir, "cli_obstacle.toml")
    with open(obstacle, "w") as f:
        f.write('[simulation]\nduration = 0.1\n\n[[material]]\nname = "glass"\ndensity = 2500.0\n'
                'friction = 0.5\n\n[[wall]]\ntype = "box"\nmin = [0.0, 0.0, 0.0]\n'
                'max = [0.03, 0.03, 0.1]\nmaterial = "glass"\n\n'
                '[[particles]]\nshape = "sphere"\nradius = 0.0005\nmaterial = "glass"\nfixed = true\n'
                'random = { min = [0.025, 0.025, 0.08], max = [0.026, 0.026, 0.081], count = 1, seed = 1 }\n\n'
                '[[particles]]\nshape = "sphere"\nradius = 0.002\nmaterial = "glass"\n'
                'random = { min = [0.003, 0.003, 0.003], max = [0.02, 0.02, 0.03], count = 60, seed = 2 }\n')
    p = run(talus, "run", obstacle, "-o", os.path.join(outdir, "cli_obstacle.h5"), "--force", expect=0)
    m = re.search(r"largest penetration ([0-9.e+-]+) m \(([0-9.e+-]+) % of the smallest diameter\)", p.stderr)
    if not m or float(m.group(1)) <= 0.0:
        fail(f"no penetration reported beside a fixed obstacle:\n{p.stderr}")
    share = 100.0 * float(m.group(1)) / 0.004
    if abs(float(m.group(2)) - share) > 0.1 * share:
        fail(f"the penetration's share is not of the grains' 4 mm (expected about {share:.2g} %):\n{p.stderr}")
    print(f"beside a fixed 0.5 mm sphere: {m.group(0)!r}, of the grains' 4 mm")

    p = run(talus, "check", scene, expect=0)
    if not re.search(r"\b1 wall\b", p.stdout) or "walls" in p.stdout or "bodies" not in p.stdout:
        fail(f"talus check counts:\n{p.stdout}")
    print(f"talus check: {p.stdout.strip()!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

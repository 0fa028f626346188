#!/usr/bin/python3
"""`talus sweep`: a table of overrides, run N at a time, resumable.

    check_sweep.py TALUS SCENE OUTDIR [DURATION]

SCENE is tests/scenes/drum.toml. A CSV table of three friction values (each run DURATION
seconds of the drum, 0.5 by default; the sanitizer build, 15 times slower, passes 0.2) is swept one at a time; the sweep is killed with SIGKILL once the first run is done
and the second under way (the second run is then stopped by its parent-death signal, with a
checkpoint). Called again, the sweep skips the first run (its files untouched), resumes the
second from its checkpoint, runs the third, and exits 0 with a summary.csv of three "done"
rows; the resumed run's last frame equals that of the same run made directly, bit for bit.
The same runs from a TOML table are named alike. Refused with exit 2 before any run starts:
a row with a missing value (file and line named), two equal rows, and a key the scene does
not have (its row named). Exit 0 if all hold.
"""
import csv
import os
import shutil
import signal
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import talus_h5  # noqa: E402


def main(argv):
    if len(argv) not in (4, 5):
        print(__doc__, file=sys.stderr)
        return 2
    talus, scene, out = argv[1:4]
    duration = argv[4] if len(argv) == 5 else "0.5"
    NAMES = [f"friction={mu}_duration={duration}" for mu in ("0.2", "0.5", "0.8")]
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    problems = []

    def expect(cond, what):
        if not cond:
            problems.append(what)

    table = os.path.join(out, "mu.csv")
    with open(table, "w") as f:
        f.write("material.glass.friction,simulation.duration\n" + "".join(
            f"{mu},{duration}\n" for mu in ("0.2", "0.5", "0.8")))
    runs = os.path.join(out, "mu")
    sweep = [talus, "sweep", scene, table, "-j", "1"]
    p = subprocess.Popen(sweep, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first_done = os.path.join(runs, NAMES[0] + ".done")
    second_frames = os.path.join(runs, NAMES[1] + ".xmf")  # written with its first frame
    deadline = time.time() + 120
    while not os.path.exists(first_done) and time.time() < deadline and p.poll() is None:
        time.sleep(0.01)
    while not os.path.exists(second_frames) and time.time() < deadline and p.poll() is None:
        time.sleep(0.01)  # then the second run is under way
    expect(p.poll() is None, "the sweep ended before it could be killed")
    p.send_signal(signal.SIGKILL)
    p.wait()
    # the orphaned run stops on its parent-death signal, writing its checkpoint
    checkpoint = os.path.join(runs, NAMES[1] + ".checkpoint.h5")
    while time.time() < deadline:
        busy = subprocess.run(["pgrep", "-f", "-x", ".*" + NAMES[1] + ".*"], capture_output=True).returncode == 0
        if not busy:
            break
        time.sleep(0.05)
    expect(not os.path.exists(os.path.join(runs, NAMES[1] + ".done")), "the second run finished before the kill")
    expect(os.path.exists(checkpoint), "the stopped run left no checkpoint")
    kept = {f: os.stat(os.path.join(runs, NAMES[0] + f)).st_mtime_ns for f in (".h5", ".done")}

    r = subprocess.run(sweep, capture_output=True, text=True)
    expect(r.returncode == 0, f"the second sweep: exit {r.returncode}: {r.stderr}")
    expect(f"resumed {NAMES[1]}" in r.stderr and f"started {NAMES[2]}" in r.stderr
           and f"started {NAMES[0]}" not in r.stderr and "1 skipped" in r.stderr,
           f"the second sweep did not just finish what was left: {r.stderr}")
    for f, t in kept.items():
        expect(os.stat(os.path.join(runs, NAMES[0] + f)).st_mtime_ns == t, f"the finished run's {f} was touched")
    with open(os.path.join(runs, "summary.csv")) as f:
        rows = list(csv.DictReader(f))
    expect([row["run"] for row in rows] == NAMES and all(row["status"] == "done" for row in rows),
           f"summary: {rows}")
    expect(all(float(row["time"]) == float(duration) for row in rows if row.get("time")),
           f"summary: a run did not reach {duration} s")
    # the resumed run is the run made without interruption
    direct = os.path.join(out, "direct.h5")
    subprocess.run([talus, "run", scene, "-o", direct, "--force", "--quiet", "--threads", "2",
                    "--set", "material.glass.friction=0.5", "--set", f"simulation.duration={duration}"], check=True)
    with talus_h5.load(direct) as a, talus_h5.load(os.path.join(runs, NAMES[1] + ".h5")) as b:
        expect(len(a) == len(b), f"resumed run: {len(b)} frames, direct {len(a)}")
        for name in ("id", "position", "velocity"):
            expect(np.array_equal(a.frame(-1)[name], b.frame(-1)[name]), f"resumed run: last frame's {name} differs")

    # a TOML table names the same runs
    toml_table = os.path.join(out, "mu.toml")
    with open(toml_table, "w") as f:
        for mu in ("0.2", "0.5", "0.8"):
            f.write(f'[[run]]\n"material.glass.friction" = {mu}\n"simulation.duration" = {duration}\n')
    r = subprocess.run(sweep[:3] + [toml_table, "-o", runs], capture_output=True, text=True)
    expect(r.returncode == 0 and "3 skipped" in r.stderr, f"TOML table: exit {r.returncode}: {r.stderr}")

    bad = {
        "mu.csv:3": "material.glass.friction,simulation.duration\n0.2,0.5\n0.5\n",
        "same values as line 2": "material.glass.friction\n0.2\n0.2\n",
        "mu.csv:2 (run frction=0.2)": "material.glass.frction\n0.2\n",
    }
    for what, text in bad.items():
        with open(table, "w") as f:
            f.write(text)
        r = subprocess.run(sweep + ["-o", os.path.join(out, "bad")], capture_output=True, text=True)
        expect(r.returncode == 2 and what in r.stderr, f"bad table ({what}): exit {r.returncode}: {r.stderr}")
        expect(not any(n.endswith(".h5") for n in os.listdir(os.path.join(out, "bad"))) if os.path.isdir(
            os.path.join(out, "bad")) else True, f"bad table ({what}): a run started")
    if problems:
        print("check_sweep:")
        for p_ in problems:
            print("  " + p_)
        return 1
    print("check_sweep: killed and called again, the sweep finished only what was left; the resumed run "
          "equals the direct one; TOML and CSV tables agree; bad tables are refused before any run")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

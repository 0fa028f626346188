#!/usr/bin/python3
"""`talus info` on the files a run leaves, against an independent reader (h5py).

    check_talus_info.py TALUS SCENE SCRATCH_DIR

A run of SCENE stopped after 100 steps leaves a trajectory and a checkpoint. Then:
  * `talus info --json OUT.h5` agrees with the trajectory read through h5py (frames, bodies,
    steps, converged steps and their share, the largest penetration and its share of the
    smallest diameter, the final kinetic energy), and the text summary says the same facts;
  * `talus info` on the checkpoint exits 2 and says it is a checkpoint of that run and how
    to continue it; on a file that is not HDF5 it exits 4 naming the file;
  * tools/talus_h5.py, run as a command, prints what `talus info` prints (one summary), in
    text and JSON, and passes its exit code on.
Exit 0 if all hold.
"""
import json
import os
import re
import subprocess
import sys

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
TALUS_H5 = os.path.join(HERE, "..", "..", "tools", "talus_h5.py")
problems = []


def expect(ok, what):
    if not ok:
        problems.append(what)
        print("check_talus_info: FAIL:", what, file=sys.stderr)


def close(a, b, rel=1e-12):
    return a is not None and abs(a - b) <= rel * abs(b)


def main(talus, scene, scratch):
    os.makedirs(scratch, exist_ok=True)
    out = os.path.join(scratch, "out.h5")
    ck = os.path.join(scratch, "out.checkpoint.h5")
    for f in (out, ck):
        if os.path.exists(f):
            os.remove(f)
    run = subprocess.run([talus, "run", scene, "-o", out, "--quiet", "--stop-after-steps", "100"],
                         capture_output=True, text=True)
    if run.returncode != 143 or not os.path.exists(ck):
        print(f"check_talus_info: the run exited {run.returncode}:\n{run.stderr}", file=sys.stderr)
        return 1

    # --json against h5py
    info = subprocess.run([talus, "info", "--json", out], capture_output=True, text=True)
    expect(info.returncode == 0, f"talus info --json exited {info.returncode}: {info.stderr}")
    j = json.loads(info.stdout)
    with h5py.File(out, "r") as f:
        frames = len(f["frames/time"])
        rows = f["frames/row_count"][:]
        d = f["diagnostics"]
        steps = int(np.count_nonzero(d["step"][:] != np.iinfo(np.uint64).max))
        converged = int(np.count_nonzero(d["converged"][:steps]))
        penetration = float(d["contact_infeasibility"][:steps].max())
        kinetic = float(d["kinetic_energy"][steps - 1])
        diameter = 2.0 * float(f["bodies/radius"][:int(f["frames/first_row"][-1] + rows[-1])].min())
    expect(j["file"] == out and j["format"] == "talus-trajectory" and j["closed"] is True,
           f"file, format, closed: {j['file']}, {j['format']}, {j['closed']}")
    expect(j["frames"] == frames == 3, f"frames: talus {j['frames']}, h5py {frames}")
    expect(j["bodies"] == int(rows[-1]), f"bodies: talus {j['bodies']}, h5py {rows[-1]}")
    expect(j["steps"] == steps == 100, f"steps: talus {j['steps']}, h5py {steps}")
    expect(j["converged_steps"] == converged, f"converged: talus {j['converged_steps']}, h5py {converged}")
    expect(close(j["converged_share"], converged / steps), f"converged_share {j['converged_share']}")
    expect(close(j["max_penetration"], penetration, 0), f"max_penetration {j['max_penetration']} vs {penetration}")
    expect(penetration > 0, "the run has no penetration to report")
    expect(close(j["smallest_diameter"], diameter, 0), f"smallest_diameter {j['smallest_diameter']} vs {diameter}")
    expect(close(j["max_penetration_share_of_smallest_diameter"], penetration / diameter),
           f"max_penetration_share_of_smallest_diameter {j['max_penetration_share_of_smallest_diameter']}")
    expect(close(j["final_kinetic_energy"], kinetic, 0), f"final_kinetic_energy {j['final_kinetic_energy']} vs {kinetic}")
    expect([m["name"] for m in j["materials"]] == ["glass", "steel"], f"materials {j['materials']}")

    # the text says the same, rounded
    text = subprocess.run([talus, "info", out], capture_output=True, text=True)
    expect(text.returncode == 0, f"talus info exited {text.returncode}")
    want = [f"converged:  {converged:,} of {steps:,} steps (",
            f"penetration: largest {penetration:.1e} m ({100 * penetration / diameter:.2g} % of the smallest "
            f"diameter, {diameter:.1e} m)",
            f"kinetic:    {kinetic:.1e} J at the last step"]
    for w in want:
        expect(w in text.stdout, f"{w!r} not in the text summary:\n{text.stdout}")
    expect(not re.search(r"\d\.\d{6,}", text.stdout), f"unrounded reals in the text summary:\n{text.stdout}")

    # a checkpoint: exit 2, what it is and how to continue it
    r = subprocess.run([talus, "info", ck], capture_output=True, text=True)
    expect(r.returncode == 2, f"talus info on the checkpoint exited {r.returncode}")
    expect(f"'{ck}' is a checkpoint of run {os.path.abspath(out)}, not a trajectory: continue it with "
           f"tools/run --resume {ck}" in r.stderr, f"checkpoint message: {r.stderr!r}")
    # not HDF5: exit 4, naming the file
    notes = os.path.join(scratch, "notes.h5")
    with open(notes, "w") as f:
        f.write("not a trajectory\n")
    r = subprocess.run([talus, "info", notes], capture_output=True, text=True)
    expect(r.returncode == 4, f"talus info on a text file exited {r.returncode}")
    expect(f"'{notes}' is not an HDF5 file" in r.stderr, f"not-HDF5 message: {r.stderr!r}")

    # tools/talus_h5.py prints the summary of talus info (one source), as a command
    env = dict(os.environ, TALUS_BIN=talus)
    for options in ([], ["--json"]):
        mine = subprocess.run([TALUS_H5, out, *options], capture_output=True, text=True, env=env)
        theirs = subprocess.run([talus, "info", *options, out], capture_output=True, text=True)
        expect(mine.returncode == 0 and mine.stdout == theirs.stdout,
               f"talus_h5.py {options} (exit {mine.returncode}) prints\n{mine.stdout}{mine.stderr}\n"
               f"talus info prints\n{theirs.stdout}")
    mine = subprocess.run([TALUS_H5, ck], capture_output=True, text=True, env=env)
    expect(mine.returncode == 2 and "is a checkpoint of run" in mine.stderr,
           f"talus_h5.py on the checkpoint: exit {mine.returncode}, {mine.stderr!r}")
    env["TALUS_BIN"] = os.path.join(scratch, "no-talus-here")
    mine = subprocess.run([TALUS_H5, out], capture_output=True, text=True, env=env)
    expect(mine.returncode == 1 and "the talus command is not at" in mine.stderr and "TALUS_BIN" in mine.stderr,
           f"talus_h5.py without talus: exit {mine.returncode}, {mine.stderr!r}")
    print(text.stdout)
    return 1 if problems else 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        print("usage: check_talus_info.py TALUS SCENE SCRATCH_DIR", file=sys.stderr)
        sys.exit(2)
    sys.exit(main(*sys.argv[1:]))

#!/usr/bin/python3
"""When each stage began, as the file records it (issue 24, part 4.3).

    check_stages_output.py RUN.h5 TALUS_BIN

RUN.h5 is tests/scenes/staged_gate.toml run by the talus command: a "settle" stage that
ends once the kinetic energy has stayed below 1e-7 J for 0.02 s, then "open", which removes
the gate. Checks: the root attribute stage_names; /diagnostics/stage is 0 and then 1, never
back; the open stage began after the energy had stayed below the threshold for the hold
time, and not later than a step after that; a frame at the stage's end, which talus_measure's
`--frame end:settle` finds; `talus info` (text and --json) names both
stages with the start time and step the diagnostics give. Exit 0 if all hold, 1 otherwise.
"""
import json
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import talus_h5  # noqa: E402
import talus_measure  # noqa: E402

THRESHOLD, HOLD = 1e-7, 0.02  # the settle stage's stop condition in staged_gate.toml


def main(argv):
    if len(argv) != 3:
        print("usage: check_stages_output.py RUN.h5 TALUS_BIN", file=sys.stderr)
        return 2
    path, talus = argv[1], argv[2]
    problems = []

    def expect(cond, what):
        if not cond:
            problems.append(what)

    with talus_h5.load(path) as run:
        expect(run.attrs.get("stage_names") == ["settle", "open"], f"stage_names {run.attrs.get('stage_names')}")
        stage = run.diagnostics["stage"].astype(np.int64)
        time, step = run.diagnostics["time"], run.diagnostics["step"]
        energy = run.diagnostics["kinetic_energy"]
        expect(stage[0] == 0 and stage[-1] == 1 and np.all(np.diff(stage) >= 0),
               f"stage column not 0 then 1: {np.unique(stage).tolist()}")
        first = int(np.argmax(stage == 1))
        began, began_step = float(time[first - 1]), int(step[first])
        # settle ended on its condition: below the threshold at every step of the hold
        # before it (the steps ending in (began - hold, began]), and not yet at the step that
        # ended at began - hold, so it could not have ended a step earlier
        window = (time > began - HOLD + 1e-9) & (time <= began + 1e-9)
        expect(window.sum() >= round(HOLD / 1e-3) and np.all(energy[window] < THRESHOLD),
               "the settle stage ended before its hold was over")
        before = np.flatnonzero(np.abs(time - (began - HOLD)) < 1e-9)
        expect(len(before) == 1 and energy[before[0]] >= THRESHOLD, "the settle stage ended late")
        expect(began < 1.0, f"settle ran its whole duration ({began} s): the stop condition never fired")
        # a frame is written where the stage ended, and talus_measure's --frame end:settle finds it
        frames = np.asarray(run.frames.time, dtype=float)
        for spec in ("end:settle", "end:0"):
            k = talus_measure._frame_index(run, spec)
            expect(abs(frames[k] - began) <= 1e-12 * max(1.0, began),
                   f"--frame {spec}: frame {k} at t = {frames[k]} s, not at the stage's end {began} s")
        k = talus_measure._frame_index(run, "end:open")
        expect(k == len(frames) - 1, f"--frame end:open: frame {k}, not the last ({len(frames) - 1})")

    summary = json.loads(subprocess.run([talus, "info", "--json", path], check=True, capture_output=True,
                                        text=True).stdout)
    want = [{"name": "settle", "start_time": 0, "start_step": 1},
            {"name": "open", "start_time": began, "start_step": began_step}]
    got = summary.get("stages")
    expect(isinstance(got, list) and len(got) == 2, f"info --json stages: {got}")
    if isinstance(got, list) and len(got) == 2:
        for g, w in zip(got, want):
            expect(g["name"] == w["name"] and g["start_step"] == w["start_step"]
                   and abs(g["start_time"] - w["start_time"]) <= 1e-12 * max(1.0, abs(w["start_time"])),
                   f"info --json stage {g} != {w}")
    text = subprocess.run([talus, "info", path], check=True, capture_output=True, text=True).stdout
    expect(f"open from {began:.6g} s (step {began_step})" in text and "settle from 0 s (step 1)" in text,
           f"talus info lacks the stages: {text!r}")

    for p in problems:
        print(f"check_stages_output: {p}", file=sys.stderr)
    if not problems:
        print(f"check_stages_output: settle from 0 s, open from {began:.6g} s (step {began_step})")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/python3
"""A run stopped and resumed from its checkpoint gives the uninterrupted run, bit for bit.

    check_resume.py TALUS SCENE OUTDIR stop       --stop-after-steps, then --resume
    check_resume.py TALUS SCENE OUTDIR signals    a real SIGINT; a SIGKILL after a checkpoint
    check_resume.py TALUS SCENE OUTDIR damaged    a killed run's file with unreadable blocks
    check_resume.py TALUS SCENE OUTDIR periodic   [output] checkpoint_interval
    check_resume.py TALUS SCENE OUTDIR finished   a finished run is not resumed again
    check_resume.py TALUS SCENE OUTDIR adaptive   the same scene without dt (adaptive step)

SCENE is tests/scenes/resume.toml: two stages of 50 steps, a frame every 5, an emitter, an
outlet, a kinematic body, a pot the second stage starts turning, wall contacts and all
contacts written.
"The same run" means: the same complete frames (index and every /bodies row), the same
/flow, /walls (and its surface), /walls/contacts and /contacts rows, the same diagnostics
except their wall-clock times, all compared as bytes; and sidecars that differ only by the file name they name.

stop: for the solvers pgs and apgd, a run stopped with --stop-after-steps (which behaves as
  SIGTERM after that step: exit 143, a checkpoint, no frame off the cadence, no .tmp left)
  is resumed with --resume on 1 and on 2 threads. The uninterrupted run is on 1 thread:
  the resumed part on 2 must give the same bits. Then a trajectory that ran past its
  checkpoint (as a run killed after its last checkpoint leaves it) is resumed from that
  older checkpoint: the frames beyond it are cut and written again. A file written before
  two /diagnostics columns were added is resumed too: it gains them, "not recorded" for
  its kept steps. Errors: a missing
  checkpoint (exit 4, named), a scene together with --resume, neither, --set with --resume
  (exit 2), a checkpoint path in a missing directory (exit 4 before the run starts).
signals: a real SIGINT (and a SIGHUP: a closed terminal) sent to a running `talus run` after its first line ends it with exit
  130, a checkpoint and a cleanly closed, readable trajectory; resuming completes it to the
  uninterrupted run. A run killed with SIGKILL after a periodic checkpoint (its file marked
  "being written", frames beyond the checkpoint) is resumed to the same run (stopped with
  --stop-after-steps where the uninterrupted run ends). Should the kill have left a block
  that does not read, the resume must still end, warning which frames are lost; every
  other frame is then the uninterrupted run's.
damaged: a killed run's file (a checkpoint at step >= 60) whose chunk-index blocks each
  have a byte changed: `talus info` ends (exit 0 or 4), and the resume ends within 120 s
  with exit 143, warning that frames from the first that does not read up to the
  checkpoint are lost; the trajectory then holds exactly the other frames of the
  uninterrupted run, bit for bit, and diagnostics to step 200.
periodic: with checkpoint_interval = 0.03 s or 0.05 s, a 100-step run that ends leaves the
  checkpoint of its end state (step 100, past its two stages: what a [start] branches from),
  and the trajectory is the uninterrupted run's. [output] checkpoint names the file. The run
  ended by itself, so the checkpoint is marked finished and --resume refuses it; with the
  mark taken off (as a run killed between the two writes would leave it), --resume has
  nothing left to run and the trajectory keeps the uninterrupted run's frames. (The periodic cadence itself: the
  SIGKILL case of `signals`.)
finished: a run stopped, resumed to its end, and resumed again from the same checkpoint:
  the second --resume exits 2 saying the run has finished, and the trajectory keeps every
  frame (the same bytes). Re-running the original command on a stopped run's output (no
  --force) exits 4 and prints the command that continues it, as TALUS_RUN_COMMAND (tools/run
  sets it) spells it.
Exit status 0 when all hold.
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import h5py
import numpy as np

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(TOP, "tools"))
import talus_h5  # noqa: E402

EVERY = 5   # steps between frames in the scene
STEPS = 100  # steps of the whole scene
SIGINT_EXIT, SIGTERM_EXIT = 128 + signal.SIGINT, 128 + signal.SIGTERM


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def talus_run(talus, *args, expect=0):
    p = subprocess.run([talus, "run", *args], capture_output=True, text=True)
    if p.returncode != expect:
        fail(f"talus run {' '.join(args)}: exit {p.returncode}, expected {expect}:\n{p.stderr}")
    return p.stderr


def same_bytes(a, b):
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def file_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def checkpoint_finished(path):
    with h5py.File(path, "r") as f:
        return "finished_step" in f["state"].attrs


def unmark_finished(path):
    with h5py.File(path, "r+") as f:
        for k in ("finished_step", "finished_time"):
            del f["state"].attrs[k]


def checkpoint_state(path):
    """(step_count, stage) of a checkpoint file."""
    with h5py.File(path, "r") as f:
        s = f["state"].attrs
        return int(s["step_count"]), int(s["stage"])


def sidecar(path, name):
    with open(os.path.splitext(path)[0] + ".xmf") as f:
        return f.read().replace(os.path.basename(path), name)


def compare(reference, candidate, what, frames_up_to=None, lost=None, unrecorded=None):
    """`candidate` holds the run of `reference`: all its complete frames (or those up to
    step `frames_up_to`) and their rows, bit for bit. With `lost` = (A, B), the frames of
    steps A to B are missing from `candidate` (a resume dropped them as unreadable), its
    diagnostics may lack some of those steps, and everything else must match. With
    `unrecorded` = (NAMES, K), the diagnostics NAMES of steps 1 to K read "not recorded"
    (2^32-1: the file resumed lacked those columns) and match after."""
    with talus_h5.load(reference) as ra, talus_h5.load(candidate) as rb:
        step = np.asarray(ra.frames.step)
        keep = np.ones(len(step), dtype=bool)
        if frames_up_to is not None:
            keep &= step <= frames_up_to
        if lost is not None:
            keep &= (step < lost[0]) | (step > lost[1])
        keep = np.flatnonzero(keep)
        n = len(keep)
        if len(rb) != n:
            fail(f"{what}: {len(rb)} complete frames, expected {n} of the uninterrupted run's "
                 f"(steps {list(rb.frames.step)} against {list(step[keep])})")
        # after a gap a frame's rows start earlier: first_row is then not compared (the
        # rows themselves are, frame by frame)
        for field in ("time", "step", "row_count") + (("first_row",) if lost is None else ()):
            if not same_bytes(getattr(ra.frames, field)[keep], getattr(rb.frames, field)):
                fail(f"{what}: frame index {field} differs")
        for kb, k in enumerate(int(k) for k in keep):
            fa, fb = ra.frame(k, native=True), rb.frame(kb, native=True)
            at = f"{what}: frame {k} (step {fa['step']})"
            for name in fa:
                if not same_bytes(fa[name], fb[name]):
                    fail(f"{at}: {name} differs")
            ca, cb = ra.wall_contacts(k), rb.wall_contacts(kb)
            if (ca is None) != (cb is None):
                fail(f"{at}: wall contacts in one run only")
            for name in ("wall", "body", "point", "impulse", "angular_impulse") if ca is not None else ():
                if not same_bytes(ca[name], cb[name]):
                    fail(f"{at}: wall contacts {name} differ")
            ca, cb = ra.contacts(k), rb.contacts(kb)
            if (ca is None) != (cb is None):
                fail(f"{at}: contacts in one run only")
            for name in talus_h5.Trajectory.CONTACT_FIELDS + ("dt",) if ca is not None else ():
                if not same_bytes(np.asarray(ca[name]), np.asarray(cb[name])):
                    fail(f"{at}: contacts {name} differ")
            sa, sb = ra.shapes(k), rb.shapes(kb)
            if (sa is None) != (sb is None) or (sa is None and "shapes" in ra._file):
                fail(f"{at}: /shapes in one run only")
            for name in ("body", "material", "position", "axes", "cylinders"):
                if sa is not None and not same_bytes(np.asarray(sa[name]), np.asarray(sb[name])):
                    fail(f"{at}: shapes {name} differ")
        for name, a in ra.flow.items():
            b = np.asarray(rb.flow[name])
            if lost is None or "total" in name:
                if not same_bytes(a[keep], b):
                    fail(f"{what}: /flow/{name} differs")
                continue
            # counted since the previous frame: the first frame after the gap counts over
            # the gap (nothing emitted or removed goes uncounted), the others as before
            after = int(np.searchsorted(step[keep], lost[1], side="right"))
            others = np.arange(n) != after
            if not same_bytes(a[keep][others], b[others]):
                fail(f"{what}: /flow/{name} differs")
            if after < n:
                gap = a[keep[after - 1] + 1:keep[after] + 1].sum(axis=0)
                if not np.allclose(b[after], gap, rtol=1e-12, atol=0.0):
                    fail(f"{what}: /flow/{name} after the gap holds {b[after]}, not the "
                         f"uninterrupted run's {gap} over the lost frames")
        for name in ("force", "torque"):
            if not same_bytes(ra.walls[name][keep], rb.walls[name]):
                fail(f"{what}: /walls/{name} differs")
        # the walls' surface: the same triangles, and each frame's points
        sa, sb = ra._file["walls/surface"], rb._file["walls/surface"]
        v = int(sa["first_point"][-1])
        for name in ("triangles", "wall", "first_point", "reference_points"):
            if not same_bytes(sa[name][()], sb[name][()]):
                fail(f"{what}: /walls/surface/{name} differs")
        points = sa["points"][()]
        points = points.reshape(-1, v, *points.shape[1:])[keep].reshape(-1, *points.shape[1:])
        if not same_bytes(points, sb["points"][()]):
            fail(f"{what}: /walls/surface/points differs")
        steps = np.asarray(rb.diagnostics["step"])
        if lost is not None:
            # a resume that dropped frames may drop their steps' diagnostics too: the rows
            # left increase to the end and are the uninterrupted run's rows of those steps
            last = int(ra.diagnostics["step"][-1])
            if len(steps) == 0 or steps[-1] != last or np.any(np.diff(steps) <= 0):
                fail(f"{what}: diagnostics steps do not increase to {last}")
            rows = steps - 1
        else:
            if frames_up_to is None and not np.array_equal(steps, np.arange(1, len(steps) + 1)):
                fail(f"{what}: diagnostics steps are not 1, 2, 3, ... without gaps or repeats")
            m = len(ra.diagnostics["step"]) if frames_up_to is None else int(step[keep[-1]])
            if len(steps) < m:
                fail(f"{what}: {len(steps)} diagnostics, expected at least {m}")
            rows = np.arange(m)
        for name, a in ra.diagnostics.items():
            a, b = a[rows], np.asarray(rb.diagnostics[name])[:len(rows)]
            if unrecorded is not None and name in unrecorded[0]:
                k = unrecorded[1]
                if not np.all(b[:k] == np.iinfo(b.dtype).max):
                    fail(f"{what}: diagnostics {name} of steps 1 to {k} hold {b[:k]}, not the "
                         f"'not recorded' value {np.iinfo(b.dtype).max}")
                a, b = a[k:], b[k:]
            if name != "solver_wall_time" and not same_bytes(a, b):
                fail(f"{what}: diagnostics {name} differ")
    if frames_up_to is None and lost is None and sidecar(candidate, "X.h5") != sidecar(reference, "X.h5"):
        fail(f"{what}: the sidecar differs from the uninterrupted run's")
    return n


def check_stopped(talus, out, ck, stderr, k, what):
    """What a stop leaves: the message, the checkpoint at step k and no .tmp, a closed
    trajectory whose last frame is the last on the cadence."""
    if ck not in stderr or f"--resume {ck}" not in stderr:
        fail(f"{what}: the message does not name the checkpoint and how to resume:\n{stderr}")
    if not os.path.isfile(ck) or os.path.exists(ck + ".tmp"):
        fail(f"{what}: no checkpoint {ck}, or a .tmp left beside it")
    step, _ = checkpoint_state(ck)
    if step != k:
        fail(f"{what}: the checkpoint is of step {step}, expected {k}")
    info = subprocess.run([talus, "info", out], capture_output=True, text=True)
    if info.returncode != 0 or not re.search(r"state:\s*closed", info.stdout):
        fail(f"{what}: talus info (exit {info.returncode}) does not find a closed file:\n"
             f"{info.stdout}{info.stderr}")
    with talus_h5.load(out) as r:
        if int(r.frames.step[-1]) != k // EVERY * EVERY:
            fail(f"{what}: last frame at step {r.frames.step[-1]}, expected the last on the "
                 f"{EVERY}-step cadence before {k}")
        if len(r.diagnostics["step"]) != k:
            fail(f"{what}: {len(r.diagnostics['step'])} diagnostics for {k} steps")


def mode_stop(talus, scene, outdir):
    for solver, k in (("pgs", 37), ("apgd", 71)):  # mid first stage; in the second
        sets = ["--set", f'solver.type="{solver}"']
        whole = os.path.join(outdir, f"{solver}_whole.h5")
        talus_run(talus, scene, "-o", whole, "--force", "--quiet", "--threads", "1", *sets)
        part = os.path.join(outdir, f"{solver}_part.h5")
        ck = os.path.join(outdir, f"{solver}_part.checkpoint.h5")
        for p in (ck, ck + ".tmp"):
            if os.path.exists(p):
                os.remove(p)
        err = talus_run(talus, scene, "-o", part, "--force", "--quiet", "--threads", "1", *sets,
                        "--stop-after-steps", str(k), expect=SIGTERM_EXIT)
        check_stopped(talus, part, ck, err, k, f"{solver} stopped at {k}")
        compare(whole, part, f"{solver} stopped at {k}", frames_up_to=k)
        for threads in (1, 2):
            traj = os.path.join(outdir, f"{solver}_resumed_t{threads}.h5")
            ck_copy = os.path.join(outdir, f"{solver}_resumed_t{threads}.checkpoint.h5")
            shutil.copy(part, traj)
            shutil.copy(ck, ck_copy)
            talus_run(talus, "--resume", ck_copy, "-o", traj,
                      "--threads", str(threads), "--quiet")
            n = compare(whole, traj, f"{solver}: stopped at step {k}, resumed on {threads} thread(s)")
            print(f"{solver}: stopped after step {k} (exit 143), resumed on {threads} thread(s): "
                  f"{n} frames and their rows identical to the uninterrupted run")

    # A trajectory that went on after its checkpoint: resumed from the older checkpoint,
    # the frames and diagnostics beyond it are cut and written again.
    whole = os.path.join(outdir, "pgs_whole.h5")
    traj = os.path.join(outdir, "pgs_went_on.h5")
    old = os.path.join(outdir, "pgs_went_on_step37.checkpoint.h5")
    newer = os.path.join(outdir, "pgs_went_on.checkpoint.h5")
    shutil.copy(os.path.join(outdir, "pgs_part.h5"), traj)
    shutil.copy(os.path.join(outdir, "pgs_part.checkpoint.h5"), old)
    shutil.copy(old, newer)
    talus_run(talus, "--resume", newer, "-o", traj, "--quiet", "--stop-after-steps", "83",
              expect=SIGTERM_EXIT)
    with talus_h5.load(traj) as r:
        if int(r.frames.step[-1]) != 80:
            fail(f"went on: the trajectory should reach step 80, it ends at {r.frames.step[-1]}")
    talus_run(talus, "--resume", old, "-o", traj, "--quiet")
    n = compare(whole, traj, "resumed from an older checkpoint (step 37) over frames to step 80")
    print(f"pgs: a trajectory run on to step 83, resumed from its step-37 checkpoint: frames "
          f"after it cut and rewritten, {n} frames identical")

    # A file written before /diagnostics/set_aside and /diagnostics/resolves were added
    # (2026-12-05): resumed, it gains the two columns, "not recorded" for its own steps.
    older = os.path.join(outdir, "pgs_older_format.h5")
    older_ck = os.path.join(outdir, "pgs_older_format.checkpoint.h5")
    shutil.copy(os.path.join(outdir, "pgs_part.h5"), older)
    shutil.copy(os.path.join(outdir, "pgs_part.checkpoint.h5"), older_ck)
    added = ("set_aside", "resolves")
    with h5py.File(older, "a") as f:
        for name in added:
            del f["diagnostics"][name]
    talus_run(talus, "--resume", older_ck, "-o", older, "--quiet")
    n = compare(whole, older, "a file without the columns added on 2026-12-05, resumed",
                unrecorded=(added, 37))
    print(f"pgs: a file without /diagnostics/{{{','.join(added)}}} (written before they were "
          f"added), resumed from step 37: the columns added, 'not recorded' for steps 1 to 37, "
          f"{n} frames and the other diagnostics identical")

    # errors
    missing = os.path.join(outdir, "no_such.checkpoint.h5")
    p = subprocess.run([talus, "run", "--resume", missing], capture_output=True, text=True)
    if p.returncode != 4 or missing not in p.stderr:
        fail(f"a missing checkpoint: exit {p.returncode}, expected 4 naming it:\n{p.stderr}")
    for args in ([scene, "--resume", old], [], ["--resume", old, "--set", "solver.tolerance=1"]):
        p = subprocess.run([talus, "run", *args], capture_output=True, text=True)
        if p.returncode != 2:
            fail(f"talus run {' '.join(args)}: exit {p.returncode}, expected 2:\n{p.stderr}")
    bad_ck = os.path.join(outdir, "no_such_dir", "x.checkpoint.h5")
    never = os.path.join(outdir, "never.h5")
    if os.path.exists(never):
        os.remove(never)
    p = subprocess.run([talus, "run", scene, "-o", never, "--quiet",
                        "--set", f'output.checkpoint="{bad_ck}"'], capture_output=True, text=True)
    if p.returncode != 4 or bad_ck not in p.stderr or os.path.exists(never):
        fail(f"a checkpoint in a missing directory: exit {p.returncode}, expected 4 naming it "
             f"before anything is written:\n{p.stderr}")
    print("errors: a missing checkpoint exits 4 naming it; scene and --resume, neither, or "
          "--set with --resume exit 2; a checkpoint in a missing directory exits 4 before "
          "the run starts")


def wait_for_line(child, what):
    line = child.stderr.readline()
    if not line:
        fail(f"{what}: the run printed nothing: exit {child.wait()}")
    return line


UNINTERRUPTED_SECOND_STAGE = "stage.1.duration=0.15"


def uninterrupted(talus, scene, whole):
    """Runs SCENE into `whole` with its second stage 150 steps long (200 steps in all):
    long enough that a signal lands mid-run."""
    talus_run(talus, scene, "-o", whole, "--force", "--quiet", "--set", UNINTERRUPTED_SECOND_STAGE)
    return whole


def mode_signals(talus, scene, outdir):
    whole = uninterrupted(talus, scene, os.path.join(outdir, "sig_whole.h5"))
    sets = ["--set", UNINTERRUPTED_SECOND_STAGE]

    out = os.path.join(outdir, "sig_int.h5")
    ck = os.path.join(outdir, "sig_int.checkpoint.h5")
    for p in (ck, ck + ".tmp"):
        if os.path.exists(p):
            os.remove(p)
    child = subprocess.Popen([talus, "run", scene, "-o", out, "--force", *sets],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wait_for_line(child, "SIGINT")  # the file is created and its first frame handed over
    time.sleep(0.05)
    child.send_signal(signal.SIGINT)
    err = child.stderr.read()
    code = child.wait()
    if code != SIGINT_EXIT:
        fail(f"SIGINT: exit {code}, expected {SIGINT_EXIT}:\n{err}")
    if "SIGINT" not in err:
        fail(f"SIGINT: the message does not say what stopped the run:\n{err}")
    k, _ = checkpoint_state(ck)
    if not 0 < k < 200:
        fail(f"SIGINT: checkpoint at step {k}, expected one mid-run")
    check_stopped(talus, out, ck, err, k, "SIGINT")
    compare(whole, out, "SIGINT", frames_up_to=k)
    talus_run(talus, "--resume", ck, "--quiet")  # the checkpoint names its trajectory
    n = compare(whole, out, "SIGINT, then resumed")
    print(f"SIGINT: stopped after step {k} (exit 130, checkpoint, closed trajectory); resumed: "
          f"{n} frames identical to the uninterrupted run, the last at step "
          f"{talus_h5.load(whole).frames.step[-1]}")

    # SIGHUP (the terminal closed, ssh dropped) stops the run as SIGTERM does: exit 129,
    # a checkpoint, a closed trajectory; resumed, the uninterrupted run.
    out = os.path.join(outdir, "sig_hup.h5")
    ck = os.path.join(outdir, "sig_hup.checkpoint.h5")
    for p in (ck, ck + ".tmp"):
        if os.path.exists(p):
            os.remove(p)
    child = subprocess.Popen([talus, "run", scene, "-o", out, "--force", *sets],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wait_for_line(child, "SIGHUP")
    time.sleep(0.05)
    child.send_signal(signal.SIGHUP)
    err = child.stderr.read()
    code = child.wait()
    if code != 128 + signal.SIGHUP:
        fail(f"SIGHUP: exit {code}, expected {128 + signal.SIGHUP}:\n{err}")
    if "SIGHUP" not in err:
        fail(f"SIGHUP: the message does not say what stopped the run:\n{err}")
    k, _ = checkpoint_state(ck)
    check_stopped(talus, out, ck, err, k, "SIGHUP")
    talus_run(talus, "--resume", ck, "--quiet")
    n = compare(whole, out, "SIGHUP, then resumed")
    print(f"SIGHUP: stopped after step {k} (exit 129, checkpoint, closed trajectory); resumed: "
          f"{n} frames identical to the uninterrupted run")

    # SIGKILL after a periodic checkpoint, once the trajectory holds frames beyond it: the
    # file keeps its "being written" mark. The killed run is given a long second stage so
    # that it cannot end first; resumed, it stops where the uninterrupted run ended.
    out = os.path.join(outdir, "sig_kill.h5")
    ck = os.path.join(outdir, "sig_kill.checkpoint.h5")
    k = kill_after_checkpoint(talus, scene, out, ck, 1)
    with talus_h5.load(out) as r:
        beyond = int(r.frames.step[-1])
    n, lost = resume_killed(talus, whole, out, ck, "SIGKILL after a checkpoint, then resumed")
    print(f"SIGKILL: killed with a checkpoint of step {k} and frames to step {beyond}; "
          f"resumed to step 200: {n} frames identical to the uninterrupted run"
          + (f" (steps {lost} lost to a block the kill left unreadable)" if lost else ""))


def kill_after_checkpoint(talus, scene, out, ck, at_least):
    """Starts SCENE (its second stage made long) with a checkpoint every 20 steps and kills
    it with SIGKILL once a checkpoint of step >= at_least exists and the trajectory holds a
    frame past it. Returns the checkpoint's step."""
    if os.path.exists(ck):
        os.remove(ck)
    child = subprocess.Popen([talus, "run", scene, "-o", out, "--force", "--quiet",
                              "--set", "stage.1.duration=5.0",
                              "--set", "output.checkpoint_interval=0.02"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 50
    k = beyond = 0
    while k < at_least or beyond <= k:
        if child.poll() is not None or time.monotonic() > deadline:
            fail(f"SIGKILL: no checkpoint of step >= {at_least} with frames after it appeared "
                 f"(run exit {child.poll()})")
        time.sleep(0.01)
        if os.path.exists(ck):
            k, _ = checkpoint_state(ck)
            with talus_h5.load(out) as r:
                beyond = int(r.frames.step[-1]) if len(r) else 0
    child.send_signal(signal.SIGKILL)
    if child.wait() != -signal.SIGKILL:
        fail("SIGKILL: the run ended by itself before the kill")
    return checkpoint_state(ck)[0]  # a later one may have come before the kill


def resume_killed(talus, whole, out, ck, what):
    """Resumes the killed run of `out` from `ck` to step 200, where the uninterrupted run
    `whole` ends, within 120 s (a block the kill left unreadable once held the resume for
    ever). Either the trajectory is `whole`'s, bit for bit, or the resume warned that
    frames do not read: then exactly those frames (steps A to B, all at or before the
    checkpoint) are missing and every other frame is `whole`'s, bit for bit. Returns the
    frames compared and the lost steps ("" if none)."""
    try:
        p = subprocess.run([talus, "run", "--resume", ck, "--quiet", "--stop-after-steps", "200"],
                           capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        fail(f"{what}: the resume did not end within 120 s")
    if p.returncode != SIGTERM_EXIT:
        fail(f"{what}: exit {p.returncode}, expected {SIGTERM_EXIT}:\n{p.stderr}")
    if os.path.exists(out + ".resume.tmp"):
        fail(f"{what}: the copy made to continue the file was left behind")
    m = re.search(r"warning: trajectory .*?: frames? (\d+)(?: to (\d+))? \(steps? (\d+)(?: to (\d+))?\)"
                  r" (?:does|do) not read", p.stderr)
    if m is None:
        if "warning" in p.stderr:
            fail(f"{what}: an unexpected warning:\n{p.stderr}")
        return compare(whole, out, what), ""
    first, last = int(m.group(3)), int(m.group(4) or m.group(3))
    k, _ = checkpoint_state(ck)
    if not 0 < first <= last or last > k + 200:  # the frames lost come from the killed file
        fail(f"{what}: lost steps {first} to {last} make no sense:\n{p.stderr}")
    if "the run continues from the checkpoint" not in p.stderr:
        fail(f"{what}: the warning does not say the run goes on:\n{p.stderr}")
    return compare(whole, out, what, lost=(first, last)), f"{first} to {last}"


def mode_damaged(talus, scene, outdir):
    # A kill can leave a metadata block that no longer passes its checksum (seen once in
    # 40 SIGKILLs: a chunk index of /walls/surface/points). HDF5's SWMR reader retried such
    # a block with a doubling sleep, so the resume never ended. Here every extensible-array
    # data block (the chunk indexes past their first few chunks, signature "EADB") of a
    # killed run's file gets one byte changed.
    whole = uninterrupted(talus, scene, os.path.join(outdir, "whole.h5"))
    out = os.path.join(outdir, "damaged.h5")
    ck = os.path.join(outdir, "damaged.checkpoint.h5")
    k = kill_after_checkpoint(talus, scene, out, ck, 60)
    data = bytearray(file_bytes(out))
    blocks = [m.start() for m in re.finditer(b"EADB", data)]
    if not blocks:
        fail("damaged: the killed run's file has no extensible-array data block to damage")
    for at in blocks:
        data[at + 20] ^= 0xFF  # inside the block, before its checksum: the checksum fails
    with open(out, "wb") as f:
        f.write(data)
    # talus info reads the index only; whatever it finds, it ends, and not by a crash
    try:
        info = subprocess.run([talus, "info", out], capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        fail("damaged: talus info did not end within 60 s")
    if info.returncode not in (0, 4):
        fail(f"damaged: talus info exit {info.returncode}, expected 0 or 4:\n{info.stderr}")
    n, lost = resume_killed(talus, whole, out, ck, "damaged file, resumed")
    if not lost:
        fail("damaged: the resume read every frame of a file whose chunk indexes were damaged")
    print(f"damaged: killed with a checkpoint of step {k}, {len(blocks)} index blocks damaged; "
          f"the resume warned that steps {lost} do not read and went on: {n} frames "
          f"identical to the uninterrupted run, the others missing")


def mode_periodic(talus, scene, outdir):
    whole = os.path.join(outdir, "periodic_whole.h5")
    talus_run(talus, scene, "-o", whole, "--force", "--quiet")
    for interval, k, stage in ((0.03, 100, 2), (0.05, 100, 2)):
        out = os.path.join(outdir, f"periodic_{interval}.h5")
        ck = os.path.join(outdir, f"named_{interval}.ck.h5")
        if os.path.exists(ck):
            os.remove(ck)
        talus_run(talus, scene, "-o", out, "--force", "--quiet",
                  "--set", f"output.checkpoint_interval={interval}",
                  "--set", f'output.checkpoint="{ck}"')
        if os.path.exists(ck + ".tmp") or os.path.exists(os.path.splitext(out)[0] + ".checkpoint.h5"):
            fail(f"interval {interval}: a .tmp, or a checkpoint beside the trajectory instead of "
                 f"the one named")
        got = checkpoint_state(ck)
        if got != (k, stage):
            fail(f"interval {interval} s: checkpoint of (step, stage) {got}, expected {(k, stage)}")
        compare(whole, out, f"interval {interval}")
        if not checkpoint_finished(ck):
            fail(f"interval {interval}: the run ended, but its checkpoint is not marked finished")
        before = file_bytes(out)
        err = talus_run(talus, "--resume", ck, "--quiet", expect=2)
        if "finished" not in err or file_bytes(out) != before:
            fail(f"interval {interval}: resuming the finished run: the message does not say it "
                 f"finished, or the trajectory changed:\n{err}")
        unmark_finished(ck)  # as a run killed between the checkpoint and its mark would leave it
        talus_run(talus, "--resume", ck, "--quiet")
        n = compare(whole, out, f"interval {interval}, resumed from its end")
        print(f"checkpoint_interval {interval} s: the checkpoint is of the end state, step {k} "
              f"(stage {stage}: past the last); resumed, nothing ran, {n} frames identical")


def mode_finished(talus, scene, outdir):
    whole = os.path.join(outdir, "fin_whole.h5")
    talus_run(talus, scene, "-o", whole, "--force", "--quiet")
    out = os.path.join(outdir, "fin.h5")
    ck = os.path.join(outdir, "fin.checkpoint.h5")
    for p in (ck, out):
        if os.path.exists(p):
            os.remove(p)
    talus_run(talus, scene, "-o", out, "--quiet", "--stop-after-steps", "23", expect=SIGTERM_EXIT)

    # the original command again, without --force: refused, saying how to continue
    env = dict(os.environ, TALUS_RUN_COMMAND="tools/run")
    p = subprocess.run([talus, "run", scene, "-o", out, "--quiet"], capture_output=True,
                       text=True, env=env)
    if p.returncode != 4 or f"tools/run --resume {ck}" not in p.stderr or "--force" not in p.stderr:
        fail(f"re-running a stopped run's command: exit {p.returncode}, expected 4 with the "
             f"command that continues it (tools/run --resume {ck}) and --force:\n{p.stderr}")
    print(f"the original command on a stopped run's output: exit 4, '{p.stderr.splitlines()[1]}'")

    # a stop prints the continuing command as tools/run spells it
    out2 = os.path.join(outdir, "fin2.h5")
    p = subprocess.run([talus, "run", scene, "-o", out2, "--force", "--quiet",
                        "--stop-after-steps", "5"], capture_output=True, text=True, env=env)
    ck2 = os.path.join(outdir, "fin2.checkpoint.h5")
    if p.returncode != SIGTERM_EXIT or f"continue with: tools/run --resume {ck2}" not in p.stderr:
        fail(f"a stop under tools/run does not print 'tools/run --resume':\n{p.stderr}")

    talus_run(talus, "--resume", ck, "--quiet")
    n = compare(whole, out, "stopped at 23, resumed to the end")
    if not checkpoint_finished(ck):
        fail("the resumed run ended, but the checkpoint it continued is not marked finished")
    before = file_bytes(out)
    err = talus_run(talus, "--resume", ck, "--quiet", expect=2)
    if "finished" not in err or out not in err:
        fail(f"resuming a finished run: the message does not say so or name the trajectory:\n{err}")
    if file_bytes(out) != before:
        fail("resuming a finished run changed its trajectory")
    n = compare(whole, out, "after the refused second resume")
    print(f"finished: resumed to the end ({n} frames identical); a second --resume exits 2 "
          f"('{err.strip().splitlines()[0][:90]}...') and leaves the file's bytes as they were")


def mode_adaptive(talus, scene, outdir):
    """The scene without its `dt`: the adaptive step. Its frames land on the 5 ms cadence
    exactly, its steps vary, it has the same bits on 1 and 3 threads, and stopped and
    resumed (on 2 threads) it is the uninterrupted run."""
    with open(scene) as f:
        text = f.read()
    text, n = re.subn(r"(?m)^dt\s*=.*$", "", text)
    if n != 1:
        fail("the scene has no `dt = ...` line to remove")
    adaptive = os.path.join(outdir, "resume_adaptive.toml")
    with open(adaptive, "w") as f:
        f.write(text)
    whole = os.path.join(outdir, "adaptive_whole.h5")
    talus_run(talus, adaptive, "-o", whole, "--force", "--quiet", "--threads", "1")
    with talus_h5.load(whole) as r:
        times = np.asarray(r.frames.time)
        expected = np.arange(len(times)) * 0.005
        if len(times) != 21 or np.max(np.abs(times - expected)) > 1e-15:
            fail(f"adaptive: frames at {times}, expected every 0.005 s up to 0.1 s")
        dt = np.asarray(r.diagnostics["dt"])
        steps = len(dt)
        if abs(float(np.sum(dt)) - 0.1) > 1e-12 or dt.min() == dt.max():
            fail(f"adaptive: steps {dt.min()}..{dt.max()} s summing to {np.sum(dt)} s")
        t = np.asarray(r.diagnostics["time"])
        if not np.all(np.diff(t) > 0) or abs(t[-1] - 0.1) > 1e-15:
            fail("adaptive: diagnostics times do not rise to 0.1 s")
    three = os.path.join(outdir, "adaptive_t3.h5")
    talus_run(talus, adaptive, "-o", three, "--force", "--quiet", "--threads", "3")
    compare(whole, three, "adaptive: 3 threads against 1")
    k = steps // 2 + 1
    part = os.path.join(outdir, "adaptive_part.h5")
    ck = os.path.join(outdir, "adaptive_part.checkpoint.h5")
    for p in (ck, ck + ".tmp"):
        if os.path.exists(p):
            os.remove(p)
    talus_run(talus, adaptive, "-o", part, "--force", "--quiet", "--threads", "1",
              "--stop-after-steps", str(k), expect=SIGTERM_EXIT)
    talus_run(talus, "--resume", ck, "-o", part, "--threads", "2", "--quiet")
    n = compare(whole, part, f"adaptive: stopped after step {k}, resumed on 2 threads")
    print(f"adaptive: {steps} steps of {dt.min():.3g} to {dt.max():.3g} s, frames every 5 ms "
          f"exactly; 3 threads identical to 1; stopped after step {k} and resumed on 2 threads: "
          f"{n} frames identical to the uninterrupted run")


def main():
    if len(sys.argv) != 5 or sys.argv[4] not in ("stop", "signals", "damaged", "periodic",
                                                  "finished", "adaptive"):
        print(__doc__, file=sys.stderr)
        return 2
    talus, scene, outdir, mode = sys.argv[1:5]
    os.makedirs(outdir, exist_ok=True)
    {"stop": mode_stop, "signals": mode_signals, "damaged": mode_damaged, "periodic": mode_periodic,
     "finished": mode_finished, "adaptive": mode_adaptive}[mode](talus, scene, outdir)
    return 0


if __name__ == "__main__":
    sys.exit(main())

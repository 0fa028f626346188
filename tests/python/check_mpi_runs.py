#!/usr/bin/python3
"""`mpirun -np P talus run` (docs/mpi.md): the same file as one process, and failures agreed.

    check_mpi_runs.py TALUS SCENE OUTDIR bytes    np 1 to 4: the one-process run's bytes
    check_mpi_runs.py TALUS SCENE OUTDIR pour     a 3,000-grain pour: np 2 as one process
    check_mpi_runs.py TALUS SCENE OUTDIR stop     stopped at np 2, resumed at np 3
    check_mpi_runs.py TALUS SCENE OUTDIR errors   one exit code and one message
    check_mpi_runs.py TALUS SCENE OUTDIR solve    one solve at np 1 to 4: one process's bits
    check_mpi_runs.py TALUS SCENE OUTDIR parallel --parallel-output at np 2 and 3: one process's frames
    check_mpi_runs.py TALUS SCENE OUTDIR graded   the 1:5 bed in parts at np 2: one process's file

SCENE is tests/scenes/resume.toml (two stages, an emitter and an outlet, a kinematic clump,
wall contacts and all contacts written). The runs use mpirun --oversubscribe on this machine
(loopback); the files are compared with tests/python/check_resume.py's comparison (every
frame, row, flow, wall and contact record and diagnostic as bytes, wall clocks aside; the
sidecars but for the file name they name).

A scene that records contacts runs with every rank stepping the whole world (contact
recording does not run over ranks yet); the runs with NO_RECORDS have each rank hold and
step only its part of the bodies, rank 0 gathering every frame and checkpoint.

bytes: `talus run` without mpirun on 2 threads, then under mpirun at np 1, 2, 3 and 4 (1 or
  2 threads a rank): every trajectory equals the first, each run prints its end-of-run lines
  once, and no rank but the first leaves a file. Then without the records, in parts at np
  2, 3 and 4: the one-process file.
pour: tests/scenes/mpi_pour.toml (an emitter pours 3,000 grains into a box with an outlet,
  the engine's defaults) without mpirun on 2 threads, then at np 2 with every rank stepping
  the whole world and every solve over the ranks, and without the records in parts at np 4,
  on 1 thread a rank: the same file, as bytes and by h5diff (wall clocks aside). (Four ranks
  on this machine's two cores wait for the scheduler at each of the step's exchanges: beside
  a test keeping both cores busy the np 4 run took 227 s, against 29 s alone, so tests/
  mpi.cmake gives this test both cores.)
stop: in parts, a run at np 2 stopped at step 41 and resumed at np 3, and again resumed in
  one process: the uninterrupted one-process run. With the records, a run at np 2 stopped
  with --stop-after-steps (as SIGTERM, at step 37) exits 143 once with its checkpoint;
  resumed at np 3, it ends as the uninterrupted one-process run, bit for bit. Then a real SIGTERM, sent to both ranks (as a batch system does: exit 143) or to
  mpirun (which passes it on, and exits 1 itself), stops every rank after the same step,
  with the checkpoint and a closed trajectory, said once.
errors: at np 3, an invalid scene exits 2 and an output in a missing directory exits 4, each
  message once; `talus check` under mpirun exits 2; ranks given different arguments exit 2;
  a rank that fails alone (its working directory lacks the scene) stops the others after
  their first step: exit 2, its message shown once by the first rank, the first rank's
  trajectory closed and readable. None may hang (each has a time limit). Then at np 2 the
  first 0.03 s of benchmarks/polydisperse_1to5.toml (1 and 5 mm grains, masses 125x apart,
  where one process runs bgs's cluster sweeps by default): it ends, and says once that over
  ranks they do not run (each rank swept its own part alone, and the ranks hung).
solve: `talus solve-ranks` on tests/scenes/mpi_pour.toml after 1,200 steps (1 thread a rank)
  at np 1, 2, 3 and 4: the next step's problem solved over the ranks, each holding only its
  part, with pgs, bgs, pj and apgd under friction = "ccp" and bgs under "coulomb": the one-process impulses, velocities, iterations and
  residual, bit for bit (the command compares and exits 3 when they differ).
parallel: the pour with --parallel-output (every rank writes its own bodies' rows of one file,
  docs/output-format.md) in parts at np 2 and 3 and with every rank stepping the whole world
  at np 2: every frame holds the one-process frame's bodies with the same bits (compared by
  id: rows come rank after rank), every other record is the one-process file's, and the
  file says it was closed; and the run in parts at np 2 stopped with its checkpoint and
  resumed in one process is the uninterrupted run.
graded: the first 0.1 s of benchmarks/polydisperse_1to5.toml (1 and 5 mm grains; without
  the cluster sweeps, which run in one process only) in parts at np 2, 1 thread a rank: the
  one-process file (2 threads), as bytes. Its solves stop at their cap with impulses growing
  (as slow relaxation, not as a ray): until session 61 75 of its 271 steps were taken again
  on the whole world for the over-constrained check, some after the adaptive step had halved
  them, and such a retake began again at the first h, so frame 2 differed. Now at most a few
  are (detail::may_be_unbounded), and a retake goes on from the halvings (World::StepResume;
  RankWorld.AStepTakenAgainWholeGoesOnFromItsHalvings takes many).
Exit status 0 when all hold; 77 (skipped) when mpirun is missing.
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_resume  # noqa: E402
from check_resume import checkpoint_state, compare, fail  # noqa: E402

LIMIT = 300  # [s] the longest any one run may take before it counts as a hang


# Contact recording does not run over ranks yet: a scene that asks for it runs with every
# rank stepping the whole world ("whole" below); without it each rank holds and steps its
# part of the bodies ("parts", docs/mpi.md, "What the ranks do today").
NO_RECORDS = ["--set", "output.contacts=false", "--set", "output.wall_contacts=false"]
PARTS_LINE = "held and stepped its part of the bodies"


def graded_bed(scene):
    """benchmarks/polydisperse_1to5.toml (1 and 5 mm grains), from SCENE's checkout."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(scene)))
    return os.path.join(root, "benchmarks", "polydisperse_1to5.toml")


def mpirun(np_, *args):
    """The mpirun command line for np_ ranks on this machine: more ranks than cores, no
    binding (so that --threads means what it says), root allowed (CI runs as root)."""
    return ["mpirun", "--oversubscribe", "--bind-to", "none", "-np", str(np_), *args]


def children(pid):
    """The processes whose parent is `pid` (mpirun's ranks)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry))
    return found


def env():
    e = dict(os.environ)
    e["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
    e["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    return e


def run(cmd, expect, what, cwd=None):
    t = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env(), timeout=LIMIT, cwd=cwd)
    except subprocess.TimeoutExpired:
        fail(f"{what}: still running after {LIMIT} s (a hang): {' '.join(cmd)}")
    if p.returncode != expect:
        fail(f"{what}: exit {p.returncode}, expected {expect}: {' '.join(cmd)}\n{p.stderr}")
    return p.stderr, time.time() - t


def once(stderr, text, what):
    n = stderr.count(text)
    if n != 1:
        fail(f"{what}: '{text}' printed {n} times, expected once:\n{stderr}")


def mode_bytes(talus, scene, outdir):
    ref = os.path.join(outdir, "one_process.h5")
    run([talus, "run", scene, "-o", ref, "--force", "--threads", "2"], 0, "one process")
    for np_ in (1, 2, 3, 4):
        threads = 2 if np_ in (1, 3) else 1
        sub = os.path.join(outdir, f"np{np_}")
        shutil.rmtree(sub, ignore_errors=True)
        os.makedirs(sub)
        out = os.path.join(sub, "run.h5")
        what = f"np {np_}, {threads} thread(s) a rank"
        stderr, seconds = run(mpirun(np_, talus, "run", scene, "-o", out, "--threads", str(threads)),
                              0, what, cwd=sub)
        once(stderr, "talus: done at t =", what)
        n = compare(ref, out, what)
        left = sorted(os.listdir(sub))
        if left != ["run.h5", "run.xmf"]:
            fail(f"{what}: the run left {left}, expected only run.h5 and run.xmf")
        print(f"np {np_} ({threads} thread(s) a rank): {n} frames identical to one process "
              f"({seconds:.1f} s)")
    # each rank holding and stepping its part: the same file as one process
    ref = os.path.join(outdir, "one_process_parts.h5")
    run([talus, "run", scene, "-o", ref, "--force", "--threads", "2", *NO_RECORDS], 0, "one process, no records")
    for np_ in (2, 3, 4):
        threads = 2 if np_ == 3 else 1
        out = os.path.join(outdir, f"parts_np{np_}.h5")
        what = f"parts at np {np_}, {threads} thread(s) a rank"
        stderr, seconds = run(mpirun(np_, talus, "run", scene, "-o", out, "--force", "--threads", str(threads),
                                     *NO_RECORDS), 0, what)
        once(stderr, "talus: done at t =", what)
        once(stderr, PARTS_LINE, what)
        n = compare(ref, out, what)
        print(f"{what}: {n} frames identical to one process ({seconds:.1f} s)")


def mode_pour(talus, scene, outdir):
    """A 3,000-grain pour (tests/scenes/mpi_pour.toml, beside SCENE) with an emitter and an
    outlet, with the defaults: the whole run in parts at np 4, and at np 2 with every rank
    stepping the whole world and every solve over the ranks (--rank-min-contacts 0), is the
    one-process run, compared as bytes and by h5diff."""
    pour = os.path.join(os.path.dirname(scene), "mpi_pour.toml")
    ref = os.path.join(outdir, "one_process.h5")
    _, t1 = run([talus, "run", pour, "-o", ref, "--force", "--threads", "2"], 0, "pour, one process")
    ref_parts = os.path.join(outdir, "one_process_parts.h5")
    run([talus, "run", pour, "-o", ref_parts, "--force", "--threads", "2", *NO_RECORDS], 0,
        "pour, one process, no records")
    for np_, extra, reference in ((2, ["--rank-min-contacts", "0"], ref), (4, NO_RECORDS, ref_parts)):
        what = f"pour at np {np_} " + " ".join(extra)
        out = os.path.join(outdir, f"np{np_}_{'parts' if reference is ref_parts else 'whole'}.h5")
        stderr, t = run(mpirun(np_, talus, "run", pour, "-o", out, "--force", "--threads", "1", *extra), 0, what)
        once(stderr, "talus: done at t =", what)
        once(stderr, "talus: ranks: ", what)
        ranks_line = next(line for line in stderr.splitlines() if line.startswith("talus: ranks: "))
        if reference is ref_parts:
            once(stderr, PARTS_LINE, what)
        elif int(ranks_line.split()[2].replace(",", "")) == 0:
            fail(f"{what}: no solve went over the ranks:\n{ranks_line}")
        n = compare(reference, out, what)
        diff = subprocess.run(["h5diff", "--exclude-path", "/diagnostics/solver_wall_time", reference, out],
                              capture_output=True, text=True)
        if diff.returncode != 0:
            fail(f"{what}: h5diff finds differences (exit {diff.returncode}):\n{diff.stdout[-2000:]}{diff.stderr}")
        print(f"pour of {pour}: {what} ({t:.0f} s) identical to one process ({t1:.0f} s): {n} frames, "
              f"as bytes and by h5diff\n  {ranks_line}")


def compare_parallel(ref, out, what, written_in_parallel=True):
    """A file written with --parallel-output against the one-process file `ref`: the same
    frames, each frame's rows the same bodies with the same bits (rank after rank in the
    parallel file, so compared by id), and every other dataset's rows equal to ref's (the
    parallel file's datasets keep room past them: those rows must read unwritten or be
    beyond the committed frames). Returns the frame count."""
    import h5py
    import numpy as np
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))), "tools"))
    import talus_h5
    with talus_h5.load(ref) as a, talus_h5.load(out) as b:
        if len(a) != len(b):
            fail(f"{what}: {len(b)} frames, the one-process file has {len(a)}")
        for name in ("time", "step", "first_row", "row_count"):
            if getattr(a.frames, name).tobytes() != getattr(b.frames, name).tobytes():
                fail(f"{what}: /frames/{name} differs")
        for k in range(len(a)):
            fa, fb = a.frame(k), b.frame(k)
            oa, ob = np.argsort(fa["id"], kind="stable"), np.argsort(fb["id"], kind="stable")
            for key in fa:
                x, y = np.asarray(fa[key]), np.asarray(fb[key])
                if x.ndim == 0 or len(x) != len(oa):  # the frame's own values (its time, ...)
                    x, y = x.reshape(-1), y.reshape(-1)
                    oa_, ob_ = slice(None), slice(None)
                else:
                    oa_, ob_ = oa, ob
                if x[oa_].tobytes() != y[ob_].tobytes():
                    fail(f"{what}: frame {k}: {key} differs from the one-process frame")
        frames = len(a)
    with h5py.File(ref, "r") as fa, h5py.File(out, "r") as fb:
        committed = fb["frames/committed"][:] if written_in_parallel else [frames, 1]
        if committed[0] != frames or committed[1] != 1:
            fail(f"{what}: /frames/committed is {committed.tolist()}, expected [{frames}, 1]")

        def visit(name, obj):
            if not isinstance(obj, h5py.Dataset) or name.startswith("bodies/") or name.startswith("frames/"):
                return
            if name == "diagnostics/solver_wall_time":
                return
            if name not in fb:
                fail(f"{what}: /{name} is missing")
            x, y = obj[()], fb[name][()]
            if x.shape[1:] != y.shape[1:] or (x.ndim and len(y) < len(x)):
                fail(f"{what}: /{name} has shape {y.shape}, the one-process file {x.shape}")
            if (y[:len(x)] if x.ndim else y).tobytes() != x.tobytes():
                fail(f"{what}: /{name} differs from the one-process file")
        fa.visititems(visit)
        if dict(fa.attrs) .keys() != dict(fb.attrs).keys():
            fail(f"{what}: the root attributes differ")
    return frames


def mode_parallel(talus, scene, outdir):
    """--parallel-output (docs/output-format.md, "A file written in parallel"): the pour of
    mode_pour in parts at np 2 and 3, each rank writing its own bodies' rows, and at np 2
    with every rank stepping the whole world (the scene records contacts), rank 0 writing
    every row: each the one-process run's frames and records (compare_parallel), closed."""
    pour = os.path.join(os.path.dirname(scene), "mpi_pour.toml")
    ref_parts = os.path.join(outdir, "one_process_parts.h5")
    run([talus, "run", pour, "-o", ref_parts, "--force", "--threads", "2", *NO_RECORDS], 0,
        "pour, one process, no records")
    ref = os.path.join(outdir, "one_process.h5")
    run([talus, "run", pour, "-o", ref, "--force", "--threads", "2"], 0, "pour, one process")
    for np_, extra, reference in ((2, NO_RECORDS, ref_parts), (3, NO_RECORDS, ref_parts), (2, [], ref)):
        what = f"pour at np {np_} --parallel-output " + " ".join(extra)
        out = os.path.join(outdir, f"np{np_}_{'parts' if reference is ref_parts else 'whole'}.h5")
        stderr, t = run(mpirun(np_, talus, "run", pour, "-o", out, "--force", "--threads", "1",
                               "--parallel-output", *extra), 0, what)
        once(stderr, "talus: done at t =", what)
        once(stderr, f"from each of the {np_} ranks at once", what)
        if reference is ref_parts:
            once(stderr, PARTS_LINE, what)
        n = compare_parallel(reference, out, what)
        info = subprocess.run([talus, "info", out], capture_output=True, text=True)
        if info.returncode != 0 or "closed (written in parallel)" not in info.stdout:
            fail(f"{what}: talus info (exit {info.returncode}) does not say closed, written in parallel:\n{info.stdout}")
        print(f"{what} ({t:.0f} s): {n} frames, the one-process frames and records")
    # stopped at np 2 with its checkpoint, resumed in one process (which copies the committed
    # frames into a file of its own): the uninterrupted run
    out = os.path.join(outdir, "stopped_np2.h5")
    what = "pour at np 2 --parallel-output, stopped at step 1000 and resumed in one process"
    run(mpirun(2, talus, "run", pour, "-o", out, "--force", "--threads", "1", "--parallel-output",
               "--set", "output.checkpoint_interval=0.1", "--stop-after-steps", "1000", *NO_RECORDS),
        143, what + " (the stop)")
    run([talus, "run", "--resume", os.path.join(outdir, "stopped_np2.checkpoint.h5"), "--threads", "2"], 0,
        what + " (the resume)")
    n = compare_parallel(ref_parts, out, what, written_in_parallel=False)
    print(f"{what}: {n} frames, the one-process frames and records")


def mode_stop(talus, scene, outdir):
    # each rank holding its part: stopped at np 2, its checkpoint gathered on rank 0; resumed
    # at np 3 and in one process, each the uninterrupted one-process run
    whole = os.path.join(outdir, "whole_parts.h5")
    run([talus, "run", scene, "-o", whole, "--force", *NO_RECORDS], 0, "uninterrupted, one process, no records")
    part = os.path.join(outdir, "parts.h5")
    ck = os.path.join(outdir, "parts.checkpoint.h5")
    k = 41
    for resumed_at in (3, 1):
        for f in (part, ck):
            if os.path.exists(f):
                os.remove(f)
        what = f"parts, stopped at np 2 after step {k}"
        stderr, _ = run(mpirun(2, talus, "run", scene, "-o", part, "--stop-after-steps", str(k), *NO_RECORDS),
                        128 + signal.SIGTERM, what)
        once(stderr, "--stop-after-steps reached", what)
        if checkpoint_state(ck)[0] != k:
            fail(f"{what}: the checkpoint is of step {checkpoint_state(ck)[0]}, expected {k}")
        resume = [talus, "run", "--resume", ck]
        stderr, _ = run(mpirun(resumed_at, *resume) if resumed_at > 1 else resume, 0,
                        f"{what}, resumed at np {resumed_at}")
        once(stderr, "talus: done at t =", f"{what}, resumed at np {resumed_at}")
        n = compare(whole, part, f"{what}, resumed at np {resumed_at}")
        print(f"{what}, resumed at np {resumed_at}: {n} frames identical to the uninterrupted "
              f"one-process run")

    whole = os.path.join(outdir, "whole.h5")
    run([talus, "run", scene, "-o", whole, "--force"], 0, "uninterrupted, one process")
    part = os.path.join(outdir, "part.h5")
    ck = os.path.join(outdir, "part.checkpoint.h5")
    for f in (part, ck):
        if os.path.exists(f):
            os.remove(f)
    k = 37
    stderr, _ = run(mpirun(2, talus, "run", scene, "-o", part, "--stop-after-steps", str(k)),
                    128 + signal.SIGTERM, "np 2, stopped")
    once(stderr, "--stop-after-steps reached", "np 2, stopped")
    once(stderr, f"--resume {ck}", "np 2, stopped")
    if checkpoint_state(ck)[0] != k:
        fail(f"np 2: the checkpoint is of step {checkpoint_state(ck)[0]}, expected {k}")
    stderr, _ = run(mpirun(3, talus, "run", "--resume", ck), 0, "resumed at np 3")
    once(stderr, "talus: done at t =", "resumed at np 3")
    n = compare(whole, part, "stopped at np 2 after step 37, resumed at np 3")
    print(f"stopped at np 2 after step {k}, resumed at np 3: {n} frames identical to the "
          f"uninterrupted one-process run")

    # a real SIGTERM, sent to every rank (as a batch system does) or to mpirun (which passes
    # it on to the ranks): they stop after one same step, with a checkpoint
    for target in ("ranks", "mpirun"):
        what = f"SIGTERM to {target} at np 2"
        sig = os.path.join(outdir, f"signal_{target}.h5")
        sig_ck = os.path.join(outdir, f"signal_{target}.checkpoint.h5")
        if os.path.exists(sig_ck):
            os.remove(sig_ck)
        child = subprocess.Popen(
            mpirun(2, talus, "run", os.path.join(os.path.dirname(scene), "small_box.toml"),
                   "-o", sig, "--force", "--set", "simulation.duration=1000",
                   "--set", "output.interval=0.05"),
            stderr=subprocess.PIPE, text=True, env=env())
        line = child.stderr.readline()
        if not line.startswith("talus:"):
            child.kill()
            fail(f"{what}: the run's first line is '{line}'")
        time.sleep(1.5)
        if target == "mpirun":
            child.send_signal(signal.SIGTERM)
        else:
            ranks = children(child.pid)
            if len(ranks) != 2:
                child.kill()
                fail(f"{what}: mpirun has {len(ranks)} child processes, expected 2")
            for pid in ranks:
                os.kill(pid, signal.SIGTERM)
        try:
            rest = child.stderr.read()
            code = child.wait(timeout=LIMIT)
        except subprocess.TimeoutExpired:
            child.kill()
            fail(f"{what}: mpirun did not end")
        # mpirun reports the ranks' 143 when they were signalled; signalled itself, it
        # exits 1 after passing the signal on
        if code != (128 + signal.SIGTERM if target == "ranks" else 1):
            fail(f"{what}: exit {code}:\n{rest}")
        once(rest, "SIGTERM at t =", what)
        step, _ = checkpoint_state(sig_ck)
        info = subprocess.run([talus, "info", sig], capture_output=True, text=True)
        if info.returncode != 0 or not re.search(r"state:\s*closed", info.stdout):
            fail(f"{what}: talus info does not find a closed file:\n{info.stdout}{info.stderr}")
        print(f"{what}: both ranks stopped after step {step}; checkpoint and a closed trajectory")


def mode_errors(talus, scene, outdir):
    bad = os.path.join(outdir, "bad.toml")
    with open(scene) as f:
        text = f.read()
    with open(bad, "w") as f:
        f.write(re.sub(r"^dt\s*=.*$", "dt = -1.0", text, count=1, flags=re.M))
    stderr, _ = run(mpirun(3, talus, "run", bad, "-o", os.path.join(outdir, "bad.h5")), 2,
                    "np 3, an invalid scene")
    once(stderr, "talus: invalid scene", "np 3, an invalid scene")
    once(stderr, "dt", "np 3, an invalid scene")

    missing = os.path.join(outdir, "no_such_dir", "run.h5")
    stderr, seconds = run(mpirun(3, talus, "run", scene, "-o", missing), 4,
                          "np 3, an output in a missing directory")
    once(stderr, "cannot create trajectory file", "np 3, an output in a missing directory")

    stderr, _ = run(mpirun(2, talus, "check", scene), 2, "talus check at np 2")
    once(stderr, "only `talus run` and `talus solve-ranks` run over MPI ranks", "talus check at np 2")

    stderr, _ = run(["mpirun", "--oversubscribe", "--bind-to", "none",
                     "-np", "1", talus, "run", scene, "-o", os.path.join(outdir, "a.h5"), "--force", ":",
                     "-np", "1", talus, "run", scene, "-o", os.path.join(outdir, "b.h5"), "--force"],
                    2, "np 2, different arguments")
    once(stderr, "different arguments", "np 2, different arguments")

    # rank 1 alone fails: its working directory has no scene file of that name
    here, empty = os.path.join(outdir, "here"), os.path.join(outdir, "empty")
    for d in (here, empty):
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
    shutil.copy(scene, os.path.join(here, "scene.toml"))
    out = os.path.join(outdir, "alone.h5")
    stderr, _ = run(["mpirun", "--oversubscribe", "--bind-to", "none",
                     "-np", "1", "-wdir", here, talus, "run", "scene.toml", "-o", out, "--force", ":",
                     "-np", "1", "-wdir", empty, talus, "run", "scene.toml", "-o", out, "--force"],
                    2, "np 2, rank 1 fails alone")
    once(stderr, "talus: rank 1 of 2 failed:", "np 2, rank 1 fails alone")
    once(stderr, "scene.toml", "np 2, rank 1 fails alone")
    info = subprocess.run([talus, "info", out], capture_output=True, text=True)
    if info.returncode != 0 or not re.search(r"state:\s*closed", info.stdout):
        fail(f"np 2, rank 1 fails alone: rank 0's trajectory is not closed:\n{info.stdout}{info.stderr}")
    print("errors at np 2-3: invalid scene (2), missing directory (4), talus check (2), "
          "different arguments (2), one rank failing alone (2): one message each, no hang")
    graded = graded_bed(scene)
    out = os.path.join(outdir, "graded.h5")
    stderr, seconds = run(mpirun(2, talus, "run", graded, "-o", out, "--force", "--threads", "1",
                                 "--set", "simulation.duration=0.03"), 0, "graded masses at np 2")
    once(stderr, "talus: done at t =", "graded masses at np 2")
    once(stderr, "cluster sweeps do not run", "graded masses at np 2")
    print(f"graded masses at np 2: ended in {seconds:.1f} s, the cluster sweeps' note once")


def mode_graded(talus, scene, outdir):
    graded = graded_bed(scene)
    common = ["--force", "--set", "simulation.duration=0.1", "--set", "solver.cluster_sweeps=false", *NO_RECORDS]
    ref = os.path.join(outdir, "one_process.h5")
    _, t1 = run([talus, "run", graded, "-o", ref, "--threads", "2", *common], 0, "1:5 bed, one process")
    what = "1:5 bed in parts at np 2"
    out = os.path.join(outdir, "np2_parts.h5")
    stderr, t = run(mpirun(2, talus, "run", graded, "-o", out, "--threads", "1", *common), 0, what)
    once(stderr, PARTS_LINE, what)
    ranks_line = next(line for line in stderr.splitlines() if line.startswith("talus: ranks: "))
    whole = re.search(r"([0-9,]+) steps? taken again on the whole world", ranks_line)
    if whole and int(whole.group(1).replace(",", "")) > 5:
        fail(f"{what}: more than 5 steps taken again on the whole world (75 before session 61):\n{ranks_line}")
    n = compare(ref, out, what)
    print(f"{what} ({t:.0f} s) identical to one process ({t1:.0f} s): {n} frames\n  {ranks_line}")


def mode_solve(talus, scene, outdir):
    pour = os.path.join(os.path.dirname(scene), "mpi_pour.toml")
    for np_ in (1, 2, 3, 4):
        cmd = mpirun(np_, talus, "solve-ranks", pour, "--steps", "1200", "--threads", "1")
        what = f"solve-ranks at np {np_}"
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, env=env(), timeout=LIMIT, cwd=outdir)
        except subprocess.TimeoutExpired:
            fail(f"{what}: still running after {LIMIT} s (a hang)")
        if p.returncode != 0:
            fail(f"{what}: exit {p.returncode}:\n{p.stdout}{p.stderr}")
        same = [line for line in p.stdout.splitlines() if "same bits" in line]
        if len(same) != 5:
            fail(f"{what}: expected five solves (four solvers, bgs under both laws) with the same bits:\n{p.stdout}")
        print(f"np {np_}:\n{p.stdout}", end="")


def main():
    if len(sys.argv) != 5 or sys.argv[4] not in ("bytes", "pour", "stop", "errors", "solve", "parallel", "graded"):
        print(__doc__, file=sys.stderr)
        return 2
    talus, scene, outdir = (os.path.abspath(a) for a in sys.argv[1:4])
    mode = sys.argv[4]
    if shutil.which("mpirun") is None:
        print("mpirun not found (Debian openmpi-bin): skipped", file=sys.stderr)
        return 77
    os.makedirs(outdir, exist_ok=True)
    {"bytes": mode_bytes, "pour": mode_pour, "stop": mode_stop, "errors": mode_errors,
     "solve": mode_solve, "parallel": mode_parallel, "graded": mode_graded}[mode](talus, scene, outdir)
    return 0


if __name__ == "__main__":
    sys.exit(main())

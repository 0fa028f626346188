#!/usr/bin/python3
"""A killed run's file with a metadata block that fails its checksum is reported, at once.

    check_damaged_trajectory.py TALUS SCENE OUTDIR

A SIGKILL can stop a write between two memory pages, so a metadata block the writer was
rewriting in place may be left half old, half new: its checksum then fails for good. In
SWMR read mode (how a killed run's file is read) HDF5 retries such a block with a sleep
that doubles from 1 ns, 100 times by default: the reader waited for ever (io.killed_runs
hung so in CI). This test makes that damage on purpose:
- `talus run SCENE` (a long duration) is killed with SIGKILL a moment after it starts, which
  leaves the file marked "being written";
- one byte inside the object header of /diagnostics/iterations is flipped (found with h5py);
- `talus info` must end within 30 s with exit 4 and a message that names the file, the
  dataset and the failed checksum (not report "no diagnostics");
- tools/talus_h5.py's load must raise OSError naming the file, within 30 s (in a child
  process, so that a hang fails the test instead of holding it).
Exit status 0 when all hold.
"""
import os
import signal
import subprocess
import sys
import time

import h5py

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIMIT = 30  # [s] far beyond the 24 tries' ~34 ms; the old default waited for ever


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def main():
    talus, scene, outdir = sys.argv[1:4]
    os.makedirs(outdir, exist_ok=True)
    out = os.path.join(outdir, "damaged.h5")
    child = subprocess.Popen([talus, "run", scene, "-o", out, "--force", "--set", "simulation.duration=1000.0"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    child.stderr.readline()  # the file exists and its first frame is handed over
    time.sleep(0.5)
    child.send_signal(signal.SIGKILL)
    child.wait()

    with h5py.File(out, "r", swmr=True) as f:
        header = h5py.h5o.get_info(f["diagnostics/iterations"].id).addr
    with open(out, "r+b") as f:
        f.seek(header + 24)  # past the signature, version, flags and chunk size: a message
        byte = f.read(1)
        f.seek(header + 24)
        f.write(bytes([byte[0] ^ 0xFF]))

    start = time.monotonic()
    try:
        info = subprocess.run([talus, "info", out], capture_output=True, text=True, timeout=LIMIT)
    except subprocess.TimeoutExpired:
        fail(f"talus info of the damaged file did not end in {LIMIT} s")
    took = time.monotonic() - start
    if info.returncode != 4:
        fail(f"talus info exited {info.returncode}, expected 4 (I/O error):\n{info.stdout}{info.stderr}")
    for needed in (out, "/diagnostics/iterations", "checksum"):
        if needed not in info.stderr:
            fail(f"talus info's message does not name {needed!r}:\n{info.stderr}")
    print(f"talus info: exit 4 after {took:.2f} s: {info.stderr.strip()}")

    load = ("import sys; sys.path.insert(0, sys.argv[1]); import talus_h5\n"
            "try:\n    talus_h5.load(sys.argv[2])\nexcept OSError as e:\n    print(e); sys.exit(3)\n")
    start = time.monotonic()
    try:
        py = subprocess.run([sys.executable, "-c", load, os.path.join(TOP, "tools"), out],
                            capture_output=True, text=True, timeout=LIMIT)
    except subprocess.TimeoutExpired:
        fail(f"talus_h5.load of the damaged file did not end in {LIMIT} s")
    took = time.monotonic() - start
    if py.returncode != 3 or out not in py.stdout or "checksum" not in py.stdout:
        fail(f"talus_h5.load did not raise OSError naming the file and the checksum "
             f"(exit {py.returncode}):\n{py.stdout}{py.stderr}")
    print(f"talus_h5.load: OSError after {took:.2f} s: {py.stdout.strip()}")
    print("a damaged file is reported at once, by talus info and by the loader")


if __name__ == "__main__":
    main()

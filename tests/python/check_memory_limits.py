#!/usr/bin/python3
"""Memory limits through the talus command (issue 20, item 4).

    check_memory_limits.py TALUS SCENE OUTDIR

SCENE is tests/scenes/memory_512k.toml (512,000 beads). The process's address space is
limited with RLIMIT_AS (as `ulimit -v` would):
- 0.4 GB: the scene is refused before any grain is generated (exit 2) with the estimate
  and the limit, in well under the time the generation would take;
- 0.6 GB: the estimate's least figure fits, the run does not: it ends with exit 4 and a
  message (not std::bad_alloc and exit 134), and the trajectory it leaves is readable.
  (The run needs about 0.78 GB of address space since contacts without periodic axes
  carry no image shift, 2026-11-30; it needed more than 0.8 GB, the limit until then.)
Not run under AddressSanitizer, which needs far more address space than it uses.
Exit status 0 when all hold.
"""
import os
import resource
import subprocess
import sys
import time


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def limited(nbytes):
    def apply():
        resource.setrlimit(resource.RLIMIT_AS, (nbytes, nbytes))
    return apply


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    talus, scene, outdir = sys.argv[1:4]
    os.makedirs(outdir, exist_ok=True)
    out = os.path.join(outdir, "memory.h5")
    for p in (out, os.path.splitext(out)[0] + ".xmf"):
        if os.path.exists(p):
            os.remove(p)

    start = time.monotonic()
    p = subprocess.run([talus, "run", scene, "-o", out, "--force", "--threads", "2"],
                       capture_output=True, text=True, preexec_fn=limited(400_000_000))
    took = time.monotonic() - start
    if p.returncode != 2 or "need at least" not in p.stderr or "0.4 GB" not in p.stderr:
        fail(f"under 0.4 GB: exit {p.returncode}, expected 2 with the estimate and the limit:\n"
             f"{p.stderr}")
    if os.path.exists(out):
        fail("under 0.4 GB: an output file was created for a refused scene")
    print(f"0.4 GB: refused in {took:.2f} s: {p.stderr.strip().splitlines()[-1][:160]}...")

    p = subprocess.run([talus, "run", scene, "-o", out, "--force", "--threads", "2"],
                       capture_output=True, text=True, preexec_fn=limited(600_000_000))
    if p.returncode != 4 or "out of memory" not in p.stderr:
        fail(f"under 0.6 GB: exit {p.returncode}, expected 4 with 'out of memory':\n{p.stderr}")
    info = subprocess.run([talus, "info", out], capture_output=True, text=True)
    if info.returncode != 0:
        fail(f"under 0.6 GB: the trajectory left is not readable (talus info exit "
             f"{info.returncode}):\n{info.stdout}{info.stderr}")
    print(f"0.6 GB: exit 4: {[l for l in p.stderr.splitlines() if 'out of memory' in l][0]}; "
          f"the trajectory reads")
    return 0


if __name__ == "__main__":
    sys.exit(main())

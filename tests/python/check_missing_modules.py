#!/usr/bin/python3
"""tools/talus_h5.py, tools/talus_measure.py and tools/talus_scene.py under an interpreter
without numpy, h5py and tomli_w
(Debian's /usr/bin/python3 -I -S, which leaves out dist-packages; and the `python3` first on
PATH, if it is another interpreter and lacks h5py): each exits 1 with one line saying what
is missing for which interpreter and how to get it, not a traceback. Exit 0 if so."""
import os
import shutil
import subprocess
import sys

TOOLS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools")
problems = []

interpreters = [["/usr/bin/python3", "-I", "-S"]]
other = shutil.which("python3")
if other and os.path.realpath(other) != os.path.realpath("/usr/bin/python3"):
    probe = subprocess.run([other, "-c", "import h5py"], capture_output=True)
    if probe.returncode != 0:
        interpreters.append([other])
for python in interpreters:
    executable = subprocess.run([*python, "-c", "import sys; print(sys.executable)"],
                                capture_output=True, text=True).stdout.strip()
    numeric = "(Debian's python3-h5py and python3-numpy: apt install python3-h5py python3-numpy)"
    for script, args, how in (("talus_h5.py", ["out.h5"], numeric),
                              ("talus_measure.py", ["packing", "out.h5"], numeric),
                              ("talus_scene.py", [], "(Debian's python3-tomli-w: apt install python3-tomli-w)")):
        r = subprocess.run([*python, os.path.join(TOOLS, script), *args], capture_output=True, text=True)
        name = script[:-3]
        ok = (r.returncode == 1 and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr and
              r.stderr.startswith(f"{name}: ") and f"is missing for {executable}: run with /usr/bin/python3 "
              f"{how}" in r.stderr)
        print(f"{' '.join(python)} {script}: exit {r.returncode}: {r.stderr.strip()[-300:]}: "
              f"{'ok' if ok else 'FAIL'}")
        if not ok:
            problems.append(script)
sys.exit(1 if problems else 0)

#!/usr/bin/python3
"""Build a Talus scene in Python, run it, and load the result.

    import sys; sys.path.insert(0, "tools")       # or PREFIX/share/talus/python, installed
    import talus_scene
    scene = {
        "simulation": {"duration": 0.5, "gravity": [0, 0, -9.81]},
        "output": {"interval": 0.05},
        "material": [{"name": "glass", "density": 2500.0, "friction": 0.5}],
        "wall": [{"type": "box", "min": [0, 0, 0], "max": [0.1, 0.1, 0.3], "material": "glass"}],
        "particles": [{"shape": "sphere", "radius": 0.004, "material": "glass",
                       "random": {"min": [0.01] * 3, "max": [0.09, 0.09, 0.2], "count": 300, "seed": 1}}],
    }
    with talus_scene.run(scene, "box.h5") as run:   # writes box.toml, runs talus, loads box.h5
        print(run.frame(-1)["position"].mean(axis=0))

A scene is a dict with the scene file's tables as keys (docs/scene-format.md); an array of
tables ([[wall]], [[particles]], ...) is a list of dicts. Numbers, strings, booleans, lists
and dicts only (numpy numbers and arrays are turned into Python ones). Functions:

  write(scene, path)          the scene as a TOML file at path (returns path)
  check(scene, path)          write it, then `talus check`: a ScenePrompt names the bad key
  run(scene, out, ...)        write OUT's .toml beside OUT.h5, `talus run` it, and return the
                              loaded trajectory (tools/talus_h5.py); keyword arguments:
                              overrides (a dict of KEY: VALUE, as --set), threads, quiet
                              (default True), force (default True: overwrite OUT)

A scene the engine refuses raises SceneError with talus's message (file, line and key of the
written TOML) and exit status; a run that fails raises RunError likewise. The talus command
is found as tools/talus_h5.py finds it ($TALUS_BIN, the installed one, or build/bin/talus).
Debian's /usr/bin/python3 has what this needs: tomli-w (python3-tomli-w), numpy and h5py.
"""
import os
import subprocess
import sys

try:
    import tomli_w
except ImportError as missing:
    _HOW = (f"{missing.name} is missing for {sys.executable}: run with /usr/bin/python3 "
            "(Debian's python3-tomli-w: apt install python3-tomli-w)")
    if __name__ == "__main__":
        print(f"talus_scene: {_HOW}", file=sys.stderr)
        sys.exit(1)
    raise ImportError(_HOW, name=missing.name) from missing

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import talus_h5  # noqa: E402


class SceneError(ValueError):
    """talus refused the scene (exit status 2): the message names file, line and key."""

    def __init__(self, message, status):
        super().__init__(message)
        self.status = status


class RunError(RuntimeError):
    """talus run failed after starting (exit status 3, 4, ...; docs/command-line.md)."""

    def __init__(self, message, status):
        super().__init__(message)
        self.status = status


def _plain(value, where):
    """The value with numpy scalars and arrays made Python ones; anything else is refused."""
    if isinstance(value, bool) or isinstance(value, (int, float, str)):
        return value
    if isinstance(value, dict):
        return {str(k): _plain(v, f"{where}.{k}") for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if hasattr(value, "tolist"):  # numpy scalars and arrays
        return _plain(value.tolist(), where)
    raise TypeError(f"talus_scene: {where}: {type(value).__name__} has no TOML form "
                    "(numbers, strings, booleans, lists and dicts only)")


def write(scene, path):
    """Write `scene` (a dict) as the TOML scene file `path`; returns path."""
    if not isinstance(scene, dict):
        raise TypeError("talus_scene: a scene is a dict of the scene file's tables")
    text = tomli_w.dumps(_plain(scene, "scene"))
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def _talus():
    talus = talus_h5.talus_binary()
    if not os.access(talus, os.X_OK):
        raise FileNotFoundError(f"the talus command is not at {talus}: build it (tools/run, or cmake "
                                "--build build --target talus) or set TALUS_BIN")
    return talus


def check(scene, path):
    """Write `scene` to `path` and run `talus check` on it; returns talus's summary line.
    Raises SceneError when the engine refuses it."""
    write(scene, path)
    out = subprocess.run([_talus(), "check", str(path)], capture_output=True, text=True)
    if out.returncode != 0:
        raise SceneError(out.stderr.strip() or out.stdout.strip(), out.returncode)
    return out.stdout.strip()


def run(scene, out, overrides=None, threads=None, quiet=True, force=True):
    """Write `scene` beside `out` (OUT.toml for OUT.h5), run it with `talus run`, and return
    the loaded trajectory (talus_h5.Trajectory: use it in a with block). `overrides` is a dict
    {"solver.tolerance": 1e-5, ...} passed as --set KEY=VALUE."""
    out = str(out)
    stem, ext = os.path.splitext(out)
    if ext != ".h5":
        raise ValueError(f"talus_scene: the output {out!r} should end in .h5")
    toml_path = write(scene, stem + ".toml")
    cmd = [_talus(), "run", toml_path, "-o", out]
    if force:
        cmd.append("--force")
    if quiet:
        cmd.append("--quiet")
    if threads is not None:
        cmd += ["--threads", str(int(threads))]
    for key, value in (overrides or {}).items():
        text = str(value).lower() if isinstance(value, bool) else str(_plain(value, key))
        cmd += ["--set", f"{key}={text}"]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode == 2:
        raise SceneError(done.stderr.strip(), done.returncode)
    if done.returncode != 0:
        raise RunError(done.stderr.strip(), done.returncode)
    return talus_h5.load(out)


if __name__ == "__main__":
    print(__doc__)

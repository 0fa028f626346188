#!/usr/bin/python3
"""Read a Talus trajectory (HDF5, docs/output-format.md) into numpy arrays.

    import talus_h5
    run = talus_h5.load("out.h5")
    len(run)                   # complete frames
    run.attrs["scene"]         # root attributes, strings decoded
    run.frames.time            # per-frame index arrays: time, step, first_row, row_count
    run.diagnostics["residual"]
    run.flow["removed_count"]  # per frame and outlet (emitted_* per emitter); {} without them
    run.walls["force"]         # (frames, walls, 3) mean force on each wall since the previous
                               # frame [N]; also "torque", "names"; {} without walls
    run.wall_contacts(k)       # frame k's body-wall contacts ([output] wall_contacts): dict of
                               # "wall", "body", "point", "impulse", "angular_impulse", "dt"
    run.contacts(k)            # frame k's contacts, bodies and walls ([output] contacts): dict of
                               # "a", "b" (ids; a = 2**64-1 for a wall), "wall" (-1 between two
                               # bodies), "point", "normal", "gap", "normal_impulse",
                               # "tangential_impulse", "segment" (k, 2, 3), "dt"; None without
    last = run.frame(-1)       # dict: id, position, orientation (w,x,y,z), velocity,
                               # angular_velocity (body frame), radius, material, time, step,
                               # and (newer files) shape, clump. Reals come as float64 whatever
                               # the file stores ([output] precision): float32 values widen
                               # exactly; run.frame(k, native=True) keeps the stored dtype
    run.precision              # "float64" or "float32": how the file stores the body reals
    run.clump_templates        # list of (n_k, 4) arrays: body-frame x, y, z, r per sphere
    spheres, body = run.spheres(last)  # every sphere in the world, for drawing clumps
    path = run.track([17, 3])  # (frames, 2, 3): bodies 17 and 3 in every frame, in that
                               # order, NaN where a frame lacks one; run.track(ids, "velocity")

As a command, /usr/bin/python3 tools/talus_h5.py OUT.h5 [--json] prints the summary of
`talus info` (it runs that command: $TALUS_BIN, or build/bin/talus of this repository), so
there is one summary; talus_h5.info(path) gives its JSON form as a dict,
talus_h5.summary(run) its text. Debian's /usr/bin/python3 (also the shebang) has h5py and
numpy.

A file its writer closed opens plainly (run.closed_cleanly; a file written in parallel opens
so always, and /frames/committed says whether it was closed); one still being written, or one
that was killed, opens read-only in SWMR read mode, so it can be read up to its last complete
frame (run.refresh() re-reads the index of a file not closed). An index entry is complete
once its marker (/frames/row_count, /diagnostics/step) differs from the fill value 2**64-1.
A metadata block a killed run left torn makes load() raise OSError at once (24 tries at it,
not HDF5's 100 with a doubling sleep, which never end: docs/output-format.md); a torn chunk
index of a /bodies column keeps only its frames out (run.torn_frames, and a warning).
"""
import json
import os
import subprocess
import sys
from dataclasses import dataclass

try:
    import numpy as np
    import h5py
except ImportError as missing:
    _HOW = (f"{missing.name} is missing for {sys.executable}: run with /usr/bin/python3 "
            "(Debian's python3-h5py and python3-numpy: apt install python3-h5py python3-numpy)")
    if __name__ == "__main__":
        print(f"talus_h5: {_HOW}", file=sys.stderr)
        sys.exit(1)
    raise ImportError(_HOW, name=missing.name) from missing

FORMAT = "talus-trajectory"
UNWRITTEN = np.iinfo(np.uint64).max  # fill value of the index markers: "not yet written"
# The columns every trajectory has. The loader reads every column a file holds in /bodies,
# /diagnostics and /flow (the writer's column table, io/trajectory/layout.cpp, decides
# which), so a column added there reaches frame(), diagnostics and flow without a change
# here; these lists only say what a file must have.
BODY_FIELDS = ("id", "position", "orientation", "velocity", "angular_velocity", "radius", "material")
# the per-body reals: float64, or float32 with [output] precision = "float32"
REAL_BODY_FIELDS = ("position", "orientation", "velocity", "angular_velocity", "radius")
DIAGNOSTIC_FIELDS = ("step", "time", "contacts", "iterations", "residual", "kinetic_energy",
                     "potential_energy", "solver_wall_time", "envelope", "converged")
SHAPE_NAMES = ("sphere", "capsule", "ellipsoid", "clump")  # /bodies/shape codes 0, 1, 2, 3
# /flow: one row per frame, one column per emitter (emitted_*) or outlet (removed_*)
FLOW_FIELDS = tuple(f"{what}_{kind}" for what in ("emitted", "removed")
                    for kind in ("count", "mass", "total_count", "total_mass"))


class NotATrajectory(ValueError):
    """The file is HDF5 but not a Talus trajectory."""


@dataclass
class Frames:
    """The frame index: row i of /bodies/* belongs to frame k if first_row[k] <= i < first_row[k] + row_count[k]."""
    time: np.ndarray       # [s], float64
    step: np.ndarray       # uint64
    first_row: np.ndarray  # uint64
    row_count: np.ndarray  # uint64

    def __len__(self):
        return len(self.time)


def _decode(value):
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if isinstance(value, np.ndarray) and value.dtype.kind in "OSU":
        return [_decode(v) for v in value.tolist()]
    if isinstance(value, h5py.Empty):
        return []
    return value


# Tries at a metadata block that fails its checksum in SWMR read mode (as io/hdf5_handles.hpp):
# HDF5 doubles a sleep between tries from 1 ns, so its default of 100 would hold the reader
# of a block a killed writer left half written for ever; 24 give up after about 34 ms.
SWMR_READ_ATTEMPTS = 24


def _hdf5_library(fapl):
    """The HDF5 C library h5py runs on, through ctypes, for the one file-access setting h5py
    does not offer; None if it cannot be told. A process may have several loaded (pvpython:
    ParaView's MPI build beside h5py's serial one): the likeliest by name is taken, and only
    if it reads back a property that h5py just set on `fapl`."""
    import ctypes
    try:
        with open("/proc/self/maps") as maps:
            paths = {line.split()[-1] for line in maps if "/libhdf5" in line}
    except OSError:
        return None
    paths = [p for p in paths if os.path.basename(p).startswith("libhdf5") and "_hl" not in os.path.basename(p)]
    where = os.path.dirname(h5py.h5.__file__)  # .../h5py/_debian_h5py_serial, or a wheel's h5py

    def likeness(path):
        name = os.path.basename(path)
        if "h5py" in path:  # a wheel's own copy (h5py.libs/)
            return 3
        if "_debian_h5py_serial" in where:
            return 2 if "serial" in name else 0
        if "_debian_h5py_mpi" in where:
            return 2 if "mpi" in name else 0
        return 1
    if not paths:
        return None
    best = max(sorted(paths), key=likeness)
    try:
        lib = ctypes.CDLL(best)
        lib.H5Pget_sieve_buf_size.argtypes = (ctypes.c_int64, ctypes.POINTER(ctypes.c_size_t))
        lib.H5Pset_metadata_read_attempts.argtypes = (ctypes.c_int64, ctypes.c_uint)
    except (OSError, AttributeError):
        return None
    default = fapl.get_sieve_buf_size()
    fapl.set_sieve_buf_size(default + 17)
    seen = ctypes.c_size_t(0)
    same = lib.H5Pget_sieve_buf_size(fapl.id, ctypes.byref(seen)) >= 0 and seen.value == default + 17
    fapl.set_sieve_buf_size(default)
    return lib if same else None


def _open_swmr(path):
    """SWMR read mode, with SWMR_READ_ATTEMPTS tries at a damaged block where possible."""
    fapl = h5py.h5p.create(h5py.h5p.FILE_ACCESS)
    fapl.set_fclose_degree(h5py.h5f.CLOSE_STRONG)
    lib = _hdf5_library(fapl)
    if lib is not None and lib.H5Pset_metadata_read_attempts(fapl.id, SWMR_READ_ATTEMPTS) >= 0:
        fid = h5py.h5f.open(os.fsencode(path), h5py.h5f.ACC_RDONLY | h5py.h5f.ACC_SWMR_READ, fapl=fapl)
        return h5py.File(fid)
    return h5py.File(path, "r", swmr=True)


def _open(path):
    """(file, closed cleanly). A plain open succeeds only on a file its writer closed (as
    io/hdf5_handles.hpp's open_trajectory_for_reading); one still being written, or left by a
    killed run, opens in SWMR mode."""
    try:
        return h5py.File(path, "r"), True
    except OSError as plain:
        try:
            return _open_swmr(path), False
        except OSError:
            raise plain from None


def _leading_written(marker):
    """Number of leading entries whose marker is set."""
    unwritten = np.flatnonzero(marker == UNWRITTEN)
    return int(unwritten[0]) if len(unwritten) else len(marker)


class Trajectory:
    """An open trajectory. Body rows are read lazily, one frame at a time."""

    def __init__(self, path):
        self.path = str(path)
        self._file, self.closed_cleanly = _open(self.path)
        self.attrs = {k: _decode(v) for k, v in self._file.attrs.items()}
        if self.attrs.get("format") != FORMAT:
            self._file.close()
            raise NotATrajectory(f"{self.path}: not a Talus trajectory (root attribute format is "
                                 f"{self.attrs.get('format')!r}, expected {FORMAT!r})")
        try:
            self._read_index()
        except (KeyError, OSError) as e:
            self._file.close()
            if "checksum" not in str(e):
                raise
            raise OSError(f"{self.path}: damaged: {e}; a run killed while writing a metadata block "
                          f"can leave it so (`talus info {self.path}` names the dataset)") from e

    def _read_index(self):
        f = self._file
        bodies = f["bodies"]
        missing_fields = [name for name in BODY_FIELDS if name not in bodies]
        if missing_fields:
            raise NotATrajectory(f"{self.path}: /bodies lacks {', '.join(missing_fields)}")
        # every column the file holds counts (the writer's column table decides which)
        body_rows = min(bodies[name].shape[0] for name in self._body_fields())
        n = min(f["frames"][name].shape[0] for name in ("time", "step", "first_row", "row_count"))
        row_count = f["frames/row_count"][:n]
        first_row = f["frames/first_row"][:n]
        complete = _leading_written(row_count)
        # A frame whose rows are not all present is not complete either.
        ends = first_row[:complete] + row_count[:complete]
        missing = np.flatnonzero(ends > body_rows)
        if len(missing):
            complete = int(missing[0])
        parallel = "committed" in f["frames"]
        if parallel:
            # written in parallel: no frame past the count the writer committed, closed once
            # marked so (such a file opens plainly also while it is being written)
            committed = f["frames/committed"][:2]
            complete = min(complete, int(committed[0]))
            self.closed_cleanly = bool(committed[1] == 1)
        self.torn_frames = 0
        if not self.closed_cleanly and not parallel:
            # only a killed one-process run can have torn a block (talus info checks the same)
            complete = self._count_untorn(bodies, first_row, row_count, complete)
        self.frames = Frames(time=f["frames/time"][:complete], step=f["frames/step"][:complete],
                             first_row=first_row[:complete], row_count=row_count[:complete])
        d = f["diagnostics"]
        m = min(d[name].shape[0] for name in DIAGNOSTIC_FIELDS)
        steps = _leading_written(d["step"][:m])
        # every per-step column the file holds (DIAGNOSTIC_FIELDS are those every file has)
        self.diagnostics = {name: d[name][:steps] for name in d
                            if isinstance(d[name], h5py.Dataset) and d[name].shape[0] >= steps}
        # /flow rows are written before their frame's row_count: complete with the frame
        flow = f["flow"] if "flow" in f else {}
        self.flow = {name: flow[name][:complete] for name in flow if isinstance(flow[name], h5py.Dataset)}
        # /walls: mean force and torque per frame and wall (files written before they existed,
        # or scenes without walls, have none)
        walls = f["walls"] if "walls" in f else {}
        self.walls = {}
        if "force" in walls:
            self.walls = {"names": _decode(walls.attrs["names"]),
                          "torque_reference_points": np.asarray(
                              walls.attrs["torque_reference_points"]).reshape(-1, 3),
                          "force": walls["force"][:complete], "torque": walls["torque"][:complete]}

    def refresh(self):
        """Re-read the index of a file that is still being written (a closed file holds still)."""
        if self.closed_cleanly:
            return
        for name in ("frames/time", "frames/step", "frames/first_row", "frames/row_count"):
            self._file[name].refresh()
        for name in self._body_fields():
            self._file["bodies/" + name].refresh()
        for group in ("diagnostics", "flow"):
            if group in self._file:
                for name, item in self._file[group].items():
                    if isinstance(item, h5py.Dataset):
                        item.refresh()
        self._read_index()

    def __len__(self):
        return len(self.frames)

    @property
    def precision(self):
        """How the file stores the per-body reals: "float64" or "float32"."""
        return str(self._file["bodies/position"].dtype)

    def frame(self, i, native=False):
        """Frame i (negative counts from the end) as a dict of numpy arrays, plus its time and
        step. The reals are float64 whatever the file stores (float32 widens exactly), unless
        `native`, which keeps the stored dtype."""
        n = len(self)
        k = i + n if i < 0 else i
        if not 0 <= k < n:
            raise IndexError(f"frame {i} out of range ({n} frames)")
        a = int(self.frames.first_row[k])
        b = a + int(self.frames.row_count[k])
        out = {name: self._file["bodies/" + name][a:b] for name in self._body_fields()}
        if not native:
            for name in out:
                if out[name].dtype.kind == "f":
                    out[name] = out[name].astype(np.float64, copy=False)
        out["time"] = self.frames.time[k]
        out["step"] = self.frames.step[k]
        return out

    def wall_contacts(self, i):
        """The body-wall contacts of frame i's last step, as written with [output]
        wall_contacts = true: a dict of arrays "wall" (index into walls["names"]), "body"
        (stable id), "point" [m], "impulse" (on the wall over the step) [N s],
        "angular_impulse" [N m s], and "dt", the step [s]. None if the file has none."""
        return self._frame_rows("walls/contacts", i, ("wall", "body", "point", "impulse", "angular_impulse"))

    CONTACT_FIELDS = ("wall", "a", "b", "point", "normal", "gap", "normal_impulse",
                      "tangential_impulse", "segment")

    def contacts(self, i):
        """Every contact of frame i's last step, as written with [output] contacts = true: a
        dict of arrays "wall" (index into walls["names"], -1 between two bodies), "a" and "b"
        (stable ids; "a" is 2**64-1 for a wall), "point" [m], "normal" (unit, A to B), "gap"
        [m] (< 0 overlap), "normal_impulse" [N s] and "tangential_impulse" [N s] (A on B over
        the step), "segment" (k, 2, 3): A's and B's centres [m]; and "dt", the step [s].
        None if the file has none."""
        out = self._frame_rows("contacts", i, self.CONTACT_FIELDS)
        if out is not None:
            out["segment"] = out["segment"].reshape(-1, 2, 3)
        return out

    def shapes(self, i):
        """Frame i's bodies other than spheres as drawn (/shapes, written for runs that start
        with a capsule, an ellipsoid or a clump): a dict of arrays "body" (stable id),
        "material", "position" (k, 3) [m] and "axes" (k, 3, 3) [m]: per glyph three world
        vectors, an ellipsoid's semi-axes (a clump's sphere or a capsule's end sphere: r
        times the body's axes), or for a capsule's middle its radius across, half length
        along the axis and radius across; and "cylinders", how many of the rows, the last
        ones, are capsules' middles. None if the file has none."""
        if "shapes" not in self._file:
            return None
        n = len(self)
        k = i + n if i < 0 else i
        if not 0 <= k < n:
            raise IndexError(f"frame {i} out of range ({n} frames)")
        g = self._file["shapes"]
        a = int(g["first_row"][k])
        b = a + int(g["row_count"][k])
        out = {name: g[name][a:b] for name in ("body", "material", "position", "axes")}
        out["axes"] = out["axes"].reshape(-1, 3, 3)
        out["cylinders"] = int(g["cylinders"][k])
        return out

    def _frame_rows(self, group, i, fields):
        """Frame i's rows of the `fields` of a group indexed per frame by first_row and
        row_count (/walls/contacts, /contacts), with "dt", the step their impulses cover;
        None if the file lacks the group."""
        if group not in self._file:
            return None
        n = len(self)
        k = i + n if i < 0 else i
        if not 0 <= k < n:
            raise IndexError(f"frame {i} out of range ({n} frames)")
        c = self._file[group]
        a = int(c["first_row"][k])
        b = a + int(c["row_count"][k])
        out = {name: c[name][a:b] for name in fields}
        # per frame since the adaptive step (its steps vary); the fixed step's attribute before
        out["dt"] = float(c["dt"][k]) if "dt" in c else float(c.attrs["dt"])
        return out

    def track(self, ids, field="position"):
        """Follow bodies through the run: an array (frames, len(ids), width) of `field` (any
        /bodies column: "position", "velocity", "orientation", "radius", …; width 1 for a
        scalar column), the bodies in the order of `ids`, as float64, NaN in a frame that does
        not hold the body (not yet emitted, or gone through an outlet). Raises KeyError for an
        id that no frame holds (most likely a mistyped id) and for an unknown field."""
        if field not in self._body_fields():
            raise KeyError(f"no body column {field!r}; the file has {', '.join(self._body_fields())}")
        ids = np.asarray(ids, dtype=np.uint64).ravel()
        column = self._file["bodies/" + field]
        width = column.shape[1] if column.ndim > 1 else 1
        out = np.full((len(self), len(ids), width), np.nan)
        seen = np.zeros(len(ids), dtype=bool)
        for k in range(len(self)):
            a = int(self.frames.first_row[k])
            b = a + int(self.frames.row_count[k])
            if a == b:
                continue
            frame_ids = self._file["bodies/id"][a:b]
            order = np.argsort(frame_ids, kind="stable")
            at = np.minimum(np.searchsorted(frame_ids, ids, sorter=order), len(order) - 1)
            rows = order[at]
            hit = frame_ids[rows] == ids
            values = column[a:b].reshape(b - a, width)
            out[k, hit] = values[rows[hit]]
            seen |= hit
        if not seen.all():
            raise KeyError(f"no frame holds the bodies with ids {ids[~seen].tolist()[:10]}")
        return out

    def _count_untorn(self, bodies, first_row, row_count, complete):
        """The leading frames of `complete` whose rows read. A kill can tear the block of a body
        column's chunk index it was rewriting (docs/output-format.md, as talus info): the
        frames it indexes, the newest, then fail their checksum. They are not counted;
        self.torn_frames says how many, and a warning names the column."""
        names = self._body_fields()
        torn = []

        def readable(k):
            if row_count[k] == 0:
                return True
            row = int(first_row[k] + row_count[k] - 1)
            for name in names:
                try:
                    bodies[name][row]
                except (OSError, KeyError) as e:
                    if "checksum" not in str(e):
                        raise
                    torn.append(name)
                    return False
            return True
        if complete == 0 or readable(complete - 1):
            return complete
        lo, hi = 0, complete - 1  # frames below lo read; frame hi does not
        while lo < hi:
            mid = (lo + hi) // 2
            if readable(mid):
                lo = mid + 1
            else:
                hi = mid
        self.torn_frames = complete - hi
        import warnings
        warnings.warn(f"{self.path}: {self.torn_frames} more frames not counted: their rows' chunk index "
                      f"(/bodies/{torn[-1]}) fails its checksum, torn by the kill (docs/output-format.md)",
                      stacklevel=4)
        return hi

    def _body_fields(self):
        bodies = self._file["bodies"]
        return BODY_FIELDS + tuple(n for n in bodies if n not in BODY_FIELDS and isinstance(bodies[n], h5py.Dataset))

    @property
    def clump_templates(self):
        """Clump templates: a list of (n_k, 4) arrays (body-frame x, y, z and radius of each
        sphere [m]); empty for files without /clumps."""
        if "clumps" not in self._file:
            return []
        first = self._file["clumps/first"][:]
        spheres = self._file["clumps/spheres"][:]
        return [spheres[first[t]:first[t + 1]] for t in range(len(first) - 1)]

    def spheres(self, frame):
        """Every sphere of a frame in world coordinates, for drawing: returns (S, 4) rows
        (x, y, z, r) and, per row, the index of its body in the frame. Sphere bodies give one
        row (their radius), each clump one row per sphere; capsules and ellipsoids are left
        out (their shape is not a set of spheres)."""
        shape = frame.get("shape")
        n = len(frame["id"])
        if shape is None:
            shape = np.zeros(n, dtype=np.uint8)
        templates = self.clump_templates
        rows, owner = [], []
        for i in range(n):
            if shape[i] == 0:
                rows.append(np.concatenate([frame["position"][i], [frame["radius"][i]]]))
                owner.append(i)
            elif shape[i] == 3:
                t = templates[int(frame["clump"][i])]
                world = frame["position"][i] + rotate(frame["orientation"][i], t[:, :3])
                for k in range(len(t)):
                    rows.append(np.concatenate([world[k], [t[k, 3]]]))
                    owner.append(i)
        return np.array(rows, dtype=float).reshape(-1, 4), np.array(owner, dtype=np.int64)

    def close(self):
        self._file.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def rotate(q, v):
    """Rotate the rows of v (k, 3) by the unit quaternion q = (w, x, y, z) (body → world)."""
    w, u = q[0], np.asarray(q[1:4])
    v = np.asarray(v, dtype=float)
    t = 2.0 * np.cross(u, v)
    return v + w * t + np.cross(u, t)


def load(path):
    """Open a Talus trajectory; raises NotATrajectory for another HDF5 file, OSError if unreadable."""
    return Trajectory(path)


def talus_binary():
    """The talus command: $TALUS_BIN; beside an install (this file in PREFIX/share/talus/python),
    PREFIX/bin/talus; else build/bin/talus of the repository this file is in."""
    if os.environ.get("TALUS_BIN"):
        return os.environ["TALUS_BIN"]
    here = os.path.dirname(os.path.abspath(__file__))
    installed = os.path.join(here, "..", "..", "..", "bin", "talus")
    if os.path.basename(here) == "python" and os.path.isfile(installed):
        return installed
    return os.path.join(here, "..", "build", "bin", "talus")


def _talus_info(path, *options):
    talus = talus_binary()
    if not os.access(talus, os.X_OK):
        raise FileNotFoundError(f"the talus command is not at {talus}: build it (cmake --build build "
                                f"--target talus) or set TALUS_BIN")
    return subprocess.run([talus, "info", *options, str(path)], capture_output=True, text=True)


def info(path):
    """`talus info --json PATH` as a dict (keys in docs/output-format.md). Raises OSError
    with talus's message if it cannot summarise the file."""
    out = _talus_info(path, "--json")
    if out.returncode != 0:
        raise OSError(out.stderr.strip())
    return json.loads(out.stdout)


def summary(run):
    """The text summary of `talus info` for a Trajectory (or a path)."""
    out = _talus_info(run.path if isinstance(run, Trajectory) else run)
    if out.returncode != 0:
        raise OSError(out.stderr.strip())
    return out.stdout.rstrip("\n")


def main(argv):
    args = argv[1:]
    json_form = "--json" in args
    paths = [a for a in args if a != "--json"]
    if len(paths) != 1 or len(args) > 2:
        print("usage: talus_h5.py OUT.h5 [--json]   (prints the summary of talus info)", file=sys.stderr)
        return 2
    try:
        out = _talus_info(paths[0], *(["--json"] if json_form else []))
    except OSError as e:
        print(f"talus_h5: {e}", file=sys.stderr)
        return 1
    sys.stdout.write(out.stdout)
    sys.stderr.write(out.stderr)
    return out.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv))

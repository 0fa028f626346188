#!/usr/bin/python3
"""[output] precision and compression: four runs of one scene, read with h5py.

    check_precision.py F64.h5 F64_GZIP6.h5 F32_GZIP1.h5 F32.h5

F64 is the reference (float64, uncompressed). Checks:
- storage: the per-body reals and the walls' surface points are float64 / float32 as asked,
  everything else keeps its type
  (ids uint64, indexes and diagnostics float64); the dataset creation property lists carry
  shuffle + deflate at the asked level on the row datasets, and no filter on the index;
- data: a compressed file holds exactly the data of its uncompressed twin (every dataset of
  /bodies, /frames, /flow, /walls, bit for bit); a float32 file's reals are the float64 run's
  rounded to nearest float32 by numpy (bit for bit); the physics does not depend on the
  output (diagnostics equal, wall-clock column excepted);
- compression pays: each compressed file is smaller than its twin;
- XDMF: the sidecar declares Precision="4" on every Float item of a float32 file, "8" of a
  float64 one;
- tools/talus_h5.py reads both: frame() widens float32 exactly to float64, and says which.
Exit 0 if all hold, 1 with a list otherwise.
"""
import os
import re
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import talus_h5  # noqa: E402

REALS = talus_h5.REAL_BODY_FIELDS
problems = []


def expect(ok, what):
    if not ok:
        problems.append(what)


def datasets(f, groups=("bodies", "frames", "flow", "walls")):
    out = {}
    for g in groups:
        if g in f:
            f[g].visititems(lambda name, obj, g=g: out.__setitem__(f"{g}/{name}", obj)
                            if isinstance(obj, h5py.Dataset) else None)
    return out


def same_bits(a, b):
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def check_storage(path, f, real_dtype, level):
    for name, ds in datasets(f).items():
        rows = (name.startswith("bodies/") or name == "walls/surface/points" or
                (name.startswith("walls/contacts/") and not name.endswith(("first_row", "row_count"))))
        want_level = level if rows and level > 0 else None
        got = (ds.compression_opts if ds.compression == "gzip" else None)
        expect(got == want_level, f"{path}:{name}: gzip level {got}, expected {want_level}")
        expect(ds.shuffle == (want_level is not None),
               f"{path}:{name}: shuffle {ds.shuffle}, expected {want_level is not None}")
        base = name.split("/")[-1]
        if (name.startswith("bodies/") and base in REALS) or name == "walls/surface/points":
            expect(ds.dtype == real_dtype, f"{path}:{name}: dtype {ds.dtype}, expected {real_dtype}")
    expect(f["bodies/id"].dtype == np.uint64, f"{path}: /bodies/id is {f['bodies/id'].dtype}")
    expect(f["frames/time"].dtype == np.float64, f"{path}: /frames/time is {f['frames/time'].dtype}")
    for name in ("time", "residual", "kinetic_energy"):
        ds = f["diagnostics/" + name]
        expect(ds.dtype == np.float64 and ds.compression is None,
               f"{path}: /diagnostics/{name} is {ds.dtype}, filter {ds.compression}")


def check_same_data(pa, fa, pb, fb):
    da, db = datasets(fa), datasets(fb)
    expect(sorted(da) == sorted(db), f"{pa} and {pb} hold different datasets")
    for name in sorted(set(da) & set(db)):
        expect(same_bits(da[name][()], db[name][()]), f"{name}: {pa} and {pb} differ")


def check_sidecar(h5, precision):
    text = open(os.path.splitext(h5)[0] + ".xmf", encoding="utf-8").read()
    items = re.findall(r'NumberType="Float" Precision="(\d)"', text)
    expect(len(items) > 0, f"{h5}: no Float item in the sidecar")
    expect(all(p == precision for p in items),
           f"{h5}: sidecar Float precisions {sorted(set(items))}, expected only {precision}")


def main(f64, f64z, f32z, f32):
    files = {p: h5py.File(p, "r") for p in (f64, f64z, f32z, f32)}
    check_storage(f64, files[f64], np.float64, 0)
    check_storage(f64z, files[f64z], np.float64, 6)
    check_storage(f32z, files[f32z], np.float32, 1)
    check_storage(f32, files[f32], np.float32, 0)

    # compression changes nothing in the data
    check_same_data(f64, files[f64], f64z, files[f64z])
    check_same_data(f32, files[f32], f32z, files[f32z])
    expect(os.path.getsize(f64z) < os.path.getsize(f64),
           f"gzip 6 file not smaller: {os.path.getsize(f64z)} vs {os.path.getsize(f64)} bytes")
    expect(os.path.getsize(f32z) < os.path.getsize(f32),
           f"gzip 1 file not smaller: {os.path.getsize(f32z)} vs {os.path.getsize(f32)} bytes")

    # float32 = float64 rounded to nearest, bit for bit; the rest identical
    a, b = files[f64], files[f32z]
    rows = a["bodies/position"].shape[0]
    expect(rows > 0 and b["bodies/position"].shape[0] == rows, f"row counts {rows}, "
           f"{b['bodies/position'].shape[0]}")
    for name in datasets(a):
        base = name.split("/")[-1]
        want = a[name][()]
        if (name.startswith("bodies/") and base in REALS) or name == "walls/surface/points":
            want = want.astype(np.float32)
        expect(same_bits(b[name][()], want), f"{name}: float32 file is not the float64 run rounded")
    # the physics is the same whatever the output
    for name in talus_h5.DIAGNOSTIC_FIELDS:
        if name != "solver_wall_time":
            expect(same_bits(a["diagnostics/" + name][()], b["diagnostics/" + name][()]),
                   f"/diagnostics/{name} differs between the float64 and float32 runs")

    check_sidecar(f64, "8")
    check_sidecar(f32z, "4")

    # the Python loader
    with talus_h5.load(f64) as r64, talus_h5.load(f32z) as r32:
        expect(r64.precision == "float64" and r32.precision == "float32",
               f"precision {r64.precision}, {r32.precision}")
        expect(len(r64) == len(r32) and len(r32) > 1, f"frames {len(r64)}, {len(r32)}")
        for k in (0, -1):
            x64, x32 = r64.frame(k), r32.frame(k)
            for name in REALS:
                expect(x32[name].dtype == np.float64, f"frame {k} {name}: dtype {x32[name].dtype}")
                expect(same_bits(x32[name], x64[name].astype(np.float32).astype(np.float64)),
                       f"frame {k} {name}: loader value is not the float32 rounding widened")
            expect(r32.frame(k, native=True)["position"].dtype == np.float32, "native dtype")
        expect("storage:    float32 body rows, gzip level 1 with shuffle" in talus_h5.summary(r32),
               "talus_h5 summary of the float32 file: " + talus_h5.summary(r32))
    for f in files.values():
        f.close()

    if problems:
        print("\n".join(problems))
        return 1
    print(f"precision and compression: {rows} body rows checked; sizes (bytes) "
          + ", ".join(f"{os.path.basename(p)} {os.path.getsize(p)}" for p in (f64, f64z, f32z, f32)))
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(*sys.argv[1:]))

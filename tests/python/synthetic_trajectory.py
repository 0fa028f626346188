"""Write small Talus trajectories (docs/output-format.md, format version 1) from numpy
arrays, so the measurement tools can be tested on data whose answer is known."""
import h5py
import numpy as np

DIAGNOSTIC_FIELDS = {"step": np.uint64, "time": np.float64, "contacts": np.uint32,
                     "iterations": np.uint32, "residual": np.float64,
                     "kinetic_energy": np.float64, "potential_energy": np.float64,
                     "solver_wall_time": np.float64, "envelope": np.float64,
                     "converged": np.uint8}


def write(path, frames, densities=(2500.0,)):
    """frames: list of dicts with time, position (N,3), and optionally id (N,), velocity
    (N,3), radius (N,), material (N,). Missing ids are 0..N-1, velocities zero, radii 1 mm,
    material 0."""
    rows = {k: [] for k in ("id", "position", "orientation", "velocity", "angular_velocity",
                            "radius", "material")}
    times, steps, first, count = [], [], [], []
    row = 0
    for k, fr in enumerate(frames):
        p = np.asarray(fr["position"], dtype=np.float64).reshape(-1, 3)
        n = len(p)
        rows["id"].append(np.asarray(fr.get("id", np.arange(n)), dtype=np.uint64))
        rows["position"].append(p)
        q = np.zeros((n, 4))
        q[:, 0] = 1.0
        rows["orientation"].append(q)
        rows["velocity"].append(np.asarray(fr.get("velocity", np.zeros((n, 3))), dtype=np.float64).reshape(-1, 3))
        rows["angular_velocity"].append(np.zeros((n, 3)))
        rows["radius"].append(np.broadcast_to(np.asarray(fr.get("radius", 1e-3), dtype=np.float64), (n,)).copy())
        rows["material"].append(np.broadcast_to(np.asarray(fr.get("material", 0), dtype=np.uint32), (n,)).copy())
        times.append(fr["time"])
        steps.append(k)
        first.append(row)
        count.append(n)
        row += n
    with h5py.File(path, "w") as f:
        f.attrs["format"] = "talus-trajectory"
        f.attrs["format_version"] = np.int32(1)
        f.attrs["talus_version"] = "synthetic"
        f.attrs["units"] = "SI"
        f.attrs["scene"] = ""
        f.attrs["material_names"] = [f"m{i}" for i in range(len(densities))]
        f.attrs["material_density"] = np.asarray(densities, dtype=np.float64)
        f.attrs["material_friction"] = np.full(len(densities), 0.5)
        for name, parts in rows.items():
            f.create_dataset("bodies/" + name, data=np.concatenate(parts))
        f.create_dataset("frames/time", data=np.asarray(times, dtype=np.float64))
        f.create_dataset("frames/step", data=np.asarray(steps, dtype=np.uint64))
        f.create_dataset("frames/first_row", data=np.asarray(first, dtype=np.uint64))
        f.create_dataset("frames/row_count", data=np.asarray(count, dtype=np.uint64))
        for name, dtype in DIAGNOSTIC_FIELDS.items():
            f.create_dataset("diagnostics/" + name, data=np.zeros(0, dtype=dtype))

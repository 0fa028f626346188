"""Open a trajectory's XDMF sidecar in ParaView and compare every frame with the HDF5 file.

    pvpython check_xdmf_pvpython.py RUN.h5

Uses ParaView's legacy "XDMF Reader" (XDMFReader), the one docs/design.md §9 names for ParaView
5.11. Checks: one time step per complete frame, at the frame times; at each time the points
are the frame's bodies (count, coordinates) and carry radius, velocity, id and material equal
to the HDF5 rows (read with tools/talus_h5.py), in the file's own precision (float32 or
float64) and whatever its compression. Exit 0 if all match, 1 otherwise.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import talus_h5  # noqa: E402

from paraview import servermanager  # noqa: E402
from paraview.simple import XDMFReader  # noqa: E402
from vtk.numpy_interface import dataset_adapter as dsa  # noqa: E402


def bodies_of(data):
    """The bodies' grid: the reader's output, or its "bodies" block when the sidecar also
    holds walls or contacts (then the output is a multiblock)."""
    if not data.IsA("vtkMultiBlockDataSet"):
        return data
    for i in range(data.GetNumberOfBlocks()):
        if data.GetMetaData(i).Get(data.NAME()) == "bodies":
            return data.GetBlock(i)
    raise RuntimeError("the sidecar's multiblock has no block named bodies")


def main(argv):
    if len(argv) != 2:
        print("usage: pvpython check_xdmf_pvpython.py RUN.h5", file=sys.stderr)
        return 2
    h5 = os.path.abspath(argv[1])
    xmf = os.path.splitext(h5)[0] + ".xmf"
    problems = []
    with talus_h5.load(h5) as run:
        reader = XDMFReader(FileNames=[xmf])
        reader.UpdatePipelineInformation()
        times = list(reader.TimestepValues)
        if len(times) != len(run):
            problems.append(f"{len(times)} time steps in ParaView, {len(run)} frames in the file")
        elif times != [float(t) for t in run.frames.time]:
            problems.append(f"time steps {times} differ from frame times {run.frames.time.tolist()}")
        for k, t in enumerate(times[:len(run)]):
            reader.UpdatePipeline(t)
            data = dsa.WrapDataObject(bodies_of(servermanager.Fetch(reader)))
            # as stored: ParaView must read float32 reals as float32 (Precision="4"), float64
            # as float64, bit for bit
            want = run.frame(k, native=True)
            n = data.GetNumberOfPoints()
            if n != len(want["id"]):
                problems.append(f"frame {k} (t = {t}): {n} points, expected {len(want['id'])}")
                continue
            if n == 0:
                continue
            got = {"position": np.asarray(data.Points)}
            for name in ("radius", "velocity", "id", "material"):
                got[name] = np.asarray(data.PointData[name])
            # The legacy reader has no unsigned 64-bit type: the sidecar reads ids as int64, and
            # HDF5's conversion clips ids of 2^63 and above to 2^63 - 1 (docs/output-format.md).
            want = dict(want, id=np.minimum(want["id"], np.uint64(2**63 - 1)).astype(np.int64))
            for name, g in got.items():
                w = want[name]
                if g.dtype != w.dtype or g.shape != w.shape or not np.array_equal(g, w):
                    problems.append(f"frame {k} (t = {t}): {name} differs: {g.dtype} {g.tolist()} "
                                    f"vs {w.dtype} {w.tolist()}")
        last_points = None
        if times:
            reader.UpdatePipeline(times[-1])
            last_points = bodies_of(servermanager.Fetch(reader)).GetNumberOfPoints()
            if last_points != int(run.frames.row_count[-1]):
                problems.append(f"last time: {last_points} points, expected {int(run.frames.row_count[-1])}")
    if problems:
        print(f"check_xdmf_pvpython: {xmf}:")
        for p in problems:
            print("  " + p)
        return 1
    print(f"check_xdmf_pvpython: {xmf}: {len(times)} time steps, {last_points} points in the last frame, "
          "every frame matches the HDF5 rows")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

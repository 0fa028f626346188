"""Open a run's sidecar in ParaView and compare its "contacts" and "walls" blocks with the
HDF5 rows.

    pvpython check_sidecar_blocks_pvpython.py RUN.h5

ParaView's legacy XDMF Reader reads the file as a multiblock: "bodies", "contacts" (a run
with [output] contacts = true) and "walls" (a scene with walls). At every time step the
contacts block must hold one two-point line per row of the frame in /contacts, its points the
rows of /contacts/segment, with cell arrays normal_impulse equal to the file's and
normal_force = normal_impulse / dt; the walls block every triangle of /walls/surface over the
frame's rows of /walls/surface/points, with its wall index; the bodies block the frame's
bodies. Exit 0 if all match, 1 otherwise.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import talus_h5  # noqa: E402

from paraview import servermanager  # noqa: E402
from paraview.simple import XDMFReader  # noqa: E402
from vtk import vtkIdList  # noqa: E402
from vtk.numpy_interface import dataset_adapter as dsa  # noqa: E402


def blocks(data):
    return {data.GetMetaData(i).Get(data.NAME()): data.GetBlock(i) for i in range(data.GetNumberOfBlocks())}


def main(argv):
    if len(argv) != 2:
        print("usage: pvpython check_sidecar_blocks_pvpython.py RUN.h5", file=sys.stderr)
        return 2
    h5 = os.path.abspath(argv[1])
    xmf = os.path.splitext(h5)[0] + ".xmf"
    problems = []
    lines = triangles = 0
    with talus_h5.load(h5) as run:
        has_contacts = run.contacts(0) is not None if len(run) else False
        surface = run._file["walls/surface"] if "walls/surface" in run._file else None
        expected = {"bodies"} | ({"contacts"} if has_contacts else set()) | ({"walls"} if surface else set())
        if "shapes" in run._file:
            expected |= {"ellipsoids", "cylinders"}
        reader = XDMFReader(FileNames=[xmf])
        reader.UpdatePipelineInformation()
        times = list(reader.TimestepValues)
        if times != [float(t) for t in run.frames.time]:
            problems.append(f"time steps {times} differ from frame times {run.frames.time.tolist()}")
        for k, t in enumerate(times[:len(run)]):
            reader.UpdatePipeline(t)
            got = blocks(servermanager.Fetch(reader))
            if set(got) != expected:
                problems.append(f"frame {k}: blocks {sorted(got)}, expected {sorted(expected)}")
                continue
            if surface is not None:
                tri = surface["triangles"][:]
                v = int(surface["first_point"][-1])
                block = got["walls"]
                triangles = block.GetNumberOfCells()
                if triangles != len(tri):
                    problems.append(f"frame {k}: {triangles} wall triangles, {len(tri)} in the file")
                else:
                    pts = np.asarray(dsa.WrapDataObject(block).Points)
                    file_pts = surface["points"][k * v:(k + 1) * v]
                    ids = vtkIdList()
                    corners = []
                    for j in range(len(tri)):
                        block.GetCellPoints(j, ids)
                        corners.append([pts[ids.GetId(i)] for i in range(ids.GetNumberOfIds())])
                    if not np.array_equal(np.array(corners), file_pts[tri]):
                        problems.append(f"frame {k}: the wall triangles' corners differ from the file's")
                    wall = np.asarray(dsa.WrapDataObject(block).CellData["wall"])
                    if not np.array_equal(wall, surface["wall"][:]):
                        problems.append(f"frame {k}: the triangles' wall index differs")
            if not has_contacts:
                continue
            want = run.contacts(k)
            n = len(want["b"])
            lines_block = got["contacts"]
            if got["bodies"].GetNumberOfPoints() != int(run.frames.row_count[k]):
                problems.append(f"frame {k}: {got['bodies'].GetNumberOfPoints()} bodies in ParaView")
            if lines_block.GetNumberOfCells() != n:
                problems.append(f"frame {k}: {lines_block.GetNumberOfCells()} lines, {n} contacts in the file")
                continue
            lines = n
            if n == 0:
                continue
            # (GetCell hands back one shared cell object: copy each cell's point ids out)
            cells = []
            for j in range(n):
                ids = vtkIdList()
                lines_block.GetCellPoints(j, ids)
                cells.append([ids.GetId(i) for i in range(ids.GetNumberOfIds())])
            if any(len(c) != 2 for c in cells):
                problems.append(f"frame {k}: a contact's line does not have two points")
                continue
            w = dsa.WrapDataObject(lines_block)
            pts = np.asarray(w.Points)
            ends = np.array([[pts[c[0]], pts[c[1]]] for c in cells])
            if not np.array_equal(ends, want["segment"]):
                problems.append(f"frame {k}: the lines' ends differ from /contacts/segment")
            impulse = np.asarray(w.CellData["normal_impulse"])
            force = np.asarray(w.CellData["normal_force"])
            if not np.array_equal(impulse, want["normal_impulse"]):
                problems.append(f"frame {k}: normal_impulse differs from the file's")
            if not np.allclose(force, want["normal_impulse"] / want["dt"], rtol=1e-12, atol=0):
                problems.append(f"frame {k}: normal_force {force.tolist()} is not normal_impulse / dt")
    if problems:
        print(f"check_sidecar_blocks_pvpython: {xmf}:")
        for p in problems:
            print("  " + p)
        return 1
    print(f"check_sidecar_blocks_pvpython: {xmf}: {len(times)} time steps; in the last frame {lines} "
          f"contact lines and {triangles} wall triangles, every frame as in the file")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

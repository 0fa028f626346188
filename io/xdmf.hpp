#pragma once
/// XDMF sidecar (.xmf) of a trajectory: the ParaView view of the HDF5 file (docs/design.md §9).
/// Each frame is a grid of points whose arrays are hyperslabs of the /bodies datasets.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace talus {

/// One frame as the sidecar needs it: when, and which rows of /bodies.
struct XdmfFrame {
    double time = 0.0;       ///< simulated time [s]
    uint64_t first_row = 0;  ///< first row in /bodies/*
    uint64_t row_count = 0;  ///< bodies in the frame
    /// The frame's rows of /contacts (files written with [output] contacts), and the step
    /// their impulses cover [s] (the sidecar divides by it for forces).
    uint64_t contact_first_row = 0, contact_count = 0;
    double contact_dt = 0.0;
    /// The frame's rows of /shapes (runs with capsules, ellipsoids or clumps), the last
    /// `shape_cylinders` of them capsules' middles.
    uint64_t shape_first_row = 0, shape_count = 0, shape_cylinders = 0;
};

/// What else the file holds that the sidecar shows, beside the bodies.
struct XdmfExtras {
    /// The length of the /contacts datasets; none: a file without them. With them, a
    /// temporal collection "contacts" holds each frame's contacts as line segments from A's
    /// centre to B's, coloured by force.
    std::optional<uint64_t> contact_rows;
    /// /walls/surface: points per frame and triangles (0: none). With them, a temporal
    /// collection "walls" holds the walls' triangles at each frame's pose.
    uint64_t wall_points = 0, wall_triangles = 0;
    int wall_real_bytes = 8;  ///< the points' floats: 4 in a float32 file
    /// The length of the /shapes datasets; none: a file without them. With them, two
    /// temporal collections, "ellipsoids" and "cylinders", hold each frame's glyph points
    /// with their `axes` tensor (ParaView's Tensor Glyph; docs/rendering.md).
    std::optional<uint64_t> shape_rows;
};

/// The sidecar path for a trajectory: same name, extension .xmf.
std::filesystem::path xdmf_sidecar_path(const std::filesystem::path& h5_path);

/// The XDMF 2 document for `frames`. `h5_reference` is how the document names the HDF5
/// file (its file name: the sidecar sits beside it); `total_rows` is the current length of
/// the /bodies datasets; `real_bytes` the size of their floating-point values (8 for
/// float64, 4 for float32: the Precision ParaView reads them with); `extras` what else
/// the file holds for ParaView (contacts, walls).
std::string xdmf_document(const std::string& h5_reference, const std::vector<XdmfFrame>& frames,
                          uint64_t total_rows, int real_bytes = 8, const XdmfExtras& extras = {});

/// Writes xdmf_document(...) for the trajectory `h5_path` to its sidecar, through a
/// temporary file and rename(), so a reader never sees half a document. Throws IoError.
void write_xdmf_sidecar(const std::filesystem::path& h5_path, const std::vector<XdmfFrame>& frames,
                        uint64_t total_rows, int real_bytes = 8, const XdmfExtras& extras = {});

}  // namespace talus

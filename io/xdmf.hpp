#pragma once
/// XDMF sidecar (.xmf) of a trajectory: the ParaView view of the HDF5 file (docs/design.md §9).
/// Each frame is a grid of points whose arrays are hyperslabs of the /bodies datasets.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace talus {

/// One frame as the sidecar needs it: when, and which rows of /bodies.
struct XdmfFrame {
    double time = 0.0;       ///< simulated time [s]
    uint64_t first_row = 0;  ///< first row in /bodies/*
    uint64_t row_count = 0;  ///< bodies in the frame
};

/// The sidecar path for a trajectory: same name, extension .xmf.
std::filesystem::path xdmf_sidecar_path(const std::filesystem::path& h5_path);

/// The XDMF 2 document for `frames`. `h5_reference` is how the document names the HDF5
/// file (its file name: the sidecar sits beside it); `total_rows` is the current length of
/// the /bodies datasets; `real_bytes` the size of their floating-point values (8 for
/// float64, 4 for float32: the Precision ParaView reads them with).
std::string xdmf_document(const std::string& h5_reference, const std::vector<XdmfFrame>& frames,
                          uint64_t total_rows, int real_bytes = 8);

/// Writes xdmf_document(...) for the trajectory `h5_path` to its sidecar, through a
/// temporary file and rename(), so a reader never sees half a document. Throws IoError.
void write_xdmf_sidecar(const std::filesystem::path& h5_path, const std::vector<XdmfFrame>& frames,
                        uint64_t total_rows, int real_bytes = 8);

}  // namespace talus

#pragma once
/// STL files (ASCII or binary) read into an indexed triangle list with duplicate vertices
/// welded, so neighbouring triangles share edges (collision/mesh.hpp).
#include <array>
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/math.hpp"

namespace talus {

/// A malformed or unreadable STL file; the message names the file (and the line, for ASCII).
struct StlError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct StlMesh {
    std::vector<Vec3> vertices;                     ///< welded: bit-identical points merged [file units]
    std::vector<std::array<uint32_t, 3>> triangles; ///< vertex indices in file winding order
    bool binary = false;                            ///< which encoding the file used
};

/// Reads an STL file. Binary when the size is exactly 84 + 50 n bytes for the n in its
/// header (a binary header may itself begin with "solid"); otherwise ASCII if it begins
/// with "solid"; otherwise an error. Stored facet normals are parsed but not kept.
StlMesh read_stl(const std::filesystem::path& file);

/// As read_stl, from bytes in memory; `name` stands for the file in messages.
StlMesh parse_stl(std::string_view bytes, const std::string& name);

}  // namespace talus

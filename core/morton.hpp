#pragma once
/// Morton (Z-order) keys of integer cells: the order of the broad phase's cells
/// (collision/broad_phase.cpp) and of the blocks the ranks of an MPI run own
/// (engine/distributed/decomposition.hpp). 21 bits per axis, interleaved x, y, z from the
/// lowest bit up, so a key fits in 63 bits.
#include <cstdint>

namespace talus {

inline constexpr uint32_t kMortonAxisBits = 21;

/// The low 21 bits of x spread to every third bit of 63.
constexpr uint64_t morton_spread(uint64_t x) {
    x &= 0x1fffff;
    x = (x | x << 32) & 0x1f00000000ffffULL;
    x = (x | x << 16) & 0x1f0000ff0000ffULL;
    x = (x | x << 8) & 0x100f00f00f00f00fULL;
    x = (x | x << 4) & 0x10c30c30c30c30c3ULL;
    x = (x | x << 2) & 0x1249249249249249ULL;
    return x;
}

/// The inverse of morton_spread: every third bit of 63 gathered into 21.
constexpr uint64_t morton_compact(uint64_t x) {
    x &= 0x1249249249249249ULL;
    x = (x | x >> 2) & 0x10c30c30c30c30c3ULL;
    x = (x | x >> 4) & 0x100f00f00f00f00fULL;
    x = (x | x >> 8) & 0x1f0000ff0000ffULL;
    x = (x | x >> 16) & 0x1f00000000ffffULL;
    x = (x | x >> 32) & 0x1fffff;
    return x;
}

/// The key of cell (ix, iy, iz), each in [0, 2²¹).
constexpr uint64_t morton_key(uint64_t ix, uint64_t iy, uint64_t iz) {
    return morton_spread(ix) | morton_spread(iy) << 1 | morton_spread(iz) << 2;
}

}  // namespace talus

#pragma once
/// Broad phase: candidate sphere pairs by spatial hashing on a uniform grid (docs/design.md §7).
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/contacts.hpp"
#include "core/math.hpp"
#include "core/periodic.hpp"

namespace talus {

/// Reusable buffers of the broad phase, so a step allocates nothing once warmed up.
struct BroadPhaseScratch {
    /// One grid of the hierarchy: the bodies of one size class, in cells of their own size.
    struct Level {
        double cell = 0.0;                   ///< cell edge: the class's largest diameter + envelope
        Vec3 inv = Vec3::Zero();             ///< cells per metre along each axis
        std::array<int64_t, 3> ncell{};      ///< cells along a periodic axis (0 otherwise)
        std::array<int64_t, 3> dims{};       ///< cells along each axis over all bodies' box
        std::vector<uint64_t> cell_keys;     ///< distinct occupied cells, ascending
        std::vector<uint32_t> cell_start;    ///< first position in `order` of each cell (+ end)
        /// Dense grid → index into cell_keys (−1: empty), when the grid is small enough
        /// (at most 4 cells per body + 65536); empty otherwise (binary search on cell_keys).
        std::vector<int32_t> dense;
        std::size_t begin = 0, end = 0;      ///< its bodies' positions in `order`
    };
    /// Size classes (docs/design.md §7): one level when no radius exceeds twice the
    /// smallest; otherwise level k holds the radii in (2^k r_min, 2^(k+1) r_min].
    std::vector<Level> levels;
    std::vector<uint8_t> level;         ///< per body, its level (empty with one level)
    std::vector<uint64_t> cell_key;     ///< per body, Morton key of its cell in its level
    std::vector<uint32_t> order;        ///< body indices sorted by (level, cell key, index)
    std::vector<PairList> chunk_pairs;  ///< per fixed-size chunk output, merged in order
    std::vector<std::size_t> chunk_found;  ///< per chunk: its pairs, the first entries of its output
    /// A body's position and radius, stored at its place in `order`.
    struct Placed {
        Vec3 x;
        double r;
    };
    /// Per position of `order`: its body's position and radius, so that the pair search
    /// reads a cell's bodies as one contiguous run instead of through the indices.
    std::vector<Placed> placed;
};

/// Every pair a < b (dense indices) with |x_a − x_b| ≤ r_a + r_b + envelope, each once,
/// in an order that depends only on the input (not on the number of threads).
/// Radii more than twice the smallest go to coarser grids of their own (a hierarchy of
/// size classes), so that a small body does not test the dozens of its kind that share a
/// cell sized for the largest; with one class the grid and the order are the single grid's.
/// With periodic axes, the distance is to b's nearest image and PairList::shift holds the
/// image shift per pair; positions must lie in the periodic range (PeriodicBox::wrap).
/// Returns "" when the pairs were found; otherwise why no grid could be built (positions
/// or cell size not finite, bodies spanning more than 2²¹ cells on an axis, or a periodic
/// length below 3 × (largest diameter + envelope)), with `out` left empty. It returns
/// rather than throws because it runs inside a step, which reports its failures as a
/// value (engine/world/step_error.hpp); a caller must not ignore it.
std::string broad_phase(const std::vector<Vec3>& position, const std::vector<double>& radius,
                        double envelope, PairList& out, BroadPhaseScratch& scratch,
                        const PeriodicBox& periodic = PeriodicBox{});

/// Reference: all pairs by brute force, same criterion, sorted by (a, b). For tests.
void all_pairs(const std::vector<Vec3>& position, const std::vector<double>& radius,
               double envelope, PairList& out, const PeriodicBox& periodic = PeriodicBox{});

}  // namespace talus

#pragma once
/// How the bodies of a run are divided among P ranks (docs/mpi.md, "The decomposition"):
/// space is cut into cubic blocks, each block a 2ᵇ × 2ᵇ × 2ᵇ group of broad-phase cells,
/// ordered along the Morton curve (core/morton.hpp), and the curve is cut into P contiguous
/// ranges weighted by the work in each block (its grains and contacts). A rank owns the
/// bodies whose centres lie in its blocks, holds a ghost of every body of another rank in a
/// block next to one of its own, and owns each contact whose body of lower id it owns.
///
/// Plain functions of the positions, weights and P: every rank computes the same
/// decomposition from the same data. Nothing here communicates.
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/math.hpp"

namespace talus {

/// A uniform grid of cubic blocks: block (i, j, k) spans origin + edge·[i, i+1) × … .
/// Coordinates are clamped to [0, 2²¹), so every point has a block.
struct BlockGrid {
    Vec3 origin = Vec3::Zero();
    double edge = 1.0;  ///< [m]

    /// The block's integer coordinates of the point x.
    std::array<uint32_t, 3> coords(const Vec3& x) const;
    /// The Morton key of x's block.
    uint64_t key(const Vec3& x) const;
};

/// The grid for bodies inside [lo, hi] (the box of their centres, with room to move) whose
/// contacts reach at most `reach` = largest diameter + envelope: blocks of `cells` ≥ 1
/// broad-phase cells (edge = cells × reach) from lo.
BlockGrid block_grid(const Vec3& lo, double reach, uint32_t cells);

/// "" when every contact of a body within `reach` (largest diameter + envelope) of another
/// stays within neighbouring blocks of the grid; otherwise why not (a body larger than a
/// block), for the message that refuses the run.
std::string check_block_size(const BlockGrid& grid, double reach);

/// P contiguous ranges of block keys: rank r owns the blocks with cut[r] ≤ key < cut[r+1]
/// (cut[0] = 0, cut[P] = 2⁶⁴ − 1, above every key).
struct Decomposition {
    BlockGrid grid;
    std::vector<uint64_t> cut;

    int ranks() const { return int(cut.size()) - 1; }
    /// The rank that owns the block of this key.
    int owner(uint64_t key) const;
    int owner_of(const Vec3& x) const { return owner(grid.key(x)); }
    /// The ranks other than `owner` that hold a ghost of a body at x: the owners of the 26
    /// blocks around x's block, each once, ascending, appended to `out` (cleared first).
    void ghost_ranks(const Vec3& x, int owner, std::vector<int>& out) const;
};

/// Cuts the blocks of the bodies at `position` (with integer `weight`s: a grain counts 1,
/// plus its contacts) into `ranks` ranges: cut r at the first block (in key order) before
/// which the weight reaches r/P of the total. Each range's load is then at most
/// total/P + the heaviest block. Independent of the order of the bodies.
Decomposition decompose(const BlockGrid& grid, std::span<const Vec3> position,
                        std::span<const uint32_t> weight, int ranks);

/// The same cut from (block key, weight) entries sorted by key, a key possibly several
/// times (its weights add up): what decompose computes from its bodies' keys.
Decomposition cut_blocks(const BlockGrid& grid, std::span<const std::pair<uint64_t, uint64_t>> blocks, int ranks);

/// Each rank's load (sum of the weights of the bodies it owns).
std::vector<uint64_t> rank_loads(const Decomposition& d, std::span<const Vec3> position,
                                 std::span<const uint32_t> weight);

/// The largest load over the mean load (1: perfect balance; ranks without load count).
double imbalance(std::span<const uint64_t> loads);

/// A run decomposes again when its imbalance passes this and has grown by more than
/// kRebalanceAbove − 1 since the cut (docs/mpi.md, "The decomposition"): a cut that could
/// not be even (few blocks a rank, some full) is kept until its own imbalance drifts that far.
inline constexpr double kRebalanceAbove = 1.15;
inline bool load_drifted(double now, double at_cut) {
    return now > kRebalanceAbove && now > at_cut + (kRebalanceAbove - 1.0);
}

/// Every rank's bodies: owned and ghosts, as body indices, ascending.
struct BodySplit {
    std::vector<int32_t> owner;                 ///< per body
    std::vector<std::vector<uint32_t>> owned;   ///< per rank
    std::vector<std::vector<uint32_t>> ghosts;  ///< per rank
};
BodySplit split_bodies(const Decomposition& d, std::span<const Vec3> position);

/// The rank that owns a contact between bodies a and b: the owner of the one with the lower
/// stable id (`id`), which also holds the other (as its own or as a ghost).
inline int contact_owner(const BodySplit& split, std::span<const uint64_t> id, uint32_t a, uint32_t b) {
    return split.owner[id[a] < id[b] ? a : b];
}

}  // namespace talus

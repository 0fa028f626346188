// The decomposition of the bodies among ranks (engine/distributed/decomposition.hpp).
#include "engine/distributed/decomposition.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/morton.hpp"

namespace talus {
namespace {

constexpr int64_t kMaxCoord = (int64_t(1) << kMortonAxisBits) - 1;

}  // namespace

std::array<uint32_t, 3> BlockGrid::coords(const Vec3& x) const {
    std::array<uint32_t, 3> c{};
    for (int k = 0; k < 3; ++k) {
        const double f = std::floor((x[k] - origin[k]) / edge);
        // clamped (NaN to 0): a body far outside still has a block, at the grid's border
        c[k] = uint32_t(f >= double(kMaxCoord) ? kMaxCoord : f > 0.0 ? int64_t(f) : 0);
    }
    return c;
}

uint64_t BlockGrid::key(const Vec3& x) const {
    const auto c = coords(x);
    return morton_key(c[0], c[1], c[2]);
}

BlockGrid block_grid(const Vec3& lo, double reach, uint32_t cells) {
    return BlockGrid{lo, double(std::max<uint32_t>(cells, 1)) * reach};
}

std::string check_block_size(const BlockGrid& grid, double reach) {
    if (std::isfinite(reach) && reach >= 0.0 && reach <= grid.edge) return {};
    return "a body reaches " + std::to_string(reach) + " m (its diameter and the envelope), more than a block's edge of " +
           std::to_string(grid.edge) + " m: bodies larger than a block are not supported across ranks";
}

int Decomposition::owner(uint64_t key) const {
    // the last cut at or below the key
    return int(std::upper_bound(cut.begin() + 1, cut.end() - 1, key) - cut.begin()) - 1;
}

void Decomposition::ghost_ranks(const Vec3& x, int self, std::vector<int>& out) const {
    out.clear();
    if (ranks() == 1) return;
    const auto c = grid.coords(x);
    for (int dz = -1; dz <= 1; ++dz)
        for (int dy = -1; dy <= 1; ++dy)
            for (int dx = -1; dx <= 1; ++dx) {
                const int64_t ix = int64_t(c[0]) + dx, iy = int64_t(c[1]) + dy, iz = int64_t(c[2]) + dz;
                if (ix < 0 || iy < 0 || iz < 0 || ix > kMaxCoord || iy > kMaxCoord || iz > kMaxCoord) continue;
                const int r = owner(morton_key(uint64_t(ix), uint64_t(iy), uint64_t(iz)));
                if (r != self) out.push_back(r);
            }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
}

Decomposition decompose(const BlockGrid& grid, std::span<const Vec3> position, std::span<const uint32_t> weight,
                        int ranks) {
    Decomposition d;
    d.grid = grid;
    ranks = std::max(ranks, 1);
    d.cut.assign(std::size_t(ranks) + 1, std::numeric_limits<uint64_t>::max());
    d.cut[0] = 0;
    // (key, weight) per body, sorted by key: the blocks' weights are integer sums, so they
    // do not depend on the order of the bodies
    std::vector<std::pair<uint64_t, uint64_t>> blocks(position.size());
    for (std::size_t i = 0; i < position.size(); ++i) blocks[i] = {grid.key(position[i]), weight[i]};
    std::sort(blocks.begin(), blocks.end());
    return cut_blocks(grid, blocks, ranks);
}

Decomposition cut_blocks(const BlockGrid& grid, std::span<const std::pair<uint64_t, uint64_t>> blocks, int ranks) {
    Decomposition d;
    d.grid = grid;
    ranks = std::max(ranks, 1);
    d.cut.assign(std::size_t(ranks) + 1, std::numeric_limits<uint64_t>::max());
    d.cut[0] = 0;
    uint64_t total = 0;
    for (const auto& b : blocks) total += b.second;
    // cut r at the first block whose preceding weight reaches r/P of the total
    uint64_t before = 0;
    int r = 1;
    for (std::size_t k = 0; k < blocks.size() && r < ranks; ++k) {
        if (k == 0 || blocks[k].first != blocks[k - 1].first)
            while (r < ranks && before * uint64_t(ranks) >= uint64_t(r) * total && before > 0) d.cut[r++] = blocks[k].first;
        before += blocks[k].second;
    }
    // ranks left over (fewer blocks than ranks) own the empty ranges at the top
    return d;
}

std::vector<uint64_t> rank_loads(const Decomposition& d, std::span<const Vec3> position,
                                 std::span<const uint32_t> weight) {
    std::vector<uint64_t> load(std::size_t(d.ranks()), 0);
    for (std::size_t i = 0; i < position.size(); ++i) load[std::size_t(d.owner_of(position[i]))] += weight[i];
    return load;
}

double imbalance(std::span<const uint64_t> loads) {
    if (loads.empty()) return 1.0;
    const uint64_t total = std::accumulate(loads.begin(), loads.end(), uint64_t(0));
    if (total == 0) return 1.0;
    const uint64_t most = *std::max_element(loads.begin(), loads.end());
    return double(most) * double(loads.size()) / double(total);
}

BodySplit split_bodies(const Decomposition& d, std::span<const Vec3> position) {
    BodySplit s;
    const std::size_t p = std::size_t(d.ranks());
    s.owner.resize(position.size());
    s.owned.assign(p, {});
    s.ghosts.assign(p, {});
    std::vector<int> others;
    for (std::size_t i = 0; i < position.size(); ++i) {
        const int r = d.owner_of(position[i]);
        s.owner[i] = r;
        s.owned[std::size_t(r)].push_back(uint32_t(i));
        d.ghost_ranks(position[i], r, others);
        for (int o : others) s.ghosts[std::size_t(o)].push_back(uint32_t(i));
    }
    return s;
}

}  // namespace talus

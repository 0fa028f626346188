// Broad phase by spatial hashing on a uniform grid (docs/design.md §7).
//
// Cell edge a = max diameter + envelope, so two spheres within the envelope of each other
// sit in the same or adjacent cells. Each body gets the Morton key of its integer cell
// coordinates (relative to the bounding box of all bodies, 21 bits per axis); bodies are
// sorted by (key, index), occupied cells found as runs of equal keys, and each body visits
// its own cell (later bodies only) and its 13 "forward" neighbour cells, so every pair is
// produced exactly once. When radii differ by more than 2×, each size class (radii in
// (2^k r_min, 2^(k+1) r_min]) has a grid of its own, cells sized by its largest, and the
// sort is by (class, key, index): a body finds its own class's pairs as above and the
// larger classes' in the 27 cells around it in each coarser grid, so a small grain no
// longer tests the many of its size that share a cell sized for the largest (1 mm grains
// beside 5 mm ones: about 190 to a cell). The loops run in parallel over fixed-size chunks
// of the sorted order with one output list per chunk, concatenated in chunk order: the
// result does not depend on the number of threads. Pairs are reported with a < b.
#include "collision/broad_phase.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>

#include "core/morton.hpp"
#include "core/parallel.hpp"

namespace talus {
namespace {

constexpr uint32_t kAxisBits = kMortonAxisBits;
constexpr int64_t kAxisCells = int64_t(1) << kAxisBits;
// Bodies per chunk of the pair search, each with its own output list. The lists are
// concatenated in chunk order, so the pairs come out in sorted-body order whatever the
// chunk size or the threads.
constexpr std::size_t kChunk = grain::kBodies;
// Size classes of the hierarchy: radii up to 2^kMaxLevels r_min have a level of their own,
// larger ones share the top one.
constexpr int kMaxLevels = 16;

uint64_t morton(int64_t ix, int64_t iy, int64_t iz) { return morton_key(uint64_t(ix), uint64_t(iy), uint64_t(iz)); }

// The 13 forward neighbours: offsets whose first non-zero component is positive.
struct Offset { int dx, dy, dz; };
constexpr Offset kForward[13] = {
    {1, -1, -1}, {1, -1, 0}, {1, -1, 1}, {1, 0, -1}, {1, 0, 0}, {1, 0, 1}, {1, 1, -1},
    {1, 1, 0},   {1, 1, 1},  {0, 1, -1}, {0, 1, 0},  {0, 1, 1}, {0, 0, 1}};

}  // namespace

std::string broad_phase(const std::vector<Vec3>& position, const std::vector<double>& radius,
                        double envelope, PairList& out, BroadPhaseScratch& s,
                        const PeriodicBox& periodic) {
    out.clear();
    const std::size_t n = position.size();
    if (n < 2) return {};

    double rmax = 0.0, rmin = std::numeric_limits<double>::infinity();
    Vec3 lo = position[0], hi = position[0];
    for (std::size_t i = 0; i < n; ++i) {
        rmax = std::max(rmax, radius[i]);
        rmin = std::min(rmin, radius[i]);
        lo = lo.cwiseMin(position[i]);
        hi = hi.cwiseMax(position[i]);
    }
    if (!(2.0 * rmax + envelope > 0.0) || !std::isfinite(2.0 * rmax + envelope) || !lo.allFinite() ||
        !hi.allFinite())
        return "broad phase: non-finite positions or cell size";
    for (int k = 0; k < 3; ++k)
        if (periodic.on[k]) lo[k] = periodic.lo[k];

    // Size classes: level k holds the radii in (2^k r_min, 2^(k+1) r_min] (level 0 from
    // r_min up), each in cells sized by its own largest. One class unless a radius exceeds
    // twice the smallest.
    const bool graded = rmin > 0.0 && rmax > 2.0 * rmin;
    if (graded) {
        s.level.resize(n);
        parallel_ranges(0, n, grain::kBodies, [&](std::size_t i0, std::size_t i1) {
            for (std::size_t i = i0; i != i1; ++i)
                s.level[i] = radius[i] > 2.0 * rmin ? uint8_t(std::min<double>(
                                                          std::ceil(std::log2(radius[i] / rmin)) - 1.0, kMaxLevels - 1))
                                                    : uint8_t(0);
        });
    } else {
        s.level.clear();
    }
    auto level_of = [&](std::size_t i) { return graded ? std::size_t(s.level[i]) : std::size_t(0); };
    // each class's largest radius (0: an empty class); with one class, rmax
    std::vector<double> level_rmax(1, rmax);
    if (graded) {
        level_rmax.assign(kMaxLevels, 0.0);
        for (std::size_t i = 0; i < n; ++i) level_rmax[s.level[i]] = std::max(level_rmax[s.level[i]], radius[i]);
        while (level_rmax.back() == 0.0) level_rmax.pop_back();  // the top class is occupied
    }
    const std::size_t nlevels = level_rmax.size();
    s.levels.resize(nlevels);

    // Each level's grid over all bodies' box. Along a periodic axis it tiles the period
    // exactly: ncell cells of edge L/ncell ≥ cell, and neighbour cells wrap around. At least
    // 3 cells, so that the neighbours searched never reach one cell twice (and nearest
    // images are unique).
    for (std::size_t l = 0; l < nlevels; ++l) {
        if (level_rmax[l] == 0.0) continue;  // an empty class: never searched
        BroadPhaseScratch::Level& g = s.levels[l];
        g.cell = 2.0 * level_rmax[l] + envelope;
        g.inv = Vec3::Constant(1.0 / g.cell);
        g.ncell = {0, 0, 0};
        for (int k = 0; k < 3; ++k) {
            if (!periodic.on[k]) continue;
            const double L = periodic.length(k);
            g.ncell[k] = int64_t(std::floor(L / g.cell));
            if (g.ncell[k] < 3)
                return "broad phase: the periodic length along " + std::string(1, "xyz"[k]) + " (" +
                       std::to_string(L) + " m) must be at least 3 × (largest diameter + envelope) = " +
                       std::to_string(3.0 * (2.0 * rmax + envelope)) + " m";
            if (g.ncell[k] >= kAxisCells - 2) g.ncell[k] = kAxisCells - 3;
            g.inv[k] = double(g.ncell[k]) / L;
        }
        for (int k = 0; k < 3; ++k)
            if (!periodic.on[k] && (hi[k] - lo[k]) * g.inv[k] >= double(kAxisCells - 2))
                return "broad phase: bodies spread over more than 2^21 cells along one axis (a body "
                       "escaped far away?)";
        for (int k = 0; k < 3; ++k)
            g.dims[k] = periodic.on[k] ? g.ncell[k] : int64_t(std::floor((hi[k] - lo[k]) * g.inv[k])) + 1;
    }

    auto cell_of = [&](const BroadPhaseScratch::Level& g, const Vec3& x, int k) {
        const int64_t c = int64_t(std::floor((x[k] - lo[k]) * g.inv[k]));
        return periodic.on[k] ? std::clamp<int64_t>(c, 0, g.ncell[k] - 1) : c;
    };
    const bool wrapped = periodic.any();

    s.cell_key.resize(n);
    s.order.resize(n);
    parallel_ranges(0, n, grain::kBodies, [&](std::size_t lo_i, std::size_t hi_i) {
        for (std::size_t i = lo_i; i != hi_i; ++i) {
            const Vec3& x = position[i];
            const BroadPhaseScratch::Level& g = s.levels[level_of(i)];
            s.cell_key[i] = morton(cell_of(g, x, 0), cell_of(g, x, 1), cell_of(g, x, 2));
            s.order[i] = uint32_t(i);
        }
    });
    // (level, key, index) is a total order, so the sorted result is unique whatever the threads.
    parallel_sort(s.order.begin(), s.order.end(), [&](uint32_t a, uint32_t b) {
        if (level_of(a) != level_of(b)) return level_of(a) < level_of(b);
        return s.cell_key[a] != s.cell_key[b] ? s.cell_key[a] < s.cell_key[b] : a < b;
    });

    s.placed.resize(n);
    parallel_ranges(0, n, grain::kBodies, [&](std::size_t k0, std::size_t k1) {
        for (std::size_t k = k0; k != k1; ++k) s.placed[k] = {position[s.order[k]], radius[s.order[k]]};
    });

    // Occupied cells of each level as runs of equal keys in its part of `order`.
    for (BroadPhaseScratch::Level& g : s.levels) {
        g.cell_keys.clear();
        g.cell_start.clear();
        g.begin = g.end = 0;
    }
    for (std::size_t k = 0; k < n;) {
        const std::size_t l = level_of(s.order[k]);
        BroadPhaseScratch::Level& g = s.levels[l];
        g.begin = k;
        for (; k < n && level_of(s.order[k]) == l; ++k) {
            const uint64_t key = s.cell_key[s.order[k]];
            if (g.cell_keys.empty() || g.cell_keys.back() != key) {
                g.cell_keys.push_back(key);
                g.cell_start.push_back(uint32_t(k));
            }
        }
        g.end = k;
        g.cell_start.push_back(uint32_t(k));
    }

    // Neighbour cells are looked up in a dense array of the grid's cells when it is small
    // (a few entries per body): 14 loads per body instead of 14 binary searches over the
    // occupied cells, which took half the broad phase. Same cells, same order, same pairs.
    auto linear = [](const BroadPhaseScratch::Level& g, int64_t x, int64_t y, int64_t z) {
        return std::size_t(x + g.dims[0] * (y + g.dims[1] * z));
    };
    for (BroadPhaseScratch::Level& g : s.levels) {
        const double dense_cells = double(g.dims[0]) * double(g.dims[1]) * double(g.dims[2]);
        if (g.end > g.begin && dense_cells <= 4.0 * double(n) + 65536.0) {
            g.dense.assign(std::size_t(dense_cells), -1);
            parallel_ranges(0, g.cell_keys.size(), grain::kCells, [&](std::size_t c0, std::size_t c1) {
                for (std::size_t c = c0; c != c1; ++c) {
                    const Vec3& x = s.placed[g.cell_start[c]].x;
                    g.dense[linear(g, cell_of(g, x, 0), cell_of(g, x, 1), cell_of(g, x, 2))] = int32_t(c);
                }
            });
        } else {
            g.dense.clear();
        }
    }
    // The index in g.cell_keys of the cell (x, y, z) of level g, −1 when it is empty or
    // outside; a periodic axis wraps.
    auto find_cell = [&](const BroadPhaseScratch::Level& g, int64_t x, int64_t y, int64_t z) -> int64_t {
        int64_t nc[3] = {x, y, z};
        const bool dense = !g.dense.empty();
        for (int k = 0; k < 3; ++k) {
            if (periodic.on[k]) nc[k] = (nc[k] + g.ncell[k]) % g.ncell[k];
            else if (nc[k] < 0 || (dense && nc[k] >= g.dims[k])) return -1;
        }
        if (dense) return g.dense[linear(g, nc[0], nc[1], nc[2])];
        const uint64_t key = morton(nc[0], nc[1], nc[2]);
        auto it = std::lower_bound(g.cell_keys.begin(), g.cell_keys.end(), key);
        if (it == g.cell_keys.end() || *it != key) return -1;
        return int64_t(it - g.cell_keys.begin());
    };

    const std::size_t chunks = chunk_count(n, kChunk);
    if (s.chunk_pairs.size() < chunks) s.chunk_pairs.resize(chunks);
    s.chunk_found.resize(chunks);

    parallel_chunks(n, kChunk, [&](std::size_t c, std::size_t begin, std::size_t end) {
        PairList& local = s.chunk_pairs[c];
        // without periodic axes the arrays keep their length between calls (a high-water
        // mark), and the chunk's pairs are their first `found` entries
        if (wrapped) local.clear();
        std::size_t found = 0;
        for (std::size_t k = begin; k < end; ++k) {
            const uint32_t i = s.order[k];
            const Vec3& xi = s.placed[k].x;
            const double ri = s.placed[k].r;
            // i against the bodies at sorted positions [m0, m1), one cell's run in `placed`
            auto test = [&](std::size_t m0, std::size_t m1) {
                if (!wrapped) {
                    // every candidate is written and kept by advancing the count: about one
                    // test in seven is a pair, a branch on it would mispredict as often
                    if (found + (m1 - m0) > local.a.size()) {
                        local.a.resize(2 * (found + (m1 - m0)));
                        local.b.resize(local.a.size());
                    }
                    int32_t* a = local.a.data();
                    int32_t* b = local.b.data();
                    for (std::size_t m = m0; m < m1; ++m) {
                        const BroadPhaseScratch::Placed& pj = s.placed[m];
                        const double reach = ri + pj.r + envelope;
                        const uint32_t j = s.order[m];
                        a[found] = int32_t(std::min(i, j));
                        b[found] = int32_t(std::max(i, j));
                        found += (pj.x - xi).squaredNorm() <= reach * reach ? 1 : 0;
                    }
                    return;
                }
                for (std::size_t m = m0; m < m1; ++m) {
                    const BroadPhaseScratch::Placed& pj = s.placed[m];
                    const double reach = ri + pj.r + envelope;
                    const uint32_t j = s.order[m];
                    const Vec3 shift = periodic.image_shift(xi, pj.x);  // j's image near i
                    if ((pj.x + shift - xi).squaredNorm() <= reach * reach) {
                        local.a.push_back(int32_t(std::min(i, j)));
                        local.b.push_back(int32_t(std::max(i, j)));
                        local.shift.push_back(i < j ? shift : Vec3(-shift));
                    }
                }
            };
            // its own level: its own cell (the bodies after it in sorted order), then the 13
            // forward neighbours, so that each pair of the level comes once
            const std::size_t l = level_of(i);
            const BroadPhaseScratch::Level& g = s.levels[l];
            const int64_t cx = cell_of(g, xi, 0), cy = cell_of(g, xi, 1), cz = cell_of(g, xi, 2);
            const auto own = std::size_t(find_cell(g, cx, cy, cz));  // occupied: i is in it
            test(k + 1, g.cell_start[own + 1]);
            for (const Offset& o : kForward) {
                const int64_t d = find_cell(g, cx + o.dx, cy + o.dy, cz + o.dz);
                if (d >= 0) test(g.cell_start[std::size_t(d)], g.cell_start[std::size_t(d) + 1]);
            }
            // each coarser level: the 27 cells around it there. A pair of two levels comes
            // once, from its smaller body: within reach, the two centres are at most
            // (cell + coarser cell) / 2 ≤ one coarser cell apart.
            for (std::size_t l2 = l + 1; l2 < nlevels; ++l2) {
                const BroadPhaseScratch::Level& G = s.levels[l2];
                if (G.end == G.begin) continue;
                const int64_t X = cell_of(G, xi, 0), Y = cell_of(G, xi, 1), Z = cell_of(G, xi, 2);
                for (int dz = -1; dz <= 1; ++dz)
                    for (int dy = -1; dy <= 1; ++dy)
                        for (int dx = -1; dx <= 1; ++dx) {
                            const int64_t d = find_cell(G, X + dx, Y + dy, Z + dz);
                            if (d >= 0) test(G.cell_start[std::size_t(d)], G.cell_start[std::size_t(d) + 1]);
                        }
            }
        }
        s.chunk_found[c] = wrapped ? local.size() : found;
    });

    std::size_t total = 0;
    for (std::size_t c = 0; c < chunks; ++c) total += s.chunk_found[c];
    out.a.reserve(total);
    out.b.reserve(total);
    if (wrapped) out.shift.reserve(total);
    for (std::size_t c = 0; c < chunks; ++c) {
        const PairList& local = s.chunk_pairs[c];
        const auto found = std::ptrdiff_t(s.chunk_found[c]);
        out.a.insert(out.a.end(), local.a.begin(), local.a.begin() + found);
        out.b.insert(out.b.end(), local.b.begin(), local.b.begin() + found);
        if (wrapped) out.shift.insert(out.shift.end(), local.shift.begin(), local.shift.end());
    }
    return {};
}

void all_pairs(const std::vector<Vec3>& position, const std::vector<double>& radius,
               double envelope, PairList& out, const PeriodicBox& periodic) {
    out.clear();
    for (std::size_t i = 0; i < position.size(); ++i)
        for (std::size_t j = i + 1; j < position.size(); ++j) {
            const double reach = radius[i] + radius[j] + envelope;
            const Vec3 shift = periodic.image_shift(position[i], position[j]);
            if ((position[j] + shift - position[i]).squaredNorm() <= reach * reach) {
                out.a.push_back(int32_t(i));
                out.b.push_back(int32_t(j));
                if (periodic.any()) out.shift.push_back(shift);
            }
        }
}

}  // namespace talus

// Broad phase by spatial hashing on a uniform grid (docs/design.md §7).
//
// Cell edge a = max diameter + envelope, so two spheres within the envelope of each other
// sit in the same or adjacent cells. Each body gets the Morton key of its integer cell
// coordinates (relative to the bounding box of all bodies, 21 bits per axis); bodies are
// sorted by (key, index), occupied cells found as runs of equal keys, and each body visits
// its own cell (later bodies only) and its 13 "forward" neighbour cells, so every pair is
// produced exactly once. The loops run in parallel over fixed-size chunks of the sorted
// order with one output list per chunk, concatenated in chunk order: the result does not
// depend on the number of threads. Pairs are reported with a < b.
#include "collision/broad_phase.hpp"

#include <algorithm>
#include <array>
#include <cmath>
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

    double rmax = 0.0;
    Vec3 lo = position[0], hi = position[0];
    for (std::size_t i = 0; i < n; ++i) {
        rmax = std::max(rmax, radius[i]);
        lo = lo.cwiseMin(position[i]);
        hi = hi.cwiseMax(position[i]);
    }
    const double cell = 2.0 * rmax + envelope;
    if (!(cell > 0.0) || !std::isfinite(cell) || !lo.allFinite() || !hi.allFinite())
        return "broad phase: non-finite positions or cell size";
    // Along a periodic axis the grid tiles the period exactly: ncell cells of edge L/ncell ≥
    // cell, and neighbour cells wrap around. At least 3 cells, so that the 13 forward
    // neighbours never reach one cell twice (and nearest images are unique).
    Vec3 inv = Vec3::Constant(1.0 / cell);
    std::array<int64_t, 3> ncell{0, 0, 0};
    for (int k = 0; k < 3; ++k) {
        if (!periodic.on[k]) continue;
        const double L = periodic.length(k);
        ncell[k] = int64_t(std::floor(L / cell));
        if (ncell[k] < 3)
            return "broad phase: the periodic length along " + std::string(1, "xyz"[k]) + " (" +
                   std::to_string(L) + " m) must be at least 3 × (largest diameter + envelope) = " +
                   std::to_string(3.0 * cell) + " m";
        if (ncell[k] >= kAxisCells - 2) ncell[k] = kAxisCells - 3;
        lo[k] = periodic.lo[k];
        inv[k] = double(ncell[k]) / L;
    }
    for (int k = 0; k < 3; ++k)
        if (!periodic.on[k] && (hi[k] - lo[k]) * inv[k] >= double(kAxisCells - 2))
            return "broad phase: bodies spread over more than 2^21 cells along one axis (a body "
                   "escaped far away?)";

    auto cell_of = [&](const Vec3& x, int k) {
        const int64_t c = int64_t(std::floor((x[k] - lo[k]) * inv[k]));
        return periodic.on[k] ? std::clamp<int64_t>(c, 0, ncell[k] - 1) : c;
    };
    const bool wrapped = periodic.any();

    s.cell_key.resize(n);
    s.order.resize(n);
    parallel_ranges(0, n, grain::kBodies, [&](std::size_t lo_i, std::size_t hi_i) {
        for (std::size_t i = lo_i; i != hi_i; ++i) {
            const Vec3& x = position[i];
            s.cell_key[i] = morton(cell_of(x, 0), cell_of(x, 1), cell_of(x, 2));
            s.order[i] = uint32_t(i);
        }
    });
    // (key, index) is a total order, so the sorted result is unique whatever the threads.
    parallel_sort(s.order.begin(), s.order.end(), [&](uint32_t a, uint32_t b) {
        return s.cell_key[a] != s.cell_key[b] ? s.cell_key[a] < s.cell_key[b] : a < b;
    });

    s.placed.resize(n);
    parallel_ranges(0, n, grain::kBodies, [&](std::size_t k0, std::size_t k1) {
        for (std::size_t k = k0; k != k1; ++k) s.placed[k] = {position[s.order[k]], radius[s.order[k]]};
    });

    s.cell_keys.clear();
    s.cell_start.clear();
    for (std::size_t k = 0; k < n; ++k) {
        const uint64_t key = s.cell_key[s.order[k]];
        if (s.cell_keys.empty() || s.cell_keys.back() != key) {
            s.cell_keys.push_back(key);
            s.cell_start.push_back(uint32_t(k));
        }
    }
    s.cell_start.push_back(uint32_t(n));

    // Neighbour cells are looked up in a dense array of the grid's cells when it is small
    // (a few entries per body): 14 loads per body instead of 14 binary searches over the
    // occupied cells, which took half the broad phase. Same cells, same order, same pairs.
    std::array<int64_t, 3> dims{0, 0, 0};
    for (int k = 0; k < 3; ++k)
        dims[k] = periodic.on[k] ? ncell[k] : int64_t(std::floor((hi[k] - lo[k]) * inv[k])) + 1;
    const double dense_cells = double(dims[0]) * double(dims[1]) * double(dims[2]);
    const bool dense = dense_cells <= 4.0 * double(n) + 65536.0;
    auto linear = [&](int64_t x, int64_t y, int64_t z) {
        return std::size_t(x + dims[0] * (y + dims[1] * z));
    };
    if (dense) {
        s.dense.assign(std::size_t(dense_cells), -1);
        parallel_ranges(0, s.cell_keys.size(), grain::kCells, [&](std::size_t c0, std::size_t c1) {
            for (std::size_t c = c0; c != c1; ++c) {
                const Vec3& x = position[s.order[s.cell_start[c]]];
                s.dense[linear(cell_of(x, 0), cell_of(x, 1), cell_of(x, 2))] = int32_t(c);
            }
        });
    } else {
        s.dense.clear();
    }

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
            const int64_t cx = cell_of(xi, 0), cy = cell_of(xi, 1), cz = cell_of(xi, 2);
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
            // own cell: the bodies after this one in sorted order
            const std::size_t own =
                dense ? std::size_t(s.dense[linear(cx, cy, cz)])
                      : std::size_t(std::lower_bound(s.cell_keys.begin(), s.cell_keys.end(),
                                                     s.cell_key[i]) - s.cell_keys.begin());
            test(k + 1, s.cell_start[own + 1]);
            for (const Offset& o : kForward) {
                int64_t nc[3] = {cx + o.dx, cy + o.dy, cz + o.dz};
                bool outside = false;
                for (int k = 0; k < 3; ++k) {
                    if (periodic.on[k]) nc[k] = (nc[k] + ncell[k]) % ncell[k];
                    else outside = outside || nc[k] < 0 || (dense && nc[k] >= dims[k]);
                }
                if (outside) continue;
                const int64_t nx = nc[0], ny = nc[1], nz = nc[2];
                std::size_t cidx;
                if (dense) {
                    const int32_t d = s.dense[linear(nx, ny, nz)];
                    if (d < 0) continue;
                    cidx = std::size_t(d);
                } else {
                    const uint64_t key = morton(nx, ny, nz);
                    auto it = std::lower_bound(s.cell_keys.begin(), s.cell_keys.end(), key);
                    if (it == s.cell_keys.end() || *it != key) continue;
                    cidx = it - s.cell_keys.begin();
                }
                test(s.cell_start[cidx], s.cell_start[cidx + 1]);
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

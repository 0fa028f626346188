// Why: a scene describes thousands of grains by a rule, not one by one, and a run must not
// start with bodies already interpenetrating (the solver would fling them apart with the
// recovery speed and the first frames would be garbage). This file turns the rules into
// centres and finds any overlap at t = 0.
//
// Lattice: points min + i∘s per axis while the point stays within max + 1e-9·s; the
// slack makes "max = min + k·s" include its last point despite round-off.
// Random fill: random sequential addition, to a count or to a solid volume fraction of the
// box, with one radius law (engine/flow/size_distribution.hpp). Candidates are uniform in
// the box and kept if they overlap nothing, as engine/flow/free_space.hpp finds (a hash
// grid with cells no smaller than the largest contact distance makes each test look at 27
// cells only).
// Uniform candidates stall long before the box is full: at a solid fraction of 0.3 nearly
// every candidate lands in the excluded space. So once kStallMisses candidates in a row
// have failed, the fill draws only from the space that is left (VoxelSampler below, after
// Zhang and Torquato, "Precise algorithm to generate random sequential addition of hard
// hyperspheres at saturation", Phys. Rev. E 88, 053312, 2013): the centres' box is cut into
// equal cells, a cell that one sphere's excluded ball covers whole is dropped, and the
// candidate is drawn uniformly in a cell drawn uniformly from those left; as the cells
// empty they are halved. Candidates are uniform over the cells left, which hold every
// free point, and each is still tested exactly, so this is the same random sequential
// addition, only without drawing where nothing can go. It runs to saturation (no cell
// left: no room for another sphere, about 38 % solid fraction in a large box), hence an
// error rather than an endless loop. Random bits
// come from std::mt19937_64, whose output sequence the standard fixes, and are turned into
// doubles by our own bits_to_unit, so a seed gives the same grains everywhere (the
// standard distributions are implementation-defined).
#include "engine/flow/particle_fill.hpp"

#include "engine/flow/free_space.hpp"
#include "core/sphere_grid.hpp"

#include <algorithm>
#include <cmath>
#include <random>

namespace talus {
std::array<int64_t, 3> lattice_extent(const Vec3& min, const Vec3& max, const Vec3& spacing) {
    std::array<int64_t, 3> n{0, 0, 0};
    for (int a = 0; a < 3; ++a) {
        const double s = spacing[a];
        const double limit = max[a] + 1e-9 * s;
        if (!(min[a] <= limit) || !(s > 0.0)) continue;
        const double estimate = std::floor((max[a] - min[a]) / s);
        if (!(estimate < 0x1.0p62)) {
            n[a] = int64_t(1) << 62;
            continue;
        }
        // Settle the last index with the exact predicate used when generating points.
        int64_t k = std::max<int64_t>(0, static_cast<int64_t>(estimate));
        while (k > 0 && !(min[a] + double(k) * s <= limit)) --k;
        while (min[a] + double(k + 1) * s <= limit) ++k;
        n[a] = k + 1;
    }
    return n;
}

void lattice_points(const Vec3& min, const Vec3& max, const Vec3& spacing, std::vector<Vec3>& out) {
    const auto n = lattice_extent(min, max, spacing);
    out.reserve(out.size() + std::size_t(n[0] * n[1] * n[2]));
    for (int64_t k = 0; k < n[2]; ++k)
        for (int64_t j = 0; j < n[1]; ++j)
            for (int64_t i = 0; i < n[0]; ++i)
                out.emplace_back(min.x() + double(i) * spacing.x(),
                                 min.y() + double(j) * spacing.y(),
                                 min.z() + double(k) * spacing.z());
}

namespace {

/// Random sequential addition's second phase: equal cells (cuboids) covering the centres'
/// box [lo, hi], of which only those that may still hold a free centre are kept. A cell
/// is dropped when the ball of radius r_min − h about its centre (h its half-diagonal, r_min
/// the smallest radius the fill draws) is not free: then every ball of radius ≥ r_min
/// centred in the cell contains it, so overlaps the same sphere or wall, and no candidate in
/// the cell can be placed. Halving the cells (refine) lets more of them be dropped as the
/// free space shrinks to slivers.
/// Cells too fine to halve further (1/64 of the smallest radius) can still be left where
/// two or three excluded balls meet and cover a cell together but none alone. When that
/// many rounds of draws over the cells left (each as many draws as cells) place nothing,
/// the box counts as full: what free space those cells could still hold is below a
/// millionth of a sphere's volume per cell.
constexpr int kIdleRounds = 16;

class VoxelSampler {
public:
    VoxelSampler(const Vec3& lo, const Vec3& hi, double r_min, std::size_t placed) : lo_(lo), hi_(hi) {
        const Vec3 extent = hi - lo;
        // cells of side r_min, coarser if that would make more than kMaxCells (or 32 per
        // sphere placed): the first cull then tests each cell once
        const double volume = std::max(extent.x(), r_min) * std::max(extent.y(), r_min) *
                              std::max(extent.z(), r_min);
        const double most = std::min(double(kMaxCells), 32.0 * double(placed + 1));
        double side = std::max(r_min, std::cbrt(volume / most));
        const auto cells_of = [&](double s) {  // axes thinner than a cell are one cell thick
            double c = 1.0;
            for (int a = 0; a < 3; ++a) c *= extent[a] > s ? std::ceil(extent[a] / s) : 1.0;
            return c;
        };
        while (cells_of(side) > most) side *= 2.0;  // a long, thin box
        for (int a = 0; a < 3; ++a) {
            // an axis thinner than a cell is one cell as thick as the box (0 for a flat box)
            side_[a] = std::min(side, extent[a]);
            n_[a] = side_[a] > 0.0 ? int32_t(std::clamp(std::ceil(extent[a] / side_[a]), 1.0, 0x1.0p30)) : 1;
        }
        r_min_ = r_min;
        for (int32_t k = 0; k < n_[2]; ++k)
            for (int32_t j = 0; j < n_[1]; ++j)
                for (int32_t i = 0; i < n_[0]; ++i) cells_.push_back({i, j, k});
    }

    bool empty() const { return cells_.empty(); }
    std::size_t size() const { return cells_.size(); }

    /// A point uniform in a cell drawn uniformly (four draws of rng). May lie beyond the
    /// box's upper faces in the last cells of an axis: the caller rejects it there.
    Vec3 draw(std::mt19937_64& rng) const {
        const std::size_t k =
            std::min(cells_.size() - 1, std::size_t(bits_to_unit(rng()) * double(cells_.size())));
        const std::array<int32_t, 3>& c = cells_[k];
        Vec3 x;
        for (int a = 0; a < 3; ++a) x[a] = lo_[a] + (double(c[a]) + bits_to_unit(rng())) * side_[a];
        return x;
    }

    /// Drops the cells that can hold no free centre (order kept: the same cells whatever
    /// happened before).
    void cull(const FreeSpace& space) {
        if (!(0.5 * side_.norm() < r_min_)) return;  // too coarse to prove anything yet
        std::size_t kept = 0;
        for (const std::array<int32_t, 3>& c : cells_) {
            // the cell's part in the box, where candidates are kept
            Vec3 low, high;
            for (int a = 0; a < 3; ++a) {
                low[a] = lo_[a] + double(c[a]) * side_[a];
                high[a] = std::min(low[a] + side_[a], hi_[a]);
            }
            const double h = 0.5 * (high - low).norm();
            if (space.free(0.5 * (low + high), r_min_ - h)) cells_[kept++] = c;
        }
        cells_.resize(kept);
    }

    /// Halves every cell along each axis thicker than zero; false when the cells are
    /// already fine enough (kFinest of r_min) or would be too many.
    bool refine() {
        if (side_.maxCoeff() <= kFinest * r_min_) return false;
        int split = 1;
        for (int a = 0; a < 3; ++a)
            if (side_[a] > 0.0) {
                split *= 2;
                if (n_[a] > (int32_t(1) << 29)) return false;  // cell indices stay within int32
            }
        if (double(cells_.size()) * split > double(kMaxCells)) return false;
        std::vector<std::array<int32_t, 3>> finer;
        finer.reserve(cells_.size() * std::size_t(split));
        const int sx = side_[0] > 0.0 ? 2 : 1, sy = side_[1] > 0.0 ? 2 : 1, sz = side_[2] > 0.0 ? 2 : 1;
        Vec3 half = side_;
        for (int a = 0; a < 3; ++a)
            if (side_[a] > 0.0) half[a] *= 0.5;
        for (const std::array<int32_t, 3>& c : cells_)
            for (int dz = 0; dz < sz; ++dz)
                for (int dy = 0; dy < sy; ++dy)
                    for (int dx = 0; dx < sx; ++dx) {
                        const std::array<int32_t, 3> f{c[0] * sx + dx, c[1] * sy + dy, c[2] * sz + dz};
                        // a half beyond the box's upper face holds no candidate
                        bool inside = true;
                        for (int a = 0; a < 3; ++a)
                            inside = inside && (half[a] == 0.0 || lo_[a] + double(f[a]) * half[a] < hi_[a]);
                        if (inside) finer.push_back(f);
                    }
        cells_ = std::move(finer);
        side_ = half;
        for (int a = 0; a < 3; ++a)
            if (side_[a] > 0.0) n_[a] *= 2;
        return true;
    }

private:
    static constexpr std::size_t kMaxCells = std::size_t(1) << 24;  // 16 M cells, 200 MB at most
    static constexpr double kFinest = 1.0 / 64.0;
    Vec3 lo_, hi_;
    Vec3 side_ = Vec3::Zero();
    std::array<int32_t, 3> n_{1, 1, 1};
    double r_min_ = 0.0;
    std::vector<std::array<int32_t, 3>> cells_;
};

}  // namespace

RandomFillResult random_fill_sized(const RandomFillSpec& spec,
                                   const std::vector<Vec3>& existing_position,
                                   const std::vector<double>& existing_radius,
                                   const std::vector<Wall>& walls, std::vector<Vec3>& out,
                                   std::vector<double>* out_radius) {
    const SizeDistribution law = spec.radii();
    const double r_max = law.max;  // no radius drawn exceeds it
    // every wall kind at its t = 0 pose; earlier spheres within reach of the region
    FreeSpace space(walls, 0.0, spec.min, spec.max, r_max, existing_position, existing_radius, spec.periodic);

    std::mt19937_64 rng(spec.seed);
    std::mt19937_64 size_rng(spec.seed ^ kRadiusStream);
    const Vec3 extent = spec.max - spec.min;
    const bool by_volume = spec.volume_fraction > 0.0;
    const double target = spec.volume_fraction * fill_region_volume(spec.min, spec.max, r_max);
    const double four_thirds_pi = 4.0 / 3.0 * 3.14159265358979323846;
    RandomFillResult res;
    const auto done = [&] { return by_volume ? res.volume >= target : res.placed >= spec.count; };
    const auto budget = [&] { return random_fill_budget(by_volume ? res.placed + 1 : spec.count); };
    double r = law.sample(size_rng);
    const auto place = [&](const Vec3& x) {
        space.add(x, r);
        out.push_back(x);
        if (out_radius) out_radius->push_back(r);
        ++res.placed;
        res.volume += four_thirds_pi * r * r * r;
        if (!done()) r = law.sample(size_rng);
    };
    const auto tick = [&] {
        ++res.attempts;
        if (spec.progress && (res.attempts & 0xffff) == 0) spec.progress(res.placed, res.attempts);
    };
    // Uniform in the box while that works (a loose fill never leaves this loop); a run of
    // misses, or the budget spent, hands over to the cells.
    uint64_t misses = 0;
    while (!done() && res.attempts < budget() && misses < kStallMisses) {
        tick();
        const double ux = bits_to_unit(rng());
        const double uy = bits_to_unit(rng());
        const double uz = bits_to_unit(rng());
        const Vec3 x(spec.min.x() + ux * extent.x(), spec.min.y() + uy * extent.y(),
                     spec.min.z() + uz * extent.z());
        if (!space.free(x, r)) {
            ++misses;
            continue;
        }
        misses = 0;
        place(x);
    }
    if (done()) {
        res.complete = true;
        return res;
    }
    // Then only where some room is left.
    VoxelSampler cells(spec.min, spec.max, law.min, res.placed);
    cells.cull(space);
    uint64_t since_cull = 0;
    int idle_rounds = 0;  // rounds of culls at the finest cells without a sphere placed
    // No attempt budget here: the cells end the fill. Each sphere placed is followed by at
    // most the rounds that halve the cells, refine them or stay idle (kIdleRounds) before
    // the next, and only so many spheres fit.
    while (!done()) {
        if (cells.empty() || idle_rounds >= kIdleRounds) {
            res.saturated = true;
            break;
        }
        tick();
        const Vec3 x = cells.draw(rng);
        if (x.x() <= spec.max.x() && x.y() <= spec.max.y() && x.z() <= spec.max.z() && space.free(x, r)) {
            place(x);
            idle_rounds = 0;
        } else if (++since_cull >= std::max<uint64_t>(64, cells.size())) {
            since_cull = 0;
            const std::size_t before = cells.size();
            cells.cull(space);
            // cells that stay are mostly excluded space at this size: halve them
            if (2 * cells.size() > before) {
                if (cells.refine()) cells.cull(space);
                else ++idle_rounds;
            }
        }
    }
    res.complete = done();
    return res;
}

std::size_t random_fill(const RandomFillSpec& spec, const std::vector<Vec3>& existing_position,
                        const std::vector<double>& existing_radius, const std::vector<Wall>& walls,
                        std::vector<Vec3>& out) {
    return random_fill_sized(spec, existing_position, existing_radius, walls, out, nullptr).placed;
}

std::vector<BodyOverlap> find_body_overlaps(const std::vector<Vec3>& position,
                                            const std::vector<double>& radius, double rel_tol,
                                            const PeriodicBox& periodic) {
    std::vector<BodyOverlap> found;
    if (position.empty()) return found;
    const double r_max = *std::max_element(radius.begin(), radius.end());
    const double cell = r_max > 0.0 ? 2.0 * r_max : 1.0;
    SphereGrid grid(cell);
    // Visit b in order and look back at a < b already binned: each pair once, sorted by b.
    // With periodic axes b is also looked for at its images across the faces it is near,
    // each pair measured at b's image nearest a (found once, whichever image found it).
    for (std::size_t b = 0; b < position.size(); ++b) {
        const std::size_t first = found.size();
        const auto look = [&](const Vec3& s) {
            grid.any_near(position[b] + s, [&](uint32_t a) {
                const Vec3 shift = periodic.image_shift(position[a], position[b]);  // zero without periodic axes
                if (shift != s) return false;  // another image of b is nearer a: found there
                const double depth = radius[a] + radius[b] - (position[a] - position[b] - shift).norm();
                if (depth > rel_tol * std::max(radius[a], radius[b])) found.push_back({a, b, depth, shift});
                return false;
            });
            return false;
        };
        periodic.any_image(position[b], cell, look);  // (without periodic axes: b itself only)
        std::sort(found.begin() + std::ptrdiff_t(first), found.end(),
                  [](const BodyOverlap& p, const BodyOverlap& q) { return p.a < q.a; });
        grid.insert(uint32_t(b), position[b]);
    }
    return found;
}

}  // namespace talus

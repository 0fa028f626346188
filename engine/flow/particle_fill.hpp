#pragma once
/// Generating sphere centres for a scene (lattice and random non-overlapping fill) and
/// checking an initial configuration for overlaps between bodies and with walls.
/// Pure geometry: no TOML, no error formatting (io/scene/ does that).
#include <array>
#include <functional>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/math.hpp"
#include "core/periodic.hpp"
#include "core/random.hpp"
#include "core/walls.hpp"
#include "engine/flow/size_distribution.hpp"

namespace talus {

/// Points per axis of the lattice min + i∘spacing with min + i·s ≤ max + 1e-9·s
/// (0 on an axis where max is below min). Saturates at 2⁶² for absurd inputs.
std::array<int64_t, 3> lattice_extent(const Vec3& min, const Vec3& max, const Vec3& spacing);

/// Appends the lattice points to `out`, x fastest, then y, then z.
void lattice_points(const Vec3& min, const Vec3& max, const Vec3& spacing, std::vector<Vec3>& out);

/// The volume of the region a fill's spheres lie in: the box of centres [min, max] widened
/// by the largest radius r_max on every side. A fill whose centres' box is a container's
/// inside less a radius (the usual way to keep grains off its walls) measures against the
/// container itself, and a fraction means the same in a box of any size.
inline double fill_region_volume(const Vec3& min, const Vec3& max, double r_max) {
    return ((max - min).array() + 2.0 * r_max).prod();
}

/// A random non-overlapping fill of spheres with centres uniform in [min, max], either of
/// `count` spheres or up to a solid volume fraction of the box [min, max].
struct RandomFillSpec {
    Vec3 min = Vec3::Zero();  ///< [m]
    Vec3 max = Vec3::Zero();  ///< [m]
    double radius = 0.0;      ///< [m], when `size` is left unset
    std::size_t count = 0;    ///< spheres wanted (when volume_fraction is 0)
    uint64_t seed = 0;        ///< std::mt19937_64 seed
    /// Radii; unset (kind Fixed with max 0) means every sphere has `radius`.
    SizeDistribution size{};
    /// > 0: instead of `count`, add spheres until Σ 4/3 π r³ ≥ volume_fraction × the volume
    /// of the region the spheres occupy (fill_region_volume).
    double volume_fraction = 0.0;
    /// Called every 2^16 candidates with the spheres placed and the candidates drawn so far,
    /// so that a long fill can show that it is working (may be empty).
    std::function<void(std::size_t placed, uint64_t attempts)> progress;
    /// The scene's periodic axes: a sphere must miss the others through the faces too.
    PeriodicBox periodic{};

    /// The radius law actually used: `size`, or a fixed `radius`.
    SizeDistribution radii() const {
        return size.kind == SizeKind::Fixed && size.max == 0.0 ? SizeDistribution::fixed(radius) : size;
    }
};

/// Attempts the uniform first phase of a fill of `count` spheres may use before it gives
/// up. A volume-fraction fill may use random_fill_budget(placed + 1) attempts in all, a
/// budget that grows as it places. (The second phase ends by itself: particle_fill.cpp.)
inline uint64_t random_fill_budget(std::size_t count) { return 100 * uint64_t(count) + 10000; }

/// What a fill achieved.
struct RandomFillResult {
    std::size_t placed = 0;  ///< spheres placed
    double volume = 0.0;     ///< Σ 4/3 π r³ of the placed spheres [m³]
    uint64_t attempts = 0;   ///< candidate centres drawn
    bool complete = false;   ///< count reached, or volume ≥ volume_fraction × fill_region_volume
    /// The box is full: no room is left for a sphere of the smallest radius the fill draws
    /// (random sequential addition at saturation), so more attempts would change nothing.
    bool saturated = false;
};

/// Candidates in a row that a fill lets fail, drawn uniformly in the box, before it draws
/// only from the space left (particle_fill.cpp). A loose fill never gets there.
inline constexpr uint64_t kStallMisses = 256;

/// Random sequential addition: draws candidate centres (x, y, z from consecutive
/// mt19937_64(seed) outputs) and keeps those that overlap neither an earlier sphere of the
/// fill, nor an `existing` sphere, nor any wall at t = 0 (collision/wall_clearance.hpp). Radii come from a second
/// generator, mt19937_64(seed ^ kRadiusStream), one radius per sphere, drawn before its
/// first candidate and kept until it is placed (redrawing would favour small spheres), so
/// a fixed radius gives the very centres it gave before size distributions existed.
/// After kStallMisses failed candidates in a row (or the budget), candidates are drawn only in cells of the
/// box that may still hold a free centre (the same process, faster), until the fill is done
/// or the box is full (`saturated`).
/// Appends the kept centres to `out` and their radii to `out_radius` (if given).
RandomFillResult random_fill_sized(const RandomFillSpec& spec,
                                   const std::vector<Vec3>& existing_position,
                                   const std::vector<double>& existing_radius,
                                   const std::vector<Wall>& walls, std::vector<Vec3>& out,
                                   std::vector<double>* out_radius);

/// random_fill_sized, returning only how many were placed (fewer than `count` if the
/// budget ran out).
std::size_t random_fill(const RandomFillSpec& spec, const std::vector<Vec3>& existing_position,
                        const std::vector<double>& existing_radius, const std::vector<Wall>& walls,
                        std::vector<Vec3>& out);

/// Two spheres that overlap: a < b, depth = r_a + r_b − |x_a − (x_b + shift)| [m].
struct BodyOverlap {
    std::size_t a = 0, b = 0;
    double depth = 0.0;
    Vec3 shift = Vec3::Zero();  ///< b's image nearest a (whole periods; zero without [periodic])
};

/// Every pair whose overlap exceeds rel_tol × max(r_a, r_b), sorted by (b, a); with periodic
/// axes, through the faces too (the minimum image, as the step sees the pair).
std::vector<BodyOverlap> find_body_overlaps(const std::vector<Vec3>& position,
                                            const std::vector<double>& radius, double rel_tol,
                                            const PeriodicBox& periodic = {});

/// A sphere crossing a wall face at t = 0: depth = r − n·(x − p) [m]; depth > r means
/// the centre itself is on the wrong side. `face` is the index from wall_faces().
struct WallOverlap {
    std::size_t body = 0;
    std::size_t wall = 0;
    int face = 0;
    double depth = 0.0;
};

}  // namespace talus

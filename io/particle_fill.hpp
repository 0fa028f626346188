#pragma once
/// Generating sphere centres for a scene (lattice and random non-overlapping fill) and
/// checking an initial configuration for overlaps between bodies and with walls.
/// Pure geometry: no TOML, no error formatting (io/scene.cpp does that).
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/core/math.hpp"
#include "engine/core/walls.hpp"

namespace talus {

/// Points per axis of the lattice min + i∘spacing with min + i·s ≤ max + 1e-9·s
/// (0 on an axis where max is below min). Saturates at 2⁶² for absurd inputs.
std::array<int64_t, 3> lattice_extent(const Vec3& min, const Vec3& max, const Vec3& spacing);

/// Appends the lattice points to `out`, x fastest, then y, then z.
void lattice_points(const Vec3& min, const Vec3& max, const Vec3& spacing, std::vector<Vec3>& out);

/// Maps 64 random bits to a double uniform in [0, 1) using the top 53 bits, so the
/// result is the same on every platform and standard library.
inline double bits_to_unit(uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }

/// A random non-overlapping fill of equal spheres with centres uniform in [min, max].
struct RandomFillSpec {
    Vec3 min = Vec3::Zero();  ///< [m]
    Vec3 max = Vec3::Zero();  ///< [m]
    double radius = 0.0;      ///< [m]
    std::size_t count = 0;    ///< spheres wanted
    uint64_t seed = 0;        ///< std::mt19937_64 seed
};

/// Attempts a fill of `count` spheres may use before it gives up.
inline uint64_t random_fill_budget(std::size_t count) { return 100 * uint64_t(count) + 10000; }

/// Random sequential addition: draws candidate centres (x, y, z from consecutive
/// mt19937_64 outputs) and keeps those that overlap neither an earlier sphere of the fill,
/// nor an `existing` sphere, nor any wall face or cylinder at t = 0. Appends the kept centres to `out`
/// and returns how many were placed (fewer than `count` if the budget ran out).
std::size_t random_fill(const RandomFillSpec& spec, const std::vector<Vec3>& existing_position,
                        const std::vector<double>& existing_radius, const std::vector<Wall>& walls,
                        std::vector<Vec3>& out);

/// Two spheres that overlap: a < b, depth = r_a + r_b − |x_a − x_b| [m].
struct BodyOverlap {
    std::size_t a = 0, b = 0;
    double depth = 0.0;
};

/// Every pair whose overlap exceeds rel_tol × max(r_a, r_b), sorted by (b, a).
std::vector<BodyOverlap> find_body_overlaps(const std::vector<Vec3>& position,
                                            const std::vector<double>& radius, double rel_tol);

/// A sphere crossing a wall face at t = 0: depth = r − n·(x − p) [m]; depth > r means
/// the centre itself is on the wrong side. `face` is the index from wall_faces().
struct WallOverlap {
    std::size_t body = 0;
    std::size_t wall = 0;
    int face = 0;
    double depth = 0.0;
};

/// The deepest offending face per (body, wall) with depth > rel_tol × r, sorted by body.
std::vector<WallOverlap> find_wall_overlaps(const std::vector<Vec3>& position,
                                            const std::vector<double>& radius,
                                            const std::vector<Wall>& walls, double rel_tol);

}  // namespace talus

#pragma once
/// Data handed between the collision and solver stages (docs/design.md §1, §3), as plain arrays.
#include <cstdint>
#include <utility>
#include <vector>

#include "math.hpp"

namespace talus {

/// Marks "no dynamic body on this side" (a wall, static or kinematic).
inline constexpr int32_t kNoBody = -1;
/// Stable-key namespace for walls in warm-start keys: wall w has key kWallKeyBit | w.
inline constexpr uint64_t kWallKeyBit = uint64_t(1) << 63;
/// ContactList::feature = face | (sub-feature << kSubFeatureShift): the face of a wall
/// (0 for a plane, 0–5 for a box) and which part of body B touches it (a capsule's end,
/// 0 at +x and 1 at −x; 0 for spheres and ellipsoids). Between two bodies the face is 0
/// and the sub-feature tells the contacts of one pair apart (parallel capsules: 0 and 1).
/// For a mesh wall the feature is the index of the owning triangle, for a clump with its
/// sphere number above bit kMeshSubFeatureShift. Clumps: against a wall face the sub-feature
/// is the clump's sphere k, against a sphere k, against another clump (k_a << 8 | k_b)
/// (collision/narrow_phase.cpp).
inline constexpr uint32_t kSubFeatureShift = 8;
inline constexpr uint32_t kMeshSubFeatureShift = 24;

/// Candidate pairs from the broad phase: dense indices, a < b.
struct PairList {
    std::vector<int32_t> a, b;
    /// With periodic boundaries, per pair the shift (whole periods) that brings b to its
    /// image nearest to a: the pair interacts as a and b + shift. Empty without periodic axes.
    std::vector<Vec3> shift;
    std::size_t size() const { return a.size(); }
    void clear() { a.clear(); b.clear(); shift.clear(); }
};

/// Narrow-phase output: geometric contacts with gap Φ ≤ δ. Normal points from A to B.
/// A is either a dynamic body (a ≥ 0) or a wall (a == kNoBody, then `velocity_a` is the
/// wall's prescribed velocity over the step).
struct ContactList {
    std::vector<int32_t> a, b;        ///< dense body indices (a may be kNoBody)
    std::vector<uint64_t> key_a;      ///< stable key of A (body id, or kWallKeyBit | wall)
    std::vector<uint64_t> key_b;      ///< stable id of B
    std::vector<uint32_t> feature;    ///< face | (sub-feature << kSubFeatureShift), see above
    std::vector<Vec3> point;          ///< contact point, world [m]
    std::vector<Vec3> normal;         ///< unit normal, A -> B
    std::vector<double> gap;          ///< signed gap Φ [m], negative = penetration
    /// Velocity of a non-dynamic A (a wall's at the point, a kinematic body's) [m/s]; empty
    /// when nothing in the step moves that is not dynamic (every such velocity is zero).
    std::vector<Vec3> velocity_a;
    std::vector<uint32_t> material_a; ///< material of A (wall or body)
    /// Periodic image shift of B: the contact is between A and B displaced by this (whole
    /// periods, see PairList::shift), so B's lever arm is point − (x_B + shift_b). Zero for
    /// wall contacts; without periodic boundaries it is empty (no entry per contact: every
    /// shift is zero, and 24 bytes a contact at a million grains are 35 MB a list).
    std::vector<Vec3> shift_b;
    /// Contacts are grouped by colour (solvers/colouring.hpp): colour k is the range
    /// [colour_start[k], colour_start[k+1]); no two contacts of a colour share a dynamic
    /// body. Empty until the contacts are coloured.
    std::vector<uint32_t> colour_start;
    bool overflow_colour = false;  ///< the last colour may share bodies: sweep it serially

    std::size_t size() const { return a.size(); }
    bool empty() const { return a.empty(); }
    /// Calls f(v) on every per-contact vector (one entry per contact), in a fixed order:
    /// the one list a new per-contact field joins, so that resizing, clearing, compacting
    /// and the colouring's permutation move it too.
    /// With other lists `more`, f receives each field of this list and the same field of
    /// each of them: f(v, more.v...) (moving contacts between lists).
    template <class F, class... More>
    void for_each_array(F&& f, More&... more) {
        f(a, more.a...); f(b, more.b...); f(key_a, more.key_a...); f(key_b, more.key_b...);
        f(feature, more.feature...); f(point, more.point...); f(normal, more.normal...);
        f(gap, more.gap...); f(velocity_a, more.velocity_a...); f(material_a, more.material_a...);
        f(shift_b, more.shift_b...);
    }
    /// As for_each_array, but only over the fields that hold one entry per contact of this
    /// list: an empty shift_b or velocity_a, or a field given back (release_geometry), is
    /// passed over. What the list's operations (moving, permuting, appending, splitting
    /// contacts) go through, so that they leave an unfilled field as it is. The list's
    /// size is taken before the first call: f may resize the fields it is given.
    template <class F, class... More>
    void for_each_filled_array(F&& f, More&... more) {
        const std::size_t n = size();
        for_each_array([&](auto& v, auto&... w) {
            if (v.size() == n) f(v, w...);
        }, more...);
    }
    template <class F, class... More>
    void for_each_filled_array(F&& f, More&... more) const {
        const std::size_t n = size();
        const_cast<ContactList*>(this)->for_each_array([&](auto& v, auto&... w) {
            if (v.size() == n) f(std::as_const(v), w...);
        }, more...);
    }
    /// Every per-contact field to n entries, shift_b only with periodic images (`images`)
    /// and velocity_a only with walls or kinematic bodies in motion (`moving`); otherwise
    /// they are given back, empty (for_each_filled_array then passes them over).
    void resize(std::size_t n, bool images = true, bool moving = true) {
        for_each_array([&](auto& v) {
            const void* field = &v;
            if ((field == &shift_b && !images) || (field == &velocity_a && !moving)) {
                std::decay_t<decltype(v)>().swap(v);
                return;
            }
            v.resize(n);
        });
    }
    /// B's image shift for contact i (zero without periodic images).
    Vec3 shift_of(std::size_t i) const { return shift_b.empty() ? Vec3::Zero() : Vec3(shift_b[i]); }
    /// A's velocity for contact i when A is not dynamic (zero when nothing such moves).
    Vec3 velocity_of_a(std::size_t i) const {
        return velocity_a.empty() ? Vec3::Zero() : Vec3(velocity_a[i]);
    }
    /// Give back what only assembly reads (point, normal, velocity_a, material_a, shift_b),
    /// keeping bodies, keys, features and gaps; a large run does this once the batch is
    /// built (World::lean_bodies).
    void release_geometry() {
        // (`v = {}` would keep the capacity: it assigns an empty initializer list)
        std::vector<Vec3>().swap(point);
        std::vector<Vec3>().swap(normal);
        std::vector<Vec3>().swap(velocity_a);
        std::vector<uint32_t>().swap(material_a);
        std::vector<Vec3>().swap(shift_b);
    }
    void clear() {
        for_each_array([](auto& v) { v.clear(); });
        colour_start.clear();
        overflow_colour = false;
    }
};

}  // namespace talus

#pragma once
/// Thin walls: a cone (a conical frustum, the hopper of a silo) and an orifice plate (a
/// plane with a circular or rectangular hole). Unlike a plane, a box or a cylinder, which
/// have a side for bodies and a side for none, these are shells of no thickness with bodies
/// allowed on both sides: a grain that has fallen through the outlet of a hopper or the hole
/// of a plate lies under it, not inside it. Their edges (the cone's two rims, the hole's
/// border) are part of them, so a grain passing an outlet touches the rim.
///
/// Contacts. A sphere's distance to the wall is its distance to the nearest point of the
/// shell. For a surface of revolution (the cone and the round hole) that point lies in the
/// half-plane through the axis and the sphere's centre (the centre's meridian), on the
/// wall's profile there: a segment from (ρ₀, s₀) to (ρ₁, s₁) in (distance from the axis,
/// position along the axis), with ρ₁ = ∞ for the plate round a hole. A sphere seated in a
/// funnel or in a hole touches a whole circle, not one point: one contact would push it off
/// the axis one step and back the next. So two more generators of the surface, the
/// meridian's profile turned by ±120° about the axis, give contacts of their own when they
/// come within reach: each is a line segment (or ray) of the wall, so the sphere may not
/// cross it whatever else it touches, and three at 120° hold a sphere on the axis as a
/// tripod. A rectangular hole gives the plate's contact when the centre is over the plate,
/// and otherwise a contact with each of the hole's four edges within reach.
///
/// Feature numbers (the low bits of ContactList::feature): 0 the nearest point; 1 and 2 the
/// turned generators; for a rectangular hole 0 the plate, 1–4 the edges.
#include <algorithm>
#include <array>
#include <cmath>
#include <utility>
#include <limits>

#include "core/math.hpp"
#include "core/walls.hpp"

namespace talus {

/// One contact of a sphere with a thin wall: the nearest point on the wall's part that the
/// feature names, the unit normal from there towards the centre, and the distance.
struct ThinWallPoint {
    Vec3 point;
    Vec3 normal;
    double distance = 0.0;  ///< centre to point [m], ≥ 0
    uint32_t feature = 0;
};

/// A cone or orifice wall at one pose.
class ThinWallAt {
public:
    ThinWallAt(const Wall& w, const WallState& s) {
        origin_ = s.to_world(w.point);
        if (w.type == WallType::Cone) {
            axis_ = s.dir_to_world(w.axis);
            rho0_ = w.radius;
            rho1_ = w.end_radius;
            s1_ = w.length;
        } else {
            axis_ = s.dir_to_world(w.normal);
            if (w.hole_radius > 0.0) {
                rho0_ = w.hole_radius;
                rho1_ = std::numeric_limits<double>::infinity();
                s1_ = 0.0;
            } else {
                rectangle_ = true;
                width_dir_ = s.dir_to_world(w.hole_direction);
                length_dir_ = axis_.cross(width_dir_);
                half_[0] = 0.5 * w.hole_size[0];
                half_[1] = 0.5 * w.hole_size[1];
            }
        }
    }

    /// Up to four contacts of the sphere (centre x) whose distance is ≤ reach [m], into
    /// `out`; returns how many. The nearest point always comes first when within reach.
    int contacts(const Vec3& x, double reach, std::array<ThinWallPoint, 4>& out) const {
        return rectangle_ ? rectangle_contacts(x, reach, out) : revolved_contacts(x, reach, out);
    }

    /// The wall's point nearest x. For a cone or a round hole that is the point on the
    /// profile through x's own radial direction (turning the profile about the axis only
    /// takes it farther), so only that one is computed: fills and emitters ask this for
    /// every candidate. At a rectangular hole, the nearest of the plate and its edges (the
    /// first of equals).
    ThinWallPoint nearest(const Vec3& x) const {
        if (!rectangle_) {
            Vec3 e, f;
            radial_directions(x, e, f);
            return on_generator(x, e, 0);
        }
        std::array<ThinWallPoint, 4> c;
        const int n = rectangle_contacts(x, std::numeric_limits<double>::infinity(), c);
        int best = 0;
        for (int k = 1; k < n; ++k)
            if (c[std::size_t(k)].distance < c[std::size_t(best)].distance) best = k;
        return c[std::size_t(best)];
    }

    /// The distance from x to the wall [m]: to its nearest point.
    double distance(const Vec3& x) const { return nearest(x).distance; }

    /// True for a point outside a cone between its ends (farther from the axis than the
    /// cone there): where fills and emitters put no grain, so that a fill box wider than a
    /// hopper fills the hopper. Never for an orifice plate.
    bool outside(const Vec3& x) const {
        if (std::isinf(rho1_) || rectangle_) return false;
        const Vec3 rel = x - origin_;
        const double s = rel.dot(axis_);
        if (s < 0.0 || s > s1_) return false;
        return (rel - s * axis_).norm() > rho0_ + (rho1_ - rho0_) * (s / s1_);
    }

private:
    /// The point of the generator through the radial direction e (unit, ⊥ axis) nearest x.
    ThinWallPoint on_generator(const Vec3& x, const Vec3& e, uint32_t feature) const {
        const Vec3 p0 = origin_ + rho0_ * e;
        Vec3 dir;
        double t_max;
        if (std::isinf(rho1_)) {  // a ray outwards in the plane
            dir = e;
            t_max = std::numeric_limits<double>::infinity();
        } else {
            const Vec3 span = (rho1_ - rho0_) * e + s1_ * axis_;
            t_max = span.norm();
            dir = span / t_max;
        }
        const double t = std::clamp((x - p0).dot(dir), 0.0, t_max);
        const Vec3 c = p0 + t * dir;
        const Vec3 d = x - c;
        const double dist = d.norm();
        Vec3 n;
        if (dist > 0.0) {
            n = d / dist;
        } else {  // the centre on the wall: the profile's normal, towards the axis for a cone
            const Vec3 across = dir.cross(axis_.cross(e));
            n = std::isinf(rho1_) ? axis_ : Vec3(across.dot(e) > 0.0 ? Vec3(-across) : across).normalized();
        }
        return {c, n, dist, feature};
    }

    /// e: the unit direction from the axis towards x (any, for x on the axis), f = axis × e.
    void radial_directions(const Vec3& x, Vec3& e, Vec3& f) const {
        const Vec3 rel = x - origin_;
        const Vec3 radial = rel - rel.dot(axis_) * axis_;
        const double rho = radial.norm();
        if (rho > 0.0) {
            e = radial / rho;
            f = axis_.cross(e);
        } else {
            orthonormal_basis(axis_, e, f);
        }
    }

    int revolved_contacts(const Vec3& x, double reach, std::array<ThinWallPoint, 4>& out) const {
        Vec3 e, f;
        radial_directions(x, e, f);
        int n = 0;
        constexpr double kCos = -0.5, kSin = 0.86602540378443864676;  // ±120°
        const Vec3 e1 = kCos * e + kSin * f, e2 = kCos * e - kSin * f;
        for (const auto& [dir, feature] : {std::pair{e, 0u}, std::pair{e1, 1u}, std::pair{e2, 2u}}) {
            const ThinWallPoint c = on_generator(x, dir, feature);
            if (c.distance <= reach) out[std::size_t(n++)] = c;
        }
        return n;
    }

    int rectangle_contacts(const Vec3& x, double reach, std::array<ThinWallPoint, 4>& out) const {
        const Vec3 rel = x - origin_;
        const double h = rel.dot(axis_), u = rel.dot(width_dir_), v = rel.dot(length_dir_);
        int n = 0;
        if (std::abs(u) > half_[0] || std::abs(v) > half_[1]) {  // over the plate
            if (std::abs(h) <= reach)
                out[std::size_t(n++)] = {x - h * axis_, h < 0.0 ? Vec3(-axis_) : axis_, std::abs(h), 0u};
            return n;
        }
        // over the hole: its four edges, each a segment of the plate's border
        const std::array<Vec3, 4> corner = {origin_ - half_[0] * width_dir_ - half_[1] * length_dir_,
                                            origin_ + half_[0] * width_dir_ - half_[1] * length_dir_,
                                            origin_ + half_[0] * width_dir_ + half_[1] * length_dir_,
                                            origin_ - half_[0] * width_dir_ + half_[1] * length_dir_};
        for (uint32_t k = 0; k < 4; ++k) {
            const Vec3& a = corner[k];
            const Vec3 span = corner[(k + 1) % 4] - a;
            const double t = std::clamp((x - a).dot(span) / span.squaredNorm(), 0.0, 1.0);
            const Vec3 c = a + t * span;
            const Vec3 d = x - c;
            const double dist = d.norm();
            if (dist > reach) continue;
            // a centre on the edge itself: push it towards the hole's middle
            const Vec3 inward = (origin_ + h * axis_ - c).normalized();
            out[std::size_t(n++)] = {c, dist > 0.0 ? Vec3(d / dist) : inward, dist, k + 1};
        }
        return n;
    }

    Vec3 origin_ = Vec3::Zero();  ///< cone: the start's centre; plate: the hole's centre
    Vec3 axis_ = Vec3::UnitZ();   ///< cone: start → end; plate: its normal
    double rho0_ = 0.0, rho1_ = 0.0, s1_ = 0.0;  ///< the profile (ρ₀, 0) → (ρ₁, s₁)
    bool rectangle_ = false;
    Vec3 width_dir_ = Vec3::UnitX(), length_dir_ = Vec3::UnitY();
    std::array<double, 2> half_{0.0, 0.0};  ///< half the hole's width and length [m]
};

}  // namespace talus

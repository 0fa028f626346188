// Narrow phase for spheres, capsules, ellipsoids and clumps (docs/design.md §3, §7).
//
// Every shape is a convex "core" swept by a radius: a sphere is a point swept by r, a
// capsule the segment x ± h R e_x (h = half_length) swept by r, an ellipsoid the solid
// Σ (y_k/s_k)² ≤ 1 (y = Rᵀ(p − x), body frame) with radius 0. Between two bodies the
// closest points q_A, q_B of the cores give n = (q_B − q_A)/‖q_B − q_A‖ (A → B),
// Φ = ‖q_B − q_A‖ − r_A − r_B and the point midway across the gap,
// p = q_A + (r_A + Φ/2) n; for spheres this is the old sphere–sphere formula.
//   point–segment: q = x + clamp((p − x)·a, −h, h) a, a = R e_x.
//   segment–segment: the clamped closest parameters of two lines; when the segments are
//     parallel (sin² of their angle < 1e-6) and their projections overlap, two contacts at
//     the ends of the overlap (sub-features 0, 1), so stacked capsules do not rock.
//   point–ellipsoid: the closest surface point is x_k = s_k² y_k / (s_k² + t) with t the
//     root of F(t) = Σ (s_k y_k / (s_k² + t))² − 1 (Lagrange condition). F decreases and
//     is convex on t > −min s_k²; the root lies in [‖s∘y‖ − max s², ‖s∘y‖ − min s²] for
//     a point outside and in (−min s², 0] inside. Newton safeguarded by bisection in that
//     bracket. The outward normal is ∇ = x/s² normalised and Φ = (y − x)·n (signed).
//     When y is inside with no component along the smallest axis the root may not exist;
//     then t = −min s² and the smallest-axis coordinate closes the surface equation.
//   segment–ellipsoid: the signed distance to a convex set is convex, so its restriction
//     to the segment is a convex function of the segment parameter, with slope n·a (n the
//     outward normal at the closest point): its least value at an end or at the slope's
//     root (regula falsi, Illinois).
//   ellipsoid–ellipsoid: with M = S Rᵀ, an ellipsoid's support function is h(n) = ‖M n‖, and
//     the signed distance of two convex bodies is the largest gap between their shadows
//     on a line, max over unit n of g(n) = n·(x_B − x_A) − ‖M_A n‖ − ‖M_B n‖ (separated or
//     overlapping: the overlap is then the least translation that parts them). g is concave
//     and positively homogeneous, so while the bodies are apart its maximum over the unit
//     sphere is unique; found by Newton's method on the sphere from the line of centres
//     (ellipsoid_pair_normal). The contact joins the support points x_A + R_A S_A² R_Aᵀ n /
//     ‖M_A n‖ and x_B − R_B S_B² R_Bᵀ n / ‖M_B n‖, normal n, Φ = g(n).
//   clumps: a clump is its spheres (core/clump.hpp), sphere k at x + R c_k with
//     radius r_k. Against a sphere, a plane or box face, a cylinder, a mesh or another clump,
//     every sub-sphere (pair) is collided as a sphere and gives its own contact, carrying
//     the clump's body index so that the solver sees one rigid body. Sub-features:
//     clump–sphere k, clump–clump (k_a << 8 | k_b), wall face or cylinder k, mesh triangle
//     | k << 24 (meshes of up to 2²⁴ triangles; larger ones are reported as unsupported
//     near a clump). Against a capsule or an ellipsoid, each sphere of the clump within
//     reach meets it as a sphere body would (point–segment, point–ellipsoid), sub-feature
//     k. Across a periodic boundary the pair is copied with its templates.
// Body–wall: each wall is one plane (or the six inner faces of a box) with normal n
// pointing at the bodies; Φ = n·(x_c − p₀(t)) − r for each core point x_c nearest the
// plane. Sphere: x_c = x. Capsule: both end centres x ± h a are tested, up to two contacts
// (sub-feature 0 = +x end, 1 = −x end), so warm start keeps each end's impulse. Ellipsoid:
// the support point towards −n is x − R S² Rᵀ n / ‖S Rᵀ n‖ (S = diag(s)), so
// Φ = n·(x − p₀) − ‖S Rᵀ n‖. The contact point is the body's surface point nearest the
// wall; the normal goes from the wall to the body.
// Cylinder walls (spheres, and each sphere of a clump): with s = (x − a)·e the axial and ρ = ‖(x − a) − s e‖ the
// radial coordinate of the centre, Φ = R − ρ − r inside (normal towards the axis) and
// ρ − R − r outside (normal away from it); no contact when |s| exceeds half the length.
// Capsules: ρ is convex along the core segment, so inside a drum the deepest points are
// its ends (both end spheres collided as spheres); outside, the point of least ρ (ρ² is a
// quadratic in the segment parameter). Ellipsoids: ρ(y) = max over unit d ⊥ e of d·y, so
// the largest ρ over the body is max over d ⊥ e of d·(x − a) + ‖M d‖ (M = S Rᵀ, the support
// function), and outside the least ρ is max over d ⊥ e of d·(x − a) − ‖M d‖: a maximum over
// a circle, found by sampling and a bracketed Newton search in the angle. The contact is
// the support point, Φ = R − that maximum inside, the maximum − R outside.
// Mesh walls: sphere–triangle contacts from collision/mesh.cpp (one per owned feature,
// named by triangle), with the same envelope as the plane faces, for spheres and for each
// sphere of a clump. A capsule: its end spheres, and a sphere of its radius at each core
// point nearest a triangle that lies inside the segment (the least distance of a segment
// and a triangle apart is at an end of the segment or at its closest point to an edge, so
// these cover every local minimum; on a flat face the ends are nearest), one contact per
// triangle and sub-feature (collide_capsule_mesh). A moving mesh keeps its AABB tree in
// its reference frame: the sphere centre is mapped into it and the normal back. Cone and
// orifice walls: core/thin_walls.hpp (up to three contacts per sphere, four at a
// rectangular hole); a capsule's end spheres as spheres, and a sphere of its radius at each
// minimum of the wall's distance inside its core (across a rim or a hole's edge, on the
// outside of a cone; capsule_thin_wall). Ellipsoids near a mesh, a cone or an orifice are
// reported in NarrowPhaseScratch::unsupported_mesh / unsupported_thin.
// Every wall is at the pose given by its WallState; a wall contact carries the wall's
// velocity at the contact point, v_lin + ω × (p − c) (for a clump too: each of its
// contacts at its own point).
// Output order: contacts are counted per pair and per body, prefix-summed, then filled,
// so it is (pair, sub-feature), then (body, wall, face, sub-feature) whatever the number
// of threads. When every body is a sphere the counting of pairs is skipped (each pair is
// one contact, as the broad phase guarantees).
#include "collision/narrow_phase.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <utility>

#include "collision/mesh.hpp"
#include "core/clump.hpp"
#include "core/parallel.hpp"
#include "core/thin_walls.hpp"

namespace talus {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr uint8_t kNearMesh = 1, kNearThin = 4;  // NarrowPhaseScratch::wall_flag bits

/// A unit vector perpendicular to a (unit) vector, for coincident cores.
Vec3 any_perpendicular(const Vec3& a) {
    Vec3 u, w;
    orthonormal_basis(a, u, w);
    return u;
}

/// Contact from closest core points qa, qb with radii ra, rb (normal a → b). `fallback`
/// is the normal used when the core points coincide.
ShapeContact core_contact(const Vec3& qa, double ra, const Vec3& qb, double rb,
                          const Vec3& fallback, uint32_t feature) {
    const Vec3 d = qb - qa;
    const double dist = d.norm();
    const Vec3 n = dist > 0.0 ? Vec3(d / dist) : fallback;
    const double gap = dist - ra - rb;
    return {qa + (ra + 0.5 * gap) * n, n, gap, feature};
}

/// Capsule core of body i: centre x, unit axis a, half length h.
struct Segment {
    Vec3 centre, axis;
    double half;
};

Segment segment_of(const BodyStore& bodies, std::size_t i) {
    return {bodies.position[i], bodies.orientation[i] * Vec3::UnitX(), bodies.shape_param[i].y()};
}

Vec3 closest_on_segment(const Segment& s, const Vec3& p) {
    const double u = std::clamp((p - s.centre).dot(s.axis), -s.half, s.half);
    return s.centre + u * s.axis;
}

/// A capsule (core s, radius rc) and a sphere (centre p, radius rp): normal from the
/// capsule to the sphere when `capsule_first`, else from the sphere to the capsule. A sphere
/// body, and each sphere of a clump, meets a capsule through it.
ShapeContact capsule_sphere(const Segment& s, double rc, const Vec3& p, double rp, bool capsule_first,
                            uint32_t feature) {
    const Vec3 q = closest_on_segment(s, p);
    const Vec3 perp = any_perpendicular(s.axis);
    return capsule_first ? core_contact(q, rc, p, rp, perp, feature) : core_contact(p, rp, q, rc, -perp, feature);
}

/// Closest points of two segments; up to two pairs (parallel overlapping segments).
int segment_segment(const Segment& s1, const Segment& s2, Vec3* q1, Vec3* q2) {
    const Vec3 r = s1.centre - s2.centre;
    const double b = s1.axis.dot(s2.axis);
    const double c = s1.axis.dot(r), f = s2.axis.dot(r);
    const double denom = 1.0 - b * b;  // both axes are unit vectors
    if (denom < 1e-6) {
        // Parallel: the interval of s2 projected on s1's line, intersected with s1.
        const double p0 = -c - b * s2.half, p1 = -c + b * s2.half;  // (s2 end − c1)·a1
        const double lo = std::max(-s1.half, std::min(p0, p1));
        const double hi = std::min(s1.half, std::max(p0, p1));
        if (hi > lo + 1e-9 * (s1.half + s2.half)) {
            const double u[2] = {lo, hi};
            for (int k = 0; k < 2; ++k) {
                q1[k] = s1.centre + u[k] * s1.axis;
                q2[k] = closest_on_segment(s2, q1[k]);
            }
            return 2;
        }
        // Disjoint projections: nearest ends.
        const double u1 = std::clamp(0.5 * (p0 + p1), -s1.half, s1.half);
        q2[0] = closest_on_segment(s2, s1.centre + u1 * s1.axis);
        q1[0] = closest_on_segment(s1, q2[0]);
        return 1;
    }
    // Lines p1 + u a1, p2 + v a2: u = (b f − c)/denom, then clamp and re-project.
    double u = std::clamp((b * f - c) / denom, -s1.half, s1.half);
    double v = b * u + f;
    if (v < -s2.half || v > s2.half) {
        v = std::clamp(v, -s2.half, s2.half);
        u = std::clamp(b * v - c, -s1.half, s1.half);
    }
    q1[0] = s1.centre + u * s1.axis;
    q2[0] = s2.centre + v * s2.axis;
    return 1;
}

/// |a1 · a2| from which two capsules' axes count as near parallel (cos 45°) for end_pairs.
constexpr double kNearParallel = 0.7071067811865476;

/// More point pairs for two capsules whose closest pair is q1[0], q2[0]: each of the four
/// segment ends with its closest point on the other segment, in that order, then (near
/// parallel) three inner points of each segment the same way, each unless its point on s1
/// lies within `apart` of q1[0] or of a pair already taken; written from q1[1], q2[1] on,
/// with sub-feature 1 + the end's index (5 + the inner point's) in `feature`, and counted.
/// Each is the exact distance of a sphere inside one capsule to the other capsule, so it
/// forbids nothing a capsule pair may do. They are the far end of two capsules lying side
/// by side at a small angle, and the end of one swinging down onto the other's side, which
/// the closest pair alone let pass through the other capsule (a fifth of the diameter in a
/// poured bed, where two pairs were made only within 0.06° of parallel; one more pair, the
/// nearest, still let 11 %). The envelope keeps them only when they can close within the
/// step.
int end_pairs(const Segment& s1, const Segment& s2, double apart, Vec3* q1, Vec3* q2, uint32_t* feature) {
    int count = 1;
    // point p of s1 (on_s1) or of s2 with its closest point on the other segment, unless near
    // a pair already taken
    auto take = [&](bool on_s1, const Vec3& p, uint32_t f) {
        const Vec3 on_1 = on_s1 ? p : closest_on_segment(s1, p);
        for (int k = 0; k < count; ++k)
            if ((on_1 - q1[k]).squaredNorm() <= apart * apart) return;
        q1[count] = on_1;
        q2[count] = on_s1 ? closest_on_segment(s2, p) : p;
        feature[count++] = f;
    };
    for (int e = 0; e < 4; ++e) {
        const Segment& own = e < 2 ? s1 : s2;
        take(e < 2, own.centre + ((e % 2 == 0) ? own.half : -own.half) * own.axis, uint32_t(1 + e));
    }
    // Within 45° of parallel, the closest pair can slide along both segments by more than
    // their length in one step (its parameter moves as 1 / sin of the angle), and the two
    // capsules close in between the pairs above: also a quarter, half and three quarters
    // of each segment, with their closest points on the other. (Two capsules at 18°, their
    // closest pair at a fifth of one, passed 61 µm = 3 % of the diameter into each other
    // at the middle in one step of a poured bed, every pair above clear.)
    if (std::abs(s1.axis.dot(s2.axis)) < kNearParallel) return count - 1;
    for (int e = 0; e < 6; ++e) {
        const Segment& own = e < 3 ? s1 : s2;
        take(e < 3, own.centre + double(e % 3 - 1) * 0.5 * own.half * own.axis, uint32_t(5 + e));
    }
    return count - 1;
}

/// Signed distance of world point p to the ellipsoid body i; closest surface point and
/// outward normal in world coordinates.
double point_ellipsoid(const BodyStore& bodies, std::size_t i, const Vec3& p, Vec3& surface,
                       Vec3& normal) {
    const Quat& q = bodies.orientation[i];
    Vec3 xs, ns;
    const double d =
        ellipsoid_closest_point(bodies.shape_param[i], q.conjugate() * (p - bodies.position[i]), xs, ns);
    surface = bodies.position[i] + q * xs;
    normal = q * ns;
    return d;
}

/// Contact between ellipsoid e and a core `s` (a point, half length 0, or a capsule's
/// segment) of radius r_o; normal e → the core. The gap along the line of centres (the ellipsoid's
/// support ‖M n‖, the capsule's h |a·n| + r_o) bounds the signed distance from below, so a
/// pair already beyond `envelope` by it is returned with that gap (and dropped by the
/// caller) without the search.
ShapeContact ellipsoid_core(const BodyStore& bodies, std::size_t e, const Segment& s, double ro, double envelope) {
    Vec3 core = s.centre;
    {
        const Vec3 d = core - bodies.position[e];
        const Vec3 n = d.squaredNorm() > 0.0 ? Vec3(d.normalized()) : Vec3::UnitZ();
        const Vec3 sn = bodies.shape_param[e].cwiseProduct(bodies.orientation[e].conjugate() * n);  // S Rᵀ n
        const double along = n.dot(d) - sn.norm() - s.half * std::abs(s.axis.dot(n)) - ro;
        if (along > envelope) return {bodies.position[e], n, along, 0};
    }
    if (s.half > 0.0) {
        // The signed distance to a convex body is convex along the segment, with slope
        // n(u)·a (n the outward normal at the closest point). Its least value is at an end
        // when the slope there points outwards; otherwise at the root of the slope,
        // bracketed by the ends and found by regula falsi (Illinois), or bisection.
        Vec3 surf, n;
        const auto slope = [&](double u) {
            point_ellipsoid(bodies, e, s.centre + u * s.axis, surf, n);
            return n.dot(s.axis);
        };
        double lo = -s.half, hi = s.half;
        double g_lo = slope(lo), g_hi = slope(hi);
        double u = lo;
        if (g_lo >= 0.0) {
            u = lo;
        } else if (g_hi <= 0.0) {
            u = hi;
        } else {
            int side = 0;
            for (int k = 0; k < 100 && hi - lo > 1e-12 * s.half; ++k) {
                u = (lo * g_hi - hi * g_lo) / (g_hi - g_lo);
                if (!(u > lo && u < hi)) u = 0.5 * (lo + hi);
                const double g = slope(u);
                if (std::abs(g) < 1e-13) break;
                if (g < 0.0) {
                    lo = u;
                    g_lo = g;
                    if (side == -1) g_hi *= 0.5;
                    side = -1;
                } else {
                    hi = u;
                    g_hi = g;
                    if (side == 1) g_lo *= 0.5;
                    side = 1;
                }
            }
        }
        core = s.centre + u * s.axis;
    }
    Vec3 surf, n;
    const double d = point_ellipsoid(bodies, e, core, surf, n);
    const double gap = d - ro;
    return {surf + 0.5 * gap * n, n, gap, 0};
}

/// The same for body o, a sphere (a point core) or a capsule.
ShapeContact ellipsoid_core(const BodyStore& bodies, std::size_t e, std::size_t o, double envelope) {
    const Segment s = bodies.shape[o] == Shape::Capsule ? segment_of(bodies, o)
                                                         : Segment{bodies.position[o], Vec3::UnitX(), 0.0};
    return ellipsoid_core(bodies, e, s, bodies.shape_param[o].x(), envelope);
}

/// Contact between ellipsoids a and b, normal a → b (the header's ellipsoid–ellipsoid). The
/// gap along any one direction is at most the pair's signed distance, so a pair whose gap
/// along the line of centres already exceeds `envelope` is returned with that gap (and
/// dropped by the caller) without the search.
ShapeContact ellipsoid_ellipsoid(const BodyStore& bodies, std::size_t a, std::size_t b, double envelope) {
    const Mat3 ma = bodies.shape_param[a].asDiagonal() * bodies.orientation[a].conjugate().toRotationMatrix();
    const Mat3 mb = bodies.shape_param[b].asDiagonal() * bodies.orientation[b].conjugate().toRotationMatrix();
    const Vec3 d = bodies.position[b] - bodies.position[a];
    const Vec3 start = d.squaredNorm() > 0.0 ? Vec3(d.normalized()) : Vec3::UnitZ();
    const double along_centres = start.dot(d) - (ma * start).norm() - (mb * start).norm();
    if (along_centres > envelope) return {bodies.position[a], start, along_centres, 0};
    const Vec3 n = ellipsoid_pair_normal(ma, mb, d, start);
    const Vec3 ea = ma * n, eb = mb * n;
    const Vec3 pa = bodies.position[a] + ma.transpose() * ea / ea.norm();
    const Vec3 pb = bodies.position[b] - mb.transpose() * eb / eb.norm();
    return {0.5 * (pa + pb), n, n.dot(pb - pa), 0};
}

}  // namespace

Vec3 ellipsoid_pair_normal(const Mat3& ma, const Mat3& mb, const Vec3& d, const Vec3& start) {
    // g(n) = n·d − ‖M_A n‖ − ‖M_B n‖. For one term, with e = M n and k = Mᵀ e / ‖e‖:
    // ∇‖M n‖ = k and ∇²‖M n‖ = (Mᵀ M − k kᵀ) / ‖e‖. On the unit sphere, with the tangent
    // basis (u, w) at n: the gradient's components (u·∇g, w·∇g) and the Hessian
    // [t_i·∇²g t_j] − (n·∇g) I. Newton's step where that Hessian is negative definite, else a
    // step up the gradient; either is halved until it raises g, then n goes back onto the
    // sphere. It stops at a Newton step below 1e-13 rad, or when no step raises g any more.
    const auto value = [&](const Vec3& n) { return n.dot(d) - (ma * n).norm() - (mb * n).norm(); };
    const Mat3 mm[2] = {ma.transpose() * ma, mb.transpose() * mb};
    Vec3 n = start.normalized();
    double g = value(n);
    for (int it = 0; it < 60; ++it) {
        Vec3 grad = d;
        Mat3 hess = Mat3::Zero();
        for (const Mat3& m : mm) {
            const Vec3 mn = m * n;
            const double len = std::sqrt(n.dot(mn));  // ‖M n‖
            const Vec3 k = mn / len;
            grad -= k;
            hess -= (m - k * k.transpose()) / len;
        }
        Vec3 u, w;
        orthonormal_basis(n, u, w);
        const double along = n.dot(grad);
        const Eigen::Vector2d gt(u.dot(grad), w.dot(grad));
        if (!(gt.norm() > 0.0)) break;
        // the tangent Hessian [[p, q], [q, r]]: negative definite when p < 0 and p r > q²
        const Vec3 hu = hess * u, hw = hess * w;
        const double hp = u.dot(hu) - along, hq = u.dot(hw), hr = w.dot(hw) - along;
        const double det = hp * hr - hq * hq;
        Eigen::Vector2d step;
        if (hp < 0.0 && det > 0.0) {
            step = Eigen::Vector2d(-(hr * gt[0] - hq * gt[1]) / det, -(hp * gt[1] - hq * gt[0]) / det);  // −H⁻¹ g
            // Close to the maximum Newton's steps are taken as they are: the rise they give
            // falls below g's rounding long before the normal settles.
            if (step.norm() < 1e-6) {
                n = (n + step[0] * u + step[1] * w).normalized();
                g = value(n);
                if (step.norm() < 1e-13) break;
                continue;
            }
        } else {
            const double mid = 0.5 * (hp + hr), spread = std::sqrt(std::max(0.0, mid * mid - det));
            const double curvature = std::abs(mid) + spread;  // the larger |eigenvalue|
            step = curvature > 0.0 ? Eigen::Vector2d(gt / curvature) : Eigen::Vector2d(gt / gt.norm());
        }
        if (step.norm() > 1.0) step /= step.norm();  // at most a radian at a time
        bool raised = false;
        for (int half = 0; half < 40 && !raised; ++half, step *= 0.5) {
            const Vec3 next = (n + step[0] * u + step[1] * w).normalized();
            const double gn = value(next);
            if (gn > g) {
                n = next;
                g = gn;
                raised = true;
            }
        }
        if (!raised) break;
    }
    return n;
}

double ellipsoid_closest_point(const Vec3& s, const Vec3& y, Vec3& point, Vec3& normal) {
    const Vec3 s2 = s.cwiseProduct(s);
    const Vec3 sy = s.cwiseProduct(y);
    const double min2 = s2.minCoeff(), max2 = s2.maxCoeff();
    auto F = [&](double t, double& dF) {
        double f = -1.0;
        dF = 0.0;
        for (int k = 0; k < 3; ++k) {
            const double ratio = sy[k] / (s2[k] + t);
            f += ratio * ratio;
            dF -= 2.0 * ratio * ratio / (s2[k] + t);
        }
        return f;
    };
    const bool outside = y.cwiseQuotient(s).squaredNorm() >= 1.0;
    double lo, hi, t;
    if (outside) {
        const double m = sy.norm();
        lo = std::max(0.0, m - max2);
        hi = std::max(lo, m - min2);
        t = lo;
    } else {
        lo = -min2;
        hi = 0.0;
        t = hi;
    }
    double dF = 0.0;
    for (int it = 0; it < 200; ++it) {
        const double f = F(t, dF);
        if (f == 0.0) break;
        if (f > 0.0) lo = t; else hi = t;
        double next = dF < 0.0 ? t - f / dF : 0.5 * (lo + hi);
        if (!(next > lo && next < hi)) next = 0.5 * (lo + hi);
        if (std::abs(next - t) <= 1e-15 * (std::abs(t) + max2)) { t = next; break; }
        t = next;
    }
    for (int k = 0; k < 3; ++k) point[k] = s2[k] + t > 0.0 ? s2[k] * y[k] / (s2[k] + t) : 0.0;
    // Degenerate interior case (see the header): close the surface equation along the
    // smallest axes (all of them for a sphere), in y's direction there. Also when y is
    // near the plane of the larger axes (the medial disc, where the signed distance has its
    // crease): there t sits within round-off of −min s², and s_k² y_k / (s_k² + t) along
    // the smallest axis is 0/0, off the surface either way, while the other coordinates
    // are well conditioned.
    const double residual = 1.0 - point.cwiseQuotient(s).squaredNorm();
    if (!outside && std::abs(residual) > 1e-12) {
        Vec3 dir = Vec3::Zero();
        int first_min = -1;
        double rest = 1.0;  // 1 − Σ over the larger axes of (x_k / s_k)²
        for (int k = 0; k < 3; ++k)
            if (s2[k] <= min2 * (1.0 + 1e-12)) {
                if (first_min < 0) first_min = k;
                dir[k] = y[k];
                point[k] = 0.0;
            } else {
                rest -= point[k] * point[k] / s2[k];
            }
        if (dir.squaredNorm() == 0.0) dir[first_min] = 1.0;
        double norm2 = 0.0;  // Σ over the smallest axes of (dir_k / s_k)²
        for (int k = 0; k < 3; ++k)
            if (dir[k] != 0.0) norm2 += dir[k] * dir[k] / s2[k];
        const double scale = std::sqrt(std::max(0.0, rest) / norm2);
        for (int k = 0; k < 3; ++k)
            if (dir[k] != 0.0) point[k] = scale * dir[k];
    }
    normal = point.cwiseQuotient(s2).normalized();
    return (y - point).dot(normal);
}

namespace {

/// Signed gap between a sphere (centre x, radius r) and a wall face: the one formula behind
/// every sphere-like face contact (spheres, capsule ends, clump spheres) and the count pass.
double sphere_face_gap(const WallFace& face, const Vec3& x, double r) {
    return face.normal.dot(x - face.point) - r;
}

}  // namespace

int collide_face(const BodyStore& bodies, std::size_t i, const WallFace& face, uint32_t face_index,
                 double envelope, ShapeContact* out) {
    const Vec3& n = face.normal;
    const Vec3& x = bodies.position[i];
    const Vec3& param = bodies.shape_param[i];
    switch (bodies.shape[i]) {
        case Shape::Sphere: {
            const double r = bodies.radius[i];
            const double gap = sphere_face_gap(face, x, r);
            if (gap > envelope) return 0;
            out[0] = {x - r * n, n, gap, face_index};
            return 1;
        }
        case Shape::Capsule: {
            const double r = param.x();
            const Vec3 half = param.y() * (bodies.orientation[i] * Vec3::UnitX());
            const int ends = param.y() > 0.0 ? 2 : 1;
            int count = 0;
            for (int e = 0; e < ends; ++e) {
                const Vec3 c = e == 0 ? Vec3(x + half) : Vec3(x - half);
                const double gap = sphere_face_gap(face, c, r);
                if (gap > envelope) continue;
                out[count++] = {c - r * n, n, gap, face_index | (uint32_t(e) << kSubFeatureShift)};
            }
            return count;
        }
        case Shape::Ellipsoid: {
            const Quat& q = bodies.orientation[i];
            const Vec3 sn = param.cwiseProduct(q.conjugate() * n);  // S Rᵀ n
            const double extent = sn.norm();
            const double gap = n.dot(x - face.point) - extent;
            if (gap > envelope) return 0;
            out[0] = {x - q * param.cwiseProduct(sn) / extent, n, gap, face_index};
            return 1;
        }
        case Shape::Clump:  // any number of contacts: the std::vector overload
            return -1;
    }
    return 0;
}

namespace {

/// World centre of sphere k (table index) of clump body i.
Vec3 clump_sphere(const BodyStore& bodies, std::size_t i, uint32_t k) {
    return bodies.position[i] + bodies.orientation[i] * bodies.clumps.centre[k];
}

}  // namespace

int collide_face(const BodyStore& bodies, std::size_t i, const WallFace& face, uint32_t face_index,
                 double envelope, std::vector<ShapeContact>& out) {
    out.clear();
    if (bodies.shape[i] != Shape::Clump) {
        ShapeContact c[kMaxShapeContacts];
        const int m = collide_face(bodies, i, face, face_index, envelope, c);
        out.assign(c, c + m);
        return m;
    }
    const ClumpTable& t = bodies.clumps;
    const uint32_t id = bodies.clump_of(i);
    const Vec3& n = face.normal;
    for (uint32_t k = t.begin(id); k < t.end(id); ++k) {
        const Vec3 c = clump_sphere(bodies, i, k);
        const double r = t.radius[k];
        const double gap = sphere_face_gap(face, c, r);
        if (gap > envelope) continue;
        out.push_back({c - r * n, n, gap, face_index | ((k - t.begin(id)) << kSubFeatureShift)});
    }
    return int(out.size());
}

int collide_pair(const BodyStore& bodies, std::size_t a, std::size_t b, double envelope,
                 ShapeContact* out) {
    const Shape sa = bodies.shape[a], sb = bodies.shape[b];
    const double ra = bodies.shape_param[a].x(), rb = bodies.shape_param[b].x();
    const Vec3 fallback = Vec3::UnitZ();
    int count = 0;
    if (sa == Shape::Clump || sb == Shape::Clump) return -1;  // the std::vector overload
    if (sa == Shape::Ellipsoid && sb == Shape::Ellipsoid) {
        out[0] = ellipsoid_ellipsoid(bodies, a, b, envelope);
        count = 1;
    } else if (sa == Shape::Ellipsoid || sb == Shape::Ellipsoid) {
        const bool flip = sb == Shape::Ellipsoid;  // the ellipsoid is B: compute B → A
        out[0] = flip ? ellipsoid_core(bodies, b, a, envelope) : ellipsoid_core(bodies, a, b, envelope);
        if (flip) out[0].normal = -out[0].normal;
        count = 1;
    } else if (sa == Shape::Sphere && sb == Shape::Sphere) {
        out[0] = core_contact(bodies.position[a], ra, bodies.position[b], rb, fallback, 0);
        count = 1;
    } else if (sa == Shape::Capsule && sb == Shape::Capsule) {
        const Segment s1 = segment_of(bodies, a), s2 = segment_of(bodies, b);
        Vec3 q1[kMaxShapeContacts], q2[kMaxShapeContacts];
        uint32_t feature[kMaxShapeContacts] = {0, 1};  // the parallel pair's two ends: 0, 1
        int k = segment_segment(s1, s2, q1, q2);
        if (k == 1) k += end_pairs(s1, s2, 0.25 * std::min(ra, rb), q1, q2, feature);
        const Vec3 perp = s1.axis.cross(s2.axis).squaredNorm() > 1e-12
                              ? Vec3(s1.axis.cross(s2.axis).normalized())
                              : any_perpendicular(s1.axis);
        for (int j = 0; j < k; ++j)
            out[j] = core_contact(q1[j], ra, q2[j], rb, perp, feature[j] << kSubFeatureShift);
        count = k;
    } else {  // capsule and sphere, either order
        const bool cap_a = sa == Shape::Capsule;
        out[0] = cap_a ? capsule_sphere(segment_of(bodies, a), ra, bodies.position[b], rb, true, 0)
                       : capsule_sphere(segment_of(bodies, b), rb, bodies.position[a], ra, false, 0);
        count = 1;
    }
    int kept = 0;
    for (int j = 0; j < count; ++j)
        if (out[j].gap <= envelope) out[kept++] = out[j];
    return kept;
}

int collide_pair(const BodyStore& bodies, std::size_t a, std::size_t b, double envelope,
                 std::vector<ShapeContact>& out) {
    out.clear();
    const Shape sa = bodies.shape[a], sb = bodies.shape[b];
    if (sa != Shape::Clump && sb != Shape::Clump) {
        ShapeContact c[kMaxShapeContacts];
        const int m = collide_pair(bodies, a, b, envelope, c);
        if (m > 0) out.assign(c, c + m);
        return m;
    }
    const auto spheres = [](Shape s) { return s == Shape::Sphere || s == Shape::Clump; };
    if (!spheres(sa) || !spheres(sb)) {
        // A clump and a capsule or an ellipsoid: each sphere of the clump that reaches the
        // other's bounding sphere meets it as a sphere would (sub-feature = its number).
        const bool clump_a = sa == Shape::Clump;
        const std::size_t cl = clump_a ? a : b, o = clump_a ? b : a;
        const ClumpTable& t = bodies.clumps;
        const uint32_t id = bodies.clump_of(cl);
        const bool capsule = bodies.shape[o] == Shape::Capsule;
        const Segment seg = capsule ? segment_of(bodies, o) : Segment{bodies.position[o], Vec3::UnitX(), 0.0};
        const double ro = bodies.shape_param[o].x();
        for (uint32_t k = t.begin(id); k < t.end(id); ++k) {
            const Vec3 ck = clump_sphere(bodies, cl, k);
            const double rk = t.radius[k];
            const double reach = rk + bodies.radius[o] + envelope;
            if ((ck - bodies.position[o]).squaredNorm() > reach * reach) continue;
            const uint32_t feature = (k - t.begin(id)) << kSubFeatureShift;
            ShapeContact c;
            if (capsule) {
                c = capsule_sphere(seg, ro, ck, rk, !clump_a, feature);
            } else {  // the ellipsoid's normal points at the sphere: from b to a when the clump is a
                c = ellipsoid_core(bodies, o, Segment{ck, Vec3::UnitX(), 0.0}, rk, envelope);
                if (clump_a) c.normal = -c.normal;
                c.feature = feature;
            }
            if (c.gap <= envelope) out.push_back(c);
        }
        return int(out.size());
    }
    // Both are unions of spheres: a sphere is a clump of one sphere (sub-feature 0).
    const ClumpTable& t = bodies.clumps;
    const auto range = [&](std::size_t i, uint32_t& lo, uint32_t& hi) {
        if (bodies.shape[i] == Shape::Clump) {
            lo = t.begin(bodies.clump_of(i));
            hi = t.end(bodies.clump_of(i));
        } else {
            lo = 0;
            hi = 1;
        }
    };
    const auto sphere = [&](std::size_t i, uint32_t k, Vec3& c, double& r) {
        if (bodies.shape[i] == Shape::Clump) {
            c = clump_sphere(bodies, i, k);
            r = t.radius[k];
        } else {
            c = bodies.position[i];
            r = bodies.radius[i];
        }
    };
    uint32_t a0, a1, b0, b1;
    range(a, a0, a1);
    range(b, b0, b1);
    const bool both = sa == Shape::Clump && sb == Shape::Clump;
    // B's spheres placed once, not once for each sphere of A, and only those that reach
    // A's bounding sphere (a sphere beyond it is beyond each of A's spheres), in order
    Vec3 cb_at[kMaxClumpSpheres];
    double rb_at[kMaxClumpSpheres];
    uint32_t kb_at[kMaxClumpSpheres];
    // (compared squared: no square root's latency for the many spheres a test drops)
    const auto beyond = [envelope](const Vec3& c, double r, const Vec3& x, double bound) {
        const double reach = envelope + r + bound;
        return (c - x).squaredNorm() > reach * reach;
    };
    uint32_t nb = 0;
    for (uint32_t kb = b0; kb < b1; ++kb) {
        sphere(b, kb, cb_at[nb], rb_at[nb]);
        if (beyond(cb_at[nb], rb_at[nb], bodies.position[a], bodies.radius[a])) continue;
        kb_at[nb++] = kb;
    }
    if (nb == 0) return 0;
    for (uint32_t ka = a0; ka < a1; ++ka) {
        Vec3 ca;
        double ra;
        sphere(a, ka, ca, ra);
        // skip sub-spheres of A too far from B's bounding sphere
        if (beyond(ca, ra, bodies.position[b], bodies.radius[b])) continue;
        for (uint32_t j = 0; j < nb; ++j) {
            const uint32_t kb = kb_at[j];
            const Vec3& cb = cb_at[j];
            const double rb = rb_at[j];
            const uint32_t sub = both ? ((ka - a0) << 8 | (kb - b0)) : (sa == Shape::Clump ? ka - a0 : kb - b0);
            const ShapeContact c =
                core_contact(ca, ra, cb, rb, Vec3::UnitZ(), sub << kSubFeatureShift);
            if (c.gap <= envelope) out.push_back(c);
        }
    }
    return int(out.size());
}

namespace {

/// The largest of f(θ) = c·d(θ) + σ ‖M d(θ)‖ over the unit vectors d(θ) = cos θ u + sin θ v
/// of the plane normal to a cylinder's axis (u, v an orthonormal basis of it; c the centre
/// relative to the axis point; σ = ±1). Returns the maximiser d.
/// f is smooth and 2π-periodic: sixteen samples pick the best sixteenth of the circle, then
/// Newton's method on θ, kept inside the bracket around that sample that the sign of f′
/// narrows (bisection when a Newton step would leave it). With c·d written p cos θ + q sin θ
/// and ‖M d‖² = A + B cos 2θ + C sin 2θ (A, B, C from Q = MᵀM restricted to the plane),
/// f′ and f″ are closed forms.
Vec3 cylinder_support_direction(const Vec3& c, const Mat3& q_full, const Vec3& u, const Vec3& v, double sigma) {
    const double p = c.dot(u), q = c.dot(v);
    const double quu = u.dot(q_full * u), qvv = v.dot(q_full * v), quv = u.dot(q_full * v);
    const double a = 0.5 * (quu + qvv), b = 0.5 * (quu - qvv), cc = quv;
    const auto value = [&](double t) {
        return p * std::cos(t) + q * std::sin(t) + sigma * std::sqrt(std::max(0.0, a + b * std::cos(2 * t) + cc * std::sin(2 * t)));
    };
    constexpr int kSamples = 16;
    constexpr double kPi = 3.14159265358979323846;
    const double width = 2.0 * kPi / kSamples;
    double best = 0.0, best_f = -kInf;
    for (int k = 0; k < kSamples; ++k) {
        const double f = value(k * width);
        if (f > best_f) {
            best_f = f;
            best = k * width;
        }
    }
    double lo = best - width, hi = best + width, t = best;
    for (int it = 0; it < 60; ++it) {
        const double cs = std::cos(t), sn = std::sin(t), c2 = std::cos(2 * t), s2 = std::sin(2 * t);
        const double g2 = std::max(a + b * c2 + cc * s2, 1e-300), g = std::sqrt(g2);
        const double d1 = -2 * b * s2 + 2 * cc * c2, d2 = -4 * (b * c2 + cc * s2);
        const double f1 = -p * sn + q * cs + sigma * d1 / (2 * g);
        const double f2 = -(p * cs + q * sn) + sigma * (d2 / (2 * g) - d1 * d1 / (4 * g2 * g));
        if (f1 > 0.0) lo = t; else hi = t;
        double next = f2 < 0.0 ? t - f1 / f2 : 0.5 * (lo + hi);
        if (!(next > lo && next < hi)) next = 0.5 * (lo + hi);
        const double step = std::abs(next - t);
        t = next;
        if (step < 1e-13 || hi - lo < 1e-13) break;
    }
    return std::cos(t) * u + std::sin(t) * v;
}

/// Contact of a sphere (centre c, radius r) with the cylinder into `out`, when c lies
/// between the cylinder's ends and the gap is ≤ envelope; false otherwise. Spheres, capsule
/// end spheres and clump spheres all meet a cylinder through it.
bool cylinder_sphere(const CylinderAt& cyl, const Vec3& c, double r, double envelope, uint32_t feature,
                     ShapeContact& out) {
    double dist;
    Vec3 n;
    if (!cyl.distance(c, dist, n)) return false;
    const double gap = dist - r;
    if (gap > envelope) return false;
    out = {c - r * n, n, gap, feature};
    return true;
}

}  // namespace

int collide_cylinder(const BodyStore& bodies, std::size_t i, const CylinderAt& cyl, double envelope,
                     ShapeContact* out) {
    const Vec3& x = bodies.position[i];
    switch (bodies.shape[i]) {
        case Shape::Sphere:
            return cylinder_sphere(cyl, x, bodies.radius[i], envelope, 0, out[0]) ? 1 : 0;
        case Shape::Capsule: {
            // The radial distance ρ is convex along the core segment. Inside a drum its
            // largest value, the deepest point, is at an end: each end sphere is collided as
            // a sphere (sub-feature 0 = +x end, 1 = −x end), which also gives a rod lying on
            // the wall both its ends. Outside a pillar the nearest point is where ρ² (a
            // quadratic in the segment parameter) is least, clamped to the segment; a rod
            // along the axis (sin² of the angle < 1e-6) touches by both ends instead.
            const Vec3& param = bodies.shape_param[i];
            const double r = param.x();
            const Vec3 half = param.y() * (bodies.orientation[i] * Vec3::UnitX());
            const auto end_sphere = [&](const Vec3& c, uint32_t sub, int& count) {
                count += cylinder_sphere(cyl, c, r, envelope, sub << kSubFeatureShift, out[count]) ? 1 : 0;
            };
            int count = 0;
            const Vec3 ph = half - half.dot(cyl.axis) * cyl.axis;  // half's part normal to the axis
            if (cyl.inside || param.y() <= 0.0 || ph.squaredNorm() < 1e-6 * half.squaredNorm()) {
                end_sphere(x + half, 0, count);
                if (param.y() > 0.0) end_sphere(x - half, 1, count);
                return count;
            }
            const Vec3 rel = x - cyl.point;
            const Vec3 pc = rel - rel.dot(cyl.axis) * cyl.axis;
            const double t = std::clamp(-pc.dot(ph) / ph.squaredNorm(), -1.0, 1.0);
            end_sphere(x + t * half, 0, count);
            return count;
        }
        case Shape::Ellipsoid: {
            // Inside: ρ(y) = max over unit d ⊥ axis of d·y, so the largest ρ over the body is
            // the largest support c·d + ‖M d‖ (M = S Rᵀ) over those d; outside, the least ρ
            // is the largest c·d − ‖M d‖ (the body's shadow on d begins there). Either way a
            // maximum over a circle (cylinder_support_direction); the contact is the
            // support point, whose axial coordinate decides whether the wall is there.
            const Vec3 rel = x - cyl.point;
            const double bound = bodies.radius[i];
            if (std::abs(rel.dot(cyl.axis)) > cyl.half_length + bound) return 0;
            // the bounding sphere's gap is a lower bound of the body's
            {
                const Vec3 pc = rel - rel.dot(cyl.axis) * cyl.axis;
                const double rho = pc.norm();
                if ((cyl.inside ? cyl.radius - rho : rho - cyl.radius) - bound > envelope) return 0;
            }
            const Vec3& s = bodies.shape_param[i];
            const Mat3 rot = bodies.orientation[i].toRotationMatrix();
            const Mat3 m = s.asDiagonal() * rot.transpose();
            Vec3 u, v;
            orthonormal_basis(cyl.axis, u, v);
            const double sigma = cyl.inside ? 1.0 : -1.0;
            const Vec3 d = cylinder_support_direction(rel, m.transpose() * m, u, v, sigma);
            const Vec3 md = m * d;
            const double extent = md.norm();
            const Vec3 point = x + sigma * (rot * s.cwiseProduct(md)) / extent;
            const double reach = rel.dot(d) + sigma * extent;  // ρ of the support point
            if (std::abs((point - cyl.point).dot(cyl.axis)) > cyl.half_length) return 0;
            const double gap = cyl.inside ? cyl.radius - reach : reach - cyl.radius;
            if (gap > envelope) return 0;
            out[0] = {point, cyl.inside ? Vec3(-d) : d, gap, 0};
            return 1;
        }
        case Shape::Clump:  // any number of contacts: the std::vector overload
            return 0;
    }
    return 0;
}

int collide_cylinder(const BodyStore& bodies, std::size_t i, const CylinderAt& cyl, double envelope,
                     std::vector<ShapeContact>& out) {
    out.clear();
    if (bodies.shape[i] != Shape::Clump) {
        ShapeContact c[kMaxShapeContacts];
        const int m = collide_cylinder(bodies, i, cyl, envelope, c);
        out.assign(c, c + m);
        return m;
    }
    // each sphere of the clump as a sphere: its centre's radial distance, its own radius
    const ClumpTable& t = bodies.clumps;
    const uint32_t id = bodies.clump_of(i);
    ShapeContact c;
    for (uint32_t k = t.begin(id); k < t.end(id); ++k)
        if (cylinder_sphere(cyl, clump_sphere(bodies, i, k), t.radius[k], envelope, (k - t.begin(id)) << kSubFeatureShift, c))
            out.push_back(c);
    return int(out.size());
}

namespace {

/// The least value of f on [a, b] near x (a ≤ x ≤ b, fx = f(x)), by Brent's method: a
/// parabola through the three best points while its step stays inside the bracket and
/// shrinks, a golden-section step otherwise, until the bracket is within about 4 tol [m].
/// A smooth minimum takes some ten evaluations where golden section alone takes sixty.
template <class F>
std::pair<double, double> brent_minimum(const F& f, double a, double b, double x, double fx, double tol) {
    constexpr double kGold = 0.38196601125010515180;  // 2 − golden ratio
    double w = x, v = x, fw = fx, fv = fx;
    double step = 0.0, before = 0.0;  // the last step and the one before it
    for (int it = 0; it < 100; ++it) {
        const double mid = 0.5 * (a + b);
        if (std::abs(x - mid) <= 2.0 * tol - 0.5 * (b - a)) break;
        bool golden = true;
        if (std::abs(before) > tol) {  // try the parabola through x, w, v
            const double r = (x - w) * (fx - fv), q0 = (x - v) * (fx - fw);
            double p = (x - v) * q0 - (x - w) * r, q = 2.0 * (q0 - r);
            if (q > 0.0) p = -p;
            q = std::abs(q);
            if (std::abs(p) < std::abs(0.5 * q * before) && p > q * (a - x) && p < q * (b - x)) {
                before = step;
                step = p / q;
                golden = false;
                const double u = x + step;
                if (u - a < 2.0 * tol || b - u < 2.0 * tol) step = mid > x ? tol : -tol;
            }
        }
        if (golden) {
            before = x >= mid ? a - x : b - x;
            step = kGold * before;
        }
        const double u = std::abs(step) >= tol ? x + step : x + (step > 0.0 ? tol : -tol);
        const double fu = f(u);
        if (fu <= fx) {
            (u >= x ? a : b) = x;
            v = w, fv = fw, w = x, fw = fx, x = u, fx = fu;
        } else {
            (u < x ? a : b) = u;
            if (fu <= fw || w == x) {
                v = w, fv = fw, w = u, fw = fu;
            } else if (fu <= fv || v == x || v == w) {
                v = u, fv = fu;
            }
        }
    }
    return {x, fx};
}

/// A capsule (core `seg`, radius r) against a cone or orifice wall. Its end spheres are
/// collided as spheres by `sphere(x, r, sub)` (sub-feature 0 = +x end, 1 = −x end, each with
/// its turned generators in a funnel or a hole). The distance f(u) from the core point u to
/// the wall is 1-Lipschitz in u; inside a funnel it is concave (the ends are deepest), but
/// across a rim, a hole's edge or the outside of a cone it has minima inside the segment.
/// Those are found by sampling f at spacing ≤ r/2 and a search (brent_minimum) between the
/// neighbours of each sampled minimum (an end and its one neighbour for an end). Each one
/// below its bracket's ends (a strict minimum: a flat stretch, a rod lying along the wall,
/// is held by the end spheres) and within r + envelope gives a contact of a sphere of
/// radius r there, at the wall's nearest point (sub-features 2 … 5 in ascending u).
template <class SphereContacts>
void capsule_thin_wall(const Segment& seg, double r, const ThinWallAt& wall, double envelope,
                       const SphereContacts& sphere, std::vector<ShapeContact>& out) {
    const double h = seg.half;
    if (wall.distance(seg.centre) > h + r + envelope) return;  // (f is 1-Lipschitz)
    sphere(seg.centre + h * seg.axis, r, 0);
    if (h <= 0.0) return;
    sphere(seg.centre - h * seg.axis, r, 1);
    const auto f = [&](double u) { return wall.distance(seg.centre + u * seg.axis); };
    constexpr int kMost = 64;
    const int n = std::clamp(int(std::ceil(4.0 * h / r)), 4, kMost);
    const double du = 2.0 * h / n;
    std::array<double, kMost + 1> fs;
    for (int k = 0; k <= n; ++k) fs[std::size_t(k)] = f(-h + k * du);
    const double tol = 1e-9 * r;  // below this a minimum is a flat stretch, held by the ends
    // a sphere of radius r at core point u, against the wall's nearest point
    const auto at = [&](double u, uint32_t sub) {
        const Vec3 x = seg.centre + u * seg.axis;
        const ThinWallPoint p = wall.nearest(x);
        out.push_back({x - r * p.normal, p.normal, p.distance - r, p.feature | (sub << kSubFeatureShift)});
    };
    uint32_t sub = 2;
    for (int k = 0; k <= n && sub < 6; ++k) {
        // a sampled minimum (an end too: the core may cross the wall just inside it)
        const double fk = fs[std::size_t(k)];
        const int below = std::max(k - 1, 0), above = std::min(k + 1, n);
        if ((k > 0 && !(fk < fs[std::size_t(below)])) || (k < n && !(fk <= fs[std::size_t(above)]))) continue;
        if (fk - du > r + envelope) continue;  // nothing between the neighbours comes within reach
        const auto [u, fu] = brent_minimum(f, -h + below * du, -h + above * du, -h + k * du, fk, 1e-8 * du);
        if (fu > r + envelope || fu > fs[std::size_t(below)] - tol || fu > fs[std::size_t(above)] - tol)
            continue;
        at(u, sub++);
    }
    // A rod crossing a rim or an edge at a small angle: the point where its core passes the
    // edge sweeps along it many times faster than the rod moves, so one contact at today's
    // nearest point does not hold it through the step. Every sample within reach where f
    // bends upwards (a rim or an edge, not a flat face: there f is linear along the core and
    // the ends hold it) gets a sphere of its own (sub-feature 6 + its index along the core).
    for (int k = 1; k < n; ++k) {
        const double fk = fs[std::size_t(k)];
        if (fk > r + envelope || 0.5 * (fs[std::size_t(k - 1)] + fs[std::size_t(k + 1)]) - fk < 1e-3 * r) continue;
        at(-h + k * du, uint32_t(6 + k));
    }
}

}  // namespace

int collide_thin_wall(const BodyStore& bodies, std::size_t i, const ThinWallAt& wall, double envelope,
                      std::vector<ShapeContact>& out) {
    out.clear();
    const auto sphere = [&](const Vec3& x, double r, uint32_t sub) {
        std::array<ThinWallPoint, 4> c;
        const int m = wall.contacts(x, r + envelope, c);
        for (int j = 0; j < m; ++j) {
            const ThinWallPoint& p = c[std::size_t(j)];
            out.push_back({x - r * p.normal, p.normal, p.distance - r, p.feature | (sub << kSubFeatureShift)});
        }
    };
    if (bodies.shape[i] == Shape::Sphere) {
        sphere(bodies.position[i], bodies.radius[i], 0);
    } else if (bodies.shape[i] == Shape::Capsule) {
        capsule_thin_wall(segment_of(bodies, i), bodies.shape_param[i].x(), wall, envelope, sphere, out);
    } else if (bodies.shape[i] == Shape::Clump) {
        const ClumpTable& t = bodies.clumps;
        const uint32_t id = bodies.clump_of(i);
        for (uint32_t k = t.begin(id); k < t.end(id); ++k) sphere(clump_sphere(bodies, i, k), t.radius[k], k - t.begin(id));
    }
    return int(out.size());
}

namespace {

/// The point of segment `seg` nearest triangle (a, b, c), as its parameter u in
/// [−half, half], and their distance: 0 where the segment crosses the triangle; otherwise
/// the nearest of its ends to the triangle and of its closest points to the three edges
/// (segment_segment; one of these holds the least distance of a segment and a triangle
/// apart). An end wins a tie, the +x end first.
double segment_triangle(const Segment& seg, const Vec3& a, const Vec3& b, const Vec3& c, double& u) {
    const Vec3 n = (b - a).cross(c - a);
    const Vec3 p0 = seg.centre + seg.half * seg.axis, p1 = seg.centre - seg.half * seg.axis;
    const double h0 = n.dot(p0 - a), h1 = n.dot(p1 - a);
    if ((h0 <= 0.0) != (h1 <= 0.0)) {  // the segment crosses the plane: inside the triangle?
        const double t = h0 / (h0 - h1);
        const Vec3 x = p0 + t * (p1 - p0);
        if (n.dot((b - a).cross(x - a)) >= 0.0 && n.dot((c - b).cross(x - b)) >= 0.0 &&
            n.dot((a - c).cross(x - c)) >= 0.0) {
            u = seg.half * (1.0 - 2.0 * t);
            return 0.0;
        }
    }
    const double e0 = (p0 - closest_point_on_triangle(p0, a, b, c).point).squaredNorm();
    const double e1 = (p1 - closest_point_on_triangle(p1, a, b, c).point).squaredNorm();
    double best = std::min(e0, e1);
    u = e0 <= e1 ? seg.half : -seg.half;
    for (const auto& [q0, q1] : std::array<std::pair<const Vec3*, const Vec3*>, 3>{{{&a, &b}, {&b, &c}, {&c, &a}}}) {
        const Vec3 along = *q1 - *q0;
        const double length = along.norm();
        const Segment edge{0.5 * (*q0 + *q1), along / length, 0.5 * length};
        Vec3 on_seg[2], on_edge[2];
        const int m = segment_segment(seg, edge, on_seg, on_edge);
        for (int k = 0; k < m; ++k) {
            const double d2 = (on_seg[k] - on_edge[k]).squaredNorm();
            if (d2 < best * (1.0 - 1e-12)) {
                best = d2;
                u = (on_seg[k] - seg.centre).dot(seg.axis);
            }
        }
    }
    return std::sqrt(best);
}

/// Contacts of a sphere (world centre x, radius r) with mesh wall `wall` at pose `state`
/// into `out`: the mesh's sphere rules in its reference frame, the normals and points taken
/// back to the world when it moves.
void mesh_sphere(const Wall& wall, const WallState& state, const Vec3& x, double r, double envelope,
                 std::vector<MeshContact>& out, TriangleMesh::Scratch& scratch) {
    wall.mesh->collide_sphere(state.to_reference(x), r, envelope, out, scratch);
    if (!wall.motion.moving()) return;
    for (MeshContact& m : out) {
        m.normal = state.dir_to_world(m.normal);
        m.point = x - r * m.normal;
    }
}

}  // namespace

int collide_capsule_mesh(const BodyStore& bodies, std::size_t i, const Wall& wall, const WallState& state,
                         double envelope, std::vector<MeshContact>& out, CapsuleMeshScratch& scratch) {
    out.clear();
    const TriangleMesh& mesh = *wall.mesh;
    const double r = bodies.shape_param[i].x();
    const Vec3 half = bodies.shape_param[i].y() * (bodies.orientation[i] * Vec3::UnitX());
    const Vec3& x = bodies.position[i];
    // a sphere of the capsule's radius at core point p (world), as a sphere body meets a mesh
    const auto sphere = [&](const Vec3& p, uint32_t sub) {
        mesh_sphere(wall, state, p, r, envelope, scratch.sphere, scratch.mesh);
        for (MeshContact m : scratch.sphere) {
            m.triangle |= sub << kMeshSubFeatureShift;
            out.push_back(m);
        }
    };
    sphere(x + half, 0);
    if (half.squaredNorm() == 0.0) return int(out.size());
    sphere(x - half, 1);
    // Where the core's point nearest a triangle lies inside the segment (across a ridge or a
    // rim), that point too, as a sphere (sub-feature 2); on a flat face the ends are nearest.
    const double h = half.norm();
    const Vec3 centre = state.to_reference(x);
    const Segment core{centre, (state.to_reference(x + half) - centre) / h, h};  // in the mesh's frame
    mesh.query(core.centre, h + r + envelope, scratch.found);
    scratch.along.clear();
    for (uint32_t t : scratch.found) {
        const auto& v = mesh.triangle(t);
        double u;
        const double d = segment_triangle(core, mesh.vertices()[v[0]], mesh.vertices()[v[1]], mesh.vertices()[v[2]], u);
        if (d - r > envelope || h - std::abs(u) <= 1e-9 * r) continue;
        scratch.along.push_back(u);
    }
    std::sort(scratch.along.begin(), scratch.along.end(), std::greater<>());  // from the +x end
    double last = kInf;
    for (double u : scratch.along) {
        if (last - u <= 1e-9 * r) continue;  // the same point from another triangle
        last = u;
        sphere(x + (u / h) * half, 2);
    }
    // one contact per feature (triangle and sub-feature): the deepest
    std::sort(out.begin(), out.end(), [](const MeshContact& a, const MeshContact& b) {
        return a.triangle != b.triangle ? a.triangle < b.triangle : a.gap < b.gap;
    });
    out.erase(std::unique(out.begin(), out.end(),
                          [](const MeshContact& a, const MeshContact& b) { return a.triangle == b.triangle; }),
              out.end());
    return int(out.size());
}

/// collide_pair for a periodic image: bodies a and b + shift. A zero shift is the pair
/// itself; otherwise the two bodies are copied (b displaced) into a per-thread two-body
/// store, so every shape routine works on images unchanged (a clump's template is copied
/// with it: BodyStore::append_from). Only pairs that straddle a periodic boundary pay for
/// the copy.
int collide_pair_image(const BodyStore& bodies, std::size_t a, std::size_t b, const Vec3& shift,
                       double envelope, std::vector<ShapeContact>& out) {
    if (shift.isZero(0.0)) return collide_pair(bodies, a, b, envelope, out);
    thread_local BodyStore pair;
    pair.clear();
    pair.append_from(bodies, a);
    pair.append_from(bodies, b);
    pair.position[1] += shift;
    return collide_pair(pair, 0, 1, envelope, out);
}

namespace {

/// Per-thread buffers of the mesh queries (reused; never shared between threads).
struct MeshBuffers {
    std::vector<MeshContact> contacts;
    TriangleMesh::Scratch scratch;
    CapsuleMeshScratch capsule;
    std::vector<ShapeContact> shape;  ///< contacts of one body with one face, cylinder or body
};
MeshBuffers& mesh_buffers() {
    thread_local MeshBuffers b;
    return b;
}

/// Spheres, clumps and capsules collide with meshes; a clump's or a capsule's mesh
/// features need triangle < 2²⁴.
bool mesh_supported(const BodyStore& bodies, std::size_t i, const TriangleMesh& mesh) {
    if (bodies.shape[i] == Shape::Sphere) return true;
    return (bodies.shape[i] == Shape::Clump || bodies.shape[i] == Shape::Capsule) &&
           mesh.size() <= (std::size_t(1) << kMeshSubFeatureShift);
}

/// Calls f(centre, radius, sub-feature) for the sphere of a sphere body or each sphere of
/// a clump, in template order.
template <class F>
void for_each_mesh_sphere(const BodyStore& bodies, std::size_t i, F&& f) {
    if (bodies.shape[i] != Shape::Clump) {
        f(bodies.position[i], bodies.radius[i], 0u);
        return;
    }
    const ClumpTable& t = bodies.clumps;
    const uint32_t id = bodies.clump_of(i);
    for (uint32_t k = t.begin(id); k < t.end(id); ++k)
        f(clump_sphere(bodies, i, k), t.radius[k], k - t.begin(id));
}

}  // namespace

void narrow_phase(const BodyStore& bodies, const std::vector<Wall>& walls,
                  const std::vector<WallState>& states, const PairList& pairs,
                  const std::vector<double>& reach, double wall_margin, ContactList& out,
                  NarrowPhaseScratch& scratch) {
    const std::size_t np = pairs.size();
    const std::size_t nb = bodies.size();
    const bool all_spheres = std::all_of(bodies.shape.begin(), bodies.shape.end(),
                                         [](Shape s) { return s == Shape::Sphere; });

    // Faces of every wall at its pose, flattened, with their wall and face number.
    struct Face { WallFace geom; uint32_t wall, face; };
    std::vector<Face> faces;
    for (std::size_t w = 0; w < walls.size(); ++w) {
        std::array<WallFace, 6> f;
        const int k = wall_faces(walls[w], states[w], f);
        for (int j = 0; j < k; ++j) faces.push_back({f[j], uint32_t(w), uint32_t(j)});
    }
    std::vector<uint32_t> meshes;  // mesh walls, ascending
    struct Cyl { CylinderAt geom; uint32_t wall; };
    std::vector<Cyl> cylinders;    // cylinder walls at their pose, ascending
    struct Thin { ThinWallAt geom; uint32_t wall; };
    std::vector<Thin> thin;        // cone and orifice walls at their pose, ascending
    for (std::size_t w = 0; w < walls.size(); ++w) {
        if (!walls[w].active) continue;  // removed by a stage: collides with nothing
        if (walls[w].type == WallType::Mesh && walls[w].mesh) meshes.push_back(uint32_t(w));
        if (walls[w].type == WallType::Cylinder)
            cylinders.push_back({CylinderAt(walls[w], states[w]), uint32_t(w)});
        if (walls[w].type == WallType::Cone || walls[w].type == WallType::Orifice)
            thin.push_back({ThinWallAt(walls[w], states[w]), uint32_t(w)});
    }
    // Body i's contacts with face f: at most kMaxShapeContacts into `few` (no allocation), or
    // any number into `many` for a clump (the count pass, for every shape but the sphere).
    auto face_contacts = [&](std::size_t i, const Face& f, double envelope, ShapeContact* few,
                             std::vector<ShapeContact>& many) -> std::pair<const ShapeContact*, int> {
        if (bodies.shape[i] != Shape::Clump)
            return {few, collide_face(bodies, i, f.geom, f.face, envelope, few)};
        const int m = collide_face(bodies, i, f.geom, f.face, envelope, many);
        return {many.data(), m};
    };

    // Pairs: with only spheres each pair is one contact (the broad phase's criterion is
    // the envelope); otherwise count each pair's contacts first.
    auto pair_envelope = [&](int32_t a, int32_t b) {
        if (bodies.shape[a] == Shape::Sphere && bodies.shape[b] == Shape::Sphere) return kInf;
        return (reach[a] - bodies.radius[a]) + (reach[b] - bodies.radius[b]);
    };
    const bool periodic = !pairs.shift.empty();
    auto pair_shift = [&](std::size_t k) { return periodic ? pairs.shift[k] : Vec3(Vec3::Zero()); };
    std::size_t n_pair_contacts = np;
    // Each chunk of pairs keeps the contacts it counts (staged[chunk], in pair order) for
    // the write below, so no pair's shapes are collided twice; only while this call lasts.
    std::vector<std::vector<ShapeContact>> staged;
    if (!all_spheres) {
        scratch.pair_count.assign(np + 1, 0);
        staged.resize(chunk_count(np, grain::kPairs));
        parallel_chunks(np, grain::kPairs, [&](std::size_t chunk, std::size_t lo, std::size_t hi) {
            std::vector<ShapeContact>& c = mesh_buffers().shape;
            std::vector<ShapeContact>& kept = staged[chunk];
            for (std::size_t k = lo; k < hi; ++k) {
                const int32_t a = pairs.a[k], b = pairs.b[k];
                const int m = collide_pair_image(bodies, a, b, pair_shift(k), pair_envelope(a, b), c);
                scratch.pair_count[k + 1] = uint32_t(m);
                if (m > 0) kept.insert(kept.end(), c.begin(), c.begin() + m);
            }
        });
        for (std::size_t k = 0; k < np; ++k) scratch.pair_count[k + 1] += scratch.pair_count[k];
        n_pair_contacts = scratch.pair_count[np];
    }

    scratch.wall_count.assign(nb + 1, 0);
    const bool special = !meshes.empty() || !thin.empty();
    if (special) scratch.wall_flag.assign(nb, 0);
    // Each chunk of bodies keeps the wall contacts it finds (wall_staged[chunk], in body
    // order, each body's in the order written below) for the write, so no body meets a
    // wall twice; a sphere's plane and box faces, a plane test each, are only counted here.
    struct WallHit { ShapeContact c; uint32_t wall; };
    std::vector<std::vector<WallHit>> wall_staged(chunk_count(nb, grain::kBodies));
    parallel_chunks(nb, grain::kBodies, [&](std::size_t chunk, std::size_t lo, std::size_t hi) {
        std::vector<WallHit>& kept = wall_staged[chunk];
        MeshBuffers& mb = mesh_buffers();
        std::vector<ShapeContact>& c = mb.shape;
        for (std::size_t i = lo; i < hi; ++i) {
            const std::size_t before = kept.size();
            const double envelope = reach[i] - bodies.radius[i] + wall_margin;
            const auto keep = [&](uint32_t wall, const ShapeContact* first, int m) {
                for (int j = 0; j < m; ++j) kept.push_back({first[j], wall});
            };
            uint32_t sphere_faces = 0;
            if (bodies.shape[i] == Shape::Sphere) {  // (most bodies: a plane test each, no buffer)
                const Vec3& x = bodies.position[i];
                const double r = bodies.radius[i];
                for (const Face& f : faces) sphere_faces += sphere_face_gap(f.geom, x, r) > envelope ? 0u : 1u;
            } else {
                ShapeContact few[kMaxShapeContacts];
                for (const Face& f : faces) {
                    const auto [fc, m] = face_contacts(i, f, envelope, few, c);
                    keep(f.wall, fc, m);
                }
            }
            for (const Cyl& cy : cylinders) {
                const int m = collide_cylinder(bodies, i, cy.geom, envelope, c);
                keep(cy.wall, c.data(), m);
            }
            const bool ellipsoid = bodies.shape[i] == Shape::Ellipsoid;
            for (const Thin& tw : thin) {
                if (ellipsoid) {  // bounding sphere near the wall: no contact routine
                    if (tw.geom.distance(bodies.position[i]) <= reach[i] + wall_margin)
                        scratch.wall_flag[i] |= kNearThin;
                    continue;
                }
                const int m = collide_thin_wall(bodies, i, tw.geom, envelope, c);
                keep(tw.wall, c.data(), m);
            }
            for (uint32_t w : meshes) {
                if (!mesh_supported(bodies, i, *walls[w].mesh)) {
                    walls[w].mesh->query(states[w].to_reference(bodies.position[i]),
                                         reach[i] + wall_margin, mb.scratch.found);
                    if (!mb.scratch.found.empty()) scratch.wall_flag[i] |= kNearMesh;
                    continue;
                }
                if (bodies.shape[i] == Shape::Capsule) {
                    collide_capsule_mesh(bodies, i, walls[w], states[w], envelope, mb.contacts, mb.capsule);
                    for (const MeshContact& m : mb.contacts) kept.push_back({{m.point, m.normal, m.gap, m.triangle}, w});
                    continue;
                }
                for_each_mesh_sphere(bodies, i, [&](const Vec3& x, double r, uint32_t sub) {
                    mesh_sphere(walls[w], states[w], x, r, envelope, mb.contacts, mb.scratch);
                    for (const MeshContact& m : mb.contacts)
                        kept.push_back({{m.point, m.normal, m.gap, m.triangle | (sub << kMeshSubFeatureShift)}, w});
                });
            }
            scratch.wall_count[i + 1] = sphere_faces + uint32_t(kept.size() - before);
        }
    });
    scratch.unsupported_mesh.clear();
    scratch.unsupported_thin.clear();
    for (std::size_t i = 0; i < nb; ++i) {
        scratch.wall_count[i + 1] += scratch.wall_count[i];
        if (special && (scratch.wall_flag[i] & kNearMesh)) scratch.unsupported_mesh.push_back(uint32_t(i));
        if (special && (scratch.wall_flag[i] & kNearThin)) scratch.unsupported_thin.push_back(uint32_t(i));
    }
    const std::size_t nw = scratch.wall_count[nb];
    // shift_b empty without periodic axes, velocity_a while no wall moves (kinematic bodies'
    // contacts get theirs in route_kinematic_contacts)
    const bool moving = std::any_of(states.begin(), states.end(), [](const WallState& s) {
        return s.rotates || !s.velocity.isZero(0.0);
    });
    out.resize(n_pair_contacts + nw, periodic, moving);

    // pair k's m contacts c[0 … m) to out[at …)
    auto write_pair = [&](std::size_t k, std::size_t at, const ShapeContact* c, std::size_t m) {
        const int32_t a = pairs.a[k], b = pairs.b[k];
        for (std::size_t j = 0; j < m; ++j, ++at) {
            out.a[at] = a;
            out.b[at] = b;
            out.key_a[at] = bodies.id[a];
            out.key_b[at] = bodies.id[b];
            out.feature[at] = c[j].feature;
            out.point[at] = c[j].point;
            out.normal[at] = c[j].normal;
            out.gap[at] = c[j].gap;
            if (moving) out.velocity_a[at] = Vec3::Zero();
            out.material_a[at] = bodies.material[a];
            if (periodic) out.shift_b[at] = pair_shift(k);
        }
    };
    if (all_spheres) {
        parallel_each(np, [&](std::size_t k) {
            const int32_t a = pairs.a[k], b = pairs.b[k];
            const ShapeContact c = core_contact(bodies.position[a], bodies.radius[a],
                                                periodic ? Vec3(bodies.position[b] + pair_shift(k)) : bodies.position[b],
                                                bodies.radius[b], Vec3::UnitZ(), 0);
            write_pair(k, k, &c, 1);
        }, grain::kPairs);
    } else {
        parallel_chunks(np, grain::kPairs, [&](std::size_t chunk, std::size_t lo, std::size_t hi) {
            const ShapeContact* c = staged[chunk].data();
            for (std::size_t k = lo; k < hi; ++k) {
                const std::size_t at = scratch.pair_count[k], m = scratch.pair_count[k + 1] - at;
                write_pair(k, at, c, m);
                c += m;
            }
        });
        staged = {};
    }

    parallel_chunks(nb, grain::kBodies, [&](std::size_t chunk, std::size_t lo, std::size_t hi) {
        const WallHit* hit = wall_staged[chunk].data();
        for (std::size_t i = lo; i < hi; ++i) {
            std::size_t k = n_pair_contacts + scratch.wall_count[i];
            const std::size_t end = n_pair_contacts + scratch.wall_count[i + 1];
            auto put = [&](uint32_t wall, const ShapeContact& c) {
                out.a[k] = kNoBody;
                out.b[k] = int32_t(i);
                out.key_a[k] = kWallKeyBit | wall;
                out.key_b[k] = bodies.id[i];
                out.feature[k] = c.feature;
                out.point[k] = c.point;
                out.normal[k] = c.normal;
                out.gap[k] = c.gap;
                if (moving) out.velocity_a[k] = states[wall].velocity_at(c.point);
                out.material_a[k] = walls[wall].material;
                if (periodic) out.shift_b[k] = Vec3::Zero();
                ++k;
            };
            if (bodies.shape[i] == Shape::Sphere && k < end) {  // its faces, counted above
                const double envelope = reach[i] - bodies.radius[i] + wall_margin;
                ShapeContact few[kMaxShapeContacts];
                for (const Face& f : faces) {
                    const int m = collide_face(bodies, i, f.geom, f.face, envelope, few);
                    for (int j = 0; j < m; ++j) put(f.wall, few[j]);
                }
            }
            for (; k < end; ++hit) put(hit->wall, hit->c);
        }
    });
}

}  // namespace talus

#pragma once
/// BodyStore: the state of every dynamic body, as structure of arrays (docs/design.md §2).
/// Indexed by a dense body index; `id` is the stable user-visible id.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "clump.hpp"
#include "math.hpp"
#include "wall_motion.hpp"
#include "core/enum_names.hpp"

namespace talus {

/// Body shape. Its size parameters are BodyStore::shape_param (see there); `radius` is
/// always the bounding radius about the centre of mass (broad phase, envelopes, output).
enum class Shape : uint8_t {
    Sphere,    ///< radius r
    Capsule,   ///< segment along the body x-axis, end-sphere centres at ±half_length, radius r
    Ellipsoid, ///< semi-axes (a, b, c) along the body x, y, z axes
    Clump      ///< rigid union of spheres: template BodyStore::clumps[shape_param.x()]
};

template <>
struct EnumNames<Shape> {
    static constexpr NamedValue<Shape> table[] = {
        {Shape::Sphere, "sphere"}, {Shape::Capsule, "capsule"}, {Shape::Ellipsoid, "ellipsoid"}, {Shape::Clump, "clump"}};
};

/// The shape's name in scenes, messages and output.
inline const char* shape_name(Shape sh) { return name_of(sh).data(); }

/// Mass [kg] and principal inertia J̄ about the centre of mass, body frame [kg m²].
struct MassProperties {
    double mass = 0.0;            ///< [kg]
    Vec3 inertia = Vec3::Zero();  ///< (Jx, Jy, Jz) [kg m²]
};

/// Uniform sphere of radius r [m] and density rho [kg/m³]: m = 4/3 π r³ ρ, J = 2/5 m r².
inline MassProperties sphere_mass_properties(double r, double rho) {
    const double pi = 3.14159265358979323846;
    const double m = rho * 4.0 / 3.0 * pi * r * r * r;
    return {m, Vec3::Constant(0.4 * m * r * r)};
}

/// Uniform capsule (axis = body x) of end radius r [m], half_length [m] (cylinder length
/// L = 2 half_length) and density rho [kg/m³]: a cylinder of mass m_c = ρ π r² L and two
/// hemispheres of total mass m_s = ρ 4/3 π r³. Axial J_x = m_c r²/2 + 2/5 m_s r²;
/// transverse J_y = J_z = m_c (L²/12 + r²/4) + m_s (2/5 r² + L²/4 + 3/8 L r), the last two
/// terms being the parallel-axis shift of each hemisphere (centroid 3r/8 from its flat face,
/// face at L/2 from the centre).
inline MassProperties capsule_mass_properties(double r, double half_length, double rho) {
    const double pi = 3.14159265358979323846;
    const double len = 2.0 * half_length;
    const double mc = rho * pi * r * r * len;
    const double ms = rho * 4.0 / 3.0 * pi * r * r * r;
    const double jx = 0.5 * mc * r * r + 0.4 * ms * r * r;
    const double jt = mc * (len * len / 12.0 + 0.25 * r * r) +
                      ms * (0.4 * r * r + 0.25 * len * len + 0.375 * len * r);
    return {mc + ms, Vec3(jx, jt, jt)};
}

/// Uniform ellipsoid of semi-axes s = (a, b, c) [m] and density rho [kg/m³]:
/// m = 4/3 π abc ρ, J = m/5 (b² + c², a² + c², a² + b²).
inline MassProperties ellipsoid_mass_properties(const Vec3& s, double rho) {
    const double pi = 3.14159265358979323846;
    const double m = rho * 4.0 / 3.0 * pi * s.x() * s.y() * s.z();
    const Vec3 q = s.cwiseProduct(s);
    return {m, 0.2 * m * Vec3(q.y() + q.z(), q.x() + q.z(), q.x() + q.y())};
}

/// Prescribed motion of a kinematic body (docs/design.md §2): the rigid motion `motion` applied to
/// the body's reference pose (x0, q0), its pose at t = 0 (before the motion's start):
///     x(t) = R(t) (x0 − c) + c + d(t),   q(t) = q_R(t) ⊗ q0
/// (core/wall_motion.hpp). The body has infinite mass and inertia.
struct BodyMotion {
    WallMotion motion;
    Vec3 x0 = Vec3::Zero();            ///< centre of mass at the reference pose [m]
    Quat q0 = Quat::Identity();        ///< orientation at the reference pose
};

/// Marks a dynamic body in BodyStore::motion.
inline constexpr int32_t kDynamic = -1;

/// Reorder v so that its new element k is the old element order[k] (order: a permutation).
template <class T>
void apply_order(const std::vector<uint32_t>& order, std::vector<T>& v) {
    std::vector<T> out(v.size());
    for (std::size_t k = 0; k < order.size(); ++k) out[k] = v[order[k]];
    v.swap(out);
}

/// Remove the elements of v whose `gone` flag is set, keeping the others in order.
template <class T>
void erase_marked(const std::vector<uint8_t>& gone, std::vector<T>& v) {
    std::size_t k = 0;
    for (std::size_t i = 0; i < v.size(); ++i)
        if (!gone[i]) {
            if (k != i) v[k] = std::move(v[i]);
            ++k;
        }
    v.resize(k);
}

struct BodyStore {
    std::vector<uint64_t> id;               ///< stable id, survives renumbering
    std::vector<Vec3> position;             ///< centre of mass, world [m]
    std::vector<Quat> orientation;          ///< body -> world, unit
    std::vector<Vec3> velocity;             ///< linear velocity, world [m/s]
    std::vector<Vec3> angular_velocity;     ///< ω̄, body frame [rad/s]
    std::vector<double> radius;             ///< bounding/sphere radius [m]
    std::vector<double> inv_mass;           ///< 1/m [1/kg]
    std::vector<Vec3> inv_inertia;          ///< J̄⁻¹, principal, body frame [1/(kg m²)]
    std::vector<uint32_t> material;         ///< index into the material table
    std::vector<Shape> shape;
    /// Shape size per body [m]: sphere (r, 0, 0); capsule (r, half_length, 0); ellipsoid
    /// semi-axes (a, b, c); clump (template index, sphere count, 0) (exact small integers,
    /// no unit). 24 bytes per body, also for spheres.
    std::vector<Vec3> shape_param;
    /// Clump templates shared by the clump bodies (core/clump.hpp); not per body, so
    /// permute() leaves it alone.
    ClumpTable clumps;
    /// Per body: index into `motions` for a kinematic body (prescribed motion, infinite mass:
    /// inv_mass = 0, inv_inertia = 0), kDynamic otherwise.
    std::vector<int32_t> motion;
    /// Prescribed motions of the kinematic bodies; shared table like `clumps` (permute()
    /// leaves it alone, erase_marked() leaves unused entries behind).
    std::vector<BodyMotion> motions;

    std::size_t size() const { return id.size(); }

    /// Append a dynamic sphere of radius r and density rho; returns its dense index.
    std::size_t add_sphere(uint64_t stable_id, const Vec3& x, double r, double rho, uint32_t mat,
                           const Vec3& v = Vec3::Zero(), const Vec3& omega_body = Vec3::Zero(),
                           const Quat& q = Quat::Identity()) {
        return add_body(stable_id, Shape::Sphere, Vec3(r, 0.0, 0.0), r,
                        sphere_mass_properties(r, rho), x, mat, v, omega_body, q);
    }

    /// Append a dynamic capsule (axis = body x) of end radius r [m] and half_length [m]
    /// (between the end-sphere centres: 2 half_length), density rho; returns its index.
    std::size_t add_capsule(uint64_t stable_id, const Vec3& x, double r, double half_length,
                            double rho, uint32_t mat, const Vec3& v = Vec3::Zero(),
                            const Vec3& omega_body = Vec3::Zero(), const Quat& q = Quat::Identity()) {
        return add_body(stable_id, Shape::Capsule, Vec3(r, half_length, 0.0), half_length + r,
                        capsule_mass_properties(r, half_length, rho), x, mat, v, omega_body, q);
    }

    /// Append a dynamic ellipsoid of semi-axes (a, b, c) [m] along the body axes, density
    /// rho; returns its index.
    std::size_t add_ellipsoid(uint64_t stable_id, const Vec3& x, const Vec3& semi_axes, double rho,
                              uint32_t mat, const Vec3& v = Vec3::Zero(),
                              const Vec3& omega_body = Vec3::Zero(), const Quat& q = Quat::Identity()) {
        return add_body(stable_id, Shape::Ellipsoid, semi_axes, semi_axes.maxCoeff(),
                        ellipsoid_mass_properties(semi_axes, rho), x, mat, v, omega_body, q);
    }

    /// Append a dynamic clump of template t (clumps.add) and density rho, with its centre of
    /// mass at x and body (principal) frame orientation q; returns its index.
    std::size_t add_clump(uint64_t stable_id, const Vec3& x, uint32_t t, double rho, uint32_t mat,
                          const Vec3& v = Vec3::Zero(), const Vec3& omega_body = Vec3::Zero(),
                          const Quat& q = Quat::Identity()) {
        const MassProperties mp{rho * clumps.volume[t], rho * clumps.unit_inertia[t]};
        return add_body(stable_id, Shape::Clump,
                        Vec3(double(t), double(clumps.end(t) - clumps.begin(t)), 0.0),
                        clumps.bounding[t], mp, x, mat, v, omega_body, q);
    }

    bool kinematic(std::size_t i) const { return motion[i] != kDynamic; }

    /// Make body i kinematic: it follows `m` from its current pose (its reference pose) and
    /// gets infinite mass and inertia. Its velocities are set at each step (World::step).
    void set_motion(std::size_t i, const WallMotion& m) {
        motion[i] = int32_t(motions.size());
        motions.push_back({m, position[i], orientation[i]});
        inv_mass[i] = 0.0;
        inv_inertia[i] = Vec3::Zero();
    }

    /// Template index of clump body i.
    uint32_t clump_of(std::size_t i) const { return uint32_t(shape_param[i].x()); }

    /// Half the thickness of body i [m]: a sphere's radius, a capsule's end radius, an
    /// ellipsoid's smallest semi-axis, a clump's smallest sphere. The scale its overlaps,
    /// slides and flights are measured against (the penetration target, the adaptive step's
    /// bounds, the envelope), where `radius` only encloses it.
    double thickness_radius(std::size_t i) const {
        switch (shape[i]) {
            case Shape::Capsule: return shape_param[i].x();
            case Shape::Ellipsoid: return shape_param[i].minCoeff();
            case Shape::Clump: {
                const uint32_t t = clump_of(i);
                double r = radius[i];
                for (uint32_t k = clumps.begin(t); k < clumps.end(t); ++k) r = std::min(r, clumps.radius[k]);
                return r;
            }
            case Shape::Sphere: break;
        }
        return radius[i];
    }

    /// The largest centripetal acceleration ‖ω‖ ‖ω × p‖ [m/s²] of the points whose gaps
    /// body i's contacts follow, p from its centre: a clump's sphere centres, a capsule's
    /// end centres, an ellipsoid's surface (bounded by ‖ω‖² × its largest semi-axis); 0 for
    /// a sphere, whose gaps its spin does not move. A step linearises each contact at its
    /// start, so such a point leaves its tangent line by about ½ a h² over the step
    /// (World::choose_step bounds that).
    double centripetal_acceleration(std::size_t i) const {
        const Vec3& w = angular_velocity[i];  // body frame, as the shape's points below
        switch (shape[i]) {
            case Shape::Sphere: return 0.0;
            case Shape::Capsule: return w.norm() * shape_param[i].y() * std::hypot(w.y(), w.z());
            case Shape::Ellipsoid: return w.squaredNorm() * shape_param[i].maxCoeff();
            case Shape::Clump: {
                const uint32_t t = clump_of(i);
                double arm = 0.0;  // the largest ‖ω × p‖
                for (uint32_t k = clumps.begin(t); k < clumps.end(t); ++k)
                    arm = std::max(arm, w.cross(clumps.centre[k]).norm());
                return w.norm() * arm;
            }
        }
        return 0.0;
    }

    /// Replace body i's mass [kg] and principal inertia (Jx, Jy, Jz) [kg m²] (body frame),
    /// e.g. to reproduce a published example that states them instead of a density.
    void set_mass_properties(std::size_t i, double m, const Vec3& principal_inertia) {
        inv_mass[i] = 1.0 / m;
        inv_inertia[i] = principal_inertia.cwiseInverse();
    }

    /// Append a body of any shape with the given mass properties; returns its index.
    /// `bounding_radius` [m] must enclose the shape about x.
    std::size_t add_body(uint64_t stable_id, Shape s, const Vec3& param, double bounding_radius,
                         const MassProperties& mp, const Vec3& x, uint32_t mat,
                         const Vec3& v = Vec3::Zero(), const Vec3& omega_body = Vec3::Zero(),
                         const Quat& q = Quat::Identity()) {
        id.push_back(stable_id);
        position.push_back(x);
        orientation.push_back(q);
        velocity.push_back(v);
        angular_velocity.push_back(omega_body);
        radius.push_back(bounding_radius);
        inv_mass.push_back(1.0 / mp.mass);
        inv_inertia.push_back(mp.inertia.cwiseInverse());
        material.push_back(mat);
        shape.push_back(s);
        shape_param.push_back(param);
        motion.push_back(kDynamic);
        return id.size() - 1;
    }

    double mass(std::size_t i) const { return 1.0 / inv_mass[i]; }

    /// Append a copy of body i of `other` (every per-body array; keep in step with permute).
    /// A clump's template is copied too, into this store's `clumps` at a new index (which
    /// the copy's shape_param names), so the copy is complete without `other`'s table.
    /// `other` must not be this store.
    void append_from(const BodyStore& other, std::size_t i) {
        id.push_back(other.id[i]); position.push_back(other.position[i]);
        orientation.push_back(other.orientation[i]); velocity.push_back(other.velocity[i]);
        angular_velocity.push_back(other.angular_velocity[i]); radius.push_back(other.radius[i]);
        inv_mass.push_back(other.inv_mass[i]); inv_inertia.push_back(other.inv_inertia[i]);
        material.push_back(other.material[i]); shape.push_back(other.shape[i]);
        shape_param.push_back(other.shape_param[i]);
        if (other.shape[i] == Shape::Clump)
            shape_param.back().x() = double(clumps.append(other.clumps, other.clump_of(i)));
        motion.push_back(kDynamic);
        if (other.kinematic(i)) {  // the copy follows the same motion from the same reference
            motion.back() = int32_t(motions.size());
            motions.push_back(other.motions[std::size_t(other.motion[i])]);
        }
    }

    /// Calls f(name, v) on every per-body array (one entry per body; not the shared
    /// tables `clumps` and `motions`), in a fixed order: the one list a new per-body field
    /// joins, so that clearing, renumbering, removal and checkpoints carry it.
    template <class F>
    void for_each_array(F&& f) {
        f("id", id); f("position", position); f("orientation", orientation);
        f("velocity", velocity); f("angular_velocity", angular_velocity); f("radius", radius);
        f("inv_mass", inv_mass); f("inv_inertia", inv_inertia); f("material", material);
        f("shape", shape); f("shape_param", shape_param); f("motion", motion);
    }
    template <class F>
    void for_each_array(F&& f) const {
        const_cast<BodyStore*>(this)->for_each_array(
            [&](const char* name, const auto& v) { f(name, v); });
    }

    /// Remove every body and clump template (capacity is kept).
    void clear() {
        for_each_array([](const char*, auto& v) { v.clear(); });
        clumps.clear();
        motions.clear();
    }

    /// Renumber: the body at new index k is the one at old index order[k]. `order` must be
    /// a permutation of 0 … size−1. Stable ids travel with their bodies.
    void permute(const std::vector<uint32_t>& order) {
        for_each_array([&](const char*, auto& v) { apply_order(order, v); });
    }

    /// Remove the bodies with gone[i] != 0 (gone.size() == size()); the others keep their
    /// order, so their dense indices shift down. Stable ids travel with their bodies.
    void erase_marked(const std::vector<uint8_t>& gone) {
        for_each_array([&](const char*, auto& v) { talus::erase_marked(gone, v); });
    }

};

}  // namespace talus

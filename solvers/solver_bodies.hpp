#pragma once
/// The bodies as the solvers iterate on them (docs/design.md §6): velocities in the world frame,
/// packed with the inverse mass properties into one 64-byte cache line per body, so a
/// contact update touches one line per body instead of four arrays.
///
/// The world frame makes a contact's Jacobian independent of the body's orientation: the
/// velocity at a contact point is v + ω × r with r the world lever arm, and an impulse f
/// there changes ω by I⁻¹ (r × f) with I⁻¹ = R J̄⁻¹ Rᵀ. For an isotropic body (every
/// sphere) I⁻¹ is the scalar 1/J; other bodies keep the full world tensor beside.
#include <cstdint>
#include <vector>

#include "core/body_store.hpp"

namespace talus {

/// Whether a body-frame inverse inertia J̄⁻¹ is j I (every sphere): then its world tensor is
/// j I whatever the orientation.
inline bool isotropic(const Vec3& inv_inertia) {
    return inv_inertia[0] == inv_inertia[1] && inv_inertia[1] == inv_inertia[2];
}

/// One body's solver state. `inv_inertia` < 0 marks an anisotropic body whose world
/// inverse inertia is SolverBodies::inv_inertia_world[index].
struct alignas(64) SolverBody {
    Vec3 v;              ///< linear velocity, world [m/s]
    double inv_mass;     ///< 1/m [1/kg]
    Vec3 w;              ///< angular velocity, world [rad/s]
    double inv_inertia;  ///< isotropic 1/J [1/(kg m²)], or −1 (see above)
};
static_assert(sizeof(SolverBody) == 64, "one cache line per body");

/// Every body's solver state plus ν*, the velocities before contact impulses (world).
struct SolverBodies {
    std::vector<SolverBody> body;
    std::vector<Vec3> v_free, w_free;     ///< ν* [m/s], [rad/s], world
    std::vector<Mat3> inv_inertia_world;  ///< I⁻¹ per body; empty when all are isotropic

    SolverBodies() = default;
    explicit SolverBodies(const BodyStore& bodies) { load(bodies); }

    std::size_t size() const { return body.size(); }

    /// Take ν* from the store (ω̄ rotated to the world frame); body[] starts at ν*.
    void load(const BodyStore& bodies);

    /// I⁻¹ t for body i [1/(kg m²) × N m s].
    Vec3 inv_inertia_times(std::size_t i, const Vec3& t) const {
        const double s = body[i].inv_inertia;
        return s >= 0.0 ? Vec3(s * t) : Vec3(inv_inertia_world[i] * t);
    }
};

}  // namespace talus

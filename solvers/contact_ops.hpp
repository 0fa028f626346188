#pragma once
/// The two matrix-free products every solver is built from (DESIGN §3, §6):
/// d_i = D_iᵀ ν + rhs_i (contact velocity) and ν += M⁻¹ D_i Δγ_i (apply an impulse).
#include <vector>

#include "engine/core/body_store.hpp"
#include "solvers/assemble.hpp"

namespace talus {

#define TALUS_HOT inline __attribute__((always_inline))

/// D_iᵀ ν for body velocities (v, ω̄) given as arrays [m/s].
TALUS_HOT Vec3 jacobian_velocity(const AssembledBatch& c, const std::vector<Vec3>& v,
                                 const std::vector<Vec3>& w, std::size_t i) {
    const int32_t a = c.a[i], b = c.b[i];
    const Mat3& basis = c.basis[i];
    Vec3 dv = Vec3::Zero();
    Vec3 d = Vec3::Zero();
    if (b != kNoBody) {
        dv = v[b];
        const Mat3& J = c.ang_b[i];
        const Vec3& wb = w[b];
        for (int k = 0; k < 3; ++k) d[k] += J(k, 0) * wb[0] + J(k, 1) * wb[1] + J(k, 2) * wb[2];
    }
    if (a != kNoBody) {
        dv -= v[a];
        const Mat3& J = c.ang_a[i];
        const Vec3& wa = w[a];
        for (int k = 0; k < 3; ++k) d[k] -= J(k, 0) * wa[0] + J(k, 1) * wa[1] + J(k, 2) * wa[2];
    }
    for (int k = 0; k < 3; ++k)
        d[k] += basis(0, k) * dv[0] + basis(1, k) * dv[1] + basis(2, k) * dv[2];
    return d;
}

/// d_i = D_iᵀ ν + rhs_i from the bodies' current velocities [m/s].
TALUS_HOT Vec3 contact_velocity(const AssembledBatch& c, const BodyStore& bodies, std::size_t i) {
    return c.rhs[i] + jacobian_velocity(c, bodies.velocity, bodies.angular_velocity, i);
}

/// ν ← ν + M⁻¹ D_i Δγ: +A_i Δγ on B, −A_i Δγ on A.
TALUS_HOT void apply_impulse(const AssembledBatch& c, BodyStore& bodies, std::size_t i,
                             const Vec3& dg) {
    const int32_t a = c.a[i], b = c.b[i];
    const Mat3& basis = c.basis[i];
    Vec3 f;
    for (int k = 0; k < 3; ++k)
        f[k] = basis(k, 0) * dg[0] + basis(k, 1) * dg[1] + basis(k, 2) * dg[2];
    auto torque = [&](const Mat3& J) {  // Jᵀ Δγ, body frame
        Vec3 t;
        for (int k = 0; k < 3; ++k) t[k] = J(0, k) * dg[0] + J(1, k) * dg[1] + J(2, k) * dg[2];
        return t;
    };
    if (b != kNoBody) {
        bodies.velocity[b] += bodies.inv_mass[b] * f;
        bodies.angular_velocity[b] += bodies.inv_inertia[b].cwiseProduct(torque(c.ang_b[i]));
    }
    if (a != kNoBody) {
        bodies.velocity[a] -= bodies.inv_mass[a] * f;
        bodies.angular_velocity[a] -= bodies.inv_inertia[a].cwiseProduct(torque(c.ang_a[i]));
    }
}

/// The residual of DESIGN §6 at the bodies' current velocities:
/// r = max_i ‖γ_i − Π_K(γ_i − η_i d_i)‖ / η_i  [m/s]. Deterministic (a max is exact).
double ccp_residual(const AssembledBatch& c, const BodyStore& bodies);

}  // namespace talus

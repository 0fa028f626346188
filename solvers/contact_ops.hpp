#pragma once
/// The two matrix-free products every solver is built from (docs/design.md §3, §6), with body
/// velocities in the world frame (solvers/solver_bodies.hpp):
///   d_i = D_iᵀ ν + rhs_i = A_iᵀ [(v_B + ω_B × r_B) − (v_A + ω_A × r_A)] + rhs_i,
///   ν += M⁻¹ D_i Δγ: v_B += f/m_B, ω_B += I_B⁻¹ (r_B × f), and the opposite on A,
/// with A_i = [n u w] the contact frame and f = A_i Δγ the impulse in the world frame.
#include <vector>

#include "core/solver_table.hpp"
#include "solvers/assemble.hpp"
#include "solvers/solver_bodies.hpp"

namespace talus {

#define TALUS_HOT inline __attribute__((always_inline))

/// The contact frame A_i = [n u w]: the normal is stored, u stored or (an empty
/// AssembledBatch::tangent) first_tangent(n), w = n × u.
struct ContactFrame {
    Vec3 n, u, w;
    /// A Δγ: a contact-frame vector in the world frame.
    TALUS_HOT Vec3 to_world(const Vec3& g) const {
        return Vec3(n[0] * g[0] + u[0] * g[1] + w[0] * g[2], n[1] * g[0] + u[1] * g[1] + w[1] * g[2],
                    n[2] * g[0] + u[2] * g[1] + w[2] * g[2]);
    }
    /// Aᵀ x: a world vector in the contact frame.
    TALUS_HOT Vec3 to_contact(const Vec3& x) const {
        return Vec3(n[0] * x[0] + n[1] * x[1] + n[2] * x[2], u[0] * x[0] + u[1] * x[1] + u[2] * x[2],
                    w[0] * x[0] + w[1] * x[1] + w[2] * x[2]);
    }
};

TALUS_HOT Vec3 cross(const Vec3& a, const Vec3& b) {
    return Vec3(a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]);
}

TALUS_HOT ContactFrame contact_frame(const AssembledBatch& c, std::size_t i) {
    const Vec3& n = c.normal[i];
    const Vec3 u = c.tangent.empty() ? first_tangent(n) : c.tangent[i];
    return {n, u, cross(n, u)};
}
// (Everything below is written on scalars: Eigen's partial packets on 3-vectors made GCC
// spill and reload halves of them, which halved the PGS sweep rate.)

/// v + ω × r, the velocity of a body's point at lever arm r (all world) [m/s].
TALUS_HOT void add_point_velocity(const Vec3& v, const Vec3& w, const Vec3& r, double sign,
                                  double out[3]) {
    out[0] += sign * (v[0] + (w[1] * r[2] - w[2] * r[1]));
    out[1] += sign * (v[1] + (w[2] * r[0] - w[0] * r[2]));
    out[2] += sign * (v[2] + (w[0] * r[1] - w[1] * r[0]));
}

/// D_iᵀ ν for world-frame body velocities given as arrays (v, ω) [m/s].
TALUS_HOT Vec3 jacobian_velocity(const AssembledBatch& c, const ContactFrame& f,
                                 const std::vector<Vec3>& v, const std::vector<Vec3>& w,
                                 std::size_t i) {
    const int32_t a = c.a[i], b = c.b[i];
    double rel[3] = {0.0, 0.0, 0.0};
    if (b != kNoBody) add_point_velocity(v[b], w[b], c.lever_b[i], 1.0, rel);
    if (a != kNoBody) add_point_velocity(v[a], w[a], c.lever_a[i], -1.0, rel);
    return f.to_contact(Vec3(rel[0], rel[1], rel[2]));
}

/// d_i = D_iᵀ ν + rhs_i at the solver bodies' current velocities [m/s].
TALUS_HOT Vec3 contact_velocity(const AssembledBatch& c, const ContactFrame& f,
                                const SolverBodies& sb, std::size_t i) {
    const int32_t a = c.a[i], b = c.b[i];
    double rel[3] = {0.0, 0.0, 0.0};
    if (b != kNoBody) add_point_velocity(sb.body[b].v, sb.body[b].w, c.lever_b[i], 1.0, rel);
    if (a != kNoBody) add_point_velocity(sb.body[a].v, sb.body[a].w, c.lever_a[i], -1.0, rel);
    const Vec3 d = f.to_contact(Vec3(rel[0], rel[1], rel[2]));
    const Vec3& rhs = c.rhs[i];
    return Vec3(rhs[0] + d[0], rhs[1] + d[1], rhs[2] + d[2]);
}

/// D_iᵀ ν at the solver bodies' velocities (no constant part) [m/s].
TALUS_HOT Vec3 jacobian_velocity(const AssembledBatch& c, const ContactFrame& f,
                                 const SolverBodies& sb, std::size_t i) {
    const int32_t a = c.a[i], b = c.b[i];
    double rel[3] = {0.0, 0.0, 0.0};
    if (b != kNoBody) add_point_velocity(sb.body[b].v, sb.body[b].w, c.lever_b[i], 1.0, rel);
    if (a != kNoBody) add_point_velocity(sb.body[a].v, sb.body[a].w, c.lever_a[i], -1.0, rel);
    return f.to_contact(Vec3(rel[0], rel[1], rel[2]));
}

TALUS_HOT Vec3 contact_velocity(const AssembledBatch& c, const SolverBodies& sb, std::size_t i) {
    return contact_velocity(c, contact_frame(c, i), sb, i);
}

/// One body's share of ν += M⁻¹ D_i Δγ: the world impulse p (sign +1 on B, −1 on A) at
/// lever arm r.
TALUS_HOT void push_body(SolverBodies& sb, int32_t body, const Vec3& r, const double p[3],
                         double sign) {
    SolverBody& B = sb.body[std::size_t(body)];
    const double m = sign * B.inv_mass;
    B.v[0] += m * p[0];
    B.v[1] += m * p[1];
    B.v[2] += m * p[2];
    const double t[3] = {r[1] * p[2] - r[2] * p[1], r[2] * p[0] - r[0] * p[2],
                         r[0] * p[1] - r[1] * p[0]};
    if (B.inv_inertia >= 0.0) {
        const double k = sign * B.inv_inertia;
        B.w[0] += k * t[0];
        B.w[1] += k * t[1];
        B.w[2] += k * t[2];
    } else {
        const Mat3& J = sb.inv_inertia_world[std::size_t(body)];
        for (int row = 0; row < 3; ++row)
            B.w[row] += sign * (J(row, 0) * t[0] + J(row, 1) * t[1] + J(row, 2) * t[2]);
    }
}

/// ν ← ν + M⁻¹ D_i Δγ on the solver bodies.
TALUS_HOT void apply_impulse(const AssembledBatch& c, const ContactFrame& f, SolverBodies& sb,
                             std::size_t i, const Vec3& dg) {
    const int32_t a = c.a[i], b = c.b[i];
    const Vec3 pw = f.to_world(dg);
    const double p[3] = {pw[0], pw[1], pw[2]};
    if (b != kNoBody) push_body(sb, b, c.lever_b[i], p, 1.0);
    if (a != kNoBody) push_body(sb, a, c.lever_a[i], p, -1.0);
}

/// W_ii = D_iᵀ M⁻¹ D_i, the contact's 3×3 Delassus block [1/kg] (SPD when a dynamic body
/// takes part), for the exact block solvers: Σ over the dynamic sides of m⁻¹ I + Gᵀ I⁻¹ G,
/// G = [r × n, r × u, r × w] the world angular Jacobian (A is orthonormal, so the linear
/// part is m⁻¹ I).
inline Mat3 delassus_block(const AssembledBatch& c, const SolverBodies& sb, std::size_t i) {
    const ContactFrame f = contact_frame(c, i);
    Mat3 W = Mat3::Zero();
    auto side = [&](int32_t body, const Vec3& r) {
        if (body == kNoBody) return;
        const SolverBody& B = sb.body[std::size_t(body)];
        if (B.inv_inertia >= 0.0) {
            // isotropic I⁻¹ = j I (every sphere): Gᵀ G = ‖r‖² I − (Aᵀ r)(Aᵀ r)ᵀ, since A is
            // orthonormal (a 4th of the work of the general form below, the same matrix)
            const Vec3 rc = f.to_contact(r);
            const double j = B.inv_inertia, diag = B.inv_mass + j * r.squaredNorm();
            for (int k = 0; k < 3; ++k)
                for (int l = 0; l < 3; ++l) W(k, l) += (k == l ? diag : 0.0) - j * rc[k] * rc[l];
            return;
        }
        const Vec3 g[3] = {cross(r, f.n), cross(r, f.u), cross(r, f.w)};
        Vec3 ig[3];
        for (int k = 0; k < 3; ++k) ig[k] = sb.inv_inertia_times(std::size_t(body), g[k]);
        for (int k = 0; k < 3; ++k)
            for (int l = 0; l < 3; ++l) W(k, l) += g[k].dot(ig[l]);
        for (int k = 0; k < 3; ++k) W(k, k) += sb.body[std::size_t(body)].inv_mass;
    };
    side(c.a[i], c.lever_a[i]);
    side(c.b[i], c.lever_b[i]);
    return W;
}

/// The residual of docs/design.md §6 at the solver bodies' current velocities:
/// r = max_i ‖γ_i − Π_K(γ_i − η_i d_i)‖ / η_i  [m/s]. Deterministic (a max is exact).
double ccp_residual(const AssembledBatch& c, const SolverBodies& sb);

/// The largest of r and the rolling/spinning entries' and joint rows' residual terms (the
/// rows' part of ccp_residual, which no friction law changes).
double with_row_residuals(const AssembledBatch& c, const SolverBodies& sb, double r);

/// The residual of the law a solve enforces: ccp_residual, or for exact Coulomb friction
/// coulomb_residual (solvers/solver.hpp) with the rows' terms.
double law_residual(const AssembledBatch& c, const SolverBodies& sb, FrictionLaw law);

/// The same at the velocities held in a body store (ν after a solve).
double ccp_residual(const AssembledBatch& c, const BodyStore& bodies);

}  // namespace talus

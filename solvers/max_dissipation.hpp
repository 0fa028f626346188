#pragma once
/// The single-contact maximum-dissipation impact problem of Preclik & Rüde (2017), "The
/// maximum dissipation principle in rigid-body dynamics with purely inelastic impacts"
/// (seed 004, eqs. (3) and (5); docs/design.md §6), solved to machine precision.
///
/// Problem. W = D_iᵀ M⁻¹ D_i (3×3 SPD) [1/kg], b the contact's velocity without its own
/// impulse (stabilisation included) [m/s], frame (n, u, w), d = W γ + b after the impulse.
///   b_n ≥ 0 (separating; the paper's pressure condition):  γ = 0.
///   b_n < 0 (colliding):  γ = argmin f(γ) = ½ γᵀ W γ + bᵀ γ
///                          s.t. (W γ + b)_n = 0 (purely inelastic),  ‖γ_t‖ ≤ μ γ_n.
/// f(γ) = ½ dᵀ W⁻¹ d − ½ bᵀ W⁻¹ b: with b = D_iᵀ ν (no stabilisation) it is the kinetic energy
/// after the impulse minus that before, so the minimiser dissipates the most. (b_n = 0, where
/// the paper's plane passes through the origin, is treated as separating: γ = 0.)
///
/// Reduction (normalised so that W_nn = 1, b_n = −1; γ scales by |b_n| / W_nn): the plane
/// gives γ_n = 1 − wᵀx with x = γ_t, w = W_tn. Then, up to a constant,
///   f = ½ xᵀ S x + qᵀ x,   S = W_tt − w wᵀ (Schur complement, SPD),   q = b_t + w,
/// the post-impulse slip is d_t = S x + q, and the feasible set (the paper's conic section,
/// focus at 0) is C = {x : g(x) = ‖x‖ + μ wᵀx − μ ≤ 0}: convex, with 0 inside when μ > 0.
///  1. Sticking: x* = −S⁻¹ q (d = 0, γ = −W⁻¹ b) if g(x*) ≤ 0.
///  2. Sliding otherwise: the optimum lies on ∂C. We use the Lagrangian dual instead of the
///     paper's quartic. L(x, λ) = f(x) + λ g(x) is strictly convex in x; its minimiser x(λ)
///     is 0 if ‖p‖ ≤ λ (p = q + λ μ w), else x = −σ (I + σ S)⁻¹ p with σ > 0 the root of
///     ‖(I + σ S)⁻¹ p‖ = λ (strictly decreasing in σ; Newton on its reciprocal, which is
///     concave by Cauchy–Schwarz, climbs monotonically to the root from a lower bound).
///     The dual θ(λ) = min_x L is concave with θ'(λ) = G(λ) = g(x(λ)) (Danskin; x(λ) is
///     unique), so G is continuous and non-increasing, G(0) = g(x*) > 0, and G ≤ 0 for
///     λ ≥ λ* (a dual optimum λ* exists by Slater). Newton on G, with G'(λ) = −aᵀ(S +
///     τ(I − e eᵀ))⁻¹a ≤ 0 (a = e + μ w, e = x/‖x‖, τ = λ/‖x‖), safeguarded by a sign
///     bracket and bisection, finds a root λ* (a bracketing method cannot miss it: G is
///     monotone). There x(λ*) minimises L(·, λ*), is feasible with g = 0 and λ* ≥ 0: the KKT
///     conditions hold, which for this convex problem (Slater: g(0) = −μ < 0) are
///     sufficient, and f is strictly convex, so x(λ*) is THE global optimum. (The paper
///     instead enumerates all stationary points of f along ∂C, since f restricted to ∂C
///     can have several local minima; the dual is free of that.) The result is finally
///     scaled radially onto ∂C (g is positively homogeneous plus a constant).
/// At the optimum d_t = −λ (x/‖x‖ + μ w): friction opposes slip exactly only when W_nt = 0
/// (e.g. every sphere contact), where the model coincides with the impulsive Coulomb law;
/// unlike the CCP, d_n = 0 always: no lift-off (docs/design.md §4).
#include <cstdint>

#include "core/math.hpp"

namespace talus {

/// How a single contact ended up.
enum class ImpactState : uint8_t {
    Separating,  ///< b_n ≥ 0 (or invalid input): γ = 0
    Sticking,    ///< γ = −W⁻¹ b lies in the cone: d = 0
    Sliding,     ///< γ on the cone's surface: d_n = 0, d_t ≠ 0 (μ = 0: γ_t = 0)
};

/// The solution of one single-contact problem.
struct MaxDissipationImpulse {
    Vec3 gamma = Vec3::Zero();                    ///< impulse (n, u, w) [N s]
    ImpactState state = ImpactState::Separating;  ///< which case applied
    int iterations = 0;                           ///< dual root-finding iterations [-]
};

/// γ of the single-contact maximum-dissipation impact problem (header comment) for the
/// Delassus block `W` [1/kg] (SPD; its symmetric part is used), the velocity `b` without
/// this contact's impulse [m/s] (normal first) and the friction coefficient `mu` [-] ≥ 0.
/// Never throws; never returns a non-finite value (non-finite input gives γ = 0).
MaxDissipationImpulse solve_max_dissipation_contact(const Mat3& W, const Vec3& b, double mu);

/// f(γ) = ½ γᵀ W γ + bᵀ γ [J]: the objective above, the kinetic energy change of the impulse
/// γ [N s] when b [m/s] holds no stabilisation.
inline double impact_energy_change(const Mat3& W, const Vec3& b, const Vec3& gamma) {
    return 0.5 * gamma.dot(W * gamma) + b.dot(gamma);
}

}  // namespace talus

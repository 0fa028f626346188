#pragma once
/// One contact's exact Coulomb problem (issue 8), the local step of the non-linear
/// Gauss–Seidel "nsgs" solver on bodies (solvers/nsgs.cpp) and on an assembled Delassus
/// operator (solvers/delassus.cpp). In the contact frame (normal first),
///   u = W r + q,   û = u + [μ‖u_T‖, 0, 0],   K*_μ ∋ û ⊥ r ∈ K_μ = {‖r_T‖ ≤ μ r_n},
/// De Saxcé's form of Signorini + Coulomb: a closed contact either sticks (u = 0, r in K_μ)
/// or slides with u_n = 0 and r_T = −μ r_n u_T/‖u_T‖; an open one has r = 0 and u_n ≥ 0.
/// (The CCP of docs/design.md §4 drops the μ‖u_T‖ shift, so its sliding contacts separate at
/// u_n = μ‖u_T‖.)
#include "core/math.hpp"

namespace talus {

struct CoulombContact {
    enum class State { Open, Sticking, Sliding, Approximate };
    Vec3 r = Vec3::Zero();  ///< impulse (n, t1, t2)
    State state = State::Open;
};

/// Solve the problem above for W positive definite (a contact's Delassus block, D_iᵀ M⁻¹ D_i;
/// FCLIB's are not always symmetric) and q the contact's velocity without its own impulse. Cases in order:
/// q_n ≥ 0 → open; r = −W⁻¹q inside K_μ → sticking; otherwise sliding, where the friction
/// direction e = (cos θ, sin θ) is a root of the scalar trigonometric equation
/// u_T(θ) × e = 0 with u_n = 0 (at most four roots: Newton from `hint`'s direction first,
/// then a scan with bisection), and the valid root (r_n > 0, u_T·e < 0) closest to `hint`
/// is taken. Should rounding defeat all three (W nearly singular), a projected fixed
/// point on the local problem gives an approximate answer, marked as such.
CoulombContact solve_coulomb_contact(const Mat3& W, const Vec3& q, double mu, const Vec3& hint);

/// The natural map F = r − Π_K(r − û) of one contact, with û = u + [μ‖u_T‖, 0, 0] and u
/// the contact's velocity at r. Zero exactly at a solution.
Vec3 coulomb_natural_map(const Vec3& r, const Vec3& u, double mu);

}  // namespace talus

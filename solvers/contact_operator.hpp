#pragma once
/// What an iterative contact solver asks of the problem it solves: the contact operator.
///
/// Every method (PGS, PJ, APGD, nsgs, maxdiss and the De Saxcé fixed point) is written once,
/// as a template over an operator, and instantiated for two of them:
///  - BodyOperator (solvers/body_operator.hpp): a step's contacts on bodies, matrix-free;
///    the velocity of a block is D_iᵀ ν + rhs_i, a change of impulse moves the bodies by
///    M⁻¹ D_i Δγ (the four-lane AVX kernels are its way of running a PGS or PJ pass);
///    joint rows and rolling/spinning rows are further block types of its passes.
///  - AssembledOperator (solvers/assembled_operator.hpp): an assembled Delassus matrix W
///    and q (FCLIB problems, `talus fclib`); the velocity of a block is (W γ + q)_i.
/// Both measure convergence by a residual of the same form,
///   r = max_i ‖γ_i − Π_K(γ_i − ρ_i d_i)‖ / σ_i,
/// zero exactly at a solution: on bodies docs/design.md §6's, ρ_i = σ_i = η_i = 3 / trace(W_ii)
/// [m/s]; on an assembled W, FCLIB's natural map (ρ = 1) per contact relative to 1 + ‖q‖₂
/// (σ), the max-norm of FCLIB's relative error. A method stops on it on either.
///
/// Per block i (a contact, normal first, in the contact frame) an operator gives
///   size(), gamma() (the impulses, one Vec3 per contact), mu(i), eta(i) (the PGS step),
///   rho(i), sigma(i) (the residual's scales above),
///   velocity(i)   d_i = (W γ + q)_i at the current impulses [m/s],
///   apply(i, Δγ)  the velocities follow a change of γ_i already written to gamma(),
///   diagonal(i)   W_ii [1/kg],
/// and, per pass, the traversal: sweep(grain, init, f) calls f(lo, hi, independent) over
/// its blocks in its fixed order (for bodies: colour by colour, in parallel within a colour)
/// and returns the max of the results and init. For gradient methods (APGD): free_velocity(i)
/// (q_i, the velocity at γ = 0), product(live, z, z_l, out, out_l, partial, terms) (out = N z
/// over the listed contacts, terms reduced in the same pass) and gather(list, …) (the same
/// product for other contacts, of the last z), and the joint rows as unconstrained
/// variables (row_count(), lambda(), row_velocity(j)). The passes a method needs on all block
/// types at once (pgs_sweep, pj_probe/pj_apply, apgd products) are named in each method.
/// The per-block rules below are the methods' arithmetic, shared by both operators: the
/// bodies' scalar kernels (solvers/contact_kernels.cpp) call them too.
#include <algorithm>
#include <cmath>

#include "core/exact_sum.hpp"
#include "core/math.hpp"
#include "solvers/cone_projection.hpp"

namespace talus {

#define TALUS_RULE inline __attribute__((always_inline))

/// What a pass after a product by the operator reduces over the contacts, in one go (APGD):
/// three sums and a max (one contact's terms, or their totals).
struct Reductions {
    double sum[3] = {0.0, 0.0, 0.0};
    double max = 0.0;
};

/// The reduction of Reductions over contacts: exact sums (core/exact_sum.hpp), so the totals
/// have the same bits whatever the order of the contacts (bodies held in another order, or
/// on other ranks), and a max. Partial results per chunk merge exactly.
struct ReductionSums {
    ExactSum sum[3];
    double max = 0.0;

    void add(const Reductions& t) {
        for (int j = 0; j < 3; ++j)
            if (t.sum[j] != 0.0) sum[j].add(t.sum[j]);
        max = std::max(max, t.max);
    }
    void merge(const ReductionSums& o) {
        for (int j = 0; j < 3; ++j) sum[j] += o.sum[j];
        max = std::max(max, o.max);
    }
    Reductions value() const {
        Reductions r;
        for (int j = 0; j < 3; ++j) r.sum[j] = sum[j].value();
        r.max = max;
        return r;
    }
};

/// Π_K(γ⁰ − ρ d): the step the §6 residual term measures from γ⁰.
TALUS_RULE Vec3 residual_step(const Vec3& d, const Vec3& g0, double rho, double mu) {
    return project_friction_cone(Vec3(g0[0] - rho * d[0], g0[1] - rho * d[1], g0[2] - rho * d[2]), mu);
}

/// The end of a Gauss–Seidel block step (pgs_block, bgs_block): γ_i ← g, its change
/// applied to the bodies at once, and the residual term's excess before the update,
/// ‖γ⁰ − full‖² − tol2 σ_i² (full = residual_step at γ⁰).
template <class Op>
TALUS_RULE double commit_block(Op& op, std::size_t i, const Vec3& g0, const Vec3& g, const Vec3& full,
                               double tol2) {
    const double sigma = op.sigma(i);
    op.gamma()[i] = g;
    op.apply(i, Vec3(g[0] - g0[0], g[1] - g0[1], g[2] - g0[2]));
    const double e0 = g0[0] - full[0], e1 = g0[1] - full[1], e2 = g0[2] - full[2];
    return (e0 * e0 + e1 * e1) + e2 * e2 - tol2 * sigma * sigma;
}

/// PGS on block i: γ_i ← Π_K(γ_i − ω η_i d_i), the change applied at once. Returns
/// ‖γ_i − Π_K(γ_i − ρ_i d_i)‖² − tol2 σ_i² before the update (≤ 0: within the tolerance).
template <class Op>
TALUS_RULE double pgs_block(Op& op, std::size_t i, double omega, double tol2) {
    const Vec3 d = op.velocity(i);
    const Vec3 g0 = op.gamma()[i];
    const double eta = op.eta(i);
    const double oe = omega * eta;
    const double mu = op.mu(i);
    const Vec3 g = project_friction_cone(Vec3(g0[0] - oe * d[0], g0[1] - oe * d[1], g0[2] - oe * d[2]), mu);
    const double rho = op.rho(i);
    const Vec3 full = oe == rho ? g : residual_step(d, g0, rho, mu);
    return commit_block(op, i, g0, g, full, tol2);
}

/// The block step of "bgs": P⁻¹ = diag(n, t, t) for a diagonal majorant P ⪰ W_ii [kg].
struct BlockMetric {
    double n, t;
};

/// W_ii's Gershgorin majorant in the contact frame: p_n = W_nn + |W_nu| + |W_nw|, p_t the
/// larger of the two tangent rows' sums, so that P − W_ii is diagonally dominant with a
/// non-negative diagonal, hence P ⪰ W_ii. For a sphere W_ii is diagonal in the contact frame
/// (its lever arm is along n) and P = W_ii. Returns P⁻¹'s two values.
inline BlockMetric block_metric(const Mat3& W) {
    const double pn = W(0, 0) + std::abs(W(0, 1)) + std::abs(W(0, 2));
    const double pt = std::max(W(1, 1) + std::abs(W(1, 0)) + std::abs(W(1, 2)),
                               W(2, 2) + std::abs(W(2, 0)) + std::abs(W(2, 1)));
    return {pn > 0.0 ? 1.0 / pn : 0.0, pt > 0.0 ? 1.0 / pt : 0.0};
}

/// De Saxcé's modified velocity ĉ = d + [μ‖d_t‖, 0, 0]: exact Coulomb friction is the cone
/// complementarity problem in ĉ (docs/design.md §4), so its residual term is §6's with ĉ.
TALUS_RULE Vec3 coulomb_velocity(const Vec3& d, double mu) {
    return Vec3(d[0] + mu * std::sqrt(d[1] * d[1] + d[2] * d[2]), d[1], d[2]);
}

/// bgs's block step under exact Coulomb friction (friction = "coulomb"; solvers/bgs.cpp):
/// the normal and the tangent steps taken apart, the tangent then clipped to the disc the
/// new normal impulse allows,
///   γ_n ← max(0, γ_n − ω p_n⁻¹ d_n),   γ_t ← Π_{‖·‖ ≤ μ γ_n}(γ_t − ω p_t⁻¹ d_t).
/// Its fixed points are exactly the Coulomb solutions: γ_n ≥ 0 ⊥ d_n ≥ 0 (a sliding contact
/// does not lift off, unlike the CCP's Π_K), and γ_t inside the disc with d_t = 0 or on its
/// rim with d_t against γ_t. For a sphere, whose W_ii = diag(a, b, b) = P in the contact
/// frame, one step at ω = 1 is the contact's exact Coulomb solve given the other impulses
/// (nsgs's local problem in closed form). Not a projection onto a convex set: the disc
/// follows γ_n, so the sweep's descent is not guaranteed as the CCP's is (the stopping rule
/// is the same residual, with ĉ).
TALUS_RULE Vec3 coulomb_block_step(const Vec3& g0, const Vec3& d, double mu, double sn, double st) {
    const double gn = std::max(0.0, g0[0] - sn * d[0]);
    const double ty = g0[1] - st * d[1], tz = g0[2] - st * d[2];
    const double tn = std::sqrt(ty * ty + tz * tz);
    const double limit = mu * gn;
    const double f = tn > limit ? limit / tn : 1.0;
    return Vec3(gn, ty * f, tz * f);
}

/// Block Gauss–Seidel on block i in the metric P = diag(p_n, p_t, p_t) ⪰ W_ii (solvers/bgs.cpp):
/// γ_i ← Π_K^P(γ_i − ω P⁻¹ d_i), the projection onto the cone in P's norm, the change applied
/// at once. With s = √(p_t / p_n) the cone in the scaled coordinates (γ_n, s γ_t) has the
/// friction coefficient μ s, so Π_K^P(y) = diag(1, 1/s, 1/s) Π_K'(y_n, s y_t): closed form,
/// project_friction_cone with q = s² = p_t / p_n (which needs neither s nor a division by it).
/// Returns, like pgs_block, the docs/design.md §6 residual term's excess before the update.
/// `Coulomb`: coulomb_block_step instead of the cone's projection, and the residual term
/// with De Saxcé's ĉ (the law's own measure).
template <bool Coulomb = false, class Op>
TALUS_RULE double bgs_block(Op& op, std::size_t i, double omega, double tol2) {
    const Vec3 d = op.velocity(i);
    const Vec3 g0 = op.gamma()[i];
    const BlockMetric m = op.metric(i);
    const double mu = op.mu(i);
    Vec3 g = Vec3::Zero();
    if (m.n > 0.0 && m.t > 0.0) {
        const double sn = omega * m.n, st = omega * m.t;
        if constexpr (Coulomb) {
            g = coulomb_block_step(g0, d, mu, sn, st);
        } else {
            const double q = m.n / m.t;
            g = project_friction_cone(Vec3(g0[0] - sn * d[0], g0[1] - st * d[1], g0[2] - st * d[2]), mu, q);
        }
    }
    const Vec3 c = Coulomb ? coulomb_velocity(d, mu) : d;
    return commit_block(op, i, g0, g, residual_step(c, g0, op.rho(i), mu), tol2);
}

/// PJ's probe of block i: next_i = Π_K(γ_i − s_i d_i) at the current velocities (read
/// only); returns the residual term ‖γ_i − Π_K(γ_i − ρ_i d_i)‖ / σ_i.
template <class Op>
TALUS_RULE double pj_block(const Op& op, std::size_t i, double step, Vec3& next) {
    const Vec3 d = op.velocity(i);
    const Vec3& g0 = op.gamma()[i];
    const double rho = op.rho(i), mu = op.mu(i);
    next = project_friction_cone(Vec3(g0[0] - step * d[0], g0[1] - step * d[1], g0[2] - step * d[2]), mu);
    const Vec3 full = project_friction_cone(Vec3(g0[0] - rho * d[0], g0[1] - rho * d[1], g0[2] - rho * d[2]), mu);
    const double e0 = g0[0] - full[0], e1 = g0[1] - full[1], e2 = g0[2] - full[2];
    return std::sqrt((e0 * e0 + e1 * e1) + e2 * e2) / op.sigma(i);
}

/// PJ's update of block i: γ_i ← next_i, the change applied.
template <class Op>
TALUS_RULE void pj_apply_block(Op& op, std::size_t i, const Vec3& next) {
    const Vec3 g0 = op.gamma()[i];
    op.gamma()[i] = next;
    op.apply(i, Vec3(next[0] - g0[0], next[1] - g0[1], next[2] - g0[2]));
}

/// A non-linear Gauss–Seidel step with an exact local solve on block i (nsgs, maxdiss):
/// q_i = d_i − W_ii γ_i (the velocity without its own impulse), γ_i ← solve(W_ii, q_i, μ_i,
/// γ_i), the change applied at once. Returns ‖Δγ_i‖ / σ_i.
template <class Op, class LocalSolve>
TALUS_RULE double exact_block(Op& op, std::size_t i, LocalSolve&& solve) {
    const Vec3 d = op.velocity(i);
    const Mat3 W = op.diagonal(i);
    const Vec3 g0 = op.gamma()[i];
    const Vec3 g = solve(W, Vec3(d - W * g0), op.mu(i), g0);
    op.gamma()[i] = g;
    op.apply(i, g - g0);
    return (g - g0).norm() / op.sigma(i);
}

/// One sweep of exact_block over every block in the operator's order; returns the largest
/// ‖Δγ_i‖ / σ_i of the sweep.
template <class Op, class LocalSolve>
double exact_block_sweep(Op& op, std::size_t grain, LocalSolve&& solve) {
    return op.sweep(grain, 0.0, [&](std::size_t lo, std::size_t hi, bool) {
        double change = 0.0;
        for (std::size_t i = lo; i < hi; ++i) change = std::max(change, exact_block(op, i, solve));
        return change;
    });
}

/// The residual term ‖γ − Π_K(γ − ρ_i d)‖ / σ_i of block i at impulse g and velocity d where
/// it may exceed `floor`; else 0, which leaves a max above `floor` unchanged. A term whose
/// square is below 0.999 (floor σ)² is below floor whatever the rounding, so the max keeps
/// its bits while most terms skip the square root and the division.
template <class Op>
TALUS_RULE double residual_term_above(const Op& op, std::size_t i, const Vec3& g, const Vec3& d, double floor) {
    const double rho = op.rho(i), sigma = op.sigma(i);
    const double e2 = (g - project_friction_cone(g - rho * d, op.mu(i))).squaredNorm();
    const double bound = floor * sigma;
    if (e2 < 0.999 * (bound * bound)) return 0.0;
    return std::sqrt(e2) / sigma;
}

}  // namespace talus

// The maximum-dissipation contact model (Preclik & Rüde 2017, seed 004; docs/design.md §6): the
// exact single-contact solve (derivation and optimality argument in max_dissipation.hpp)
// and its non-linear block Gauss–Seidel sweep over the contacts of a step.
//
// Sweep: for each contact, d_i from the current velocities, W_ii from the Jacobians,
// b_i = d_i − W_ii γ_i (the velocity without its own impulse), γ_i ← the exact solution
// for (W_ii, b_i, μ_i), and the change applied at once to both bodies (as PGS, same
// colouring, hence the same thread-independence). Stopping: the model is not a CCP, so
// the docs/design.md §6 residual does not vanish at its solution (a sliding contact has d_n = 0,
// not μ‖d_t‖). The residual reported is the fixed-point residual of the sweep,
//   r = max_i ‖γ_i⁺ − γ_i⁻‖ / η_i   [m/s],   η_i = 3 / trace(W_ii),
// the largest change of an impulse over one sweep in velocity units (zero exactly at a
// fixed point, i.e. a solution of eq. (5) for all contacts); `converged` means r ≤ tol.
// The CCP residual can still be evaluated afterwards with ccp_residual() for comparison.
// Relaxation is not used: an over- or under-relaxed step would leave the contact's plane.
#include "solvers/max_dissipation.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/parallel.hpp"
#include "solvers/assembled_operator.hpp"
#include "solvers/body_operator.hpp"
#include "solvers/iteration.hpp"
#include "solvers/methods.hpp"
#include "solvers/contact_ops.hpp"
#include "solvers/solver.hpp"

namespace talus {
namespace {

using Vec2 = Eigen::Vector2d;

constexpr double kEps = std::numeric_limits<double>::epsilon();

/// The reduced problem in the eigenbasis of S (so S = diag(s)), normalised so β = 1:
/// min ½ xᵀ diag(s) x + qᵀ x  s.t.  ‖x‖ + μ wᵀx ≤ μ.
struct Reduced {
    Vec2 s, q, w;
    double mu;

    /// ‖x‖ + μ wᵀx − μ (≤ 0: feasible) [-]
    double g(const Vec2& x) const { return x.norm() + mu * w.dot(x) - mu; }

    /// x(λ) = argmin_x ½ xᵀSx + qᵀx + λ (‖x‖ + μ wᵀx) for λ > 0, and G'(λ) = d g(x(λ))/dλ.
    struct Inner {
        Vec2 x;
        double dG;  ///< ≤ 0; 0 where x(λ) = 0
    };
    Inner inner(double lambda) const {
        const Vec2 p = q + lambda * mu * w;
        const double np = p.norm();
        if (!(np > lambda)) return {Vec2::Zero(), 0.0};
        // σ > 0 with ψ(σ) = ‖(I + σ S)⁻¹ p‖ = λ; ψ decreases strictly from ‖p‖ to 0 and
        // ‖p‖ / (1 + s_max σ) ≤ ψ ≤ ‖p‖ / (1 + s_min σ) gives the bracket. F = 1/ψ − 1/λ
        // is concave and increasing, so Newton from the lower end increases monotonically
        // to the root (each tangent lies above F).
        const double ratio = np / lambda - 1.0;
        double sigma = ratio / s[0];  // s[0] ≥ s[1]: lower end
        const double sigma_hi = ratio / s[1];
        for (int it = 0; it < 100; ++it) {
            const Vec2 den(1.0 + s[0] * sigma, 1.0 + s[1] * sigma);
            const Vec2 v(p[0] / den[0], p[1] / den[1]);
            const double psi = v.norm();
            if (!(psi > 0.0)) break;
            const double F = 1.0 / psi - 1.0 / lambda;
            if (F >= 0.0) break;  // at the root (rounding)
            const Vec2 u = v / psi;
            const double dF = (u[0] * u[0] * s[0] / den[0] + u[1] * u[1] * s[1] / den[1]) / psi;
            if (!(dF > 0.0)) break;
            const double step = -F / dF;
            double next = sigma + step;
            if (!(next <= sigma_hi)) next = sigma_hi;
            if (!(next > sigma)) break;
            const bool done = step <= 4.0 * kEps * sigma;
            sigma = next;
            if (done) break;
        }
        // x = −σ (I + σ S)⁻¹ p = −(S + τ I)⁻¹ p with τ = 1/σ = λ/‖x‖ (no σ in a numerator).
        const double tau = 1.0 / sigma;
        const Vec2 x(-p[0] / (s[0] + tau), -p[1] / (s[1] + tau));
        // Differentiating S x + q + λ μ w + λ e = 0 (e = x/‖x‖):
        // (S + τ (I − e eᵀ)) x' = −(e + μ w), so G' = (e + μ w)ᵀ x' = −aᵀ M⁻¹ a ≤ 0.
        const double nx = x.norm();
        if (!(nx > 0.0)) return {x, 0.0};
        const Vec2 e = x / nx, a = e + mu * w;
        const double m00 = s[0] + tau * (1.0 - e[0] * e[0]), m11 = s[1] + tau * (1.0 - e[1] * e[1]);
        const double m01 = -tau * e[0] * e[1];
        const double det = m00 * m11 - m01 * m01;
        const double quad = (m11 * a[0] * a[0] - 2.0 * m01 * a[0] * a[1] + m00 * a[1] * a[1]) / det;
        return {x, det > 0.0 && std::isfinite(quad) ? -quad : 0.0};
    }
};

/// x on the ray through x scaled onto ∂C (g(kx) = 0); false when the ray does not meet ∂C.
bool snap_to_boundary(const Reduced& r, Vec2& x) {
    const double h = x.norm() + r.mu * r.w.dot(x);  // positively homogeneous part of g
    if (!(h > 0.0) || !std::isfinite(h)) return false;
    x *= r.mu / h;
    return x.allFinite();
}

/// Sliding case: the root λ* of G(λ) = g(x(λ)) (non-increasing, G(0) = g(x*) > 0) by
/// Newton's method safeguarded by a bracket [lo, hi] (G(lo) > 0 ≥ G(hi); hi = ∞ until a
/// point with G ≤ 0 is seen, doubling meanwhile) as in "rtsafe": a Newton step that leaves
/// the bracket or is not at most half the step before last is replaced by bisection, so
/// the steps shrink at least geometrically. Returns x(λ*) scaled onto ∂C.
Vec2 solve_sliding(const Reduced& r, const Vec2& x_star, int& iterations) {
    Vec2 x0 = x_star;  // fallback (never needed in exact arithmetic): x* scaled onto ∂C
    if (!snap_to_boundary(r, x0)) x0 = Vec2::Zero();

    // Initial λ from the KKT condition at x0 (eᵀ(Sx + q) = −λ(1 + μ wᵀe), e = x0/‖x0‖):
    // λ0 = (1 − k) k x*ᵀ S x* / μ with k = ‖x0‖ / ‖x*‖.
    const double k = x_star.norm() > 0.0 ? x0.norm() / x_star.norm() : 0.0;
    const double sxx = r.s[0] * x_star[0] * x_star[0] + r.s[1] * x_star[1] * x_star[1];
    double lambda = (1.0 - k) * k * sxx / r.mu;
    if (!(lambda > 1e-300) || !std::isfinite(lambda)) lambda = 1.0;

    const double inf = std::numeric_limits<double>::infinity();
    double lo = 0.0, hi = inf;
    double step = inf, step_old = inf;  // |last step|, |step before|
    Vec2 best = x_star;
    double best_g = r.g(x_star);
    iterations = 0;
    while (iterations < 3000) {
        const Reduced::Inner in = r.inner(lambda);
        const double G = r.g(in.x);
        ++iterations;
        if (!std::isfinite(G)) return x0;
        if (std::abs(G) < std::abs(best_g)) { best = in.x; best_g = G; }
        (G > 0.0 ? lo : hi) = lambda;
        // |G| at rounding level: λ is as good as it gets.
        const double noise = 8.0 * kEps * (in.x.norm() + r.mu * std::abs(r.w.dot(in.x)) + r.mu);
        if (std::abs(G) <= noise || (hi < inf && hi - lo <= 4.0 * kEps * hi)) break;
        const double newton = in.dG < 0.0 ? -G / in.dG : inf;  // λ_next − λ
        if (std::abs(newton) <= 2.0 * kEps * lambda) break;     // converged to rounding
        double next = lambda + newton;
        if (!(next > lo && next < hi) || !(std::abs(newton) <= 0.5 * step_old)) {
            next = hi == inf ? 2.0 * lo : 0.5 * (lo + hi);
            if (!std::isfinite(next)) return x0;
        }
        step_old = step;
        step = std::abs(next - lambda);
        lambda = next;
    }
    if (!snap_to_boundary(r, best)) return x0;
    return best;
}

}  // namespace

MaxDissipationImpulse solve_max_dissipation_contact(const Mat3& W_in, const Vec3& b, double mu) {
    MaxDissipationImpulse out;
    if (!W_in.allFinite() || !b.allFinite() || !std::isfinite(mu)) return out;
    if (!(b[0] < 0.0)) return out;  // separating (b_n ≥ 0): the pressure condition
    const double w_nn = W_in(0, 0);
    if (!(w_nn > 0.0)) return out;  // not SPD
    mu = std::max(mu, 0.0);

    // Normalise: W ← W / W_nn, b ← b / |b_n|, so β = −b_n / W_nn = 1; γ = scale · γ̃.
    const double bn = -b[0];
    const double scale = bn / w_nn;
    const Mat3 W = (0.5 / w_nn) * (W_in + W_in.transpose());
    const Vec3 bb = b / bn;
    const Vec2 w(W(1, 0), W(2, 0));
    Eigen::Matrix2d S = W.block<2, 2>(1, 1) - w * w.transpose();
    const Vec2 q = bb.tail<2>() + w;

    // Eigenbasis of S: e1 = (cos θ, sin θ) for the larger eigenvalue, e2 = (−sin θ, cos θ);
    // eigenvalues as Rayleigh quotients (accurate for the computed vectors).
    const double theta = 0.5 * std::atan2(2.0 * S(0, 1), S(0, 0) - S(1, 1));
    const Vec2 e1(std::cos(theta), std::sin(theta)), e2(-e1[1], e1[0]);
    Reduced r;
    r.s = Vec2(e1.dot(S * e1), e2.dot(S * e2));
    r.mu = mu;
    r.q = Vec2(e1.dot(q), e2.dot(q));
    r.w = Vec2(e1.dot(w), e2.dot(w));

    auto finish = [&](const Vec2& xe, ImpactState state) {
        const Vec2 x = xe[0] * e1 + xe[1] * e2;  // back to the (u, w) tangents
        double gn = 1.0 - w.dot(x);
        // Rounding may leave ‖x‖ a few ulps above μ γ_n on ∂K: raise γ_n by that deficiency
        // (moves d_n by W_nn times it) rather than shrink x (would move d_n by W_nt x).
        if (mu > 0.0) gn = std::max(gn, x.norm() / mu);
        out.gamma = scale * Vec3(gn, x[0], x[1]);
        out.state = state;
        if (!out.gamma.allFinite()) {  // cannot happen for finite SPD input; stay safe
            out.gamma = Vec3(std::isfinite(scale) ? scale : 0.0, 0.0, 0.0);
            if (!out.gamma.allFinite()) out.gamma.setZero();
        }
        return out;
    };

    if (!(r.s[0] > 0.0) || !std::isfinite(r.s[0]))  // W not SPD: γ = (β, 0, 0), still d_n = 0
        return finish(Vec2::Zero(), ImpactState::Sliding);
    r.s[1] = std::max(r.s[1], 1e-14 * r.s[0]);  // guard against a numerically singular W

    const Vec2 x_star(-r.q[0] / r.s[0], -r.q[1] / r.s[1]);  // d = 0
    if (mu == 0.0) {  // C = {0}
        const bool stuck = (r.q.array() == 0.0).all();
        return finish(Vec2::Zero(), stuck ? ImpactState::Sticking : ImpactState::Sliding);
    }
    if (r.g(x_star) <= 0.0) return finish(x_star, ImpactState::Sticking);
    const Vec2 x = solve_sliding(r, x_star, out.iterations);
    return finish(x, ImpactState::Sliding);
}

template <class Op>
SolverResult maxdiss_method(Op& op, const SolverSettings& settings) {
    SolverResult result;
    const double tol = settings.tolerance;
    if (op.size() == 0) {
        op.finish(tol, false, result);
        result.residual = 0.0;
        result.converged = true;
        return result;
    }
    op.warm_start();  // ν = ν* + M⁻¹ D γ⁰
    double change = 0.0;
    const bool stopped_early = iterate(op, settings, result, [&](IterationContext&) {
        change = exact_block_sweep(op, grain::kExactBlocks, [](const Mat3& W, const Vec3& free, double mu, const Vec3&) {
            return solve_max_dissipation_contact(W, free, mu).gamma;
        });
        return IterationStep{change, change <= tol};
    });
    op.finish(tol, !stopped_early, result);  // rebuilds ν⁺ from ν* and γ
    result.residual = change;  // the fixed-point residual, not the CCP one (see top)
    result.converged = stopped_early;
    return result;
}

template SolverResult maxdiss_method(BodyOperator&, const SolverSettings&);
template SolverResult maxdiss_method(AssembledOperator&, const SolverSettings&);

}  // namespace talus

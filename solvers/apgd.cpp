// Accelerated projected gradient descent (APGD) on the CCP's quadratic program
//   min f(γ) = ½ γᵀ N γ + pᵀ γ  s.t. γ_i ∈ K_i,   N = Dᵀ M⁻¹ D,  p = Dᵀ ν* + rhs
// after Mazhar, Heyn, Tasora and Negrut 2015 (Nesterov's method with adaptive step and
// restart), matrix-free, as DESIGN §6 lays out:
//  - N z is two passes over the contacts: M⁻¹ D z accumulated on per-body scratch colour by
//    colour (no two contacts of a colour share a body: parallel without races, and each
//    body sums in the fixed colour order), then D_iᵀ of it per contact; the gradient at γ
//    is N γ + p, i.e. the contact velocities d(γ).
//  - L₀ = ‖N(γ₀ − γ̂₀)‖/‖γ₀ − γ̂₀‖ with γ̂₀ = γ₀ + 1; step t = 1/L.
//  - x_{k+1} = Π_K(y_k − t ∇f(y_k)); backtrack L ← 2L while
//    ½ (x−y)ᵀ N (x−y) > ½ L ‖x − y‖² (the sufficient-decrease test, written with the
//    products we keep: (x−y)ᵀ(Nx − Ny) ≤ L ‖x−y‖²); after acceptance L ← 0.9 L.
//  - θ_{k+1} = (−θ_k² + θ_k √(θ_k² + 4))/2, β = θ_k(1 − θ_k)/(θ_k² + θ_{k+1}),
//    y_{k+1} = x_{k+1} + β (x_{k+1} − x_k), and N y_{k+1} = (1+β) N x_{k+1} − β N x_k, so
//    an accepted iteration costs one product by N.
//  - restart (θ = 1, y = x) when ∇f(y_k)ᵀ(x_{k+1} − x_k) > 0;
//  - the DESIGN §6 residual of every iterate comes from N x + p (no extra pass), and the
//    iterate with the lowest residual is returned, not the last.
// Every sum is a fixed-order reduction, so the result does not depend on the thread count.
#include <cmath>
#include <limits>

#include "solvers/colour_sweep.hpp"
#include "solvers/cone_projection.hpp"
#include "solvers/contact_ops.hpp"
#include "engine/core/parallel.hpp"
#include "solvers/solver.hpp"

namespace talus {
namespace {

constexpr std::size_t kGrain = 2048;  // contacts per task of the colour scatter (fixed)

/// out = N z, using the workspace's per-body scratch (its inverse masses loaded).
void apply_n(const AssembledBatch& c, SolverWorkspace& work, const std::vector<Vec3>& z,
             std::vector<Vec3>& out) {
    SolverBodies& s = work.scratch;
    parallel_each(s.size(), [&](std::size_t b) {
        s.body[b].v = Vec3::Zero();
        s.body[b].w = Vec3::Zero();
    });
    sweep_colours(c, kGrain, 0.0, [&](std::size_t lo, std::size_t hi, bool) {
        for (std::size_t i = lo; i < hi; ++i) apply_impulse(c, contact_frame(c, i), s, i, z[i]);
        return 0.0;
    });
    out.resize(c.size());
    parallel_each(c.size(), [&](std::size_t i) {
        out[i] = jacobian_velocity(c, contact_frame(c, i), s, i);
    });
}

}  // namespace

SolverResult solve_apgd(AssembledBatch& batch, BodyStore& bodies, const SolverSettings& settings,
                        SolverWorkspace& work) {
    const detail::SolveScope scope(batch, bodies, work);
    SolverResult result;
    const std::size_t n = batch.size();
    const double tol = settings.tolerance;
    std::vector<double> partial;
    std::vector<Vec3>& p = work.c0;    // Dᵀ ν* + rhs
    std::vector<Vec3>& nx = work.c1;   // N x_k
    std::vector<Vec3>& y = work.c2;    // y_k
    std::vector<Vec3>& ny = work.c3;   // N y_k
    std::vector<Vec3>& xn = work.c4;   // x_{k+1}
    std::vector<Vec3>& nxn = work.c5;  // N x_{k+1}
    std::vector<Vec3>& best = work.c6; // lowest-residual iterate
    std::vector<Vec3>& x = batch.gamma;
    bool stopped_early = n == 0;

    if (n > 0) {
        work.scratch.body = work.bodies.body;  // inverse masses; velocities are overwritten
        work.scratch.inv_inertia_world = work.bodies.inv_inertia_world;
        p.resize(n);
        xn.resize(n);
        parallel_each(n, [&](std::size_t i) { p[i] = contact_velocity(batch, work.bodies, i); });
        apply_n(batch, work, x, nx);

        auto residual_of = [&](const std::vector<Vec3>& g, const std::vector<Vec3>& ng) {
            return parallel_max(n, [&](std::size_t i) {
                const Vec3 d = ng[i] + p[i];
                const double eta = batch.eta[i];
                return (g[i] - project_friction_cone(g[i] - eta * d, batch.mu[i])).norm() / eta;
            });
        };
        double r_best = residual_of(x, nx);
        best = x;
        if (r_best <= tol) stopped_early = true;

        // L₀ from the product with γ₀ − γ̂₀ = −1 (a vector of ones): ‖N 1‖ / ‖1‖.
        y.assign(n, Vec3::Ones());
        apply_n(batch, work, y, ny);
        double L = std::sqrt(deterministic_sum(n, partial, [&](std::size_t i) { return ny[i].squaredNorm(); }) /
                             (3.0 * double(n)));
        if (!(L > 0.0)) L = 1.0;
        y = x;
        ny = nx;
        double theta = 1.0;

        for (int it = 1; it <= settings.max_iterations && !stopped_early; ++it) {
            // gradient at y is ny + p; projected step with backtracking on L
            double dist2 = 0.0;
            for (int bt = 0; bt < 60; ++bt) {
                const double t = 1.0 / L;
                parallel_each(n, [&](std::size_t i) {
                    xn[i] = project_friction_cone(y[i] - t * (ny[i] + p[i]), batch.mu[i]);
                });
                apply_n(batch, work, xn, nxn);
                dist2 = deterministic_sum(n, partial, [&](std::size_t i) {
                    return (xn[i] - y[i]).squaredNorm();
                });
                const double curv = deterministic_sum(n, partial, [&](std::size_t i) {
                    return (xn[i] - y[i]).dot(nxn[i] - ny[i]);
                });
                if (curv <= L * dist2 * (1.0 + 1e-12)) break;
                L *= 2.0;
            }
            const double theta_next = 0.5 * (-theta * theta + theta * std::sqrt(theta * theta + 4.0));
            const double beta = theta * (1.0 - theta) / (theta * theta + theta_next);
            const double restart_test = deterministic_sum(n, partial, [&](std::size_t i) {
                return (ny[i] + p[i]).dot(xn[i] - x[i]);
            });

            const double r = residual_of(xn, nxn);
            result.iterations = it;
            if (settings.record_history) result.history.push_back({it, scope.seconds(), r});
            if (r < r_best) {
                r_best = r;
                best = xn;
            }
            if (r <= tol) {
                stopped_early = true;
                break;
            }
            if (restart_test > 0.0) {  // momentum points uphill: restart from x_{k+1}
                y = xn;
                ny = nxn;
                theta = 1.0;
            } else {
                parallel_each(n, [&](std::size_t i) {
                    y[i] = xn[i] + beta * (xn[i] - x[i]);
                    ny[i] = (1.0 + beta) * nxn[i] - beta * nx[i];
                });
                theta = theta_next;
            }
            x.swap(xn);
            nx.swap(nxn);
            L *= 0.9;
            detail::note_iteration(it, settings.max_iterations, x, work);
        }
        // the growth test looks at the last iterate, where an unbounded ray shows
        if (!stopped_early) {
            detail::finish_solve(batch, nullptr, work);
            result.unbounded_contacts = detail::find_unbounded(batch, bodies, work, tol);
        }
        x = best;
    }
    scope.finish(batch, bodies, tol, false, result);
    return result;
}

}  // namespace talus

// Exact Coulomb friction on bodies (issue 8; settings.friction = "coulomb"), two ways:
//
// 1. "nsgs": non-linear block Gauss–Seidel. Per contact, d_i from the current velocities,
//    W_ii = D_iᵀ M⁻¹ D_i, q_i = d_i − W_ii γ_i (the velocity without its own impulse), γ_i ←
//    the exact solution of the contact's Coulomb problem (solvers/coulomb_local.hpp), the
//    change applied at once to both bodies. Same colouring as PGS, so the same
//    thread-independence. No relaxation: the local solve is exact.
// 2. "pgs", "pj", "apgd": De Saxcé's fixed point over CCP solves. The CCP solved with
//    c_n + s_i in place of c_n, s_i = μ_i ‖c_t,i‖ frozen at the last solution, has the
//    Coulomb solution as its fixed point: there ĉ_n = c_n + μ‖c_t‖. Between solves the
//    stabilisation term of rhs is shifted (and restored at the end), the store's ν* put
//    back, and each solve warm-starts from the last γ. Each solve goes to a tenth of the
//    current Coulomb residual (no sharper than tol, no looser than 100 tol).
//
// The residual both report, and stop on, is docs/design.md §6's with ĉ for c:
//   r = max_i ‖γ_i − Π_K(γ_i − η_i ĉ_i)‖ / η_i  [m/s],   ĉ_i = c_i + [μ_i‖c_t,i‖, 0, 0].
#include <algorithm>
#include <cmath>

#include "core/parallel.hpp"
#include "solvers/block_sweep.hpp"
#include "solvers/cone_projection.hpp"
#include "solvers/contact_ops.hpp"
#include "solvers/coulomb_local.hpp"
#include "solvers/solver.hpp"

namespace talus {
namespace {

double nsgs_sweep(AssembledBatch& batch, SolverBodies& bodies) {
    return exact_block_sweep(batch, bodies, [](const Mat3& W, const Vec3& q, double mu, const Vec3& g0) {
        return solve_coulomb_contact(W, q, mu, g0).r;
    });
}

}  // namespace

double coulomb_residual(const AssembledBatch& c, const SolverBodies& sb) {
    return parallel_max(c.size(), [&](std::size_t i) {
        const Vec3 d = contact_velocity(c, sb, i);
        const Vec3& g = c.gamma[i];
        const Vec3 dh(d[0] + c.mu[i] * std::hypot(d[1], d[2]), d[1], d[2]);
        return (g - project_friction_cone(g - c.eta[i] * dh, c.mu[i])).norm() / c.eta[i];
    });
}

SolverResult solve_nsgs(AssembledBatch& batch, BodyStore& bodies, const SolverSettings& settings,
                        SolverWorkspace& work) {
    const detail::SolveScope scope(batch, bodies, work);
    SolverResult result;
    const double tol = settings.tolerance;
    if (batch.size() == 0) {
        scope.finish(batch, bodies, tol, false, result);
        return result;
    }
    solver_velocities(batch, work.body_contacts, batch.gamma, work.bodies);  // ν* + M⁻¹ D γ⁰
    bool stopped_early = false;
    for (int it = 1; it <= settings.max_iterations; ++it) {
        const double change = nsgs_sweep(batch, work.bodies);
        result.iterations = it;
        detail::note_iteration(it, settings.max_iterations, batch.gamma, work);
        if (settings.record_history)
            result.history.push_back({it, scope.seconds(), coulomb_residual(batch, work.bodies)});
        // a sweep that changed nothing more than tol is the moment to look at the residual
        if (change <= tol && coulomb_residual(batch, work.bodies) <= tol) {
            stopped_early = true;
            break;
        }
    }
    scope.finish(batch, bodies, tol, !stopped_early, result);  // rebuilds ν⁺ from ν* and γ
    result.residual = coulomb_residual(batch, work.bodies);
    result.converged = result.residual <= tol;
    return result;
}

SolverResult solve_coulomb_fixed_point(AssembledBatch& batch, BodyStore& bodies,
                                       const SolverSettings& settings, SolverWorkspace& work) {
    const auto start = std::chrono::steady_clock::now();
    const std::size_t n = batch.size();
    SolverSettings inner = settings;
    inner.friction = FrictionLaw::CCP;
    const double tol = settings.tolerance;
    // ν* of the store, put back before every solve (a solve leaves ν⁺ there)
    const std::vector<Vec3> v_free = bodies.velocity, w_free = bodies.angular_velocity;
    std::vector<double> shift(n, 0.0);
    SolverResult total;
    SolverResult last;
    double residual = 0.0;
    bool first = true;
    while (true) {
        inner.max_iterations = settings.max_iterations - total.iterations;
        if (inner.max_iterations <= 0) break;
        inner.tolerance = first ? 10.0 * tol : std::clamp(0.1 * residual, tol, 100.0 * tol);
        if (!first) {
            bodies.velocity = v_free;
            bodies.angular_velocity = w_free;
        }
        for (std::size_t i = 0; i < n; ++i) batch.rhs[i][0] += shift[i];
        last = solve_ccp(batch, bodies, inner, work);
        for (std::size_t i = 0; i < n; ++i) batch.rhs[i][0] -= shift[i];
        total.iterations += std::max(last.iterations, 1);
        total.gathers += last.gathers;
        for (IterationRecord rec : last.history) {
            rec.iteration += total.iterations - std::max(last.iterations, 1);
            total.history.push_back(rec);
        }
        if (!last.refused.empty() || !last.unbounded_contacts.empty()) break;
        first = false;
        residual = coulomb_residual(batch, work.bodies);  // work.bodies hold ν⁺ of this γ
        if (residual <= tol) break;
        ++total.friction_updates;
        for (std::size_t i = 0; i < n; ++i) {
            const Vec3 d = contact_velocity(batch, work.bodies, i);
            shift[i] = batch.mu[i] * std::hypot(d[1], d[2]);
        }
    }
    total.refused = last.refused;
    total.unbounded_contacts = last.unbounded_contacts;
    total.residual = n == 0 ? last.residual : residual;
    total.converged = total.residual <= tol && total.refused.empty();
    total.wall_time = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return total;
}

}  // namespace talus

// Projected Gauss–Seidel on the cone complementarity problem (DESIGN §4–§6; seed 001).
//
// Matrix-free block sweep: for each contact in order, d_i from the current velocities,
// γ_i ← Π_K(γ_i − ω η_i d_i), and the change applied at once to both bodies, so later
// contacts of the sweep see it. With η_i = 3/trace(W_ii) the block step decreases the QP
// objective while ω η_i λ_max(W_ii) < 2 (ω ≤ 1.5 for spheres). Each sweep also records
// each contact's residual term at the moment it is visited (no extra memory traffic); once
// that drops below the tolerance, the residual of DESIGN §6 (every contact at the same ν)
// is measured and decides. The solver stops at r ≤ tolerance or at the iteration cap.
// At exit ν⁺ is rebuilt from ν* and γ in contact order (no accumulated drift), and the
// residual reported is the one at the rebuilt velocities. The sweep is serial here; the
// coloured parallel sweep is a separate issue.
#include "solvers/pgs.hpp"

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_reduce.h>

#include <algorithm>
#include <chrono>

#include "solvers/cone_projection.hpp"
#include "solvers/contact_ops.hpp"

namespace talus {

double ccp_residual(const AssembledBatch& c, const BodyStore& bodies) {
    return tbb::parallel_reduce(
        tbb::blocked_range<std::size_t>(0, c.size(), 1024), 0.0,
        [&](const tbb::blocked_range<std::size_t>& r, double m) {
            for (std::size_t i = r.begin(); i != r.end(); ++i) {
                const Vec3 d = contact_velocity(c, bodies, i);
                const Vec3 g = c.gamma[i];
                const Vec3 diff = g - project_friction_cone(g - c.eta[i] * d, c.mu[i]);
                m = std::max(m, diff.norm() / c.eta[i]);
            }
            return m;
        },
        [](double x, double y) { return std::max(x, y); });
}

namespace {

void rebuild_velocities(const AssembledBatch& c, BodyStore& bodies, const SolverWorkspace& work) {
    std::copy(work.v_free.begin(), work.v_free.end(), bodies.velocity.begin());
    std::copy(work.w_free.begin(), work.w_free.end(), bodies.angular_velocity.begin());
    for (std::size_t i = 0; i < c.size(); ++i) apply_impulse(c, bodies, i, c.gamma[i]);
}

}  // namespace

SolverResult solve_pgs(AssembledBatch& batch, BodyStore& bodies, const SolverSettings& settings,
                       SolverWorkspace& work) {
    const auto start = std::chrono::steady_clock::now();
    SolverResult result;
    work.v_free.assign(bodies.velocity.begin(), bodies.velocity.end());
    work.w_free.assign(bodies.angular_velocity.begin(), bodies.angular_velocity.end());

    const std::size_t n = batch.size();
    if (n > 0) {
        for (std::size_t i = 0; i < n; ++i) apply_impulse(batch, bodies, i, batch.gamma[i]);
        const double omega = settings.relaxation;
        for (int it = 0; it < settings.max_iterations; ++it) {
            // r_sweep: the residual term of each contact at the moment it is visited. Free to
            // compute, and zero exactly at a solution; when it drops below the tolerance,
            // the true residual (all contacts at the same ν) decides whether to stop.
            double r2_sweep = 0.0;  // max of (‖γ_i − Π(γ_i − η_i d_i)‖ / η_i)², no sqrt inside
            for (std::size_t i = 0; i < n; ++i) {
                const Vec3 d = contact_velocity(batch, bodies, i);
                const Vec3 g0 = batch.gamma[i];
                const double eta = batch.eta[i];
                const Vec3 g = project_friction_cone(g0 - omega * eta * d, batch.mu[i]);
                const Vec3 full = omega == 1.0 ? g : project_friction_cone(g0 - eta * d, batch.mu[i]);
                r2_sweep = std::max(r2_sweep, (g0 - full).squaredNorm() / (eta * eta));
                batch.gamma[i] = g;
                apply_impulse(batch, bodies, i, g - g0);
            }
            result.iterations = it + 1;
            const double tol = settings.tolerance;
            if (r2_sweep <= tol * tol && ccp_residual(batch, bodies) <= tol)
                break;
        }
        rebuild_velocities(batch, bodies, work);
        result.residual = ccp_residual(batch, bodies);
        result.converged = result.residual <= settings.tolerance;
    } else {
        result.converged = true;
    }
    result.wall_time =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
}

}  // namespace talus

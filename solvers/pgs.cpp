// Projected Gauss–Seidel on the cone complementarity problem (DESIGN §4–§6; seed 001),
// parallel by contact colouring.
//
// Matrix-free block sweep: for each contact, d_i from the current velocities,
// γ_i ← Π_K(γ_i − ω η_i d_i), and the change applied at once to both bodies, so later
// contacts see it. With η_i = 3/trace(W_ii) the block step decreases the QP objective
// while ω η_i λ_max(W_ii) < 2 (ω ≤ 1.5 for spheres). Contacts come grouped by colour
// (solvers/colouring.cpp): within a colour no two share a dynamic body, so a colour is a
// parallel loop without races, and since each update reads and writes only its own two
// bodies, the result is the same for any number of threads. Colours run in a fixed order;
// an overflow colour, whose contacts may share bodies, runs serially.
// Each sweep also records each contact's residual term at the moment it is visited (free:
// no extra memory traffic); once that drops below the tolerance, the residual of DESIGN §6
// (every contact at the same ν) decides. At exit ν⁺ is rebuilt from ν* and γ.
// Joint rows (solvers/bilateral.hpp), when there are any, are swept after the colours of
// each sweep, serially in their fixed order: λ_j ← λ_j − ω η_j (b_j + G_jᵀ ν), free cone.
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_reduce.h>

#include <algorithm>

#include "solvers/cone_projection.hpp"
#include "solvers/contact_ops.hpp"
#include "solvers/solver.hpp"

namespace talus {
namespace {

constexpr std::size_t kGrain = 2048;  // contacts per task within a colour (fixed: determinism)

/// One block update; returns how far the contact's residual term before it exceeds the
/// tolerance, ‖γ − Π(γ − η d)‖² − tol² η² (≤ 0: within tolerance; no division needed).
TALUS_HOT double pgs_update(AssembledBatch& batch, SolverBodies& sb, std::size_t i,
                            double omega, double tol2) {
    const ContactFrame f = contact_frame(batch, i);
    const Vec3 d = contact_velocity(batch, f, sb, i);
    const Vec3 g0 = batch.gamma[i];
    const double eta = batch.eta[i];
    const Vec3 g = project_friction_cone(g0 - omega * eta * d, batch.mu[i]);
    const Vec3 full = omega == 1.0 ? g : project_friction_cone(g0 - eta * d, batch.mu[i]);
    batch.gamma[i] = g;
    apply_impulse(batch, f, sb, i, Vec3(g[0] - g0[0], g[1] - g0[1], g[2] - g0[2]));
    return (g0 - full).squaredNorm() - tol2 * eta * eta;
}

double sweep_range(AssembledBatch& batch, SolverBodies& bodies, std::size_t lo, std::size_t hi,
                   double omega, double tol2) {
    // The body lines are the latency: a colour spreads over the whole pile, so they come
    // from L3, not L2. Ask for them kPrefetch contacts ahead (a hint: no effect on results).
    constexpr std::size_t kPrefetch = 8;
    double excess = -1.0;
    for (std::size_t i = lo; i < hi; ++i) {
        if (i + kPrefetch < hi) {
            const int32_t a = batch.a[i + kPrefetch], b = batch.b[i + kPrefetch];
            if (a != kNoBody) __builtin_prefetch(&bodies.body[std::size_t(a)], 1);
            if (b != kNoBody) __builtin_prefetch(&bodies.body[std::size_t(b)], 1);
        }
        excess = std::max(excess, pgs_update(batch, bodies, i, omega, tol2));
    }
    return excess;
}

/// One sweep over all colours; returns the largest excess of pgs_update (≤ 0: every
/// contact was within tolerance when visited).
double sweep(AssembledBatch& batch, SolverBodies& bodies, double omega, double tol2) {
    double excess = -1.0;
    const std::size_t colours = batch.colour_start.size() - 1;
    for (std::size_t k = 0; k < colours; ++k) {
        const std::size_t lo = batch.colour_start[k], hi = batch.colour_start[k + 1];
        const bool serial = (batch.overflow_colour && k + 1 == colours) || hi - lo <= kGrain;
        if (serial) {
            excess = std::max(excess, sweep_range(batch, bodies, lo, hi, omega, tol2));
            continue;
        }
        excess = std::max(excess, tbb::parallel_reduce(
            tbb::blocked_range<std::size_t>(lo, hi, kGrain), -1.0,
            [&](const tbb::blocked_range<std::size_t>& r, double m) {
                return std::max(m, sweep_range(batch, bodies, r.begin(), r.end(), omega, tol2));
            },
            [](double x, double y) { return std::max(x, y); }));
    }
    return excess;
}

}  // namespace

SolverResult solve_pgs(AssembledBatch& batch, BodyStore& bodies, const SolverSettings& settings,
                       SolverWorkspace& work) {
    const detail::SolveScope scope(batch, bodies, work);
    SolverResult result;
    BilateralBatch& rows = batch.bilateral;
    if (batch.size() == 0 && rows.empty()) {
        scope.finish(batch, bodies, settings.tolerance, false, result);
        return result;
    }
    // ν = ν* + M⁻¹ D γ⁰ (warm start)
    SolverBodies& sb = work.bodies;
    solver_velocities(batch, work.body_contacts, batch.gamma, sb);
    if (!rows.empty()) add_row_impulses(rows, rows.lambda, sb);  // + M⁻¹ G λ⁰
    const double omega = settings.effective_relaxation();
    const double tol = settings.tolerance;
    bool stopped_early = false;
    double history_cost = 0.0;
    for (int it = 1; it <= settings.max_iterations; ++it) {
        double excess = batch.size() > 0 ? sweep(batch, sb, omega, tol * tol) : -1.0;
        if (!rows.empty()) excess = std::max(excess, sweep_rows(rows, sb, omega, tol * tol));
        result.iterations = it;
        detail::note_iteration(it, settings.max_iterations, batch.gamma, work);
        if (settings.record_history) {  // the extra residual pass is not the solver's time
            const double t = scope.seconds();
            result.history.push_back({it, t - history_cost, ccp_residual(batch, sb)});
            history_cost += scope.seconds() - t;
        }
        if (excess <= 0.0 && ccp_residual(batch, sb) <= tol) {
            stopped_early = true;
            break;
        }
    }
    scope.finish(batch, bodies, tol, !stopped_early, result);
    return result;
}

}  // namespace talus

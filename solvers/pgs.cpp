// Projected Gauss–Seidel on the cone complementarity problem (docs/design.md §4–§6; seed 001),
// parallel by contact colouring.
//
// Matrix-free block sweep: for each contact, d_i from the current velocities,
// γ_i ← Π_K(γ_i − ω η_i d_i), and the change applied at once to both bodies, so later
// contacts see it. With η_i = 3/trace(W_ii) the block step decreases the QP objective
// while ω η_i λ_max(W_ii) < 2 (ω ≤ 1.5 for spheres). Contacts come grouped by colour
// (solvers/colouring.cpp): within a colour no two share a dynamic body, so a colour is a
// parallel loop without races, and since each update reads and writes only its own two
// bodies, the result is the same for any number of threads. Colours run in a fixed order;
// an overflow colour, whose contacts may share bodies, runs serially. The update itself is
// in solvers/contact_kernels.cpp (scalar, and four contacts at a time with AVX; same bits).
// Each sweep also records each contact's residual term at the moment it is visited (free:
// no extra memory traffic); once that drops below the tolerance, the residual of docs/design.md §6
// (every contact at the same ν) decides. At exit ν⁺ is rebuilt from ν* and γ.
// Joint rows (solvers/bilateral.hpp), when there are any, are swept after the colours of
// each sweep, serially in their fixed order: λ_j ← λ_j − ω η_j (b_j + G_jᵀ ν), free cone.
// Rolling/spinning torque entries (solvers/rolling.hpp), when there are any, are swept
// right after the contacts of each range: they touch the same two bodies as their contact,
// so a colour stays race-free. Without them the range runs the contact kernel alone.
#include <algorithm>

#include "solvers/colour_sweep.hpp"
#include "solvers/contact_ops.hpp"
#include "solvers/contact_kernels.hpp"
#include "solvers/solver.hpp"

namespace talus {
namespace {

constexpr std::size_t kGrain = 2048;  // contacts per task within a colour (fixed: determinism)

/// One sweep over all colours; returns the largest excess of a contact's residual term
/// over the tolerance when visited (≤ 0: every contact was within it).
double sweep(AssembledBatch& batch, SolverBodies& bodies, double omega, double tol2) {
    return sweep_colours(batch, kGrain, -1.0, [&](std::size_t lo, std::size_t hi, bool independent) {
        const double e = pgs_range(batch, bodies, lo, hi, omega, tol2, independent);
        if (batch.rolling.empty()) return e;
        return std::max(e, pgs_rolling_contacts(batch, bodies, lo, hi, omega, tol2));
    });
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
    if (!batch.rolling.empty()) add_rolling_impulses(batch, sb);  // + torques of γ_r⁰, γ_s⁰
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

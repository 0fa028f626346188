#pragma once
/// The one iteration loop of the iterative solvers (PGS, PJ, APGD, nsgs, maxdiss), whatever
/// contact operator they run on (solvers/contact_operator.hpp): it counts the iterations up
/// to the cap, lets the operator take the growth snapshots of the over-constrained check
/// (docs/design.md §4), records the convergence history when asked, and stops when an
/// iteration says it is done. The method supplies one iteration; the loop is written once.
#include <algorithm>
#include <limits>

#include "core/settings.hpp"
#include "solvers/solver_result.hpp"

namespace talus {

/// What one iteration tells the loop.
struct IterationStep {
    /// The residual after the iteration, for the history; NaN when not computed (the
    /// history is off, or the method only knows it at some iterations).
    double residual = std::numeric_limits<double>::quiet_NaN();
    bool done = false;  ///< converged: stop after this iteration
};

/// What the loop tells one iteration.
struct IterationContext {
    int k;                      ///< 1-based index of this iteration
    int cap;                    ///< settings.max_iterations
    bool history;               ///< settings.record_history: report the residual
    double excluded = 0.0;      ///< seconds this iteration spent on the history alone [s]
};

/// Run iterations k = 1 … settings.max_iterations of `iteration(IterationContext&) →
/// IterationStep` on `op`; returns true when an iteration said it was done (stopped
/// before the cap). result.iterations counts the iterations run; with
/// settings.record_history, result.history gets one record per iteration, its time
/// without what the iterations spent on the history itself.
template <class Op, class Iteration>
bool iterate(Op& op, const SolverSettings& settings, SolverResult& result, Iteration&& iteration) {
    double excluded = 0.0;
    const int cap = settings.max_iterations;
    for (int k = 1; k <= cap; ++k) {
        IterationContext ctx{k, cap, settings.record_history};
        const IterationStep step = iteration(ctx);
        excluded += ctx.excluded;
        result.iterations = k;
        if (!settings.from_rest) op.note_iteration(k, cap);  // the over-constrained check's snapshots
        if (settings.record_history) result.history.push_back({k, op.seconds() - excluded, step.residual});
        if (step.done) return true;
    }
    return false;
}

/// Cluster sweeps (bgs, settings.cluster_sweeps): tried after sweep kClusterFrom, while the
/// solve has not converged. From the tenth sweep a step's contacts above the tolerance are
/// mostly the frustrated clusters these are for. After a cluster sweep the next sweep tries
/// again (the cluster's neighbours are the next to rise: trying only every third sweep let a
/// step of the settled twin take 390 sweeps, not 71); after a scan that found too many, or
/// a cluster whose local sweeps were taken back (they stalled), the wait doubles, up to
/// kClusterWait sweeps, so that a solve far from converged, or stuck on one cluster, does
/// not pay a scan or a sweep's work of local sweeps each sweep.
inline constexpr int kClusterFrom = 10;
inline constexpr int kClusterWait = 8;

/// A Gauss–Seidel method over its sweep (pgs, bgs): the warm start, then
/// `sweep(omega, tol²)` (returns the largest residual term's excess over the tolerance when
/// visited, ≤ 0 when all were within it) until that and the §6 residual say done, or the cap.
/// With `clusters` (bgs under settings.cluster_sweeps) and an operator that has them, the
/// cluster sweeps run between sweeps (solvers/cluster_sweeps.cpp).
template <class Op, class Sweep>
SolverResult sweep_method(Op& op, const SolverSettings& settings, Sweep&& sweep, bool clusters = false) {
    SolverResult result;
    const double tol = settings.tolerance;
    if (op.empty()) {
        op.finish(tol, false, result);
        return result;
    }
    if (!settings.from_rest) op.warm_start();  // (from rest: ν⁰ = ν* = 0, as loaded)
    const double omega = settings.effective_relaxation();
    // From sweep kRelaxedAfter + 1 on, settings.relaxed_tolerance also stops the solve
    // (SolverSettings::weight_tolerance; docs/design.md §6).
    const double relaxed = std::max(tol, settings.relaxed_tolerance);
    double stop_tol = tol;
    int next_cluster = kClusterFrom, cluster_wait = 1;  // the sweep that next tries them, the wait
    const bool stopped_early = iterate(op, settings, result, [&](IterationContext& ctx) {
        IterationStep step;
        if (ctx.k > SolverSettings::kRelaxedAfter) stop_tol = relaxed;
        const double excess = sweep(omega, stop_tol * stop_tol);
        // After an unconverged sweep. A cluster swept until all its contacts were within
        // the tolerance held every contact above it (the scan's were all), so the residual
        // may stop the solve at once: the next sweep's own check would only come once no
        // contact of that sweep, visited with its neighbours mid-change, is above it.
        bool cluster_settled = false;
        if constexpr (requires { op.cluster_sweeps(stop_tol, omega); })
            if (clusters && excess > 0.0 && ctx.k >= next_cluster) {
                const ClusterOutcome c = op.cluster_sweeps(stop_tol, omega);
                if (c.updates > 0) {
                    ++result.clusters;
                    result.cluster_updates += c.updates;
                }
                cluster_settled = c.settled;
                cluster_wait = c.updates > 0 && !c.taken_back ? 1 : std::min(2 * cluster_wait, kClusterWait);
                next_cluster = ctx.k + cluster_wait;
            }
        if (ctx.history) {  // the extra residual pass is not the solver's time
            const double t = op.seconds();
            step.residual = op.residual();
            ctx.excluded = op.seconds() - t;
        }
        step.done = (excess <= 0.0 || cluster_settled) && op.residual() <= stop_tol;
        return step;
    });
    op.finish(stop_tol, !stopped_early && !settings.from_rest, result);
    return result;
}

}  // namespace talus

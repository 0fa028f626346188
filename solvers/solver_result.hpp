#pragma once
/// What every solver reports (docs/design.md §6).
#include <cstdint>
#include <string>
#include <vector>

namespace talus {

/// One point of a convergence history (benchmarks; SolverSettings::record_history).
struct IterationRecord {
    int iteration;
    double seconds;   ///< since the solve started [s]
    double residual;  ///< docs/design.md §6 residual after this iteration [m/s] (maxdiss: max ‖Δγ_i‖/η_i)
};

/// What one call of bgs's cluster sweeps did (solvers/cluster_sweeps.cpp): the contact steps
/// it took (0: none, no cluster was swept), and whether every contact of the cluster ended
/// within half the tolerance (or the scan found no contact above it).
struct ClusterOutcome {
    uint64_t updates = 0;
    bool settled = false;
    bool taken_back = false;  ///< not settled, its impulses grew while its excess barely fell: undone
};

struct SolverResult {
    int iterations = 0;         ///< iterations performed
    double residual = 0.0;      ///< docs/design.md §6 natural-map residual at exit [m/s]; for
                                ///< maxdiss its fixed-point residual (max ‖Δγ_i‖/η_i per sweep),
                                ///< for lemke the LCP's natural residual in m/s
    bool converged = false;     ///< residual ≤ tolerance before the iteration cap
    double wall_time = 0.0;     ///< seconds in the solver [s]
    /// Contact velocities D_iᵀ ν computed by the iterations: APGD's measure of the work of a
    /// solve, deterministic (idle contacts are not gathered); 0 for the other solvers.
    uint64_t gathers = 0;
    /// Contacts whose impulse grew without bound while the residual stalled (docs/design.md §4):
    /// the signature of an over-constrained problem. Empty when the solve is sound.
    std::vector<uint32_t> unbounded_contacts;
    /// With friction = "coulomb" and a CCP solver: how many times the normal term was shifted
    /// by μ‖c_t‖ between CCP solves (the De Saxcé fixed point); 0 otherwise.
    int friction_updates = 0;
    /// bgs with settings.cluster_sweeps: the cluster sweeps run between its sweeps, and the
    /// contact steps they took (their work, beside iterations × contacts); 0 otherwise.
    int clusters = 0;
    uint64_t cluster_updates = 0;
    std::vector<IterationRecord> history;  ///< filled only when asked for
    /// Non-empty when the solver refused the problem (e.g. "lemke" above its size limit):
    /// the step fails with this message and leaves the state as it was.
    std::string refused;
};

}  // namespace talus

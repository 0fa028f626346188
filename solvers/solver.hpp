#pragma once
/// One interface for every CCP solver (docs/design.md §6): the same assembled batch in, impulses
/// and new velocities out, the same residual reported.
#include <chrono>
#include <span>
#include <vector>

#include "core/body_store.hpp"
#include "core/settings.hpp"
#include "solvers/assemble.hpp"
#include "solvers/body_contacts.hpp"
#include "solvers/solver_bodies.hpp"
#include "solvers/solver_result.hpp"

namespace talus {

/// Buffers kept between steps so the iterations allocate nothing once warmed up.
struct SolverWorkspace {
    SolverBodies bodies;                  ///< what the iterations update (world frame), and ν*
    BodyContacts body_contacts;           ///< body-major view of the batch
    SolverBodies scratch;                 ///< M⁻¹ D z of APGD's products (per body)
    std::vector<Vec3> c0, c1, c2, c3, c4, c5, c6;  ///< per-contact scratch (PJ, APGD)
    std::vector<double> s0;               ///< per-contact scratch (PJ step sizes)
    std::vector<double> gn_quarter;       ///< γ_n at ¼ of the cap (growth test)
    std::vector<Vec3> gamma_half;         ///< γ at ½ of the cap (growth test)
};

/// Solve the batch with settings.type: on entry bodies hold ν* and batch.gamma the warm
/// start γ⁰; on exit batch.gamma holds γ and bodies hold ν⁺ = ν* + M⁻¹ D γ. The solvers
/// iterate on work.bodies (world frame) and touch the store only to load ν* and write ν⁺.
/// With settings.relative_tolerance ε > 0 the solve stops at r ≤ max(tolerance, ε v_c),
/// v_c = closing_speed(batch, bodies) at entry (docs/design.md §6, "The stopping rule").
SolverResult solve_ccp(AssembledBatch& batch, BodyStore& bodies, const SolverSettings& settings,
                       SolverWorkspace& work);

/// The largest speed at which a contact of the batch closes at the bodies' velocities with
/// γ = 0 (−min_i d_n,i; ≤ 0 when none closes) [m/s]: what a solve from ν* must stop.
double closing_speed(const AssembledBatch& c, const BodyStore& bodies);
/// The same from solver bodies already loaded at ν*.
double closing_speed(const AssembledBatch& c, const SolverBodies& sb);

// The iterative methods (PGS, PJ, APGD, maxdiss, nsgs, the De Saxcé fixed point) are
// templates over a contact operator (solvers/methods.hpp); solve_ccp runs them on the bodies.
// The maximum-dissipation model (Preclik & Rüde 2017; docs/design.md §6) is not a CCP: its
// `residual` is its fixed-point residual max_i ‖Δγ_i‖ / η_i over the last sweep [m/s] and
// `converged` means that it reached the tolerance. Under friction = "coulomb" (nsgs, or the
// fixed point over pgs, pj, apgd) `residual` is the Coulomb residual below.

/// Not a CCP solver: the Stewart–Trinkle LCP time-stepper (seed 000 §3.4) with a polyhedral
/// friction cone of settings.friction_directions directions, solved densely by Lemke's method
/// (solvers/lcp_stepper.cpp). Same contract; `iterations` counts Lemke pivots, `residual` is
/// the LCP's natural residual in velocity units [m/s], `converged` means Lemke solved it.
/// Refuses (SolverResult::refused) an LCP of more than kLcpMaxUnknowns unknowns.
SolverResult solve_lcp_stepper(AssembledBatch& batch, BodyStore& bodies,
                               const SolverSettings& settings, SolverWorkspace& work);
/// docs/design.md §6's residual with c_n + μ‖c_t‖ for c_n (zero at a Coulomb solution) [m/s].
double coulomb_residual(const AssembledBatch& c, const SolverBodies& sb);

/// Size limit of the dense "lemke" solver: contacts × (k + 2) unknowns [-]. Its tableau holds
/// three dense n × n matrices (216 MB at the limit) and a solve costs O(n³).
inline constexpr std::size_t kLcpMaxUnknowns = 3000;

namespace detail {
/// What every solver does around its iterations: on construction, start the clock, load
/// the solver bodies at ν*, build the body-major view and reset the growth snapshots;
/// finish() rebuilds ν⁺ from γ into the solver bodies and the store, and fills the
/// result's residual, convergence, over-constrained contacts and wall time.
class SolveScope {
public:
    SolveScope(const AssembledBatch& batch, const BodyStore& bodies, SolverWorkspace& work);
    /// Seconds since the solve started.
    double seconds() const;
    /// With `check_unbounded` (the solve hit its cap), first look for an unbounded ray at
    /// the batch's current γ.
    void finish(const AssembledBatch& batch, BodyStore& bodies, double tolerance,
                bool check_unbounded, SolverResult& result, FrictionLaw law = FrictionLaw::CCP) const;

private:
    std::chrono::steady_clock::time_point start_;
    SolverWorkspace& work_;
};
void begin_solve(const AssembledBatch& batch, const BodyStore& bodies, SolverWorkspace& work);
/// Call after each iteration k (1-based) with the cap; snapshots γ_n at ¼ and ½ of it.
void note_iteration(int k, int cap, const std::vector<Vec3>& gamma, SolverWorkspace& work);
/// ν ← ν* + M⁻¹ D γ from scratch in work.bodies and, given a store holding ν*, there too
/// (ω̄ = ω̄* + J̄⁻¹ Rᵀ T, so a body without contacts keeps its bits).
void rebuild_velocities(const AssembledBatch& batch, BodyStore* store, SolverWorkspace& work);
/// rebuild_velocities, then the docs/design.md §6 residual at ν (of `law`: law_residual).
double finish_solve(const AssembledBatch& batch, BodyStore* store, SolverWorkspace& work,
                    FrictionLaw law = FrictionLaw::CCP);
/// Contacts with unbounded-growth signature after a solve that hit the cap (docs/design.md §4);
/// work.bodies must hold the velocities of the batch's current γ.
std::vector<uint32_t> find_unbounded(const AssembledBatch& batch, const BodyStore& bodies,
                                     const SolverWorkspace& work, double tolerance);
/// find_unbounded's first test alone: the contacts whose normal impulse `gamma` grew over
/// the solve's second quarter (γ_n at ¼ and ½ of the cap: `gn_quarter`, `gamma_half`) and
/// grew at least 1.6 times as much over its second half, by more than the mass of its
/// bodies times `tolerance`. None (the usual case) means find_unbounded reports none.
std::vector<uint32_t> unbounded_candidates(const AssembledBatch& batch, const BodyStore& bodies,
                                           std::span<const Vec3> gamma, std::span<const double> gn_quarter,
                                           std::span<const Vec3> gamma_half, double tolerance);
/// A cluster find_unbounded reports holds a normal impulse above
/// min(kAbsurdCluster × its bodies' momentum, kAbsurdWhole × every body's momentum).
inline constexpr double kAbsurdCluster = 1000.0;
inline constexpr double kAbsurdWhole = 50.0;
/// Whether find_unbounded could report anything, from one part of the problem (a rank's
/// contacts; docs/mpi.md, "The over-constrained check"): some unbounded_candidates contact
/// whose normal impulse passes that bound with the cluster's momentum taken as its own two
/// bodies' (m (‖ν*‖ + ‖rhs‖), a lower bound of any cluster holding it) and every body's as
/// `momentum_floor` (at most the whole problem's Σ m ‖ν*‖). False means find_unbounded on
/// the whole problem reports none. `v_free`: ν* by the batch's body indices.
bool may_be_unbounded(const AssembledBatch& batch, const BodyStore& bodies, std::span<const Vec3> v_free,
                      std::span<const Vec3> gamma, std::span<const double> gn_quarter,
                      std::span<const Vec3> gamma_half, double tolerance, double momentum_floor);
}  // namespace detail

}  // namespace talus

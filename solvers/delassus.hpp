#pragma once
/// Contact problems given by an assembled Delassus operator (core/delassus_problem.hpp),
/// solved by the same solver kinds and settings
/// as a step (SolverSettings in, SolverResult out):
///   u = W r + q,  û = u + [μ_i‖u_T,i‖, 0, 0] per contact,  K* ∋ û ⊥ r ∈ K_μ   ("coulomb"),
/// or without the shift (the CCP of docs/design.md §4, "ccp"). Contacts are blocks of three rows,
/// normal first. Accuracy is the natural map F = r − Π_K(r − û) (ρ = 1), reported as
/// ‖F‖₂ and ‖F‖₂ / (1 + ‖q‖₂); SolverSettings::tolerance applies to the latter.
#include <string>
#include <vector>

#include <Eigen/Core>

#include "core/delassus_problem.hpp"
#include "core/settings.hpp"
#include "solvers/solver_result.hpp"

namespace talus {

struct DelassusAccuracy {
    double error = 0.0;           ///< ‖F‖₂
    double relative_error = 0.0;  ///< ‖F‖₂ / (1 + ‖q‖₂)
    double sum_rn = 0.0;          ///< Σ r_N
};

/// The accuracy of r for the given law (F as above; "ccp" leaves out the shift).
DelassusAccuracy delassus_accuracy(const DelassusProblem& p, const Eigen::VectorXd& r,
                                   FrictionLaw law = FrictionLaw::Coulomb);

/// Solve from the start value in r (resized and zeroed when its size is wrong) with
/// settings.type under settings.friction:
///  - "nsgs": block Gauss–Seidel, each contact's problem solved exactly
///    (solvers/coulomb_local.hpp); Coulomb only;
///  - "pgs": block Gauss–Seidel r_i ← Π_K(r_i − ω η_i û_i), η_i = 3 / trace(W_ii);
///  - "pj": Jacobi r ← Π_K(r − ω R⁻¹ û), R_i the largest absolute row sum of contact i's
///    rows (block Gershgorin: R ⪰ W, so any ω in (0, 2) converges); default ω = 1;
///  - "apgd": Nesterov's accelerated projected gradient with adaptive step and restart;
///  - under "coulomb", pgs, pj and apgd run a fixed point over CCP solves: the normal term of
///    q is shifted by s_i = μ_i ‖u_T,i‖ from the last solution between solves.
///  - "maxdiss": block Gauss–Seidel with the maximum-dissipation model's exact contact
///    solves (solvers/max_dissipation.hpp); stops when a sweep moves r by ≤ tol (1 + ‖q‖);
///  - "lemke": the Stewart–Trinkle LCP with settings.friction_directions directions, solved
///    densely by Lemke's method (at most kLcpMaxUnknowns unknowns, else refused).
///    These two solve their own friction models: `converged` is their own criterion, and
///    `residual` the accuracy against settings.friction, which they do not reach exactly.
/// `iterations` counts sweeps (gradient steps, pivots) over all solves, capped by
/// settings.max_iterations; `residual` is the relative error at exit; `friction_updates`
/// the number of shifts. Serial, hence deterministic.
SolverResult solve_delassus(const DelassusProblem& p, const SolverSettings& settings,
                            Eigen::VectorXd& r);

}  // namespace talus

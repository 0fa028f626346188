#pragma once
/// The iterative methods, each written once over a contact operator
/// (solvers/contact_operator.hpp) and instantiated for BodyOperator (a step) and
/// AssembledOperator (an FCLIB problem) in its own file. The operator's finish() fills the
/// result's residual (docs/design.md §6), convergence and wall time.
#include "core/settings.hpp"
#include "core/solver_table.hpp"
#include "solvers/solver_result.hpp"

namespace talus {

/// Projected Gauss–Seidel (solvers/pgs.cpp).
template <class Op> SolverResult pgs_method(Op& op, const SolverSettings& settings);
/// Projected Jacobi (solvers/pj.cpp).
template <class Op> SolverResult pj_method(Op& op, const SolverSettings& settings);
/// Accelerated projected gradient descent (solvers/apgd.cpp).
template <class Op> SolverResult apgd_method(Op& op, const SolverSettings& settings);
/// Non-linear Gauss–Seidel with exact Coulomb contact solves (solvers/coulomb.cpp); its
/// residual is the Coulomb one.
template <class Op> SolverResult nsgs_method(Op& op, const SolverSettings& settings);
/// Gauss–Seidel of the maximum-dissipation model (solvers/max_dissipation.cpp); its
/// residual is the fixed-point residual max_i ‖Δγ_i‖/η_i of the last sweep.
template <class Op> SolverResult maxdiss_method(Op& op, const SolverSettings& settings);
/// De Saxcé's fixed point over CCP solves of `settings.type` (pgs, pj, apgd) for exact
/// Coulomb friction (solvers/coulomb.cpp); its residual is the Coulomb one.
template <class Op> SolverResult coulomb_fixed_point(Op& op, const SolverSettings& settings);

/// The method settings.type under settings.friction on `op`: the one dispatch of the
/// iterative methods, for a step (solvers/solver.cpp) and an FCLIB problem
/// (solvers/delassus.cpp). Lemke's direct method is not an iterative method over an
/// operator: the callers send "lemke" elsewhere before this.
template <class Op>
SolverResult run_method(Op& op, const SolverSettings& settings) {
    // exact Coulomb friction through CCP solves, for a CCP solver that takes that law (a
    // solver of its own friction model ignores the law; nsgs solves it natively)
    const SolverCapabilities& c = capabilities(settings.type);
    if (settings.friction == FrictionLaw::Coulomb && c.ccp && c.coulomb) return coulomb_fixed_point(op, settings);
    switch (settings.type) {
        case SolverType::PJ: return pj_method(op, settings);
        case SolverType::APGD: return apgd_method(op, settings);
        case SolverType::MaxDiss: return maxdiss_method(op, settings);
        case SolverType::NSGS: return nsgs_method(op, settings);
        case SolverType::PGS:
        case SolverType::Lemke: break;
    }
    return pgs_method(op, settings);
}

}  // namespace talus

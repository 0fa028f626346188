#pragma once
/// The iterative methods, each written once over a contact operator
/// (solvers/contact_operator.hpp) and instantiated for BodyOperator (a step) and
/// AssembledOperator (an FCLIB problem) in its own file. The operator's finish() fills the
/// result's residual (docs/design.md §6), convergence and wall time.
#include "core/settings.hpp"
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

}  // namespace talus

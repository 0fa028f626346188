#pragma once
/// The iterative methods, each written once over a contact operator
/// (solvers/contact_operator.hpp) and instantiated for BodyOperator (a step) and
/// AssembledOperator (an FCLIB problem) in its own file. The operator's finish() fills the
/// result's residual (docs/design.md §6), convergence and wall time.
#include <string>

#include "core/settings.hpp"
#include "core/solver_table.hpp"
#include "solvers/solver_result.hpp"

namespace talus {

/// Each row's method of core/solver_table.hpp, defined and instantiated in solvers/<name>.cpp:
/// pgs_method (pgs.cpp), pj_method (pj.cpp), apgd_method (apgd.cpp), maxdiss_method
/// (max_dissipation.cpp: its residual is the fixed-point residual max_i ‖Δγ_i‖/η_i of the
/// last sweep), nsgs_method (coulomb.cpp: non-linear Gauss–Seidel with exact Coulomb contact
/// solves, its residual the Coulomb one).
#define TALUS_DECLARE_METHOD(type, name, method, ...) \
    template <class Op> SolverResult method(Op& op, const SolverSettings& settings);
TALUS_SOLVER_TABLE(TALUS_DECLARE_METHOD)
#undef TALUS_DECLARE_METHOD

/// The method of a row that is not iterative over an operator (lemke, whose callers send it
/// to its own stepper first): reaching it is refused, never run.
template <class Op>
SolverResult direct_method(Op&, const SolverSettings& settings) {
    SolverResult refused;
    refused.refused = std::string("\"") + solver_name(settings.type) +
                      "\" is a direct method and has no iterative run over a contact operator";
    return refused;
}

/// De Saxcé's fixed point over CCP solves of `settings.type` (pgs, pj, apgd; bgs takes the
/// law natively, solvers/bgs.cpp) for exact
/// Coulomb friction (solvers/coulomb.cpp); its residual is the Coulomb one.
template <class Op> SolverResult coulomb_fixed_point(Op& op, const SolverSettings& settings);

/// The method of settings.type's row, as a CCP solve (friction = "ccp") or its own model.
template <class Op>
SolverResult run_row_method(Op& op, const SolverSettings& settings) {
    switch (settings.type) {
#define TALUS_METHOD_CASE(type, name, method, ...) \
        case SolverType::type: return method(op, settings);
        TALUS_SOLVER_TABLE(TALUS_METHOD_CASE)
#undef TALUS_METHOD_CASE
    }
    return pgs_method(op, settings);  // unreachable: every type has a row
}

/// The method settings.type under settings.friction on `op`: the one dispatch of the
/// iterative methods, for a step (solvers/solver.cpp) and an FCLIB problem
/// (solvers/delassus.cpp). Lemke's direct method is not an iterative method over an
/// operator: the callers send "lemke" elsewhere before this.
template <class Op>
SolverResult run_method(Op& op, const SolverSettings& settings) {
    // exact Coulomb friction through CCP solves, for a CCP solver that takes that law (a
    // solver of its own friction model ignores the law; nsgs solves it natively)
    const SolverCapabilities& c = capabilities(settings.type);
    if (settings.friction == FrictionLaw::Coulomb && c.ccp && c.coulomb && settings.type != SolverType::BGS)
        return coulomb_fixed_point(op, settings);
    return run_row_method(op, settings);
}

}  // namespace talus

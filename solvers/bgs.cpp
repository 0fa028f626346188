// Block Gauss–Seidel on the cone complementarity problem ("bgs"; docs/design.md §6): PGS's
// sweep, colour by colour, with each contact's step taken in a metric that fits its own
// block instead of PGS's one scalar η_i = 3 / trace(W_ii). The rule is bgs_block
// (solvers/contact_operator.hpp); the loop solvers/iteration.hpp.
//
// Why: PGS's scalar step treats the normal and the tangent directions alike, but a sphere's
// W_ii = diag(a, b, b) in the contact frame has b = a + r²/I per body, 3.5 a for a solid
// sphere. So η = 3/(a + 2b) = 3/(8a) moves the normal impulse by 0.375 of the exact normal
// solve per visit, and the normal impulses are what carry a bed's weight down through its
// layers. Here γ_i ← Π_K^P(γ_i − ω P⁻¹ d_i) with P = diag(p_n, p_t, p_t) ⪰ W_ii (W_ii itself
// for spheres; a Gershgorin majorant for clumps and other shapes) and the projection in
// P's norm, which for a circular cone is closed form (the cone scaled by √(p_t/p_n)). With
// P ⪰ W_ii each block step minimises a majorant of the QP objective, so the sweep descends
// for ω ≤ 1, and as block SOR for ω < 2 (P/ω − W_ii/2 ≻ 0). The residual is §6's, the same
// as every solver's, so the methods compare on one measure.
//
// Under friction = "coulomb" the contacts' step is coulomb_block_step instead of the cone's
// projection (normal step, then the tangent clipped to the disc μ γ_n; docs/design.md §6,
// "Exact Coulomb"), and the residual the operator reports is the law's (ĉ for d).
//
// Rolling/spinning torque rows and joint rows take PGS's step (their own scalar η) in the
// same sweep. On bodies the contacts' rule runs four contacts at a time with AVX where it
// can (solvers/contact_kernels.cpp, same bits as the scalar rule), and each solve first
// computes the metric from the blocks (BodyOperator::bgs_prepare).
#include "solvers/assembled_operator.hpp"
#include "solvers/body_operator.hpp"
#include "solvers/iteration.hpp"
#include "solvers/methods.hpp"
#include "solvers/rank_operator.hpp"

namespace talus {

template <class Op>
SolverResult bgs_method(Op& op, const SolverSettings& settings) {
    // Exact Coulomb friction natively (coulomb_block_step): the operator's sweeps and its
    // residual follow the law, in one process and over ranks (RankOperator::bgs_sweep).
    if constexpr (requires { op.set_friction(settings.friction); }) op.set_friction(settings.friction);
    op.bgs_prepare();
    // Unset, the cluster sweeps follow the masses; an operator without them (over ranks,
    // RankOperator) runs none whatever the settings (sweep_method asks for them).
    bool clusters = false;
    if constexpr (requires { op.graded_masses(); })
        clusters = settings.cluster_sweeps ? *settings.cluster_sweeps : op.graded_masses();
    return sweep_method(op, settings, [&](double omega, double tol2) { return op.bgs_sweep(omega, tol2); },
                        clusters);
}

template SolverResult bgs_method(BodyOperator&, const SolverSettings&);
template SolverResult bgs_method(AssembledOperator&, const SolverSettings&);
template SolverResult bgs_method(RankOperator&, const SolverSettings&);

}  // namespace talus

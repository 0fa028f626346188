// Projected Jacobi on the cone complementarity problem (docs/design.md §6), written once over
// the contact operator (solvers/contact_operator.hpp): the rule is pj_block, the passes
// op.pj_probe and op.pj_apply (solvers/body_operator.cpp on bodies).
//
// Every contact computes d_i from the same velocities ν, all impulses are updated at once,
// γ_i ← Π_K(γ_i − ω s_i η_i d_i), and ν = ν* + M⁻¹ D γ is rebuilt body by body. Trivially
// parallel and deterministic (per-contact updates are independent; the rebuild sums each
// body's contacts in a fixed order). All contacts of a body push it at once, so the step
// must shrink with the number of contacts: s_i = 1 / max(k_A, k_B), k the contact count
// of a dynamic body. This bounds the Gershgorin row sums of the scaled Delassus operator
// by about 2 × 21/16 for spheres, so ω < 0.75 converges; the default is ω = 0.5. (A fixed
// ω = 0.3 without s_i, as docs/design.md suggests, diverged on a settling bed where a grain had
// 10+ contacts.) Since all d_i come from one ν, the residual terms computed during the
// update are exactly the docs/design.md §6 residual of the current iterate, at no extra cost.
//
// ν is then moved by M⁻¹ D Δγ contact by contact, colour by colour (as a PGS sweep
// writes): within a colour no two contacts share a dynamic body, so the colour is a
// parallel loop without races, and every body receives its increments in the fixed colour
// order, so the result does not depend on the threads. Both passes stream the contacts in
// order and touch two body lines each; rebuilding ν body by body instead (gathering each
// body's scattered contacts) cost four times as much per iteration.
// Joint rows (solvers/bilateral.hpp) take the same Jacobi step with the free cone,
// λ_j ← λ_j − ω s_j η_j (b_j + G_jᵀ ν), their term |b_j + G_jᵀ ν| in the residual; with
// rows, k counts a body's contacts and rows, so the step bound above still holds. Their
// M⁻¹ G Δλ is applied in the contacts' colours, each joint's rows in one block
// (solvers/colouring.cpp), as the PGS sweep visits them.
// Rolling/spinning torque entries (solvers/rolling.hpp) take the same step with their own
// η_k and set R(γ_n) at the contact's current γ_n, count in k like rows, add their term to
// the residual and are applied serially in entry order after the contacts.
#include "solvers/assembled_operator.hpp"
#include "solvers/body_operator.hpp"
#include "solvers/iteration.hpp"
#include "solvers/methods.hpp"
#include "solvers/rank_operator.hpp"

namespace talus {

template <class Op>
SolverResult pj_method(Op& op, const SolverSettings& settings) {
    SolverResult result;
    const double tol = settings.tolerance;
    bool stopped_early = op.empty();
    if (!stopped_early) {
        op.pj_prepare(settings.effective_relaxation());
        op.warm_start();
        // Each iteration moves to the probed values and probes again: the residual of the
        // iterate comes with the next proposal, from the same velocities.
        double r = op.pj_probe();
        stopped_early = r <= tol;  // the warm start already solves the problem
        if (!stopped_early)
            stopped_early = iterate(op, settings, result, [&](IterationContext&) {
                op.pj_apply();
                r = op.pj_probe();
                return IterationStep{r, r <= tol};
            });
    }
    op.finish(tol, !stopped_early, result);
    return result;
}

template SolverResult pj_method(BodyOperator&, const SolverSettings&);
template SolverResult pj_method(AssembledOperator&, const SolverSettings&);
template SolverResult pj_method(RankOperator&, const SolverSettings&);

}  // namespace talus

// Exact Coulomb friction (issue 8; settings.friction = "coulomb"), two ways, each written
// once over the contact operator (solvers/contact_operator.hpp); a third, bgs's own block
// step (coulomb_block_step), lives with bgs (solvers/bgs.cpp):
//
// 1. "nsgs": non-linear block Gauss–Seidel. Per contact, d_i from the current velocities,
//    W_ii = D_iᵀ M⁻¹ D_i, q_i = d_i − W_ii γ_i (the velocity without its own impulse), γ_i ←
//    the exact solution of the contact's Coulomb problem (solvers/coulomb_local.hpp), the
//    change applied at once to both bodies. Same colouring as PGS, so the same
//    thread-independence. No relaxation: the local solve is exact.
// 2. "pgs", "pj", "apgd": De Saxcé's fixed point over CCP solves. The CCP solved with
//    c_n + s_i in place of c_n, s_i = μ_i ‖c_t,i‖ frozen at the last solution, has the
//    Coulomb solution as its fixed point: there ĉ_n = c_n + μ‖c_t‖. Between solves the
//    stabilisation term of rhs is shifted (and restored at the end), the store's ν* put
//    back, and each solve warm-starts from the last γ. Each solve goes to a tenth of the
//    current Coulomb residual (no sharper than tol, no looser than 100 tol).
//
// The residual both report, and stop on, is docs/design.md §6's with ĉ for c:
//   r = max_i ‖γ_i − Π_K(γ_i − η_i ĉ_i)‖ / η_i  [m/s],   ĉ_i = c_i + [μ_i‖c_t,i‖, 0, 0].
#include <algorithm>
#include <cmath>

#include "core/parallel.hpp"
#include "solvers/assembled_operator.hpp"
#include "solvers/body_operator.hpp"
#include "solvers/iteration.hpp"
#include "solvers/methods.hpp"
#include "solvers/cone_projection.hpp"
#include "solvers/contact_kernels.hpp"
#include "solvers/contact_ops.hpp"
#include "solvers/coulomb_local.hpp"
#include "solvers/solver.hpp"

namespace talus {

double coulomb_residual(const AssembledBatch& c, const SolverBodies& sb) {
    // four contacts at a time where it can, as ccp_residual (bgs under this law asks for it
    // as often as the CCP's solves ask for theirs)
    return parallel_max_ranges(0, c.size(), grain::kContacts, 0.0, [&](std::size_t lo, std::size_t hi) {
        return residual_range(c, sb, lo, hi, true, FrictionLaw::Coulomb);
    });
}

template <class Op>
SolverResult nsgs_method(Op& op, const SolverSettings& settings) {
    SolverResult result;
    const double tol = settings.tolerance;
    if (op.size() == 0) {
        op.finish(tol, false, result);
        return result;
    }
    op.warm_start();  // ν* + M⁻¹ D γ⁰
    const bool stopped_early = iterate(op, settings, result, [&](IterationContext& ctx) {
        const double change = exact_block_sweep(op, grain::kExactBlocks, [](const Mat3& W, const Vec3& q, double mu, const Vec3& g0) {
            return solve_coulomb_contact(W, q, mu, g0).r;
        });
        IterationStep step;
        if (ctx.history) step.residual = op.coulomb_residual();
        // A sweep that changed nothing more than tol is the moment to look at the residual.
        // Where the residual costs little next to a sweep the operator asks for it more often
        // (every residual_check_interval() sweeps): in a hyperstatic pack the impulses may
        // drift along directions that move nothing (W Δγ = 0) with the residual already met.
        const int every = op.residual_check_interval();
        step.done = (change <= tol || (every > 0 && ctx.k % every == 0)) && op.coulomb_residual() <= tol;
        return step;
    });
    op.finish(tol, !stopped_early, result);  // rebuilds ν⁺ from ν* and γ
    result.residual = op.coulomb_residual();
    result.converged = result.residual <= tol;
    return result;
}

template <class Op>
SolverResult coulomb_fixed_point(Op& op, const SolverSettings& settings) {
    const auto start = std::chrono::steady_clock::now();
    const std::size_t n = op.size();
    SolverSettings inner = settings;
    inner.friction = FrictionLaw::CCP;
    const double tol = settings.tolerance;
    op.keep_free_velocities();  // put back before every solve (a solve leaves ν⁺)
    std::vector<double> shift(n, 0.0);
    SolverResult total;
    SolverResult last;
    double residual = 0.0;
    bool first = true;
    while (true) {
        inner.max_iterations = settings.max_iterations - total.iterations;
        if (inner.max_iterations <= 0) break;
        inner.tolerance = first ? 10.0 * tol : std::clamp(0.1 * residual, tol, 100.0 * tol);
        if (!first) op.restart();
        for (std::size_t i = 0; i < n; ++i) op.shift_normal(i, shift[i]);
        last = run_row_method(op, inner);
        for (std::size_t i = 0; i < n; ++i) op.shift_normal(i, -shift[i]);
        total.iterations += std::max(last.iterations, 1);
        total.gathers += last.gathers;
        for (IterationRecord rec : last.history) {
            rec.iteration += total.iterations - std::max(last.iterations, 1);
            total.history.push_back(rec);
        }
        if (!last.refused.empty() || !last.unbounded_contacts.empty()) break;
        first = false;
        residual = op.coulomb_residual();  // at ν⁺ of this γ
        if (residual <= tol) break;
        ++total.friction_updates;
        for (std::size_t i = 0; i < n; ++i) {
            const Vec3 d = op.velocity(i);
            shift[i] = op.mu(i) * std::hypot(d[1], d[2]);
        }
    }
    total.refused = last.refused;
    total.unbounded_contacts = last.unbounded_contacts;
    total.residual = n == 0 ? last.residual : residual;
    total.converged = total.residual <= tol && total.refused.empty();
    total.wall_time = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return total;
}

template SolverResult nsgs_method(BodyOperator&, const SolverSettings&);
template SolverResult nsgs_method(AssembledOperator&, const SolverSettings&);
template SolverResult coulomb_fixed_point(BodyOperator&, const SolverSettings&);
template SolverResult coulomb_fixed_point(AssembledOperator&, const SolverSettings&);

}  // namespace talus

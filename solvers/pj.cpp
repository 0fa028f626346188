// Projected Jacobi on the cone complementarity problem (docs/design.md §6).
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
// M⁻¹ G Δλ is applied serially in row order after the contacts'.
// Rolling/spinning torque entries (solvers/rolling.hpp) take the same step with their own
// η_k and set R(γ_n) at the contact's current γ_n, count in k like rows, add their term to
// the residual and are applied serially in entry order after the contacts.
#include <algorithm>

#include "solvers/colour_sweep.hpp"
#include "solvers/cone_projection.hpp"
#include "solvers/contact_kernels.hpp"
#include "solvers/contact_ops.hpp"
#include "core/parallel.hpp"
#include "solvers/solver.hpp"

namespace talus {
namespace {

constexpr std::size_t kGrain = 2048;  // contacts per task (fixed: determinism)

/// ν += M⁻¹ D (next − γ), then γ ← next, colour by colour.
void apply_step(AssembledBatch& c, std::vector<Vec3>& next, SolverBodies& sb) {
    sweep_colours(c, kGrain, 0.0, [&](std::size_t lo, std::size_t hi, bool independent) {
        pj_apply_range(c, next.data(), sb, lo, hi, independent);
        return 0.0;
    });
}

}  // namespace

SolverResult solve_pj(AssembledBatch& batch, BodyStore& bodies, const SolverSettings& settings,
                      SolverWorkspace& work) {
    const detail::SolveScope scope(batch, bodies, work);
    SolverResult result;
    const std::size_t n = batch.size();
    const double omega = settings.effective_relaxation();
    const double tol = settings.tolerance;
    std::vector<Vec3>& next = work.c0;
    next.resize(n);
    std::vector<double>& step = work.s0;  // ω s_i η_i
    step.resize(n);
    const BodyContacts& bc = work.body_contacts;
    BilateralBatch& rows = batch.bilateral;
    const std::size_t m = rows.size();
    const RollingBatch& rolling = batch.rolling;
    const std::size_t nr = rolling.size();
    const bool extra = m > 0 || nr > 0;
    std::vector<uint32_t> row_count;  // rows and torque entries per body (only with either)
    if (extra) {
        row_count.assign(bodies.size(), 0);
        for (std::size_t j = 0; j < m; ++j) {
            if (rows.a[j] != kNoBody) ++row_count[std::size_t(rows.a[j])];
            if (rows.b[j] != kNoBody) ++row_count[std::size_t(rows.b[j])];
        }
        for (std::size_t k = 0; k < nr; ++k) {
            const std::size_t i = rolling.contact[k];
            if (batch.a[i] != kNoBody) ++row_count[std::size_t(batch.a[i])];
            if (batch.b[i] != kNoBody) ++row_count[std::size_t(batch.b[i])];
        }
    }
    auto count = [&](int32_t body) {
        if (body == kNoBody) return 1u;
        const uint32_t k = bc.start[body + 1] - bc.start[body];
        return extra ? k + row_count[std::size_t(body)] : k;
    };
    std::vector<Vec3> next_r(nr);
    std::vector<double> step_r(nr);
    for (std::size_t k = 0; k < nr; ++k) {
        const std::size_t i = rolling.contact[k];
        step_r[k] = omega * rolling.eta[k] / double(std::max(count(batch.a[i]), count(batch.b[i])));
    }
    std::vector<double> next_l(m), step_l(m);
    for (std::size_t j = 0; j < m; ++j)
        step_l[j] = omega * rows.eta[j] / double(std::max(count(rows.a[j]), count(rows.b[j])));
    parallel_each(n, [&](std::size_t i) {
        step[i] = omega * batch.eta[i] / double(std::max(count(batch.a[i]), count(batch.b[i])));
    });
    bool stopped_early = n == 0 && m == 0;
    SolverBodies& sb = work.bodies;
    solver_velocities(batch, bc, batch.gamma, sb);
    if (nr > 0) add_rolling_impulses(batch, sb);
    if (m > 0) add_row_impulses(rows, rows.lambda, sb);
    for (int it = 1; it <= settings.max_iterations && !stopped_early; ++it) {
        double r = n == 0 ? 0.0 : tbb::parallel_reduce(
            tbb::blocked_range<std::size_t>(0, n, kGrain), 0.0,
            [&](const tbb::blocked_range<std::size_t>& range, double best) {
                return std::max(best, pj_contacts_range(batch, sb, step.data(), next.data(),
                                                        range.begin(), range.end()));
            },
            [](double x, double y) { return std::max(x, y); });
        if (nr > 0) r = std::max(r, pj_rolling_pass(batch, sb, step_r.data(), next_r.data()));
        for (std::size_t j = 0; j < m; ++j) {  // rows: serial, in fixed order
            const double d = row_velocity(rows, sb, j);
            next_l[j] = rows.lambda[j] - step_l[j] * d;
            r = std::max(r, std::abs(d));
        }
        if (settings.record_history) result.history.push_back({it - 1, scope.seconds(), r});
        if (r <= tol) {  // the current iterate already solves the problem
            stopped_early = true;
            break;
        }
        if (n > 0) apply_step(batch, next, sb);
        if (nr > 0) pj_rolling_apply(batch, next_r.data(), sb);
        for (std::size_t j = 0; j < m; ++j) {  // ν += M⁻¹ G Δλ, rows in fixed order
            const double dl = next_l[j] - rows.lambda[j];
            rows.lambda[j] = next_l[j];
            apply_row(rows, sb, j, dl);
        }
        result.iterations = it;
        detail::note_iteration(it, settings.max_iterations, batch.gamma, work);
    }
    scope.finish(batch, bodies, tol, !stopped_early, result);
    return result;
}

}  // namespace talus

// The solver interface (docs/design.md §6) and what every solver shares: the residual, the rebuild
// of ν⁺ from scratch, and the over-constrained check (docs/design.md §4).
//
// Over-constrained problems: when a grain is jammed between opposing walls or squeezed by
// a kinematic body, the QP is unbounded below along a ray of impulses that cancel on the
// bodies (N r = 0, pᵀr < 0), so the impulses grow without limit while the residual stalls.
// After a solve that hits its iteration cap we look for that ray:
//  1. candidate contacts: the normal impulse still grows at least linearly, i.e. the growth
//     over the last half of the iterations is ≥ 1.6 × the growth over the quarter before
//     (a linear ramp gives 2; a converging sequence much less), and that growth is not
//     negligible (more than the tolerance's worth of impulse on the contact's bodies);
//  2. candidates sharing a dynamic body form clusters (union–find); with δ the growth over
//     the last half, a cluster is a ray of N only if δ moves none of its bodies: on each,
//     ‖Σ ±A_k δ_k‖ ≤ 0.05 Σ ‖δ_k‖ over its contacts in the cluster. A chain of impacts
//     that is still decelerating grains (a column landing on a resting one) fails this at
//     its end, where the growth meets a grain it moves; a grain squeezed between two walls
//     passes it.
//  3. the growth must push against approach velocities that persist: δᵀd < −tol Σ‖δ‖ over
//     the cluster (d at the final velocities). Drift along a redundant direction (N r = 0
//     with pᵀr = 0) leaves d ≈ 0 and is harmless.
//  4. and the impulses have become absurd: the cluster's largest normal impulse exceeds
//     min(1000 P_cluster, 50 P_all), with P = Σ m (‖v*‖ + max ‖rhs‖) over the cluster's or
//     all bodies: no bounded problem needs one contact to stop fifty times all the
//     momentum there is (a pile's deepest contact carries its column's weight, n m g h, and
//     a slowly converging solve only approaches that). A jam passes it within a few steps.
// Contacts of the clusters that pass are reported; the run then stops and names them.
#include "solvers/solver.hpp"

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_reduce.h>

#include <algorithm>

#include "solvers/body_operator.hpp"
#include "solvers/cone_projection.hpp"
#include "solvers/contact_kernels.hpp"
#include "solvers/methods.hpp"
#include "solvers/contact_ops.hpp"
#include "core/parallel.hpp"

namespace talus {

/// Why the batch cannot be solved by settings.type under settings.friction ("" if it can),
/// from the capability table (core/solver_table.hpp).
std::string refusal(const AssembledBatch& batch, const SolverSettings& s) {
    const SolverCapabilities& c = capabilities(s.type);
    const std::string quoted = std::string("\"") + c.name + "\"";
    if (!batch.bilateral.empty() && !c.joints)
        return "the " + quoted + " solver does not support joints (bilateral constraints); use " +
               solvers_where([](const SolverCapabilities& x) { return x.joints; });
    if (!batch.rolling.empty() && !c.rolling)
        return "the " + quoted + " solver does not support rolling or spinning resistance; use " +
               solvers_where([](const SolverCapabilities& x) { return x.rolling; }) +
               ", or set rolling_friction and spinning_friction to 0";
    if (!supports_law(s.type, s.friction))
        return s.friction == FrictionLaw::CCP
                   ? "the " + quoted + " solver solves the exact Coulomb law only (friction = \"coulomb\")"
                   : "friction = \"coulomb\" does not apply to the " + quoted + " solver";
    if ((!batch.bilateral.empty() && !supports_joints(s.type, s.friction)) ||
        (!batch.rolling.empty() && !supports_rolling(s.type, s.friction)))
        return "friction = \"coulomb\" takes joints and rolling and spinning resistance only with the "
               "\"bgs\" solver; use it, or friction = \"ccp\"";
    return {};
}

SolverResult solve_ccp(AssembledBatch& batch, BodyStore& bodies, const SolverSettings& settings,
                       SolverWorkspace& work) {
    if (std::string why = refusal(batch, settings); !why.empty()) {
        SolverResult refused;
        refused.refused = std::move(why);
        return refused;
    }
    if (settings.type == SolverType::Lemke) return solve_lcp_stepper(batch, bodies, settings, work);
    // The stopping rule (docs/design.md §6): r ≤ max(tol, ε v_c). Bodies are at ν* here
    // (the warm start is applied by the method), so d at γ = 0 is each contact's free
    // velocity; v_c is the largest speed at which one would close, −min d_n.
    // The operator loads the solver bodies at ν*; v_c is read off them (a second copy of
    // every body only for that was 112 bytes a body, built for every solve of a step).
    BodyOperator op(batch, bodies, work);
    SolverSettings s = settings;
    if (s.relative_tolerance > 0.0 && batch.size() > 0)
        s.tolerance = std::max(s.tolerance, s.relative_tolerance * closing_speed(batch, work.bodies));
    return run_method(op, s);
}

double closing_speed(const AssembledBatch& c, const SolverBodies& sb) {
    return parallel_max(c.size(), [&](std::size_t i) { return -contact_velocity(c, sb, i)[0]; });
}

double closing_speed(const AssembledBatch& c, const BodyStore& bodies) {
    return closing_speed(c, SolverBodies(bodies));
}

double ccp_residual(const AssembledBatch& c, const SolverBodies& sb) {
    // four contacts at a time where it can: it is computed at least twice a solve, and one
    // contact at a time a pass cost about three bgs sweeps (at a million grains)
    const double r = parallel_max_ranges(0, c.size(), grain::kContacts, 0.0, [&](std::size_t lo, std::size_t hi) {
        return residual_range(c, sb, lo, hi);
    });
    return with_row_residuals(c, sb, r);
}

double with_row_residuals(const AssembledBatch& c, const SolverBodies& sb, double r) {
    // Rolling/spinning torque entries: ‖γ_k − Π_R(γ_k − η_k d_k)‖ / η_k [rad/s].
    const double rr = c.rolling.empty() ? r : std::max(r, rolling_residual(c, sb));
    // Bilateral rows: the free cone's projection is the identity, so the term is |b + Gᵀν|.
    if (c.bilateral.empty()) return rr;
    return std::max(rr, bilateral_residual(c.bilateral, sb));
}

double law_residual(const AssembledBatch& c, const SolverBodies& sb, FrictionLaw law) {
    return law == FrictionLaw::Coulomb ? with_row_residuals(c, sb, coulomb_residual(c, sb)) : ccp_residual(c, sb);
}

double ccp_residual(const AssembledBatch& c, const BodyStore& bodies) {
    return ccp_residual(c, SolverBodies(bodies));
}

namespace detail {

SolveScope::SolveScope(const AssembledBatch& batch, const BodyStore& bodies, SolverWorkspace& work)
    : start_(std::chrono::steady_clock::now()), work_(work) {
    begin_solve(batch, bodies, work);
}

double SolveScope::seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void SolveScope::finish(const AssembledBatch& batch, BodyStore& bodies, double tolerance,
                        bool check_unbounded, SolverResult& result, FrictionLaw law) const {
    result.residual = finish_solve(batch, &bodies, work_, law);
    if (check_unbounded) result.unbounded_contacts = find_unbounded(batch, bodies, work_, tolerance);
    result.converged = result.residual <= tolerance;
    result.wall_time = seconds();
}

void begin_solve(const AssembledBatch& batch, const BodyStore& bodies, SolverWorkspace& work) {
    work.bodies.load(bodies);
    work.body_contacts.build(batch, bodies.size());
    // The growth test's snapshots are taken only by a solve that gets that far (most
    // converge sooner, and at a million contacts they are 32 MB).
    work.gn_quarter.clear();
    work.gamma_half.clear();
}

void note_iteration(int k, int cap, const std::vector<Vec3>& gamma, SolverWorkspace& work) {
    if (k == std::max(1, cap / 4)) {
        work.gn_quarter.resize(gamma.size());
        for (std::size_t i = 0; i < gamma.size(); ++i) work.gn_quarter[i] = gamma[i][0];
    }
    if (k == std::max(1, cap / 2)) work.gamma_half.assign(gamma.begin(), gamma.end());
}

double finish_solve(const AssembledBatch& batch, BodyStore* store, SolverWorkspace& work, FrictionLaw law) {
    rebuild_velocities(batch, store, work);
    return law_residual(batch, work.bodies, law);
}

void rebuild_velocities(const AssembledBatch& batch, BodyStore* store, SolverWorkspace& work) {
    SolverBodies& sb = work.bodies;
    sum_body_impulses(batch, work.body_contacts, batch.gamma, sb);  // F, T in sb's v, w
    velocities_from_sums(sb, work.body_contacts.body_count(), [&](std::size_t b, const Vec3& f, const Vec3& t) {
        if (!store) return;
        store->velocity[b] += store->inv_mass[b] * f;
        const Vec3 t_body = store->orientation[b].conjugate() * t;
        store->angular_velocity[b] += store->inv_inertia[b].cwiseProduct(t_body);
    });
    if (!batch.rolling.empty()) {  // + torques of the rolling entries, serially in entry order
        add_rolling_impulses(batch, sb);
        if (store) add_rolling_impulses(batch, *store);
    }
    if (!batch.bilateral.empty()) {  // + M⁻¹ G λ, serially in row order
        const BilateralBatch& r = batch.bilateral;
        add_row_impulses(r, r.lambda, sb);
        if (store) {
            auto push = [&](int32_t body, const Vec3& lin, const Vec3& ang, double l) {
                if (body == kNoBody) return;
                const std::size_t i = std::size_t(body);
                store->velocity[i] += (store->inv_mass[i] * l) * lin;
                const Vec3 t_body = store->orientation[i].conjugate() * Vec3(l * ang);
                store->angular_velocity[i] += store->inv_inertia[i].cwiseProduct(t_body);
            };
            for (std::size_t j = 0; j < r.size(); ++j) {
                push(r.a[j], r.lin_a[j], r.ang_a[j], r.lambda[j]);
                push(r.b[j], r.lin_b[j], r.ang_b[j], r.lambda[j]);
            }
        }
    }
}

std::vector<uint32_t> unbounded_candidates(const AssembledBatch& c, const BodyStore& bodies,
                                           std::span<const Vec3> gamma, std::span<const double> gn_quarter,
                                           std::span<const Vec3> gamma_half, double tolerance) {
    std::vector<uint32_t> candidates;
    for (std::size_t i = 0; i < c.size(); ++i) {
        const double g1 = gamma_half[i][0] - gn_quarter[i];
        const double g2 = gamma[i][0] - gamma_half[i][0];
        double mass = 0.0;
        for (int32_t body : {c.a[i], c.b[i]})
            if (body != kNoBody) mass += bodies.mass(body);
        if (g1 > 0.0 && g2 >= 1.6 * g1 && g2 > mass * tolerance) candidates.push_back(uint32_t(i));
    }
    return candidates;
}

bool may_be_unbounded(const AssembledBatch& c, const BodyStore& bodies, std::span<const Vec3> v_free,
                      std::span<const Vec3> gamma, std::span<const double> gn_quarter,
                      std::span<const Vec3> gamma_half, double tolerance, double momentum_floor) {
    for (const uint32_t i : unbounded_candidates(c, bodies, gamma, gn_quarter, gamma_half, tolerance)) {
        const double rhs = c.rhs[i].norm();  // ≤ find_unbounded's rhs_max
        double momentum = 0.0;
        for (const int32_t b : {c.a[i], c.b[i]})
            if (b != kNoBody && bodies.inv_mass[b] != 0.0) momentum += bodies.mass(b) * (v_free[b].norm() + rhs);
        // (a thousandth below the bound: the whole check sums the same terms in another order)
        if (gamma[i][0] > 0.999 * std::min(kAbsurdCluster * momentum, kAbsurdWhole * momentum_floor)) return true;
    }
    return false;
}

std::vector<uint32_t> find_unbounded(const AssembledBatch& c, const BodyStore& bodies,
                                     const SolverWorkspace& work, double tolerance) {
    // Runs only after a solve that failed to converge; serial and plain on purpose.
    const std::size_t n = c.size();
    if (work.gn_quarter.size() != n || work.gamma_half.size() != n) return {};  // no snapshots
    const std::vector<uint32_t> candidates =
        unbounded_candidates(c, bodies, c.gamma, work.gn_quarter, work.gamma_half, tolerance);
    if (candidates.empty()) return {};

    // Clusters of candidates joined by shared dynamic bodies.
    std::vector<int32_t> parent(bodies.size(), -1);  // union–find over bodies; -1 = not in any
    auto find = [&](int32_t x) {
        while (parent[x] != x) x = parent[x] = parent[parent[x]];
        return x;
    };
    for (uint32_t i : candidates)
        for (int32_t body : {c.a[i], c.b[i]})
            if (body != kNoBody && parent[body] < 0) parent[body] = body;
    for (uint32_t i : candidates)
        if (c.a[i] != kNoBody && c.b[i] != kNoBody) {
            const int32_t ra = find(c.a[i]), rb = find(c.b[i]);
            if (ra != rb) parent[std::max(ra, rb)] = std::min(ra, rb);
        }

    // A cluster fails as soon as one of its bodies is moved by the growth δ of the
    // cluster's contacts (growth elsewhere that balances it does not belong to a ray).
    std::vector<char> is_candidate(n, 0);
    for (uint32_t i : candidates) is_candidate[i] = 1;
    std::vector<char> moved(bodies.size(), 0);
    for (std::size_t b = 0; b < bodies.size(); ++b) {
        if (parent[b] < 0) continue;
        Vec3 net = Vec3::Zero();
        double total = 0.0;
        for (uint32_t k = work.body_contacts.start[b]; k < work.body_contacts.start[b + 1]; ++k) {
            const uint32_t e = work.body_contacts.entry[k];
            const std::size_t i = e >> 1;
            if (!is_candidate[i]) continue;
            const Vec3 delta = contact_frame(c, i).to_world(c.gamma[i] - work.gamma_half[i]);
            net += (e & 1) ? delta : Vec3(-delta);
            total += delta.norm();
        }
        if (net.norm() > 0.05 * total) moved[find(int32_t(b))] = 1;
    }
    // ...and only a ray the objective keeps falling along: the growth pushes against an
    // approach velocity that persists (δᵀd < 0 beyond the tolerance). Drifting along a
    // redundant direction (N r = 0 but pᵀr = 0, e.g. a grain in a corner) leaves d ≈ 0.
    std::vector<double> along(bodies.size(), 0.0), size(bodies.size(), 0.0);
    std::vector<double> momentum(bodies.size(), 0.0), largest(bodies.size(), 0.0);
    double rhs_max = 0.0;
    for (uint32_t i : candidates) rhs_max = std::max(rhs_max, c.rhs[i].norm());
    for (uint32_t i : candidates) {
        const int32_t root = find(c.b[i] != kNoBody ? c.b[i] : c.a[i]);
        const Vec3 delta = c.gamma[i] - work.gamma_half[i];
        along[root] += delta.dot(contact_velocity(c, work.bodies, i));
        size[root] += delta.norm();
        largest[root] = std::max(largest[root], c.gamma[i][0]);
    }
    double total_momentum = 0.0;
    for (std::size_t b = 0; b < bodies.size(); ++b) {
        if (bodies.inv_mass[b] == 0.0) continue;  // kinematic: infinite mass, in no contact
        const double p = bodies.mass(b) * (work.bodies.v_free[b].norm() + rhs_max);
        total_momentum += p;
        if (parent[b] >= 0) momentum[find(int32_t(b))] += p;
    }
    std::vector<uint32_t> out;
    for (uint32_t i : candidates) {
        const int32_t root = find(c.b[i] != kNoBody ? c.b[i] : c.a[i]);
        const bool absurd =
            largest[root] > std::min(kAbsurdCluster * momentum[root], kAbsurdWhole * total_momentum);
        if (!moved[root] && along[root] < -tolerance * size[root] && absurd) out.push_back(i);
    }
    return out;
}

}  // namespace detail
}  // namespace talus

// The separate push-out pass (SolverSettings::split_push_out, `[solver] push_out =
// "position"`; docs/design.md §4, "Push-out"). The velocity solve then only stops overlaps
// from deepening (b_i = 0 for Φ < 0); here a second, normal-only problem takes back a share
// of each overlap:
//
//   find γ_p ≥ 0:  n_iᵀ Δν_p + p_i ≥ 0 ⊥ γ_p,i,  p_i = max(γ_s Φ_i / h, −v_rec) (Φ_i < 0),
//                                                 Φ_i / h (an open gap: closed, not passed)
//
// from ν_p = 0 and γ_p = 0, by the step's solver with μ = 0 on the step's contacts and
// colours, to the stopping rule (docs/design.md §6) with v_c the fastest push and ε = 0.1
// (kPushOutRelativeTolerance), within the step's iteration cap, or within kPushOutSweeps
// while every overlap is within the penetration target (kPushOutFewSweeps when at most
// kPushOutFewContacts are past the slop), unless stopping there would leave an overlap
// deepening past the slop or a gap closing past it. It runs only when some
// overlap is deeper than that slop (below).
// Positions then move by h (ν⁺ + ν_p), and ν_p is dropped: a push-out leaves no velocity
// behind, so it cannot feed the jitter of a deep pack (where an overlap at every contact of
// a column sums to a speed at its top) and a bed at rest stays at rest. Walls stand still
// in pseudo-time (their velocity is the real solve's business).
#include "engine/world/collide_on_rank.hpp"
#include "engine/world/pipeline.hpp"
#include "engine/world/world.hpp"
#include "core/parallel.hpp"
#include "solvers/solver.hpp"

#include <algorithm>
#include <utility>

namespace talus {

bool World::deepens_or_closes(double deepest_push, double h, double slop) {
    // For each contact, the linear gap the pass's velocities ν_p would leave, Φ + h n·Δν_p,
    // must not fall below min(Φ, −slop) by more than h times the pass's tolerance (a tenth
    // of the fastest push): an overlap deeper than the slop may not deepen, and a shallower
    // one or an open gap may close up to the slop, which no pass would take back. That is,
    // n·Δν_p + max(Φ + slop, 0)/h ≥ −tolerance. Only a capped pass asks, and its pushes are
    // all under v_rec, so batch_.push holds γ_s Φ/h for every overlap and Φ/h for an open
    // gap. Ghosts first get their owners' ν_p, so that every rank decides on the numbers
    // one process would.
    if (distributed()) refresh_ghost_velocities(bodies, on_ranks.owner, batch_.a, batch_.b, *on_ranks.ranks);
    const double gamma_s = solver.stabilization;
    const double worst = max_over_ranks(parallel_max(batch_.size(), [&](std::size_t i) {
        const Vec3 rel = row_point_velocity(bodies, batch_, i);
        const double push = batch_.push[i];
        const double gap = push >= 0.0 ? push * h : push * h / gamma_s;
        return -(batch_.normal[i].dot(rel) + std::max(gap + slop, 0.0) / h);
    }));
    return worst > kPushOutRelativeTolerance * deepest_push;
}

std::size_t World::pushes_past(double push) const {
    const std::size_t n = batch_.size();
    if (!distributed())  // (serial: it runs once a pass, about a tenth of a sweep's reads)
        return std::size_t(std::count_if(batch_.push.begin(), batch_.push.end(), [&](double p) { return -p > push; }));
    const int me = on_ranks.ranks->rank();
    std::size_t here = 0;
    for (std::size_t i = 0; i < n; ++i)
        if (-batch_.push[i] > push) here += counts_here(batch_.a[i], batch_.b[i], me);
    return std::size_t(on_ranks.ranks->sum_of(int64_t(here)));
}

void World::push_out(double h) {
    // Only when some overlap is deeper than the slop, kPushOutSlop of the penetration target
    // (where the penetration control starts to act): shallower overlaps are left as they
    // are, so a bed at rest pays for no pass. p_i < −γ_s slop / h ⇔ Φ_i < −slop (the cap
    // v_rec only binds deeper).
    const std::size_t n = batch_.size();
    if (solver.stabilization <= 0.0) return;
    // (over ranks: the smallest radius and the deepest push of every rank, so that every rank
    // runs the pass, a collective, or none does)
    if (!any_over_ranks(!batch_.push.empty())) return;
    const double slop = kPushOutSlop * kPenetrationTarget * min_over_ranks(smallest_dynamic_radius(bodies));
    const double deepest_push =
        max_over_ranks(parallel_max(n, [&](std::size_t i) { return -batch_.push[i]; }));
    if (deepest_push <= solver.stabilization * slop / h) return;
    StepPipeline& p = pipeline_;
    // ν⁺ kept aside; the pass starts from ν_p = 0 on every body (kinematic ones too: in
    // pseudo-time nothing moves but what the pass pushes)
    p.plus_v.assign(bodies.velocity.begin(), bodies.velocity.end());
    p.plus_w.assign(bodies.angular_velocity.begin(), bodies.angular_velocity.end());
    std::fill(bodies.velocity.begin(), bodies.velocity.end(), Vec3::Zero());
    std::fill(bodies.angular_velocity.begin(), bodies.angular_velocity.end(), Vec3::Zero());

    // The step's batch as the pass's problem: its rhs, μ and γ exchanged for the pass's
    // (and back after), its joint and rolling rows set aside (they belong to the velocity
    // solve), its APGD estimate kept.
    // (kept in the pipeline between passes: a fresh 56 bytes a contact each pass was paged in
    // and zeroed again)
    std::vector<Vec3>& rhs = p.push_rhs;
    std::vector<Vec3>& gamma = p.push_gamma;
    std::vector<double>& mu = p.push_mu;
    rhs.resize(n);
    gamma.assign(n, Vec3::Zero());
    mu.assign(n, 0.0);
    parallel_each(n, [&](std::size_t i) { rhs[i] = Vec3(batch_.push[i], 0.0, 0.0); }, grain::kContacts);
    BilateralBatch rows;
    RollingBatch rolling;
    auto exchange = [&] {
        std::swap(batch_.rhs, rhs);
        std::swap(batch_.gamma, gamma);
        std::swap(batch_.mu, mu);
        std::swap(batch_.bilateral, rows);
        std::swap(batch_.rolling, rolling);
    };
    const double lipschitz = batch_.lipschitz;
    exchange();

    SolverSettings s = solver;
    // to the stopping rule relative to the fastest push (the pass's own v_c), looser than
    // the velocity solve's (kPushOutRelativeTolerance). At ν_p = 0 a contact's velocity is
    // its push, so v_c is deepest_push: the tolerance solve_ccp would make, without its pass
    // over the contacts.
    s.relative_tolerance = 0.0;
    s.tolerance = std::max(s.tolerance, kPushOutRelativeTolerance * deepest_push);
    s.from_rest = true;  // γ_p = 0, ν_p = 0
    // No cluster sweeps: a pass from zero far from its tolerance has no few contacts left to
    // finish alone (measured on the bidisperse twin with them on: 15.1 s of integration with
    // them in the pass, 13.6 s without; benchmarks/README.md, "Session 60").
    s.cluster_sweeps = false;
    // Overlaps within the penetration target p* are maintenance: the pass is a relaxation
    // over steps (what it leaves, the next step's positions carry to the next pass), so it
    // stops after kPushOutSweeps. Past a few tens of sweeps from zero a pass only works on
    // its deep mode, lifting whole columns (the lattice's passes went from 1.1e-3 to 8e-4 m/s
    // in 100 sweeps). An overlap deeper than p* (or pushed at v_rec) is resolved to the
    // stopping rule within the step's cap, as before.
    const int full_cap = s.max_iterations;
    const double target = slop / kPushOutSlop;
    const bool capped = deepest_push <= solver.stabilization * target / h &&
                        deepest_push < solver.recovery_speed && kPushOutSweeps < full_cap;
    if (capped)  // (the count only then: a collective, and capped is the same on every rank)
        s.max_iterations = pushes_past(solver.stabilization * slop / h) <= kPushOutFewContacts
                               ? kPushOutFewSweeps : kPushOutSweeps;
    s.friction = FrictionLaw::CCP;
    if (!capabilities(s.type).ccp || s.type == SolverType::Lemke) s.type = SolverType::BGS;
    // every row's μ is 0 and its tangential impulse stays 0: bgs steps the normal rows alone
    batch_.normal_only = s.type == SolverType::BGS;
    SolverResult pass = solve_contacts(batch_, bodies, s);  // a capped pass still takes back a share
    if (capped && !pass.converged && deepens_or_closes(deepest_push, h, slop)) {
        // Stopped early, the pass would leave a contact closing in pseudo-time past the
        // slop, or deepening an overlap already past it (a grain pushed up against the one
        // above before that contact was swept again): it goes on from where it stopped
        // (its impulses; the velocities are made again from them), within what is left of
        // the step's cap.
        std::fill(bodies.velocity.begin(), bodies.velocity.end(), Vec3::Zero());
        std::fill(bodies.angular_velocity.begin(), bodies.angular_velocity.end(), Vec3::Zero());
        s.max_iterations = full_cap - int(pass.iterations);
        s.from_rest = false;  // from the pass's impulses
        solve_contacts(batch_, bodies, s);
    }

    exchange();
    batch_.lipschitz = lipschitz;
    batch_.normal_only = false;
    if (lean_step()) {  // a large run keeps no scratch beside its peak
        std::vector<Vec3>().swap(rhs);
        std::vector<Vec3>().swap(gamma);
        std::vector<double>().swap(mu);
    }

    // positions move by ν⁺ + ν_p (integrate_positions reads the store's velocities); ν⁺ is
    // put back after
    parallel_each(bodies.size(), [&](std::size_t i) {
        bodies.velocity[i] += p.plus_v[i];
        bodies.angular_velocity[i] += p.plus_w[i];
    }, grain::kBodies);
}

void World::drop_push_out() {
    if (pipeline_.plus_v.empty()) return;
    std::copy(pipeline_.plus_v.begin(), pipeline_.plus_v.end(), bodies.velocity.begin());
    std::copy(pipeline_.plus_w.begin(), pipeline_.plus_w.end(), bodies.angular_velocity.begin());
    pipeline_.plus_v.clear();
    pipeline_.plus_w.clear();
}

}  // namespace talus

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
// (kPushOutRelativeTolerance), within the step's iteration cap. It runs only when some
// overlap is deeper than a slop (below).
// Positions then move by h (ν⁺ + ν_p), and ν_p is dropped: a push-out leaves no velocity
// behind, so it cannot feed the jitter of a deep pack (where an overlap at every contact of
// a column sums to a speed at its top) and a bed at rest stays at rest. Walls stand still
// in pseudo-time (their velocity is the real solve's business).
#include "engine/world/pipeline.hpp"
#include "engine/world/world.hpp"
#include "core/parallel.hpp"
#include "solvers/solver.hpp"

#include <algorithm>
#include <utility>

namespace talus {

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
    std::vector<Vec3> rhs(n), gamma(n, Vec3::Zero());
    std::vector<double> mu(n, 0.0);
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
    // the velocity solve's (kPushOutRelativeTolerance)
    s.relative_tolerance = kPushOutRelativeTolerance;
    s.friction = FrictionLaw::CCP;
    if (!capabilities(s.type).ccp || s.type == SolverType::Lemke) s.type = SolverType::BGS;
    solve_contacts(batch_, bodies, s);  // a capped pass still takes back a share

    exchange();
    batch_.lipschitz = lipschitz;

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

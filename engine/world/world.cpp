// World::step — the step pipeline of docs/design.md §1 as a list of stage calls
// (engine/world/pipeline.hpp):
//   forces → margins → broad phase → narrow phase → colour → assemble (+ joint rows) →
//   solve → checks → warm-start store → integrate positions → sources and sinks (outlets
//   remove, emitters add).
// Each stage takes its data as parameters and returns a StepError if it cannot go on; the
// step stops at the first one, restores the velocities it started with and returns it.
#include "engine/world/world.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <new>
#include <sstream>
#include <string>
#include <utility>

#include "core/kinematic.hpp"
#include "core/parallel.hpp"
#include "core/bytes.hpp"
#include "engine/flow/free_space.hpp"
#include "engine/world/collide_on_rank.hpp"
#include "solvers/rank_operator.hpp"
#include "solvers/bilateral.hpp"
#include "solvers/contact_ops.hpp"

namespace talus {

namespace {

/// The largest tangential speed of B's centre relative to A's over the body–body contacts
/// that carry a load (γ_n > 0), at ν⁺: the speed at which the pair turns about its contact
/// (World::choose_step). Wall contacts are left out: a flat wall's normal does not turn.
/// Each pair's speed is the one that would turn a pair of two spheres of radius `r_min` as
/// far: two spheres at a distance D = r_a + r_b whose centres slide Δx across each other
/// part by √(D² + Δx²) − D ≈ Δx²/(2 D), so a slide s makes the same error in a pair of
/// radius sum D as s √(2 r_min / D) does in the smallest pair. Other shapes count as the
/// smallest pair (a capsule's or a clump's surface may curve as tightly as r_min).
double slip_speed(const AssembledBatch& batch, const BodyStore& bodies, double r_min) {
    return parallel_max(batch.size(), [&](std::size_t i) {
        if (batch.a[i] < 0 || batch.b[i] < 0 || !(batch.gamma[i][0] > 0.0)) return 0.0;
        const std::size_t a = std::size_t(batch.a[i]), b = std::size_t(batch.b[i]);
        const Vec3 dv = bodies.velocity[b] - bodies.velocity[a];
        const Vec3& n = batch.normal[i];
        const double s = (dv - n * n.dot(dv)).norm();
        if (bodies.shape[a] != Shape::Sphere || bodies.shape[b] != Shape::Sphere) return s;
        return s * std::sqrt(2.0 * r_min / (bodies.radius[a] + bodies.radius[b]));
    });
}

}  // namespace

std::vector<std::string> World::settings_problems() const {
    std::vector<std::string> out = simulation.problems();
    for (std::string& p : solver.problems()) out.push_back(std::move(p));
    for (std::string& p : materials.problems()) out.push_back(std::move(p));
    return out;
}

StepStatus World::step(double until) {
    if (const std::vector<std::string> problems = settings_problems(); !problems.empty()) {
        std::string text = "settings out of range (docs/scene-format.md):";
        for (const std::string& p : problems) text += "\n  " + p;
        return StepError::of(StepFault::InvalidSettings, text);
    }
    if (distributed())
        if (std::string why = rank_step_refusal(); !why.empty())
            return StepError::of(StepFault::InvalidSettings, "over MPI ranks: " + why);
    if (margin_at_ != std::pair{time, step_count}) {
        margin_floor_ = MarginFloor{};
        margin_retakes_ = 0;
    }
    try {
        if (!simulation.adaptive) {
            const double h = simulation.dt;
            diag_.retakes = 0;
            for (;;) {  // taken again with wider margins for bodies that outran theirs
                StepStatus s = take_step(h, double(step_count + 1) * h);  // t = k h, not a running sum
                if (!s.has(StepFault::Outran)) return s;
            }
        }
        const std::optional<StepResume> resume = std::exchange(resume_, std::nullopt);
        const bool resumes = resume && resume->time == time && resume->step_count == step_count;
        StepChoice c = resumes ? resume->c : choose_step(until);
        int retakes = resumes ? resume->retakes : 0;    // halvings for an unresolved solve (kMaxRetakes)
        int halvings = resumes ? resume->halvings : 0;  // for any cause (StepDiagnostics::retakes)
        for (;;) {
            const StepControl before = control_;
            StepStatus s = take_step(c.h, c.t1, retakes < kMaxRetakes && 0.5 * c.h >= simulation.min_dt);
            if (s.has(StepFault::Outran)) continue;  // the same step, wider margins (margin_floor_)
            if (s.ok) {
                diag_.retakes = uint32_t(halvings);
                control_.chosen = c.chosen;
                control_.previous_penetration = before.penetration;
                control_.penetration = diag_.contact_infeasibility;
            }
            // Too many candidate pairs (or cells) means margins too wide for the speeds:
            // a shorter step narrows them. A solve that did not converge and left bodies
            // too fast (an impact at hundreds of m/s, where a whole column closes in one
            // step) is resolved in more, shorter steps, each closing fewer contacts.
            // A solve stopped at its cap that would carry an overlap past the retake limit
            // (deepens_past_limit) leaves half as deep an overlap in a step half as long.
            // Retried from the same state (fail() restored it).
            const bool too_fast = s.has(StepFault::NonFinite) && solved_ && !result_.converged;
            const bool shorter_helps =
                s.has(StepFault::Crowded) || s.has(StepFault::BroadPhase) || s.has(StepFault::Unresolved) || too_fast;
            if (s.has(StepFault::Unresolved)) ++retakes;
            if (s.has(StepFault::CheckWhole) || s.has(StepFault::BlocksTooSmall))  // (resume_)
                resume_ = StepResume{time, step_count, c, retakes, halvings};
            if (s.ok || !shorter_helps || c.h <= simulation.min_dt) return s;
            // A lean run has given back the step before's warm start by now (take_step), so
            // a step taken again for its speeds starts cold in both kinds of run: the same
            // bits either way. (One taken again for Unresolved starts from the failed
            // solve's impulses, which take_step stored.)
            if (too_fast) warm_.release_entries();
            ++halvings;
            margin_floor_ = MarginFloor{};  // (the motions of a longer step)
            margin_retakes_ = 0;
            c.h = std::max(0.5 * c.h, simulation.min_dt);
            c.t1 = time + c.h;
            c.chosen = c.h;
        }
    } catch (const std::bad_alloc&) {
        // The step's buffers did not fit: the state is as before the step except for the
        // velocities, which fail() restores (positions move only after every allocation).
        return fail(StepError::of(
            StepFault::OutOfMemory,
            "out of memory at t = " + std::to_string(time) + " s (step " +
                std::to_string(step_count + 1) + "): the run needs more than this process may use"));
    }
}

double World::smallest_radius_to_come() const {
    double r_min = smallest_dynamic_radius(bodies);
    for (const Emitter& e : emitters) r_min = std::min(r_min, e.size.min);  // (a discrete law's too)
    return r_min;
}

World::StepChoice World::choose_step(double until) const {
    // Four bounds on how far bodies move in one step (‖g‖ h² is what gravity adds over the
    // step under semi-implicit Euler):
    // - bodies in contact, across each other: s h ≤ c r_min. A contact is
    //   linearised at the step's start; when its two bodies slide Δx across each other
    //   its true gap differs from the linear one by about Δx²/(2 R), R the radius of the
    //   path one centre takes about the other (r_a + r_b for two spheres): with Δx = c r
    //   and R = 2 r, c² r/4, 0.5 % of the diameter at c = 0.2. s is measured at the end of
    //   the last step over the active contacts (control_).
    // - a grain resting on its support: ‖g‖ h² ≤ p* = kPenetrationTarget r_min. Each step
    //   adds g h to its velocity, which the solve must take away; where it stops short (a
    //   deep pack at the iteration cap) the grain sinks by up to g h² into its support.
    //   Bounding that by the penetration a run aims for gives h = √(p*/g) at rest: 1.2 ms
    //   for a 1.5 mm grain, 3.2 ms for 1 cm (longer rests let a capped solver buckle deep
    //   stacks: a 29-grain lattice column fell to 70 % of its height at 5.5 ms steps).
    // - a spinning non-sphere (a clump, capsule or ellipsoid): a contact on it is
    //   linearised along its point's velocity, but the point turns with the body and
    //   leaves that line by ½ a h², a = ‖ω‖ ‖ω × p‖ its centripetal acceleration
    //   (BodyStore::centripetal_acceleration), always to the side of the body's axis of
    //   spin. So, unlike the slide above, the error keeps its sign from step to step
    //   while the body spins against a neighbour or a wall, and the push-out takes back
    //   only γ_s (0.2) of an overlap a step: the overlap it sustains is the drift / γ_s.
    //   ½ a h² ≤ kTurnDrift p* holds that within the target p*. (Trimers spinning at 270
    //   rad/s against a wall at 1.2 ms steps sank 30 µm a step, 2.1 % of the diameter in
    //   all; capsules rolling across each other 7 µm a step.) Spheres: a = 0.
    // - any body, in free flight: ‖v‖max h + ‖g‖ h² ≤ r_min (kFreeFlight), the classic
    //   "no body moves more than a radius". This bounds the collision margins (1.25 h ‖v‖
    //   per body), so the candidate pairs stay those of near neighbours at any speed; an
    //   impact itself is caught by its speculative contact, whatever h.
    const double c = simulation.step_fraction;
    // (maxima are exact whatever the split: the same bits on any thread count)
    const double r_min = min_over_ranks(smallest_dynamic_radius(bodies));
    const double v_max = max_over_ranks(parallel_max(bodies.size(), [&](std::size_t i) {
        double v = bodies.velocity[i].norm();
        if (bodies.shape[i] != Shape::Sphere) v += bodies.angular_velocity[i].norm() * bodies.radius[i];
        return v;
    }));
    const double turn_max = max_over_ranks(parallel_max(bodies.size(), [&](std::size_t i) {
        return bodies.centripetal_acceleration(i);
    }));
    double h = simulation.max_dt;
    if (std::isfinite(r_min) && r_min > 0.0) {
        // g h² + v h = d, solved in the form that does not cancel when g is small
        const double g = simulation.gravity.norm();
        const auto bound = [&](double v, double d) {
            const double root = v + std::sqrt(v * v + 4.0 * g * d);
            return root > 0.0 ? 2.0 * d / root : std::numeric_limits<double>::infinity();
        };
        // slip at contacts; a grain resting on its support, which would sink g h² in a step
        // whose solve left its support unresolved: at most the penetration target; any body
        const double slip = control_.slip_speed > 0.0 ? c * r_min / control_.slip_speed
                                                      : std::numeric_limits<double>::infinity();
        const double rest = rest_step(r_min, g);
        // a spinning non-sphere: its contacts' points leave their tangent line by ½ a h²
        // (a their centripetal acceleration), at most kTurnDrift of the penetration target
        const double turn = turn_max > 0.0 ? std::sqrt(2.0 * kTurnDrift * kPenetrationTarget * r_min / turn_max)
                                           : std::numeric_limits<double>::infinity();
        h = std::min({h, slip, rest, turn, bound(v_max, kFreeFlight * r_min)});
        // The accuracy a user reads is the largest penetration. In a deep pack a solve
        // stopped at its iteration cap leaves part of each step's weight unsupported, the
        // bed sinks by about that unresolved speed times h, and the unresolved speed grows
        // with g h: penetration grows like h². So once the largest penetration passes a
        // quarter of the target p* (kPenetrationTarget r_min), the next step is the last
        // one times √(p*/p): shorter above the target, growing at most twice below it. Above
        // the target but already falling (stabilisation at work, or overlaps a scene
        // started with), h is held instead, and never cut below 1/16 of the motion bound:
        // penetration the step did not cause must not stall the run.
        const StepControl& k = control_;
        const double target = kPenetrationTarget * r_min;
        if (k.chosen > 0.0 && k.penetration > 0.25 * target) {
            double factor = std::sqrt(target / k.penetration);
            if (k.penetration > target && k.penetration <= k.previous_penetration) factor = 1.0;
            h = std::min(h, std::max(k.chosen * std::max(factor, 0.5), h / 16.0));
        }
    }
    h = std::clamp(h, simulation.min_dt, simulation.max_dt);
    StepChoice out{h, time + h, h};
    const double rest = until - time;
    if (std::isfinite(rest) && rest > 0.0 && time + h >= until * (1.0 - 1e-12)) {
        out.h = rest;  // the last step up to `until`: lands on it exactly
        out.t1 = until;
    } else if (std::isfinite(rest) && rest > 0.0 && rest < 4.0 * h) {
        // a few steps from `until`: equal steps, so that the last is not a sliver
        out.h = rest / std::ceil(rest / h);
        out.t1 = time + out.h;
    }
    return out;
}

StepStatus World::take_step(double h, double t1, bool may_shorten) {
    const StepAt at{time, step_count + 1};
    solved_ = false;
    aside_deepens_ = false;
    solver.gravity = simulation.gravity.norm();  // the bounce threshold's floor (assemble)
    StepPipeline& p = pipeline_;
    p.saved_v.assign(bodies.velocity.begin(), bodies.velocity.end());
    p.saved_w.assign(bodies.angular_velocity.begin(), bodies.angular_velocity.end());

    StageClock clock;
    if (StepError e = check_kinematic_periodic(bodies, simulation.periodic); !e.ok)
        return fail(std::move(e));
    Prepared prepared = distributed() ? prepare_on_ranks(h, at) : prepare_solve(h, at);  // 1.–4.
    if (!prepared.error.ok) return fail(std::move(prepared.error));
    const bool lean = lean_step();
    if (lean) {  // see lean_bodies
        p.pairs = PairList{};  // (the reach stays: outran reads it after the solve)
        warm_.release_entries();  // assembly has read them; store() writes this step's
        // the batch holds what the solve needs, and the take-back's colouring everything again
        // keeps the rows (recolour_rows in speculative.cpp), unless it must make rolling rows
        if (!materials.any_rolling()) contacts_.release_geometry();
    }
    clock.restart();
    const bool relinearise_after = relinearising();
    const bool set_aside = any_over_ranks(!p.collide.aside.empty());
    // ν*, for the re-solves of 5c. and 5b.; a large run recomputes it from the step's start
    // instead (free_velocities: 48 bytes a body fewer at the peak)
    if (relinearise_after || (set_aside && !lean)) {
        p.star_v.assign(bodies.velocity.begin(), bodies.velocity.end());
        p.star_w.assign(bodies.angular_velocity.begin(), bodies.angular_velocity.end());
    }
    diag_.resolves = 0;
    p.reassemble_seconds = 0.0;
    step_solver_ = step_solver(h);
    result_ = solve_contacts(batch_, bodies, step_solver_);          // 5.
    solved_ = true;
    if (set_aside && result_.refused.empty())
        prepared.colours = take_back_and_resolve(h, lean, prepared.colours);  // 5c.
    diag_.set_aside = uint32_t(distributed() ? counted_on_rank(p.collide.aside) : p.collide.aside.size());
    if (lean) {
        p.solver = SolverWorkspace{};
        contacts_.release_geometry();  // (with rolling resistance, only now)
        p.collide.aside = ContactList{};
        p.collide.back = ContactList{};
    }
    diag_.relinearisations = 0;
    if (relinearise_after && result_.refused.empty())
        relinearise(h, prepared.margins.wall, at);                       // 5b.
    clock.lap(diag_.solver_wall_time);
    // the take-back's colouring and assembly are that stage's work, not the solver's
    diag_.solver_wall_time -= p.reassemble_seconds;
    diag_.time_assemble += p.reassemble_seconds;
    if (distributed() && check_whole_)  // (agreed: every rank knows it)
        return fail(StepError::of(StepFault::CheckWhole, "the over-constrained check is owed on the whole problem"));
    if (StepError e = agreed(check_solution(result_, bodies, contacts_, batch_, walls,
                                            simulation.max_speed, at));
        !e.ok)
        return fail(std::move(e));
    // 5e. A body the solve sent past its margin may have crossed a pair that was never a
    // candidate: the step is taken again with wider margins for it (World::step), starting
    // from this solve's impulses. (Not with re-linearised solves, whose contacts are made
    // again at each estimate.)
    if (margin_retakes_ < kMaxMarginRetakes && !relinearise_after) {
        if (MarginFloor more = outran(h); !more.empty()) {
            margin_floor_.merge(more);
            ++margin_retakes_;
            margin_at_ = {time, step_count};
            warm_.store(contacts_, batch_, h, lean);
            return fail(StepError::of(StepFault::Outran, "bodies outran their collision margins"));
        }
    }
    // (agreed: deepens_past_limit is over the ranks, and converged is the same on each)
    if (may_shorten && !result_.converged && !relinearise_after && deepens_past_limit(h)) {
        // The shorter step starts from this solve's impulses (scaled by the steps' ratio, as
        // any warm start): the cache of the step before is gone from a lean run by now, and
        // both kinds of run must take the same shorter step.
        warm_.store(contacts_, batch_, h, lean);
        std::ostringstream m;
        m << "the solve stopped at its cap at t = " << at.time << " s (step " << at.step
          << ") leaving an overlap to deepen past " << kRetakeDepth << " x the penetration target";
        return fail(StepError::of(StepFault::Unresolved, m.str()));
    }

    if (simulation.adaptive)  // choose_step reads it
        control_.slip_speed = max_over_ranks(slip_speed(batch_, bodies, min_over_ranks(smallest_dynamic_radius(bodies))));
    warm_.store(contacts_, batch_, h, lean);
    accumulate_wall_loads(h);
    if (record_contacts) record_step_contacts(h);
    if (solver.split_push_out && !relinearising()) push_out(h);                               // 5d.
    integrate_positions(bodies, simulation.periodic, h, t1);                          // 6.
    drop_push_out();
    if (lean) {  // what the next step's collision and colouring would otherwise carry
        p.solver = SolverWorkspace{};  // the push-out's solve filled it again
        for (std::vector<Vec3>* v : {&p.star_v, &p.star_w, &p.plus_v, &p.plus_w}) std::vector<Vec3>().swap(*v);
    }
    clock.lap(diag_.time_integrate);
    diag_.contact_infeasibility = 0.0;
    for (double gap : contacts_.gap) diag_.contact_infeasibility = std::max(diag_.contact_infeasibility, -gap);
    diag_.contact_infeasibility = max_over_ranks(diag_.contact_infeasibility);
    diag_.joint_infeasibility =
        joints.empty() ? 0.0 : joint_infeasibility(joints, p.joint_a, p.joint_b, bodies);
    time = t1;
    ++step_count;
    // counted before the outlets renumber the bodies the contacts index
    const std::size_t contacts_here = distributed() ? counted_on_rank(contacts_) : contacts_.size();
    if (lean) {  // the next step writes and assembles its own; these would sit beside its peak
        contacts_ = ContactList{};
        batch_.release_contact_rows();
    }
    apply_flow();                                                        // 7.

    diag_.step = step_count;
    diag_.margin_retakes = uint32_t(margin_retakes_);
    margin_floor_ = MarginFloor{};  // (the next step's own: next_problem reads no floor)
    margin_retakes_ = 0;
    diag_.time = time;
    diag_.dt = h;
    diag_.contacts = uint32_t(contacts_here);
    diag_.iterations = uint32_t(result_.iterations);
    diag_.colours = uint32_t(prepared.colours);
    diag_.residual = result_.residual;
    diag_.converged = result_.converged;
    diag_.envelope = prepared.margins.envelope;
    diag_.bodies = bodies.size();
    std::array<ExactSum, 5> totals{kinetic_energy_sum(), potential_energy_sum()};
    if (distributed()) {  // the ranks' parts, each contact and body counted on one rank
        const int me = on_ranks.ranks->rank();
        totals[2].add(double(diag_.contacts));
        totals[3].add(double(diag_.set_aside));
        totals[4].add(double(std::count(on_ranks.owner.begin(), on_ranks.owner.end(), me)));
        merge_over_ranks(totals, *on_ranks.ranks);
        diag_.contacts = uint32_t(totals[2].value());
        diag_.set_aside = uint32_t(totals[3].value());
        diag_.bodies = uint64_t(totals[4].value());
    }
    diag_.kinetic_energy = totals[0].value();
    diag_.potential_energy = totals[1].value();
    return {};
}

std::size_t World::counted_on_rank(const ContactList& c) const {
    const int me = on_ranks.ranks->rank();
    std::size_t n = 0;
    for (std::size_t i = 0; i < c.size(); ++i) n += counts_here(c.a[i], c.b[i], me);
    return n;
}

SolverSettings World::step_solver(double h) const {
    // The stopping rule's weight term (docs/design.md §6): a bed at rest closes at g h per
    // step, and what its solve leaves of that sinks a grain by r h. Resolving g h to ε_w,
    // and never leaving more than ε_w p*/h, bounds that sinking by ε_w p* per step, a
    // tenth of the penetration target at the default; the push-out takes it back once it
    // passes its slop. It is at most ε_w g h, so impacts keep their relative term ε v_c.
    SolverSettings s = solver;
    s.relaxed_tolerance = 0.0;
    if (!(s.weight_tolerance > 0.0)) return s;
    const double r_min = min_over_ranks(smallest_dynamic_radius(bodies));
    const double g = simulation.gravity.norm();
    if (!std::isfinite(r_min) || !(r_min > 0.0) || !(g > 0.0)) return s;
    const double target = kPenetrationTarget * r_min;
    s.relaxed_tolerance = s.weight_tolerance * std::min(g * h, target / h);
    return s;
}

SolverResult World::solve_contacts(AssembledBatch& batch, BodyStore& store, const SolverSettings& settings) {
    if (distributed()) {
        RankTraffic traffic;
        RankCapped capped;
        SolverWorkspace& work = pipeline_.solver;
        SolverResult r =
            solve_ccp_on_rank(batch, store, on_ranks.owner, settings, work, *on_ranks.ranks, &traffic, &capped);
        // The over-constrained check (docs/design.md §4) follows clusters of contacts across
        // the ranks. Its first test, contact by contact, almost always finds nothing, and
        // then neither would the whole check; when it finds a candidate on any rank, the step
        // is taken again on the whole world (check_whole_, step_on_ranks). The first test
        // also asks for the impulse the whole check calls absurd, against lower bounds of
        // the momenta it compares with (detail::may_be_unbounded): a bed whose impulses grow
        // only as slow relaxation does (the 1:5 bed's heavy grains) is not taken again.
        check_whole_ = false;
        if (capped.check_unbounded) {  // the same on every rank: they iterate in step
            const std::size_t n = batch.size();
            const bool snapshots = work.gn_quarter.size() == n && work.gamma_half.size() == n && capped.gamma.size() == n;
            // The absurd bound needs ν*; without it (or with whole_on_candidates, for tests)
            // the growth alone decides, which retakes more steps, never fewer.
            const bool bounded = work.bodies.v_free.size() == store.size() && !on_ranks.whole_on_candidates;
            // every body's momentum is at least any one rank's own bodies' (every rank takes
            // part in the maximum)
            const int me = on_ranks.ranks->rank();
            double own = 0.0;
            if (snapshots && bounded)
                for (std::size_t b = 0; b < store.size(); ++b)
                    if (on_ranks.owner[b] == me && store.inv_mass[b] != 0.0)
                        own += store.mass(b) * work.bodies.v_free[b].norm();
            const double floor = on_ranks.ranks->max_of(own);
            check_whole_ = on_ranks.ranks->any(
                snapshots && (bounded ? detail::may_be_unbounded(batch, store, work.bodies.v_free, capped.gamma,
                                                                 work.gn_quarter, work.gamma_half, capped.tolerance, floor)
                                      : !detail::unbounded_candidates(batch, store, capped.gamma, work.gn_quarter,
                                                                      work.gamma_half, capped.tolerance)
                                             .empty()));
        }
        on_ranks.solve_iterations += uint64_t(r.iterations);
        on_ranks.solve_messages += traffic.messages;
        on_ranks.solve_bytes += traffic.bytes;
        refresh_ghost_velocities(store, on_ranks.owner, batch.a, batch.b, *on_ranks.ranks);  // the slip speed reads them
        return r;
    }
    if (contact_solve) return contact_solve(batch, store, settings, pipeline_.solver);
    return solve_ccp(batch, store, settings, pipeline_.solver);
}

void World::free_velocities(double h) {
    StepPipeline& p = pipeline_;
    std::copy(p.saved_v.begin(), p.saved_v.end(), bodies.velocity.begin());
    std::copy(p.saved_w.begin(), p.saved_w.end(), bodies.angular_velocity.begin());
    place_kinematic(bodies, time, time, h, true);
    apply_forces(bodies, simulation.gravity, h);
}

MarginFloor World::outran(double h) {
    // A body may pass its margin by half the push-out's slop before the step is taken
    // again: a pair of two such bodies closes uncaught by at most the slop, an overlap the
    // push-out leaves as it is (and the next step's contact holds).
    const double slack = 0.5 * retake_bounds().slop;
    if (!distributed()) return outrunning(bodies, pipeline_.reach, simulation.gravity, h, slack);
    Ranks& ranks = *on_ranks.ranks;
    const MarginFloor mine =
        outrunning(bodies, pipeline_.reach, simulation.gravity, h, slack, on_ranks.owner, ranks.rank());
    MarginFloor all;
    if (!ranks.any(!mine.empty())) return all;
    std::string bytes;
    for (std::size_t k = 0; k < mine.id.size(); ++k) {
        put_bytes(bytes, mine.id[k]);
        put_bytes(bytes, mine.margin[k]);
    }
    std::vector<std::string> gathered;
    ranks.all_gather(bytes, gathered);
    for (const std::string& m : gathered) {  // each rank's own bodies: no id twice
        MarginFloor part;
        for (std::size_t at = 0; at < m.size();) {
            part.id.push_back(take_bytes<uint64_t>(m, at));
            part.margin.push_back(take_bytes<double>(m, at));
        }
        all.merge(part);
    }
    return all;
}

World::RetakeBounds World::retake_bounds() {
    const double r_min = min_over_ranks(smallest_dynamic_radius(bodies));
    if (!std::isfinite(r_min) || !(r_min > 0.0)) return {0.0, 0.0};
    const double target = kPenetrationTarget * r_min;
    return {kRetakeDepth * target, kPushOutSlop * target};
}

bool World::deepens_past_limit(double h) {
    // The linear gap at the step's end, Φ + h v_n, with v_n the solved velocities' normal
    // speed at the contact (the wall's own velocity is in the row's constant part: rhs_n =
    // stab − n·v_wall). A contact whose overlap the step found already past the limit may
    // keep it (the push-out takes it back) but not deepen it by more than the slop. The
    // pairs the take-back left aside were asked the same there (aside_deepens_).
    const RetakeBounds k = retake_bounds();
    if (!(k.limit > 0.0)) return false;
    const std::size_t n = batch_.size();
    const double worst = n == 0 ? 0.0 : parallel_max(n, [&](std::size_t i) {
        const double vn = batch_.normal[i].dot(row_point_velocity(bodies, batch_, i)) + (batch_.rhs[i][0] - batch_.stab[i]);
        return k.deepens(contacts_.gap[i], vn, h) ? 1.0 : 0.0;
    });
    return max_over_ranks(std::max(worst, aside_deepens_ ? 1.0 : 0.0)) > 0.0;
}

StepError World::fail(StepError e) {
    // leave the state as it was before the step (the saved copies follow a renumbering)
    std::copy(pipeline_.saved_v.begin(), pipeline_.saved_v.end(), bodies.velocity.begin());
    std::copy(pipeline_.saved_w.begin(), pipeline_.saved_w.end(), bodies.angular_velocity.begin());
    return e;
}

World::Prepared World::prepare_solve(double h, StepAt at) {
    StepPipeline& p = pipeline_;
    Prepared out;
    StageClock clock;
    place_kinematic(bodies, time, time, h, true);  // kinematic poses at t, velocities over [t, t + h]
    apply_forces(bodies, simulation.gravity, h);                         // 1. ν*
    const std::vector<WallState> wall_at = wall_states(walls, time, time, h);  // poses at t, motion over [t, t + h]
    out.margins = choose_margins(bodies, wall_at, simulation.gravity, solver.envelope, h, p.reach, margin_floor_);
    clock.lap(diag_.time_forces);
    out.error = check_finite(bodies, simulation.max_speed, "after the forces", at);
    if (out.error.ok && !std::isfinite(out.margins.envelope))
        out.error = StepError::of(StepFault::NonFinite, "non-finite collision margins after the forces");
    if (!out.error.ok) {
        contacts_.clear();
        return out;
    }
    out.error = candidate_pairs(at);  // 2.
    if (!out.error.ok) {
        contacts_.clear();
        return out;
    }
    const bool lean = lean_step();
    if (lean) p.broad = BroadPhaseScratch{};
    clock.lap(diag_.time_broad);
    out.error = check_crowding(p.pairs, bodies, out.margins.envelope, h, at);
    if (!out.error.ok) {
        contacts_.clear();
        return out;
    }
    // the joints' bodies first (build_joint_rows reports any that are gone): the set-aside
    // test needs to know which bodies the solve moves through them
    if (!joints.empty()) {
        map_joint_bodies(joints, bodies, p.joint_a, p.joint_b);
    } else {
        p.joint_a.clear();
        p.joint_b.clear();
    }
    Collided collided = collide_and_assemble({.bodies = bodies,                 // 3.–4.
                                              .walls = walls,
                                              .states = wall_at,
                                              .pairs = p.pairs,
                                              .reach = p.reach,
                                              .wall_margin = out.margins.wall,
                                              .materials = materials,
                                              .solver = solver,
                                              .h = h,
                                              .warm = warm_,
                                              .lean = lean,
                                              // not with re-linearised solves, whose
                                              // contacts change with the estimate
                                              .set_aside = !relinearising(),
                                              .gravity = simulation.gravity,
                                              .at = at,
                                              .joint_a = p.joint_a,
                                              .joint_b = p.joint_b},
                                             contacts_, batch_, p.collide);
    diag_.time_narrow = collided.narrow_seconds;
    out.colours = collided.colours;
    out.error = std::move(collided.error);
    if (!out.error.ok) return out;
    clock.restart();
    out.error = build_joint_rows(joints, bodies, solver, h, at, p.joint_a, p.joint_b,
                                 batch_.bilateral);                      // 4b.
    clock.lap(diag_.time_assemble);
    diag_.time_assemble += collided.assemble_seconds;
    return out;
}

StepError World::candidate_pairs(StepAt at) {
    // The broad phase's pairs at the bodies' reaches (stage 2), from the pairs kept by an
    // earlier search while every body stays within its skin (collision/kept_pairs.hpp):
    // the same pairs either way. Not for a large run (the kept positions and pairs would
    // sit beside its peak) nor with periodic axes (a body wrapping round jumps a period).
    StepPipeline& p = pipeline_;
    const bool renumber_now = simulation.renumber_interval > 0 && step_count % simulation.renumber_interval == 0;
    const bool keep = keep_pairs && !lean_step() && !simulation.periodic.any();
    if (!keep) p.kept = KeptPairs{};
    const bool covered = keep && p.kept.cover(bodies.position, p.reach);
    diag_.kept_pairs = covered && !renumber_now;
    if (diag_.kept_pairs) {
        filter_kept_pairs(p.kept, bodies.position, p.reach, p.pairs);
        orient_by_id(bodies, p.pairs);
        ++p.kept.served;
        return {};
    }
    if (!keep || renumber_now) {
        // A renumbering takes the broad phase's own order, the bodies' Morton order at this
        // step, so the bodies sit where they would have without kept pairs (frames list
        // them in that order); kept pairs that still cover follow the new numbering.
        StepError e = find_pairs(bodies, p.reach, simulation.periodic, at, p.pairs, p.broad);
        if (!e.ok || !renumber_now) return e;
        renumber(p.broad.order, bodies, p.reach, p.pairs, p.saved_v, p.saved_w, p.renumbered);
        if (!covered) {
            p.kept.clear();
            return e;
        }
        apply_order(p.broad.order, p.kept.position);
        apply_order(p.broad.order, p.kept.reach);
        renumber_pairs(p.renumbered, p.kept.pairs);
        return e;
    }
    // A search whose pairs served no step: the bodies outrun the skin, so search without one.
    if (!p.kept.empty() && p.kept.served == 0) p.kept.wait = KeptPairs::kWaitAfterMiss;
    if (p.kept.wait > 0) {
        --p.kept.wait;
        p.kept.clear();
        return find_pairs(bodies, p.reach, simulation.periodic, at, p.pairs, p.broad);
    }
    if (const std::string why = search_kept_pairs(bodies.position, bodies.radius, p.reach, p.kept, p.broad);
        !why.empty())
        return broad_phase_error(why, at);
    filter_kept_pairs(p.kept, bodies.position, p.reach, p.pairs);
    orient_by_id(bodies, p.pairs);
    return {};
}

bool World::bodies_graded() const {
    double lightest = 0.0, heaviest = 0.0;  // as 1/m
    for (const double im : bodies.inv_mass)
        if (im > 0.0) {
            lightest = std::max(lightest, im);
            heaviest = heaviest == 0.0 ? im : std::min(heaviest, im);
        }
    return heaviest > 0.0 && lightest > SolverSettings::kClusterMassRatio * heaviest;
}

std::string World::rank_step_refusal() const {
    if (distributed() && on_ranks.owner.size() != bodies.size()) return "an owner for every body held";
    if (!joints.empty()) return "joints do not run over ranks yet";
    if (simulation.periodic.any()) return "periodic axes do not run over ranks yet";
    for (std::size_t k = 0; k < materials.pair_rolling.size(); ++k)
        if (materials.pair_rolling[k] > 0.0 || materials.pair_spinning[k] > 0.0)
            return "rolling and spinning resistance do not run over ranks yet";
    if (relinearising()) return "the position-level variant (position_iterations) does not run over ranks yet";
    if (record_contacts || record_wall_contacts) return "contact recording does not run over ranks yet";
    return "";
}

StepError World::agreed(StepError e) const {
    return distributed() ? agree_over_ranks(e, *on_ranks.ranks) : e;
}

World::Prepared World::prepare_on_ranks(double h, StepAt at) {
    Ranks& ranks = *on_ranks.ranks;
    Prepared out;
    StageClock clock;
    place_kinematic(bodies, time, time, h, true);  // every rank places every kinematic body
    apply_forces(bodies, simulation.gravity, h);                         // 1. ν*
    const std::vector<WallState> wall_at = wall_states(walls, time, time, h);
    clock.lap(diag_.time_forces);
    out.error = agreed(check_finite(bodies, simulation.max_speed, "after the forces", at));
    if (!out.error.ok) {
        contacts_.clear();
        return out;
    }
    RankCollided c = collide_on_rank({.bodies = bodies,                  // 1b.–4.
                                      .owner = on_ranks.owner,
                                      .walls = walls,
                                      .states = wall_at,
                                      .periodic = simulation.periodic,
                                      .materials = materials,
                                      .solver = solver,
                                      .h = h,
                                      .warm = warm_,
                                      .set_aside = true,
                                      .gravity = simulation.gravity,
                                      .at = at,
                                      .block_edge = on_ranks.block_edge,
                                      .floor = &margin_floor_},
                                     ranks);
    // stages 1b-4 are one call here: their time is the narrow phase's (the take-back adds
    // its colouring and assembly to time_assemble)
    clock.lap(diag_.time_narrow);
    diag_.time_broad = 0.0;
    diag_.time_assemble = 0.0;
    out.margins = c.margins;
    out.colours = c.colours;
    out.error = std::move(c.error);
    if (out.error.ok && !std::isfinite(out.margins.envelope))
        out.error = StepError::of(StepFault::NonFinite, "non-finite collision margins after the forces");
    if (!out.error.ok) {
        contacts_.clear();
        return out;
    }
    contacts_ = std::move(c.contacts);
    batch_ = std::move(c.batch);
    pipeline_.reach = std::move(c.reach);  // (outran reads it after the solve)
    pipeline_.collide.aside = std::move(c.aside);
    return out;
}

void World::apply_flow() {
    // Bodies leave and arrive only here, between steps: every array keyed by dense index
    // (margins, pairs, contacts, colours, joint indices, restore copies) is rebuilt at the
    // start of the next step, and the warm start matches by stable id.
    if (emitters.empty() && outlets.empty()) return;
    if (distributed()) {
        apply_flow_on_ranks();
        return;
    }
    drain(outlets, bodies);
    if (emitters.empty()) return;
    for (uint64_t id : bodies.id) next_id = std::max(next_id, id + 1);
    for (Emitter& e : emitters) emit(e, bodies, walls, materials, time, next_id, simulation.periodic);
}

void World::apply_flow_on_ranks() {
    // Outlets: every rank removes what it holds in them, and the tallies add what every
    // rank's own bodies carried out (exact sums merged over the ranks: one process's bits).
    // Emitters: a new body must miss every body near the emitter's box, whichever rank holds
    // it, so every rank gathers those (each from its owner, by stable id) and runs the same
    // emitter on them: the same draws, the same bodies, the same tallies on every rank; rank
    // 0 keeps the new bodies as its own, and the next redistribution sends them to their
    // blocks' ranks.
    Ranks& ranks = *on_ranks.ranks;
    const int me = ranks.rank();
    if (!outlets.empty()) {
        std::vector<ExactSum> out = drain_on_rank(outlets, bodies, on_ranks.owner, me);
        merge_over_ranks(out, ranks);
        add_drained(outlets, out);
    }
    if (emitters.empty()) return;
    for (uint64_t id : bodies.id) next_id = std::max(next_id, id + 1);
    int64_t next = int64_t(next_id);
    ranks.max(std::span<int64_t>(&next, 1));
    next_id = uint64_t(next);
    for (Emitter& e : emitters) {
        std::string mine;
        for (std::size_t i = 0; i < bodies.size(); ++i)
            if (on_ranks.owner[i] == me && near_box(e.min, e.max, e.size.max, bodies.position[i], bodies.radius[i])) {
                put_bytes(mine, bodies.id[i]);
                put_vec(mine, bodies.position[i]);
                put_bytes(mine, bodies.radius[i]);
            }
        std::vector<std::string> all;
        ranks.all_gather(mine, all);
        struct Near {
            uint64_t id;
            Vec3 x;
            double r;
        };
        std::vector<Near> near;
        for (const std::string& m : all)
            for (std::size_t at = 0; at < m.size();) {
                Near n;
                n.id = take_bytes<uint64_t>(m, at);
                n.x = take_vec(m, at);
                n.r = take_bytes<double>(m, at);
                near.push_back(n);
            }
        std::sort(near.begin(), near.end(), [](const Near& a, const Near& b) { return a.id < b.id; });
        BodyStore around;  // the bodies near the box, as spheres of their bounding radii
        for (const Near& n : near) around.add_sphere(n.id, n.x, n.r, 1.0, 0);
        const std::size_t known = around.size();
        emit(e, around, walls, materials, time, next_id);
        if (me != 0) continue;
        for (std::size_t i = known; i < around.size(); ++i) {
            bodies.append_from(around, i);
            on_ranks.owner.push_back(0);
        }
    }
}

World::Problem World::next_problem() const {
    World w = *this;
    const double h = w.simulation.adaptive ? w.choose_step(kNoTimeLimit).h : w.simulation.dt;
    // the step's restore copies, as take_step makes them: a renumbering step permutes them
    // (they were the last step's, of another body count once an emitter or outlet acted)
    w.pipeline_.saved_v.assign(w.bodies.velocity.begin(), w.bodies.velocity.end());
    w.pipeline_.saved_w.assign(w.bodies.angular_velocity.begin(), w.bodies.angular_velocity.end());
    w.solver.gravity = w.simulation.gravity.norm();  // as take_step sets it
    w.prepare_solve(h, {w.time, w.step_count + 1});
    return {std::move(w.bodies), std::move(w.batch_), std::move(w.contacts_), h};
}

void World::reset_wall_loads() {
    wall_loads_.impulse.assign(walls.size(), Vec3::Zero());
    wall_loads_.angular_impulse.assign(walls.size(), Vec3::Zero());
    wall_loads_.time = 0.0;
}

void World::accumulate_wall_loads(double h) {
    // The wall receives −P of each contact's impulse P = γ_n n + γ_u u + γ_w (n × u) on body
    // B, and −A γ_k of a rolling/spinning entry's torque impulse (a couple: the same about
    // any point). Each component is an exact sum (core/exact_sum.hpp), so a wall's load has
    // the same bits whatever the order of its contacts (bodies held in another order, or on
    // other ranks), not only for any thread count.
    wall_contacts_.clear();
    wall_contacts_.step = h;
    if (walls.empty()) return;
    if (wall_loads_.impulse.size() != walls.size()) reset_wall_loads();
    wall_loads_.step_impulse.assign(walls.size(), Vec3::Zero());
    std::vector<std::array<ExactSum, 6>> sums(walls.size());  // impulse, angular impulse
    const RollingBatch& rolling = batch_.rolling;
    std::size_t k = 0;  // rolling entries are ordered by contact
    for (std::size_t i = 0; i < batch_.size(); ++i) {
        if (!on_wall(i)) continue;
        const uint64_t w = contacts_.key_a[i] & ~kWallKeyBit;
        const ContactFrame frame = contact_frame(batch_, i);
        const Vec3& n = frame.n;
        const Vec3& u = frame.u;
        const Vec3& v = frame.w;
        const Vec3& g = batch_.gamma[i];
        const Vec3 on_wall = -(g[0] * n + g[1] * u + g[2] * v);
        while (k < rolling.contact.size() && rolling.contact[k] < i) ++k;
        Vec3 couple = Vec3::Zero();
        if (k < rolling.contact.size() && rolling.contact[k] == i) {
            const Vec3& t = rolling.gamma[k];
            couple = -(t[0] * n + t[1] * u + t[2] * v);
        }
        const std::size_t b = std::size_t(batch_.b[i]);
        const Vec3 point = contact_point(i);
        const Vec3 moment = (point - wall_reference_point(walls[w])).cross(on_wall) + couple;
        for (int c = 0; c < 3; ++c) {
            sums[w][c].add(on_wall[c]);
            sums[w][3 + c].add(moment[c]);
        }
        if (record_wall_contacts) {
            wall_contacts_.wall.push_back(uint32_t(w));
            wall_contacts_.body.push_back(bodies.id[b]);
            wall_contacts_.point.push_back(point);
            wall_contacts_.impulse.push_back(on_wall);
            wall_contacts_.angular_impulse.push_back(couple);
        }
    }
    // over ranks each wall contact is on its body's rank alone: the ranks' sums merged
    if (distributed()) merge_over_ranks(std::span<ExactSum>(sums.data()->data(), 6 * sums.size()), *on_ranks.ranks);
    for (std::size_t w = 0; w < walls.size(); ++w) {
        const Vec3 impulse(sums[w][0].value(), sums[w][1].value(), sums[w][2].value());
        const Vec3 angular(sums[w][3].value(), sums[w][4].value(), sums[w][5].value());
        wall_loads_.step_impulse[w] = impulse;
        wall_loads_.impulse[w] += impulse;
        wall_loads_.angular_impulse[w] += angular;
    }
    wall_loads_.time += h;
}

void World::record_step_contacts(double h) {
    ContactRecord& r = contact_record_;
    r.clear();
    r.step = h;
    const std::size_t n = batch_.size();
    contact_record_keys_.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        contact_record_keys_[i] = {contacts_.key_a[i], contacts_.key_b[i], contacts_.feature[i]};
        const bool wall = on_wall(i);
        const std::size_t b = std::size_t(batch_.b[i]);
        const Vec3 point = contact_point(i);
        const ContactFrame frame = contact_frame(batch_, i);
        const Vec3& nrm = frame.n;
        const Vec3& u = frame.u;
        const Vec3& g = batch_.gamma[i];
        r.wall.push_back(wall ? int32_t(contacts_.key_a[i] & ~kWallKeyBit) : -1);
        // a body that does not move (fixed or kinematic) is A without an index: its key is its id
        r.a.push_back(wall ? ContactRecord::kWallSide : contacts_.key_a[i]);
        r.b.push_back(bodies.id[b]);
        r.point.push_back(point);
        r.normal.push_back(nrm);
        r.gap.push_back(contacts_.gap[i]);
        r.normal_impulse.push_back(g[0]);
        r.tangential_impulse.push_back(g[1] * u + g[2] * frame.w);
        // through the levers, so that across a periodic boundary the segment joins images
        r.segment.push_back({batch_.a[i] == kNoBody ? point : Vec3(point - batch_.lever_a[i]),
                             Vec3(point - batch_.lever_b[i])});
    }
}

const ContactRecord& World::contact_record() const {
    std::vector<ContactKey>& keys = contact_record_keys_;
    if (keys.empty()) return contact_record_;
    ContactRecord& r = contact_record_;
    std::vector<uint32_t> order(keys.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = uint32_t(i);
    std::sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) { return keys[x] < keys[y]; });
    r.for_each_row_array([&](auto& v) { apply_order(order, v); });
    keys.clear();
    return r;
}

double World::kinetic_energy() const { return kinetic_energy_sum().value(); }
double World::potential_energy() const { return potential_energy_sum().value(); }

ExactSum World::kinetic_energy_sum() const {
    // An exact sum (core/exact_sum.hpp): the same bits whatever the order the bodies are
    // held in, or the threads, or (merged over them) the ranks.
    const auto held_only = [&](std::size_t i) {  // over ranks: the own bodies' part
        return distributed() && on_ranks.owner[i] != on_ranks.ranks->rank();
    };
    return exact_sum_of(bodies.size(), [&](std::size_t i) {
        if (bodies.inv_mass[i] == 0.0 || held_only(i)) return 0.0;
        const Vec3& w = bodies.angular_velocity[i];
        return 0.5 * bodies.velocity[i].squaredNorm() / bodies.inv_mass[i] +
               0.5 * w.dot(w.cwiseQuotient(bodies.inv_inertia[i]));
    });
}

ExactSum World::potential_energy_sum() const {
    return exact_sum_of(bodies.size(), [&](std::size_t i) {
        if (distributed() && on_ranks.owner[i] != on_ranks.ranks->rank()) return 0.0;  // another rank's
        return bodies.inv_mass[i] != 0.0 ? -simulation.gravity.dot(bodies.position[i]) / bodies.inv_mass[i] : 0.0;
    });
}

}  // namespace talus

#pragma once
/// World: everything one run simulates, and `step`, the pipeline of docs/design.md §1 as a short
/// list of stage calls (engine/world/pipeline.hpp). Each stage takes its data explicitly.
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/body_store.hpp"
#include "core/contacts.hpp"
#include "core/exact_sum.hpp"
#include "core/joints.hpp"
#include "core/materials.hpp"
#include "core/ranks.hpp"
#include "core/settings.hpp"
#include "core/walls.hpp"
#include "engine/distributed/decomposition.hpp"
#include "engine/flow/flow.hpp"
#include "engine/world/diagnostics.hpp"
#include "engine/world/pipeline.hpp"
#include "engine/world/step_error.hpp"
#include "solvers/assemble.hpp"
#include "solvers/solver_result.hpp"
#include "solvers/warm_start.hpp"

namespace talus {

/// The state of a run and its step. The stages (engine/world/pipeline.hpp) read and write
/// only what World passes them; their scratch lives in a StepPipeline, not in World.
class World {
public:
    SimulationSettings simulation;
    SolverSettings solver;
    MaterialTable materials;
    std::vector<Wall> walls;
    BodyStore bodies;
    /// From this many bodies on, buffers that serve one stage of the step are given back as
    /// soon as that stage is done, so that they do not add up at the peak: the broad phase's
    /// grid, the colouring's tables, the candidate pairs and margins and the previous step's
    /// warm-start entries before the solve, the contacts' geometry once assembled, the room
    /// of the contacts set aside, the solver's workspace after each solve (also between the
    /// take-back's re-solves) and again after the push-out, whose copies go too, and at the
    /// step's end the contacts and their batch (contacts() and batch() are then empty between
    /// steps: the warm start holds what the next step needs); ν* is computed again for a
    /// re-solve instead of kept (free_velocities). Small runs keep them across steps and
    /// allocate nothing per step. The trajectory has the same bits either way. Not with the
    /// position-level variant, which reuses them.
    std::size_t lean_bodies = 200000;
    /// Bilateral constraints, by stable body id (core/joints.hpp); each step turns
    /// them into solver rows at the current poses (solvers/bilateral.hpp).
    std::vector<Joint> joints;
    /// Sources and sinks (engine/flow/flow.hpp), run at the end of every step, after the
    /// positions are integrated: outlets remove first, then emitters add.
    std::vector<Emitter> emitters;
    std::vector<Outlet> outlets;
    /// Stable id of the next emitted body. Each flow stage raises it to at least the
    /// largest id present + 1, and it only grows: an id is never reused within a run.
    uint64_t next_id = 0;

    double time = 0.0;       ///< [s]
    uint64_t step_count = 0;

    /// Set when this World is one rank's part of a run over several ranks (engine/
    /// distributed/rank_world.hpp; docs/mpi.md, "The step over ranks"): `bodies` holds the
    /// rank's own bodies, the ghosts of the blocks around them and every kinematic body,
    /// `owner` each one's rank; every rank calls step() together and the step's collectives
    /// go through `ranks`. The own bodies then move as in one process, bit for bit. Not yet
    /// with joints, periodic axes, rolling or spinning resistance, the position-level
    /// variant or contact recording (step() refuses them), and without the over-constrained
    /// check; wall loads, outlet tallies, energies and the step's counts in the diagnostics
    /// are the rank's own part. Emitted bodies enter on rank 0.
    struct OnRanks {
        Ranks* ranks = nullptr;
        std::vector<int32_t> owner;  ///< per body of `bodies`
        /// the decomposition's block edge [m] (a reach beyond half of it: StepFault::BlocksTooSmall)
        double block_edge = std::numeric_limits<double>::infinity();
        /// the decomposition the held bodies are placed by (every rank the same), the
        /// imbalance of its loads when it was cut, and how many times the run decomposed its
        /// bodies again since hold_part (rebalance: when the load has drifted, or the blocks
        /// widen)
        Decomposition decomposition;
        double cut_imbalance = 1.0;
        uint64_t decompositions = 0;
        /// what this rank sent since hold_part, for the end of a run: its solves' iterations
        /// and halo messages and bytes (every solve of the steps), and the bytes of bodies and
        /// warm start between the steps
        uint64_t solve_iterations = 0, solve_messages = 0, solve_bytes = 0, between_bytes = 0;
        /// steps taken again by every rank on the whole world, for the over-constrained
        /// check (StepFault::CheckWhole)
        uint64_t whole_steps = 0;
        /// For tests: take a capped step again on the whole world whenever the first test
        /// finds a growing impulse, without asking for an absurd one (detail::may_be_unbounded),
        /// as before session 61: many retakes, some after the adaptive step has halved.
        bool whole_on_candidates = false;
        /// the whole run's clump templates, and each clump body's among them by stable id
        /// (a held body carries a copy of its template: the whole state gathered for the
        /// output names the run's, as one process does; gather_whole)
        ClumpTable clumps;
        std::unordered_map<uint64_t, uint32_t> clump_template;
    };
    OnRanks on_ranks;
    /// (its time between the steps goes into the step's diagnostics)
    friend StepStatus step_on_ranks(World& w, double until);
    bool distributed() const { return on_ranks.ranks != nullptr; }
    /// A large run (lean_bodies or more bodies, in one process): its steps give their
    /// buffers back, and its runner waits for each frame to reach the file (io/runner.cpp).
    bool large_run() const { return bodies.size() >= lean_bodies && !distributed(); }
    /// Why this World cannot step over ranks ("" when it can).
    std::string rank_step_refusal() const;
    /// Whether two moving bodies differ in mass by more than
    /// SolverSettings::kClusterMassRatio (fixed and kinematic bodies aside): where bgs's
    /// cluster sweeps are on by default, which over MPI ranks do not run (the run says so).
    bool bodies_graded() const;

    /// Advance by one step: h = simulation.dt, or with simulation.adaptive the step
    /// choose_step(until) gives, ending exactly at `until` when that is near (a frame or
    /// the end of a stage; +∞: no such time). An adaptive step the broad phase finds too
    /// long for the speeds (too many candidate pairs), or whose solve did not converge and
    /// left bodies beyond max_speed, is halved and taken again, down to min_dt. On failure (a StepError: non-finite or too fast bodies, too many candidate
    /// pairs, shapes with no contact routine, a joint whose body is gone, a refused or
    /// over-constrained contact problem, memory exhausted) returns it and leaves the state
    /// as it was before the step (except for a renumbering of the bodies, which changes no
    /// stable id).
    StepStatus step(double until = kNoTimeLimit);
    /// Every setting out of its range (SimulationSettings, SolverSettings and the
    /// materials' problems(), the same ranges the scene reader applies), one message each:
    /// step() refuses to start with any (StepFault::InvalidSettings).
    std::vector<std::string> settings_problems() const;
    static constexpr double kNoTimeLimit = std::numeric_limits<double>::infinity();
    /// Any body may move kFreeFlight × r_min in one step (the smallest radius): its
    /// margin, 1.25 h ‖v‖, then stays about a grain, so its candidate pairs are its near
    /// neighbours whatever its speed.
    static constexpr double kFreeFlight = 1.0;
    /// A spinning non-sphere's contact points may leave their tangent line by
    /// kTurnDrift × kPenetrationTarget r_min in one step (choose_step): the share of an
    /// overlap the push-out takes back per step at the default γ_s, so that the overlap a
    /// drift of one sign sustains stays within the penetration target.
    static constexpr double kTurnDrift = 0.2;

    /// The adaptive step from the current state (docs/design.md §4, "The adaptive step"):
    /// the largest h with s h ≤ c r_min for the speed s at which bodies in contact slide
    /// across each other (c = step_fraction), ‖g‖ h² ≤ kPenetrationTarget r_min for a grain
    /// at rest on its support, ½ a h² ≤ kTurnDrift kPenetrationTarget r_min for the largest
    /// centripetal acceleration a of a non-sphere's contact points,
    /// ‖v‖max h + ‖g‖ h² ≤ kFreeFlight r_min for the fastest body,
    /// and the penetration control, within [min_dt, max_dt], shortened
    /// to land on `until` when it would pass it (the remaining time cut into equal steps,
    /// so that no sliver is left). A pure function of the bodies, the carried state, the
    /// settings, `time` and `until`: a resumed run chooses the same steps.
    struct StepChoice {
        double h = 0.0;       ///< [s]
        double t1 = 0.0;      ///< time at the end of the step [s] (exactly `until` when it lands)
        double chosen = 0.0;  ///< h before it was shortened to land on `until` [s]
    };
    /// What choose_step reads of the steps before, besides the bodies (carried state).
    struct StepControl {
        /// Largest speed at which two bodies in loaded contact (γ_n > 0) moved across each
        /// other's normal at the end of the last step [m/s]: what turns the contacts'
        /// normals, and so what bounds the linearisation error.
        double slip_speed = 0.0;
        double chosen = 0.0;       ///< the last step's h before landing on a time [s]; 0: none
        double penetration = 0.0;  ///< largest penetration at the last step's start [m]
        double previous_penetration = 0.0;  ///< the same one step earlier [m]
    };
    /// The penetration the adaptive step aims to stay under, as a share of the smallest
    /// radius: 1 % of r, half a per cent of the diameter (half what a user accepts).
    static constexpr double kPenetrationTarget = 0.01;
    /// The rest bound of the adaptive step (choose_step): √(kPenetrationTarget r_min / g),
    /// the step in which a grain whose support the solve left unresolved sinks the
    /// penetration target under gravity g [m/s²]; +∞ without gravity. A scene's default
    /// max_dt is this for its smallest grain (io/scene/run_tables.cpp).
    static double rest_step(double r_min, double g) {
        return g > 0.0 ? std::sqrt(kPenetrationTarget * r_min / g) : std::numeric_limits<double>::infinity();
    }
    /// The smallest thickness radius a dynamic body of this process has or an emitter can
    /// draw [m] (+∞ for neither): the r_min of a scene's default envelope and max_dt and of
    /// the end-of-run "% of the smallest diameter". Static and kinematic bodies do not
    /// count (a small fixed obstacle sets no grain's scale).
    double smallest_radius_to_come() const;
    /// The separate push-out pass runs when an overlap is deeper than this share of
    /// kPenetrationTarget r_min, the depth at which the penetration control starts to act.
    static constexpr double kPushOutSlop = 0.25;
    /// The push-out pass stops at a residual of this share of its fastest push (its v_c):
    /// it takes back γ_s of each overlap per step, so an error of a tenth of the deepest
    /// push moves that correction by 2 % of the overlap, and the next step sees what is
    /// left. On the shared random pack: 68 → 35 iterations per pass, 9.0 → 4.2 s of 70–80 s,
    /// the same largest penetration (0.22 → 0.23 % of d) and mean height (benchmarks/README.md).
    static constexpr double kPushOutRelativeTolerance = 0.1;
    /// The push-out pass's sweeps while its deepest overlap is within kPenetrationTarget
    /// r_min (deeper: the step's iteration cap). A pass from zero carries a push about a
    /// contact a sweep; beyond a few tens it lifts whole columns (its deep mode) rather than
    /// separating overlaps, and the next step's pass starts from what it left. A pass
    /// stopped there that would deepen an overlap past the slop, or close a gap or a
    /// shallower overlap past it, goes on to the cap (deepens_or_closes). Measured
    /// (benchmarks/README.md, session 40): the lattice twin 12.5 → 10.2–10.6 s (its passes
    /// had all run to the cap of 100; 9.1–9.5 s with 20–50 sweeps and no check), the random
    /// pack within the run's spread, the bidisperse bed's largest overlap 0.30 → 0.54 % of
    /// the small diameter. Session 46: letting a capped pass close contacts up to the slop
    /// (before: not at all) took the random pack's push-out from 11,802 to 6,912 sweeps.
    static constexpr int kPushOutSweeps = 25;
    /// A capped pass set off by at most kPushOutFewContacts overlaps past the slop stops
    /// after kPushOutFewSweeps instead. Such a pass is a local correction: from zero, a few
    /// sweeps push the deep pairs and their neighbours apart, and its other sweeps only take
    /// back shallower overlaps elsewhere, down to a tenth of the deepest push, which the next
    /// pass would take back as well. On a pour nearly every pass is of this kind (the shared
    /// random pack: all 284 passes had 1–10 contacts past the slop, and each took about 24
    /// sweeps); a lattice's passes mostly have hundreds to thousands and keep
    /// kPushOutSweeps. The stop still answers to deepens_or_closes. Measured in
    /// benchmarks/README.md, session 48.
    static constexpr std::size_t kPushOutFewContacts = 16;
    static constexpr int kPushOutFewSweeps = 4;
    /// An adaptive step whose solve stopped short of its tolerance (the iteration cap) is
    /// taken again at half its length when the velocities it left would carry an overlap
    /// past kRetakeDepth × kPenetrationTarget r_min by the step's end, deeper than the step
    /// found it by more than the push-out's slop (World::deepens_past_limit): a column of
    /// grains struck by a shaken floor, whose impulse Gauss–Seidel carries a few grains a
    /// sweep, is left closing at a share of the impact's speed, and a halved step closes
    /// half as far. At most kMaxRetakes halvings a step, and never below min_dt.
    /// docs/design.md §4, "Penetration control"; measured in benchmarks/README.md, session 54.
    static constexpr double kRetakeDepth = 1.5;
    static constexpr int kMaxRetakes = 3;
    /// A step whose solve sends bodies past their collision margins (outrunning: a light
    /// grain struck by a heavy one) is taken again at the same length with those bodies'
    /// margins widened to 1.25 × the motion the solve gave them, warm-started by its
    /// impulses, so that a pair they close is a candidate; at most kMaxMarginRetakes times
    /// a step (a retake whose solve sends a body further still widens again), then the
    /// step goes on. docs/design.md §3, "Bodies that outrun their margins".
    static constexpr int kMaxMarginRetakes = 3;
    StepChoice choose_step(double until) const;

    /// The problem the next step would solve, without advancing: bodies at ν* (velocities
    /// after forces) and the assembled, coloured batch with its warm start. Benchmarks run
    /// every solver on it; the state of this World is unchanged.
    struct Problem {
        BodyStore bodies;
        AssembledBatch batch;
        ContactList contacts;  ///< the batch's contacts, in its order (keys, features, geometry)
        double h = 0.0;        ///< the step it would take [s]
    };
    Problem next_problem() const;

    const StepDiagnostics& diagnostics() const { return diag_; }
    /// The last step's geometric contacts and assembled, solved batch (tests, output);
    /// empty between the steps of a large run (lean_bodies).
    const ContactList& contacts() const { return contacts_; }
    const AssembledBatch& batch() const { return batch_; }
    const SolverResult& solver_result() const { return result_; }
    /// The impulses of the last step's contacts, by the two stable ids and the feature,
    /// that the next step's assembly starts from.
    const WarmStartCache& warm_start() const { return warm_; }

    /// Σ ½ m v² + ½ ωᵀ J ω and Σ −m g·x of the dynamic bodies [J]; over ranks, of this
    /// rank's own bodies (the step's diagnostics hold the whole run's).
    double kinetic_energy() const;
    double potential_energy() const;

    /// Loads on the walls since the last reset_wall_loads() (one entry per wall).
    const WallLoads& wall_loads() const { return wall_loads_; }
    void reset_wall_loads();
    /// Keep each step's body–wall contacts and their impulses in wall_contacts() (off by
    /// default: it costs a copy per wall contact and step).
    bool record_wall_contacts = false;
    const WallContactList& wall_contacts() const { return wall_contacts_; }
    /// Stage 2 may take a step's candidate pairs from an earlier search while every body
    /// stays within its skin (collision/kept_pairs.hpp): the same pairs, found for less.
    /// false runs the broad phase every step (a test and a benchmark compare the two).
    bool keep_pairs = true;
    /// Keep each step's contacts, body–body and body–wall, in contact_record() (off by
    /// default: it costs a copy of about 150 bytes per contact and step).
    bool record_contacts = false;
    /// The record's rows in the order of the contacts' keys (A, B, feature; sorted when first read
    /// after a step), not in the solve's: that order within a colour follows the candidate
    /// pairs', which kept pairs change (collision/kept_pairs.hpp), and a resumed run must
    /// write the same rows as the uninterrupted one.
    const ContactRecord& contact_record() const;

    /// How the step's contact problems are solved (the solve, the take-back's solves, the
    /// push-out and the position-level passes): solve_ccp in this process when empty.
    /// `talus run` under mpirun sets the solve over the job's ranks (engine/distributed/
    /// solve_over_ranks.hpp). Whatever it is must give solve_ccp's result and bits.
    using ContactSolve =
        std::function<SolverResult(AssembledBatch&, BodyStore&, const SolverSettings&, SolverWorkspace&)>;
    ContactSolve contact_solve;

    /// What one step hands to the next besides the public members: the warm-start cache,
    /// the joints' multipliers (their warm start) and the wall loads summed since the last
    /// reset. With the public members it is the whole state a step depends on, so a World
    /// built from the same scene and given both continues with the same bits
    /// (io/checkpoint.hpp).
    struct CarriedState {
        WarmStartCache warm;
        std::vector<double> joint_lambda;
        WallLoads wall_loads;
        StepControl control;      ///< what the adaptive step reads of the last steps
    };
    CarriedState carried_state() const {
        return {warm_, batch_.bilateral.lambda, wall_loads_, control_};
    }
    void restore_carried_state(CarriedState s) {
        warm_ = std::move(s.warm);
        batch_.bilateral.lambda = std::move(s.joint_lambda);
        wall_loads_ = std::move(s.wall_loads);
        control_ = s.control;
    }

private:
    /// What stages 1–4 hand on to the solve.
    struct Prepared {
        Margins margins;
        std::size_t colours = 0;
        StepError error;
    };
    /// Stages 1–4 of a step (forces … assembly and joint rows), stopping at the first
    /// stage that fails.
    Prepared prepare_solve(double h, StepAt at);
    /// Stage 2 of prepare_solve: the candidate pairs into the pipeline's pairs, renumbering
    /// the bodies when due (StepPipeline::kept, collision/kept_pairs.hpp).
    StepError candidate_pairs(StepAt at);
    /// The same on one rank of several (distributed()): collide_on_rank.
    Prepared prepare_on_ranks(double h, StepAt at);
    /// Over the ranks when distributed(), else x itself (collectives).
    double max_over_ranks(double x) const { return distributed() ? on_ranks.ranks->max_of(x) : x; }
    double min_over_ranks(double x) const { return distributed() ? on_ranks.ranks->min_of(x) : x; }
    bool any_over_ranks(bool x) const { return distributed() ? on_ranks.ranks->any(x) : x; }
    /// How many of the step's contacts (batch_) push faster than `push` (−p_i > push: an
    /// overlap deeper than p = −push h / γ_s), over the ranks each contact once
    /// (counted_on_rank's rule); a collective when distributed().
    std::size_t pushes_past(double push) const;
    StepError agreed(StepError e) const;
    /// The energies' exact sums over this rank's own bodies (all bodies in one process).
    ExactSum kinetic_energy_sum() const;
    ExactSum potential_energy_sum() const;
    /// How many of `c`'s contacts (of the held bodies) this rank counts in the step's
    /// totals: over the ranks, each contact once.
    std::size_t counted_on_rank(const ContactList& c) const;
    /// Whether the contact of bodies a and b counts on this rank (rank `me`): a contact of
    /// bodies on two ranks is on both, and counts on the rank of its first dynamic body
    /// (a, else b: for a wall's or a kinematic body's contact), which holds it.
    bool counts_here(int32_t a, int32_t b, int me) const {
        const bool a_counts = a != kNoBody && bodies.inv_mass[std::size_t(a)] != 0.0;
        return on_ranks.owner[std::size_t(a_counts ? a : b)] == me;
    }
    /// One step of length h ending at t1 (stages 1–7). `may_shorten`: an unconverged solve
    /// that deepens_past_limit fails the step with StepFault::Unresolved (World::step then
    /// takes it again, shorter) instead of going on.
    StepStatus take_step(double h, double t1, bool may_shorten = false);
    /// Whether the solved velocities would carry some contact's overlap past kRetakeDepth ×
    /// kPenetrationTarget r_min by the end of a step of length h, deeper than at the step's
    /// start by more than the push-out's slop (the linear gap Φ + h v_n, v_n with the wall's
    /// own velocity); over ranks, on any rank.
    bool deepens_past_limit(double h);
    /// kRetakeDepth × and kPushOutSlop × kPenetrationTarget r_min (deepens_past_limit); both
    /// 0 without a dynamic body. Over ranks, the smallest radius of every rank.
    struct RetakeBounds {
        double limit, slop;
        /// Whether a pair at gap Φ closing at normal speed v_n ends a step of length h past
        /// the limit and deeper than it began by more than the slop (−(Φ + h v_n) > limit
        /// and > slop − Φ).
        bool deepens(double gap, double vn, double h) const {
            const double depth = -(gap + h * vn);
            return depth > limit && depth > slop - gap;
        }
    };
    RetakeBounds retake_bounds();
    /// Whether a pair the take-back leaves aside would deepen past the retake limit at the
    /// solved velocities, as deepens_past_limit asks of the solve's own contacts (on this
    /// rank's pairs aside; take_back_and_resolve sets aside_deepens_ from it).
    bool aside_deepens(double h);
    bool relinearising() const { return solver.position_iterations > 0; }
    /// This step gives its stage buffers back (lean_bodies; never when relinearising).
    bool lean_step() const { return large_run() && !relinearising(); }
    /// contact_solve, or solve_ccp without one, with the pipeline's workspace.
    SolverResult solve_contacts(AssembledBatch& batch, BodyStore& store, const SolverSettings& settings);
    /// ν* again, as stage 1 made it: the velocities saved at the step's start, kinematic
    /// bodies placed, forces applied (the same operations on the same values, so the same
    /// bits as when the step began).
    void free_velocities(double h);
    /// Restores the velocities saved at the step's start and returns `e`.
    StepError fail(StepError e);
    /// `solver` as the solves of a step of length h run it: relaxed_tolerance set to
    /// ε_w min(‖g‖ h, p*/h) when solver.weight_tolerance ε_w is set, else 0 (docs/design.md
    /// §6, "The weight term"); `tolerance` itself is unchanged.
    SolverSettings step_solver(double h) const;
    /// Stage 7: outlets, then emitters, between this step and the next.
    void apply_flow();
    /// The same on one rank of several (distributed()).
    void apply_flow_on_ranks();
    /// The position-level variant (seed 000 §3.6; engine/world/position_level.cpp): re-solve
    /// linearised at q^l + h ν⁺ up to solver.position_iterations times. ν* is in the
    /// pipeline's star_v, star_w.
    void relinearise(double h, double wall_margin, StepAt at);
    /// Stage 5c (engine/world/speculative.cpp): while a contact set aside before the solve
    /// would close with the solved velocities, take it back and solve again from ν* (in the
    /// pipeline's star_v, star_w), warm-started by the solution so far. Returns the colours
    /// of the last solve's contacts.
    std::size_t take_back_and_resolve(double h, bool lean, std::size_t colours);
    /// Stage 5d (engine/world/push_out.cpp, solver.split_push_out): the overlaps' separate
    /// push-out pass; leaves ν⁺ + ν_p in the store for integrate_positions, and
    /// drop_push_out() puts ν⁺ back after it.
    void push_out(double h);
    /// Whether the push-out pass's velocities (in the store) would leave a contact deeper
    /// than both its overlap and the slop [m], beyond its tolerance (a collective over ranks).
    bool deepens_or_closes(double deepest_push, double h, double slop);
    void drop_push_out();

    /// Adds this step's contact impulses on walls to wall_loads_.
    void accumulate_wall_loads(double h);
    /// Copies this step's contacts and impulses into contact_record_ (record_contacts).
    void record_step_contacts(double h);
    /// Whether the last solve's contact i is with a wall (index key_a without kWallKeyBit):
    /// a kinematic body is also an A without an index, keyed by its id without the bit.
    bool on_wall(std::size_t i) const {
        return batch_.a[i] == kNoBody && (contacts_.key_a[i] & kWallKeyBit) != 0;
    }
    /// Contact i's point at the step's start; a large run's contact list keeps no points
    /// (lean_bodies), and B's lever arm gives it.
    Vec3 contact_point(std::size_t i) const {
        return contacts_.point.empty()
                   ? Vec3(bodies.position[std::size_t(batch_.b[i])] + batch_.lever_b[i])
                   : contacts_.point[i];
    }

    // State carried from step to step (carried_state) and the last step's results.
    StepDiagnostics diag_;
    WallLoads wall_loads_;
    WallContactList wall_contacts_;
    mutable ContactRecord contact_record_;  // (sorted on first read: contact_record())
    struct ContactKey {
        uint64_t a, b;
        uint32_t feature;
        auto operator<=>(const ContactKey&) const = default;
    };
    mutable std::vector<ContactKey> contact_record_keys_;  ///< per row while unsorted; empty once sorted
    ContactList contacts_;
    AssembledBatch batch_;
    SolverResult result_;
    bool solved_ = false;  ///< the step being taken reached its solve (result_ is its own)
    bool aside_deepens_ = false;  ///< this step's take-back left a pair aside that deepens (aside_deepens)
    /// Over ranks in parts: the last solve hit its cap with a contact's impulse growing on
    /// some rank (the same on every rank), so the over-constrained check is owed on the whole
    /// problem (StepFault::CheckWhole).
    bool check_whole_ = false;
    /// Where an adaptive step's halvings stood when it failed for a cause only a run over
    /// ranks meets (StepFault::CheckWhole, StepFault::BlocksTooSmall), which step_on_ranks
    /// answers by taking the step again from the same state: the next step() goes on from
    /// here, not from a fresh choose_step, so that it takes the steps one process takes (a
    /// retake after an unresolved solve starts from that solve's impulses: begun again at
    /// the first h, it would solve a problem one process never solved).
    struct StepResume {
        double time = 0.0;  ///< the state it belongs to: `time` and `step_count` then
        uint64_t step_count = 0;
        StepChoice c;
        int retakes = 0;
        int halvings = 0;
    };
    std::optional<StepResume> resume_;
    /// The wider margins the step being taken is taken again with, and how many times
    /// (kMaxMarginRetakes), for the state at margin_at_ (time, step_count). A step() from
    /// that state again (step_on_ranks answering a fault only ranks meet, on the world in
    /// parts or whole) goes on with them, as it goes on from resume_: the step taken again
    /// starts from the impulses of the solve that outran, as in one process.
    MarginFloor margin_floor_;
    int margin_retakes_ = 0;
    std::pair<double, uint64_t> margin_at_{0.0, 0};
    /// The bodies of the last solve that went past their margins (outrunning, gathered
    /// over the ranks), with the margins a step taken again gives them.
    MarginFloor outran(double h);
    SolverSettings step_solver_;  ///< the step's solver settings (step_solver), for its solves
    StepControl control_;
    WarmStartCache warm_;
    // The stages' scratch: buffers only, no state.
    StepPipeline pipeline_;
};

}  // namespace talus

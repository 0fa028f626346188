#pragma once
/// The stages of a step (docs/design.md §1) as functions whose inputs and outputs are their
/// parameters, and StepPipeline, the scratch buffers they reuse from one step to the next.
/// World (world.hpp) owns the state and calls the stages in order; the position-level
/// variant (position_level.cpp) calls the same collide-and-assemble stage at its estimates.
/// A stage that can fail returns a StepError (step_error.hpp); none throws.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "collision/broad_phase.hpp"
#include "collision/kept_pairs.hpp"
#include "collision/narrow_phase.hpp"
#include "core/body_store.hpp"
#include "core/contacts.hpp"
#include "core/joints.hpp"
#include "core/materials.hpp"
#include "core/periodic.hpp"
#include "core/settings.hpp"
#include "core/walls.hpp"
#include "engine/world/step_error.hpp"
#include "solvers/assemble.hpp"
#include "solvers/colouring.hpp"
#include "solvers/solver.hpp"
#include "solvers/solver_result.hpp"
#include "solvers/warm_start.hpp"

namespace talus {

class Ranks;

/// A step stops with an error when the broad phase finds more candidate pairs than this
/// per body (plus 100000): the time step is far too long for the speeds (check_crowding).
inline constexpr std::size_t kMaxPairsPerBody = 64;

/// The time at the start of the step being taken and its number (step_count + 1): what
/// every failure message names.
struct StepAt {
    double time = 0.0;  ///< [s]
    uint64_t step = 0;
};

/// The collision margins of a step (choose_margins).
struct Margins {
    double envelope = 0.0;  ///< largest envelope δ of a pair [m] (diagnostics)
    double wall = 0.0;      ///< a wall's share of a body–wall envelope [m]
    double body = 0.0;      ///< the largest body margin m_i [m] (envelope = max(2 body, body + wall))
};

/// Margins a step is taken again with (World::step): bodies, by stable id in increasing
/// order, whose solve carried them further than their margins, each with the margin its
/// solved motion asks for. choose_margins gives such a body at least that margin.
struct MarginFloor {
    std::vector<uint64_t> id;
    std::vector<double> margin;  ///< [m]
    bool empty() const { return id.empty(); }
    /// The floor of body `body_id`, 0 when it has none.
    double of(uint64_t body_id) const {
        const auto it = std::lower_bound(id.begin(), id.end(), body_id);
        return it != id.end() && *it == body_id ? margin[std::size_t(it - id.begin())] : 0.0;
    }
    /// Adds `more`'s entries, keeping the larger margin of a body in both.
    void merge(const MarginFloor& more);
};

/// Buffers of the narrow phase and the colouring, which collide_and_assemble reuses.
struct CollideScratch {
    NarrowPhaseScratch narrow;
    ColouringScratch colouring;
    ContactList aside;  ///< this step's contacts that cannot close (set_aside_distant)
    ContactList back;   ///< those of them that close after a solve (take_back_closing)
};

/// Scratch of the stages: nothing here is state (a World rebuilt from its state and a fresh
/// pipeline continues with the same bits); it only spares the step its allocations.
struct StepPipeline {
    std::vector<double> reach;          ///< per body: radius + its share of the envelope [m]
    PairList pairs;                     ///< the broad phase's candidate pairs
    BroadPhaseScratch broad;
    KeptPairs kept;                     ///< an earlier search's pairs, while they cover (stage 2)
    CollideScratch collide;
    SolverWorkspace solver;
    std::vector<uint32_t> renumbered;   ///< old index → new index of the last renumbering
    std::vector<Vec3> saved_v, saved_w; ///< velocities at step start, restored on failure
    std::vector<Vec3> star_v, star_w;   ///< ν* of the step (position-level variant)
    std::vector<Vec3> plus_v, plus_w;   ///< ν⁺ while the push-out pass moves the positions
    std::vector<Vec3> push_rhs, push_gamma;  ///< the push-out pass's rows, swapped into the batch
    std::vector<double> push_mu;
    BodyStore predicted;                ///< q̂ of the position-level variant
    ContactList next_contacts;          ///< its contacts and batch
    AssembledBatch next_batch;
    std::vector<int32_t> joint_a, joint_b;  ///< dense indices of each joint's bodies
    WarmStartCache resolve_warm;        ///< a solution taken into the next solve when 5c. colours everything again
    double reassemble_seconds = 0.0;    ///< this step's 5c. colouring and assembly (breakdown)
};

/// Wall-clock seconds between successive laps, for the per-stage breakdown.
class StageClock {
public:
    void restart() { t0_ = Clock::now(); }
    void lap(double& into) {
        const auto t1 = Clock::now();
        into = std::chrono::duration<double>(t1 - t0_).count();
        t0_ = t1;
    }

private:
    using Clock = std::chrono::steady_clock;
    Clock::time_point t0_ = Clock::now();
};

/// Stage 1: ν* = ν + h M⁻¹ f (gravity and the gyroscopic torque) on dynamic bodies.
void apply_forces(BodyStore& bodies, const Vec3& gravity, double h);
/// The body-frame angular velocity ω̄ after a step h of the torque-free Euler equations for
/// principal inverse inertia `inv_j`: the implicit midpoint rule (neither the energy nor
/// |J ω̄| grows), or for an isotropic body the explicit term, zero up to rounding.
Vec3 gyroscopic_step(const Vec3& inv_j, const Vec3& w, double h);

/// How fast body i's surface can close on a neighbour, relative to a frame moving at
/// `frame` [m/s]: ‖v − frame‖, plus ‖ω̄‖ × its bounding radius for a non-sphere (a sphere's
/// spin moves no point of its surface along its normal). What the margins (choose_margins),
/// the set-aside test (set_aside_distant) and the check after the solve (outrunning) bound.
inline double surface_speed(const BodyStore& bodies, std::size_t i, const Vec3& frame) {
    double speed = (bodies.velocity[i] - frame).norm();
    if (bodies.shape[i] != Shape::Sphere) speed += bodies.angular_velocity[i].norm() * bodies.radius[i];
    return speed;
}

/// Stage 1b: each body's reach (radius + margin, into `reach`) and the wall margin, from ν*
/// (docs/design.md §3). `envelope` is the scene's δ_min [m]. A body in `floor` gets at
/// least its margin there (a step taken again after its bodies outran their margins).
Margins choose_margins(const BodyStore& bodies, const std::vector<WallState>& walls,
                       const Vec3& gravity, double envelope, double h, std::vector<double>& reach,
                       const MarginFloor& floor = {});

/// After the solve: the dynamic bodies whose solved motion over the step of length h passed
/// their margin (reach − radius, choose_margins), so that a pair they close may not have been
/// a candidate, each with 1.25 × that motion as its margin for the step taken again. The
/// motion is measured as the margins are: h ‖v⁺ − ½ h g‖ (+ h ‖ω⁺‖ r for a non-sphere),
/// the half of gravity's step that each side of a pair covers. A body passes its margin
/// when its motion exceeds it by more than `slack` [m]. With `owner` and `me`, only the
/// bodies of rank `me`. In increasing id order.
MarginFloor outrunning(const BodyStore& bodies, const std::vector<double>& reach, const Vec3& gravity,
                       double h, double slack, std::span<const int32_t> owner = {}, int me = 0);

/// NaN, Inf or a speed beyond max_speed [m/s]; `when` names the stage in the message, and
/// `solve` (after the solve only) adds whether the solver converged.
StepError check_finite(const BodyStore& bodies, double max_speed, const char* when, StepAt at,
                       const SolverResult* solve = nullptr);

/// Kinematic bodies with periodic boundaries, which the contact routing cannot handle.
StepError check_kinematic_periodic(const BodyStore& bodies, const PeriodicBox& periodic);

/// Stage 2: candidate pairs of the bodies' reaches into `pairs`, each oriented by stable id
/// (orient_by_id).
StepError find_pairs(const BodyStore& bodies, const std::vector<double>& reach,
                     const PeriodicBox& periodic, StepAt at, PairList& pairs,
                     BroadPhaseScratch& scratch);

/// The step's failure for the broad phase's answer `why` (the broad phase could not grid
/// the bodies).
StepError broad_phase_error(const std::string& why, StepAt at);

/// Each pair's first body is the one with the lower stable id (a periodic image shift
/// changes sign when the two swap): a contact is then computed from the same side whatever
/// the dense order, so its bits do not depend on where the bodies sit in memory (or on
/// which rank holds them). find_pairs calls it.
void orient_by_id(const BodyStore& bodies, PairList& pairs);

/// Stage 2b: bodies take the broad phase's order (`order`), and every array keyed by dense
/// index that the step holds so far follows: reach, pairs, the velocities saved at the
/// step's start. `renumbered` receives old index → new index.
void renumber(const std::vector<uint32_t>& order, BodyStore& bodies, std::vector<double>& reach,
              PairList& pairs, std::vector<Vec3>& saved_v, std::vector<Vec3>& saved_w,
              std::vector<uint32_t>& renumbered);

/// Each pair's bodies to their new indices (`renumbered`: old index → new index), the
/// pairs kept in their order: renumber's, and kept pairs that follow a renumbering.
void renumber_pairs(const std::vector<uint32_t>& renumbered, PairList& pairs);

/// Too many candidate pairs per body (kMaxPairsPerBody): the step is far too long.
StepError check_crowding(const PairList& pairs, const BodyStore& bodies, double envelope, double h,
                         StepAt at);
/// The same from the counts: `pairs` candidate pairs for `bodies` bodies, the fastest at
/// `vmax` [m/s] (what ranks sum and take the largest of).
StepError crowding_error(std::size_t pairs, std::size_t bodies, double vmax, double envelope, double h,
                         StepAt at);

/// The narrow phase's "no contact routine" lists (ellipsoids near mesh, cone or orifice
/// walls; clumps and capsules near a mesh of more than 2²⁴ triangles) as the step's error;
/// ok when both are empty.
StepError unsupported_error(const BodyStore& bodies, const NarrowPhaseScratch& narrow, StepAt at);

/// What collide_and_assemble reads.
struct CollideInput {
    const BodyStore& bodies;
    const std::vector<Wall>& walls;
    const std::vector<WallState>& states;  ///< the walls' poses and motion (wall_states)
    const PairList& pairs;
    const std::vector<double>& reach;
    double wall_margin = 0.0;  ///< [m]
    const MaterialTable& materials;
    const SolverSettings& solver;
    double h = 0.0;  ///< [s]
    const WarmStartCache& warm;
    /// give the colouring's tables back once used (lean_bodies)
    bool lean = false;
    /// move the contacts that cannot close within the step out of the solve
    /// (set_aside_distant, into CollideScratch::aside)
    bool set_aside = false;
    Vec3 gravity = Vec3::Zero();  ///< [m/s²]
    StepAt at;
    /// the bodies of the joints (dense indices; kNoBody for the world), whose speeds the
    /// solve changes whatever their contacts (set_aside_distant)
    std::span<const int32_t> joint_a, joint_b;
};

/// What collide_and_assemble hands on besides the contacts and the batch.
struct Collided {
    std::size_t colours = 0;
    double narrow_seconds = 0.0, assemble_seconds = 0.0;  ///< wall clock, for the breakdown
    /// shape pairs or wall kinds with no contact routine: stepping on would let those
    /// bodies pass through each other silently
    StepError error;
};

/// Stages 3–4: the narrow phase on the candidate pairs (kinematic bodies turned into moving
/// walls), the contacts that cannot close set aside (in.set_aside), the colouring and the
/// assembly with its warm start, into `contacts` and `batch` (joint rows are not touched:
/// build_joint_rows).
Collided collide_and_assemble(const CollideInput& in, ContactList& contacts, AssembledBatch& batch,
                              CollideScratch& scratch);

/// Stage 4 alone: colours `contacts` (reordering them) and assembles them into `batch` with
/// the warm start `warm`; returns the number of colours. `lean` gives the colouring's
/// tables back.
std::size_t colour_and_assemble(const BodyStore& bodies, ContactList& contacts,
                                const MaterialTable& materials, const SolverSettings& solver,
                                double h, const WarmStartCache& warm, bool lean,
                                ColouringScratch& scratch, AssembledBatch& batch);

/// Stage 3b (engine/world/speculative.cpp): moves to `aside` (in order) every contact whose
/// gap exceeds what its two sides can move in the step (the motion part of their collision
/// margins, choose_margins): it cannot close within the step; and every contact that the
/// free velocities do not close between two bodies none of whose pairs they close (nothing
/// in the solve can change their speeds; `joined` lists bodies the joints move, kNoBody and
/// indices out of range ignored). Returns how many. On ranks (`ranks` not null,
/// `owner` each held body's rank) the ghosts' part of the second test comes from their owners.
/// With `spare`, the contacts move in parallel through its spare arrays; without, serially in
/// place, with no second copy of a field (a large run); the lists are the same.
std::size_t set_aside_distant(const BodyStore& bodies, const Vec3& gravity, double h,
                              double recovery_speed, ContactList& contacts, ContactList& aside,
                              std::span<const int32_t> joined = {}, std::span<const int32_t> owner = {},
                              Ranks* ranks = nullptr, ColouringScratch* spare = nullptr);

/// Stage 5c: moves to `back` (in order) the contacts of `aside` that the bodies' current
/// (solved) velocities would close within h at more than `allowance` [m/s] (the residual
/// the solve left its own contacts with), with every other contact of `aside` on a movable
/// body of theirs (named by stable id, over `ranks` when not null); or all of them with
/// `all`. Returns how many. `spare` as for set_aside_distant.
std::size_t take_back_closing(const BodyStore& bodies, double h, double allowance, bool all,
                              ContactList& aside, ContactList& back, Ranks* ranks = nullptr,
                              ColouringScratch* spare = nullptr);

/// Appends `more` to `into` (the fields `into` still holds); `into` loses its colours.
void append_contacts(ContactList& into, const ContactList& more);

/// Stage 4b: the joints' rows at the current poses into `rows` (their λ is the warm start
/// and is kept); `joint_a`, `joint_b` receive each joint's dense body indices.
StepError build_joint_rows(const std::vector<Joint>& joints, const BodyStore& bodies,
                           const SolverSettings& solver, double h, StepAt at,
                           std::vector<int32_t>& joint_a, std::vector<int32_t>& joint_b,
                           BilateralBatch& rows);

/// After stage 5: the solver refused the problem, the state became non-finite or too fast,
/// or impulses grew without bound (checked in that order; the first found is reported).
StepError check_solution(const SolverResult& result, const BodyStore& bodies,
                         const ContactList& contacts, const AssembledBatch& batch,
                         const std::vector<Wall>& walls, double max_speed, StepAt at);

/// The smallest thickness radius of a dynamic body (BodyStore::thickness_radius: a
/// capsule's end radius, a clump's smallest sphere; +∞ if none) [m]; the same bits on any
/// thread count.
double smallest_dynamic_radius(const BodyStore& bodies);

/// Row i's relative velocity at its contact point, B's less A's, from the store's
/// velocities (ω̄ in the body frame) and the row's levers; a wall side adds nothing (its own
/// velocity is in the row's constant part) [m/s].
inline Vec3 row_point_velocity(const BodyStore& bodies, const AssembledBatch& batch, std::size_t i) {
    auto point = [&](int32_t k, const Vec3& r) {
        return Vec3(bodies.velocity[k] + (bodies.orientation[k] * bodies.angular_velocity[k]).cross(r));
    };
    Vec3 rel = Vec3::Zero();
    if (batch.b[i] != kNoBody) rel += point(batch.b[i], batch.lever_b[i]);
    if (batch.a[i] != kNoBody) rel -= point(batch.a[i], batch.lever_a[i]);
    return rel;
}

/// Stage 6: positions and orientations with the new velocities over h; kinematic bodies at
/// the exact pose of their motion at t1 = t + h.
void integrate_positions(BodyStore& bodies, const PeriodicBox& periodic, double h, double t1);

}  // namespace talus

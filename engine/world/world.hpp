#pragma once
/// World: everything one run simulates, and `step`, the pipeline of docs/design.md §1 as a short
/// list of stage calls. Each stage lives in its own folder and takes its data explicitly.
#include <cstdint>
#include <string>
#include <vector>

#include "collision/broad_phase.hpp"
#include "collision/narrow_phase.hpp"
#include "core/body_store.hpp"
#include "core/contacts.hpp"
#include "core/joints.hpp"
#include "core/materials.hpp"
#include "core/settings.hpp"
#include "core/walls.hpp"
#include "engine/world/diagnostics.hpp"
#include "engine/flow/flow.hpp"
#include "solvers/assemble.hpp"
#include "solvers/colouring.hpp"
#include "solvers/solver.hpp"
#include "solvers/solver_result.hpp"
#include "solvers/warm_start.hpp"

namespace talus {

/// A step stops with an error when the broad phase finds more candidate pairs than this
/// per body (plus 100000): the time step is far too long for the speeds (World::step).
inline constexpr std::size_t kMaxPairsPerBody = 64;

class World {
public:
    SimulationSettings simulation;
    SolverSettings solver;
    MaterialTable materials;
    std::vector<Wall> walls;
    BodyStore bodies;
    /// From this many bodies on, buffers that serve one stage of the step are given back
    /// as soon as that stage is done, so that they do not add up at the peak: the broad
    /// phase's grid, the colouring's tables, the candidate pairs and margins and the
    /// previous step's warm-start entries before the solve, the contacts' geometry once
    /// assembled (contacts() then keeps bodies, keys, features and gaps only) and the
    /// solver's workspace after it. Small runs keep them across steps and allocate nothing
    /// per step. The trajectory has the same bits either way. Not with the position-level
    /// variant, which reuses them.
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

    /// Advance by one step h = simulation.dt. Returns a failure status (and leaves the
    /// state as it was before the step) if a body's state became NaN/Inf.
    StepStatus step();

    /// The problem the next step would solve, without advancing: bodies at ν* (velocities
    /// after forces) and the assembled, coloured batch with its warm start. Benchmarks run
    /// every solver on it; the state of this World is unchanged.
    struct Problem {
        BodyStore bodies;
        AssembledBatch batch;
    };
    Problem next_problem() const;

    const StepDiagnostics& diagnostics() const { return diag_; }
    /// The last step's geometric contacts and assembled, solved batch (tests, output).
    const ContactList& contacts() const { return contacts_; }
    const AssembledBatch& batch() const { return batch_; }
    const SolverResult& solver_result() const { return result_; }

    double kinetic_energy() const;
    double potential_energy() const;

    /// Loads on the walls since the last reset_wall_loads() (one entry per wall).
    const WallLoads& wall_loads() const { return wall_loads_; }
    void reset_wall_loads();
    /// Keep each step's body–wall contacts and their impulses in wall_contacts() (off by
    /// default: it costs a copy per wall contact and step).
    bool record_wall_contacts = false;
    const WallContactList& wall_contacts() const { return wall_contacts_; }

    /// What one step hands to the next besides the public members: the warm-start cache,
    /// the joints' multipliers (their warm start) and the wall loads summed since the last
    /// reset. With the public members it is the whole state a step depends on, so a World
    /// built from the same scene and given both continues with the same bits
    /// (io/checkpoint.hpp).
    struct CarriedState {
        WarmStartCache warm;
        std::vector<double> joint_lambda;
        WallLoads wall_loads;
    };
    CarriedState carried_state() const { return {warm_, batch_.bilateral.lambda, wall_loads_}; }
    void restore_carried_state(CarriedState s) {
        warm_ = std::move(s.warm);
        batch_.bilateral.lambda = std::move(s.joint_lambda);
        wall_loads_ = std::move(s.wall_loads);
    }

private:
    double choose_margins();
    /// Stages 1–4 of a step (forces … assembly); returns the envelope and colour count.
    std::pair<double, std::size_t> prepare_solve(double h);
    void apply_forces(double h);
    /// Stage 4b: the joints' rows at the current poses into batch_.bilateral.
    void build_joint_rows(double h);
    void integrate_positions(double h);
    /// NaN, Inf or a speed beyond simulation.max_speed; `when` names the stage in the message.
    StepStatus check_finite(const char* when = "after the solve") const;
    StepStatus check_bounded() const;
    /// Fails when the narrow phase met a pair of shapes it cannot collide.
    StepStatus check_supported() const;
    void renumber();
    bool relinearising() const { return solver.position_iterations > 0; }
    /// This step gives its stage buffers back (lean_bodies; never when relinearising).
    bool lean_step() const { return bodies.size() >= lean_bodies && !relinearising(); }
    /// Stage 7: outlets, then emitters, between this step and the next.
    void apply_flow();
    /// The position-level variant (seed 000 §3.6; engine/world/position_level.cpp): re-solve
    /// linearised at q^l + h ν⁺ up to solver.position_iterations times. ν* is given.
    void relinearise(double h, const std::vector<Vec3>& v_star, const std::vector<Vec3>& w_star);

    /// Adds this step's contact impulses on walls to wall_loads_.
    void accumulate_wall_loads(double h);

    StepDiagnostics diag_;
    WallLoads wall_loads_;
    WallContactList wall_contacts_;
    PairList pairs_;
    BroadPhaseScratch broad_scratch_;
    NarrowPhaseScratch narrow_scratch_;
    ColouringScratch colouring_;
    ContactList contacts_;
    AssembledBatch batch_;
    SolverResult result_;
    WarmStartCache warm_;
    SolverWorkspace solver_work_;
    double wall_margin_ = 0.0;   // a wall's share of the envelope [m]
    std::vector<WallState> wall_states_;  // walls' poses at t and motion over the step
    std::vector<double> reach_;         // per body: radius + its share of the envelope [m]
    std::vector<uint32_t> renumbered_;  // old index -> new index of the last renumbering
    std::vector<Vec3> saved_v_, saved_w_;  // velocities at step start, restored on failure
    std::vector<Vec3> star_v_, star_w_;    // ν* of the step (position-level variant)
    BodyStore predicted_;                  // q̂ of the position-level variant
    ContactList next_contacts_;            // its contacts and batch
    AssembledBatch next_batch_;
    std::vector<int32_t> joint_a_, joint_b_;  // dense indices of each joint's bodies
    std::string joint_error_;                 // a joint whose body is gone ("" if none)
    // why this step cannot go on before the solve ("" if it can): too many candidate pairs,
    // or velocities after the forces already non-finite or beyond max_speed
    std::string crowded_;
};

}  // namespace talus

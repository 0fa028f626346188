#pragma once
/// What a step reports, as plain data: its diagnostics row, the loads and contacts on the
/// walls, and whether it succeeded. The trajectory writer reads these without seeing the
/// World that produces them (engine/world/world.hpp).
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/math.hpp"
#include "engine/world/step_error.hpp"  // StepStatus: whether a step succeeded

namespace talus {

/// Per-step record written to the trajectory's diagnostics (docs/design.md §9).
struct StepDiagnostics {
    uint64_t step = 0;              ///< step number after the step
    uint32_t stage = 0;             ///< the run's stage the step belongs to (set by the run driver)
    double time = 0.0;              ///< simulated time after the step [s]
    double dt = 0.0;                ///< the step h just taken [s] (fixed or adaptive)
    uint32_t contacts = 0;          ///< contacts in the solve
    uint64_t bodies = 0;            ///< bodies after the step (every rank's, over ranks)
    uint32_t iterations = 0;        ///< solver iterations
    uint32_t colours = 0;           ///< colours of the contact graph (parallel PGS)
    double residual = 0.0;          ///< docs/design.md §6 residual at exit [m/s]
    double kinetic_energy = 0.0;    ///< Σ ½ m v² + ½ ω̄ᵀ J̄ ω̄ after the step [J]
    double potential_energy = 0.0;  ///< Σ −m g·x after the step [J]
    double solver_wall_time = 0.0;  ///< seconds spent in the solve stage [s]
    double envelope = 0.0;          ///< largest collision envelope δ of a pair this step [m]
    uint32_t relinearisations = 0;  ///< extra solves of the position-level variant (§3.6)
    /// Times an adaptive step was halved and taken again before it went through (World::step:
    /// too many candidate pairs, a solve that left bodies too fast, or one that left an
    /// overlap to deepen past the retake limit); not written to the trajectory.
    uint32_t retakes = 0;
    /// Times the step was taken again, at the same length, with wider margins for bodies
    /// its solve had sent past theirs (StepFault::Outran); not written to the trajectory.
    uint32_t margin_retakes = 0;
    /// Contacts set aside this step as unable to close (docs/design.md §3, "Speculative
    /// contacts"), and the extra solves taken when some of them would close after all.
    uint32_t set_aside = 0;
    uint32_t resolves = 0;
    /// The step took its candidate pairs from an earlier search (collision/kept_pairs.hpp)
    /// instead of running the broad phase: the same pairs either way.
    bool kept_pairs = false;
    /// Joint infeasibility after the step, I(q) = max_j |g_j(q)| over the joints' position
    /// rows (Anitescu et al. 2003, eq. 3.15) [m for point rows, rad for angular rows]; 0
    /// without joints.
    double joint_infeasibility = 0.0;
    /// The contact part of the same measure: the largest penetration max_i (−Φ_i)⁺ among
    /// this step's contacts, measured at the start of the step (the narrow phase's gaps; with
    /// position_iterations, at the last end-of-step estimate instead) [m].
    double contact_infeasibility = 0.0;
    /// Wall-clock seconds per stage of this step (benchmarks' breakdown; not bit-stable).
    double time_forces = 0.0, time_broad = 0.0, time_narrow = 0.0, time_assemble = 0.0,
           time_integrate = 0.0;
    /// Over ranks, the wall-clock seconds after the step that send the bodies and their warm
    /// start where the decomposition puts them (step_on_ranks; 0 in one process) [s].
    double time_ranks = 0.0;
    /// The step's wall-clock seconds stage by stage, in pipeline order: forces and margins,
    /// broad phase, narrow phase, colouring and assembly (with the speculative take-back's
    /// colouring and assembly again), solve (with the take-back's solves), checks and
    /// integration (with the push-out pass) [s].
    std::array<double, 6> stage_seconds() const {
        return {time_forces, time_broad, time_narrow, time_assemble, solver_wall_time, time_integrate};
    }
    bool converged = false;         ///< residual ≤ tolerance before the cap
    /// The step's series, set by the run driver from the world after the step (the output's
    /// per-step /diagnostics/wall_force and flow totals, apart from the body frames): the
    /// mean force the bodies exerted on each wall over the step [N], and per emitter and per
    /// outlet the bodies and mass emitted or removed since the start of the run.
    std::vector<Vec3> wall_force;
    std::vector<uint64_t> emitted_total_count, removed_total_count;
    std::vector<double> emitted_total_mass, removed_total_mass;
};

/// What the bodies did to each wall, summed over the steps since the last reset: the
/// output divides by `time` to report mean forces and torques per frame interval.
struct WallLoads {
    std::vector<Vec3> impulse;          ///< Σ impulse on the wall, world frame [N s]
    std::vector<Vec3> angular_impulse;  ///< Σ (p − wall_reference_point) × impulse [N m s]
    double time = 0.0;                  ///< simulated time the sums cover [s]
    std::vector<Vec3> step_impulse;     ///< the last step's own impulse on each wall [N s]
};

/// The contacts between bodies and walls in the last step, with what each did to its wall
/// (World::record_wall_contacts; the output's optional /walls/contacts). Rows in contact
/// order.
struct WallContactList {
    std::vector<uint32_t> wall;    ///< index into World::walls
    std::vector<uint64_t> body;    ///< stable id of the body
    std::vector<Vec3> point;       ///< contact point, world [m]
    std::vector<Vec3> impulse;     ///< impulse on the wall over the step, world [N s]
    /// Torque impulse on the wall about `point` over the step (rolling and spinning
    /// resistance; 0 without them), world [N m s].
    std::vector<Vec3> angular_impulse;
    double step = 0.0;             ///< the step h the impulses cover [s]

    std::size_t size() const { return wall.size(); }
    void clear() {
        wall.clear(); body.clear(); point.clear(); impulse.clear(); angular_impulse.clear();
    }
};

/// Every contact of the last step, bodies and walls alike, with what it carried
/// (World::record_contacts; the output's optional /contacts: force chains, coordination
/// numbers, fabric and stress). World::contact_record() gives the rows in the order of the
/// contacts' keys (A, B, feature); the geometry is the step's start.
struct ContactRecord {
    static constexpr uint64_t kWallSide = ~uint64_t(0);  ///< `a` of a wall contact
    std::vector<int32_t> wall;     ///< index into World::walls, −1 between two bodies
    std::vector<uint64_t> a;       ///< stable id of body A, kWallSide for a wall
    std::vector<uint64_t> b;       ///< stable id of body B
    std::vector<Vec3> point;       ///< contact point, world [m]
    std::vector<Vec3> normal;      ///< unit normal from A to B, world
    std::vector<double> gap;       ///< signed distance at the step's start, < 0 overlap [m]
    std::vector<double> normal_impulse;     ///< γ_n ≥ 0, A on B along the normal [N s]
    std::vector<Vec3> tangential_impulse;   ///< A on B in the tangent plane, world [N s]
    /// The segment a viewer draws for the contact: A's centre (the contact point for a
    /// wall or a body that does not move) to B's centre, at the step's start [m].
    std::vector<std::array<Vec3, 2>> segment;
    double step = 0.0;             ///< the step h the impulses cover [s]

    std::size_t size() const { return b.size(); }
    /// f(v) for each per-row array: what clears or reorders the rows goes through it, so
    /// that a new field cannot be left out of one of them.
    template <class F>
    void for_each_row_array(F&& f) {
        f(wall); f(a); f(b); f(point); f(normal); f(gap); f(normal_impulse); f(tangential_impulse);
        f(segment);
    }
    void clear() {
        for_each_row_array([](auto& v) { v.clear(); });
    }
};

}  // namespace talus

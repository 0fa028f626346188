#pragma once
/// Run settings as plain structs with documented defaults (docs/scene-format.md lists the
/// same values), each with the ranges its fields accept (`Accepted`) and problems() that
/// checks them: World::step refuses a World built in C++ with a setting out of range, as
/// the scene reader refuses a scene (its schema rows use the same ranges).
#include <climits>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/math.hpp"
#include "core/periodic.hpp"
#include "core/solver_table.hpp"
#include "core/enum_names.hpp"
#include "core/value_range.hpp"

namespace talus {

/// Standard gravity [m/s²]: the scale of a scene's defaults that depend on gravity when the
/// scene has none.
inline constexpr double kStandardGravity = 9.80665;

/// How the step h is chosen (docs/design.md §4b, "The adaptive step").
struct SimulationSettings {
    /// Fixed step h [s], used when `adaptive` is false. A scene that sets `dt` gets this
    /// fixed step; a scene without `dt` steps adaptively (io/scene/run_tables.cpp).
    double dt = 1e-3;
    /// Choose h each step from the bodies' speeds (World::choose_step): bodies in contact
    /// move at most step_fraction times the smallest radius across each other in one
    /// step, any body at most that radius, within [min_dt, max_dt], and steps land on the
    /// frame and stage times they are given. Off by default in C++ (a World built in code keeps the
    /// fixed `dt`); on for a scene without `dt`.
    bool adaptive = false;
    /// Longest adaptive step [s]. 1 ms here, the fixed step Talus took before the adaptive
    /// one; a scene that sets no max_dt gets the rest bound of its smallest grain instead,
    /// √(p* r_min / ‖g‖) (io/scene/run_tables.cpp, default_max_dt: 1.24 ms for 1.5 mm
    /// grains, 2.26 ms for 5 mm), which scales with the grains as every other bound of the
    /// step does (docs/design.md §4, "The adaptive step").
    double max_dt = 1e-3;
    double min_dt = 1e-9;                     ///< shortest adaptive step [s]: the choice and the
                                              ///< retries of a failed step stop here
    double step_fraction = 0.2;               ///< c: s h + ‖g‖ h² ≤ c r_min in contact [-]
    double duration = 1.0;                    ///< simulated time [s]
    Vec3 gravity = Vec3(0.0, 0.0, -9.81);     ///< [m/s²]
    double max_speed = 1000.0;                ///< a body faster than this fails the run [m/s]
    int renumber_interval = 50;               ///< steps between renumbering bodies in spatial
                                              ///< (Morton cell) order for locality; 0 = never
    PeriodicBox periodic;                     ///< periodic axes and their ranges (none by default)

    /// The values each field accepts.
    struct Accepted {
        static constexpr ValueRange dt = above(0.0);
        static constexpr ValueRange max_dt = above(0.0);
        static constexpr ValueRange min_dt = above(0.0);
        static constexpr ValueRange step_fraction{ValueRange::Bound::Open, 0.0, ValueRange::Bound::Closed, 1.0};
        static constexpr ValueRange duration = above(0.0);
        static constexpr ValueRange max_speed = above(0.0);
        static constexpr ValueRange renumber_interval{ValueRange::Bound::Closed, 0.0, ValueRange::Bound::Closed,
                                                      double(INT_MAX)};
    };
    /// "simulation.KEY: must be RULE (got V)" for each field out of its range (and min_dt
    /// above max_dt for the adaptive step); empty when all hold.
    std::vector<std::string> problems() const {
        RangeCheck check{"simulation"};
        check("dt", Accepted::dt, dt);
        check("max_dt", Accepted::max_dt, max_dt);
        check("min_dt", Accepted::min_dt, min_dt);
        check("step_fraction", Accepted::step_fraction, step_fraction);
        check("duration", Accepted::duration, duration);
        check("max_speed", Accepted::max_speed, max_speed);
        check("renumber_interval", Accepted::renumber_interval, renumber_interval);
        if (adaptive && min_dt > max_dt)
            check.problems.push_back("simulation.min_dt: " + ValueRange::shortest(min_dt) +
                                     " s is longer than max_dt = " + ValueRange::shortest(max_dt) + " s");
        return std::move(check.problems);
    }
};

/// ε of a scene that sets neither `tolerance` nor `relative_tolerance` (docs/design.md §6,
/// "The stopping rule"): 1 % of the fastest closing speed, which at rest (g h) is the
/// absolute 1e-4 m/s of a 1 ms step.
inline constexpr double kDefaultRelativeTolerance = 0.01;

/// ε_w of a scene that sets no `tolerance` (docs/design.md §6, "The stopping rule"): a
/// Gauss–Seidel solve that has not reached its tolerance after kRelaxedAfter sweeps may stop
/// once it leaves a tenth of the speed gravity adds over the step (g h) unresolved, counted
/// at most as p*/h: what is left then sinks a resting grain by at most a tenth of the
/// penetration target p* per step. On the settled random pack of issue 22 steps at rest
/// went from 60–100 sweeps (often at the cap) to about 20; on the lattice, which reaches the
/// tolerance in 2–9 sweeps, nothing changes (benchmarks/README.md, "The weight tolerance").
inline constexpr double kDefaultWeightTolerance = 0.1;

/// The solver of a scene that names none ([solver] type): block Gauss–Seidel, whose normal
/// step is each contact's exact solve (solvers/bgs.cpp). On both shared beds of issue 22 it
/// left the bed at rest where PGS at the same cap did not, at the same cost per step, and
/// its metric majorises every block, so it needs no relaxation below 1 for elongated
/// bodies (benchmarks/README.md, "Both shared beds"). SolverSettings{} itself keeps PGS,
/// the reference the unit tests are written against.
inline constexpr SolverType kSceneDefaultSolver = SolverType::BGS;

/// The friction law of a scene that names none ([solver] friction): exact Coulomb for the
/// solvers that solve it by their own sweep (bgs, the scenes' default, and nsgs, which solves
/// nothing else), the CCP for the others (pgs, pj and apgd reach Coulomb only by a fixed
/// point over CCP solves; maxdiss and lemke have models of their own). Why: the CCP's
/// relaxation lifts a sliding contact off at μ × its sliding speed for a step, so a flowing
/// bed's answer depends on the step, and the scenes' longest step is the rest bound of the
/// grains (default_max_dt), not a short fixed one. With the physics alone, a chute of 4 mm
/// beads at 24° flowed at 0.50 m/s under the CCP and 0.94 m/s under Coulomb, against
/// 0.85–0.94 m/s for both at 0.25 ms steps and 1.18 m/s under Coulomb at 0.1 ms; a drum of
/// 3 cm rocks rode 13 mm higher under the CCP (benchmarks/README.md, "Session 45"). The
/// cost: on the random-pack twin about 16 % more sweeps (the law is not convex).
/// SolverSettings{} itself keeps the CCP.
inline FrictionLaw scene_default_friction(SolverType type) {
    return type == SolverType::BGS || !capabilities(type).ccp ? FrictionLaw::Coulomb : FrictionLaw::CCP;
}

/// A scene's push-out ([solver] push_out) when it names none: "position", the separate pass
/// (SolverSettings::split_push_out). On the shared lattice it took the settle from 21.7 to
/// 11.3 s and left it at rest (1.7e-8 J against 2.2e-5 J): the columns' overlaps no longer
/// sum to a speed at their tops. SolverSettings{} keeps the velocity-level term.
inline constexpr bool kSceneSplitPushOut = true;

/// A scene's minimum collision envelope δ_min ([solver] envelope) when it gives none, as a
/// share of the smallest radius of its dynamic bodies and emitters (io/scene/scene.cpp).
/// Every other length the engine chooses (the penetration target, the push-out's slop, the
/// adaptive step's bounds) is a share of that radius; a fixed 1 mm made a bed of 0.15 mm
/// grains find every neighbour within 3 diameters (its broad and narrow phases 71 % of the
/// step, against 29 % for the same bed at 1.5 mm), and finer powders beyond any memory.
/// Two thirds gives the 1 mm that every measurement of issue 22 was made with for the
/// 1.5 mm grains of the shared beds, exactly (2 × 0.0015 / 3 == 0.001 in doubles).
/// SolverSettings{} itself keeps 1 mm.
inline constexpr double kSceneEnvelopeShare = 2.0 / 3.0;

/// A contact approaching at no more than this many steps' worth of gravity, ‖g‖ h, is a
/// resting one, never a bounce, whatever bounce_speed says: at rest each step's forces add
/// ‖g‖ h to a grain's speed into its support, and restitution on it would keep the bed
/// jittering. With 1 ms steps that is under bounce_speed's 5 cm/s; the adaptive step at rest
/// grows with √r (docs/design.md §4), past it for grains above about 2.5 cm radius.
inline constexpr double kBounceGravitySteps = 2.0;

struct SolverSettings {
    SolverType type = SolverType::PGS;
    FrictionLaw friction = FrictionLaw::CCP;  ///< see FrictionLaw
    int max_iterations = 100;       ///< iteration cap per step [-] (with "coulomb" and a CCP
                                    ///< solver: over all its fixed-point solves)
    double tolerance = 1e-4;        ///< residual r at which to stop [m/s] (docs/design.md §6)
    double relative_tolerance = 0.0;  ///< ε: a step's solve stops at r ≤ max(tolerance, ε v_c), v_c the
                                    ///< largest speed at which a contact closes at ν* (what the solve must
                                    ///< stop) [-]; 0 = the absolute tolerance alone. Scenes that set no
                                    ///< tolerance get kDefaultRelativeTolerance (io/scene/run_tables.cpp)
    /// ε_w: a PGS or bgs solve run by World::step also stops, after kRelaxedAfter sweeps, at
    /// r ≤ ε_w min(‖g‖ h, p*/h), p* the penetration target (1 % of the smallest dynamic
    /// radius): the weight's speed over the step resolved to ε_w, and never more than ε_w p*
    /// of sinking per step [-]; 0 = off. Scenes that set no tolerance get
    /// kDefaultWeightTolerance (io/scene/run_tables.cpp). World::step_solver turns it into
    /// relaxed_tolerance (solve_ccp knows neither g nor h).
    double weight_tolerance = 0.0;
    /// The tolerance a PGS or bgs solve accepts from sweep kRelaxedAfter + 1 on, when above
    /// `tolerance` [m/s]; 0 = none. Not a scene key: World::step_solver sets it.
    double relaxed_tolerance = 0.0;
    /// Sweeps a solve spends on `tolerance` alone before relaxed_tolerance also stops it: a
    /// step that reaches the tolerance leaves the next one a warm start that is nearly its
    /// solution (a lattice at rest then needs 2–9 sweeps a step; stopped at a tenth of g h
    /// instead, it kept 35), so the tight target is tried first.
    static constexpr int kRelaxedAfter = 20;
    double relaxation = 0.0;        ///< ω [-]; 0 = the solver's default (its row of core/solver_table.hpp:
                                    ///< PGS 1.0, PJ 0.5; APGD, maxdiss: none)
    double envelope = 1e-3;         ///< minimum collision envelope δ [m]; grows per step
    double recovery_speed = 0.1;    ///< v_rec, cap on penetration correction [m/s]
    double stabilization = 0.2;     ///< γ_s ∈ [0, 1], share of a penetration corrected per step [-];
                                    ///< 0 turns the correction off (drift then grows: experiments)
    /// Where an overlap's correction goes (docs/design.md §4, "Push-out"): false, into the
    /// velocity solve as b_i = max(γ_s Φ/h, −v_rec) (the push stays in ν⁺ as kinetic
    /// energy); true, into a separate normal-only solve (engine/world/push_out.cpp) whose
    /// pseudo-velocities move the positions and are then dropped.
    bool split_push_out = false;
    bool warm_start = true;         ///< start from the last step's impulses
    /// Not a scene key: the solve starts from γ = 0 with every body at ν* = 0, as the
    /// push-out's pass does (engine/world/push_out.cpp). Its warm start is then ν* itself,
    /// so every iterative method (solvers/iteration.hpp) skips the pass that would add
    /// M⁻¹ D γ⁰, and after a capped solve makes no over-constrained check (docs/design.md
    /// §4) and takes no snapshots for it: such a caller does not read those contacts. The
    /// same bits as without it, one pass over the contacts less a solve.
    bool from_rest = false;
    /// bgs only: between sweeps, the few contacts left above the tolerance and the contacts
    /// around them swept alone (solvers/cluster_sweeps.cpp; docs/design.md §6). Unset (the
    /// default): in a solve whose masses are graded, where two moving bodies in contact
    /// differ in mass by more than kClusterMassRatio (BodyOperator::graded_masses).
    std::optional<bool> cluster_sweeps;
    /// By default the cluster sweeps run in a solve where two moving bodies in contact differ
    /// in mass by more than this (about 1.6x in diameter at one density). Gauss–Seidel relaxes
    /// a heavy grain resting on light ones slowly (a sweep takes back about the light grains'
    /// share of its mass), and the few contacts left above the tolerance are around it,
    /// which the cluster sweeps finish alone. On grains of one mass, where they cost 15-70 %,
    /// they stay off. Measured with the defaults: benchmarks/README.md, "Session 60".
    static constexpr double kClusterMassRatio = 4.0;
    int friction_directions = 8;    ///< k, friction directions of the "lemke" polyhedral cone;
                                    ///< even, in [4, 64] [-]
    double bounce_speed = 0.05;     ///< restitution applies only to contacts approaching faster
                                    ///< than this and than kBounceGravitySteps ‖g‖ h, so
                                    ///< resting contacts do not jitter [m/s]
    /// ‖g‖ [m/s²] for the bounce threshold. Not a scene key: World::take_step sets it from
    /// simulation.gravity before each step (0 for a batch assembled outside a World).
    double gravity = 0.0;
    int position_iterations = 0;    ///< position-level variant (seed 000 §3.6): up to this many
                                    ///< extra solves re-linearised at q^l + h ν⁺; 0 = off [-]
    bool record_history = false;    ///< record (iteration, time, residual) per iteration (benchmarks; costs a pass)

    /// The values each field accepts (relaxation: also 0 in C++, the solver's default).
    struct Accepted {
        static constexpr ValueRange max_iterations{ValueRange::Bound::Closed, 1.0, ValueRange::Bound::Closed,
                                                   double(INT_MAX)};
        static constexpr ValueRange tolerance = above(0.0);
        static constexpr ValueRange relative_tolerance{ValueRange::Bound::Closed, 0.0, ValueRange::Bound::Open, 1.0};
        static constexpr ValueRange weight_tolerance{ValueRange::Bound::Closed, 0.0, ValueRange::Bound::Open, 1.0};
        static constexpr ValueRange relaxation{ValueRange::Bound::Open, 0.0, ValueRange::Bound::Open, 2.0};
        static constexpr ValueRange envelope = at_least(0.0);
        static constexpr ValueRange recovery_speed = at_least(0.0);
        static constexpr ValueRange stabilization{ValueRange::Bound::Closed, 0.0, ValueRange::Bound::Closed, 1.0};
        static constexpr ValueRange friction_directions{ValueRange::Bound::Closed, 4.0, ValueRange::Bound::Closed,
                                                        64.0};
        static constexpr ValueRange position_iterations{ValueRange::Bound::Closed, 0.0, ValueRange::Bound::Closed,
                                                        50.0};
        static constexpr ValueRange bounce_speed = at_least(0.0);
    };
    /// "solver.KEY: must be RULE (got V)" for each field out of its range; empty when all hold.
    std::vector<std::string> problems() const {
        RangeCheck check{"solver"};
        check("max_iterations", Accepted::max_iterations, max_iterations);
        check("tolerance", Accepted::tolerance, tolerance);
        check("relative_tolerance", Accepted::relative_tolerance, relative_tolerance);
        check("weight_tolerance", Accepted::weight_tolerance, weight_tolerance);
        if (relaxation != 0.0) check("relaxation", Accepted::relaxation, relaxation);
        check("envelope", Accepted::envelope, envelope);
        check("recovery_speed", Accepted::recovery_speed, recovery_speed);
        check("stabilization", Accepted::stabilization, stabilization);
        check("friction_directions", Accepted::friction_directions, friction_directions);
        if (friction_directions % 2 != 0)
            check.problems.push_back("solver.friction_directions: must be even (balanced cone)");
        check("position_iterations", Accepted::position_iterations, position_iterations);
        check("bounce_speed", Accepted::bounce_speed, bounce_speed);
        return std::move(check.problems);
    }

    /// ω actually used by the solver `type`.
    double effective_relaxation() const {
        return relaxation > 0.0 ? relaxation : capabilities(type).relaxation;
    }
};

/// Storage type of the per-body floating-point rows of a trajectory (/bodies/position,
/// orientation, velocity, angular_velocity, radius). Indexes, times and diagnostics are
/// always float64 or integers.
enum class OutputPrecision { Float64, Float32 };
template <>
struct EnumNames<OutputPrecision> {
    static constexpr NamedValue<OutputPrecision> table[] = {{OutputPrecision::Float64, "float64"},
                                                            {OutputPrecision::Float32, "float32"}};
};

/// Default gzip level of the row datasets: level 1 already takes most of what deflate can
/// take from shuffled float rows, at the lowest cost in write time (README, "Output").
inline constexpr int kDefaultOutputCompression = 1;

struct OutputSettings {
    std::string path = "out.h5";    ///< trajectory file; relative to the scene file
    double interval = 0.01;         ///< simulated time between frames [s]
    OutputPrecision precision = OutputPrecision::Float64;  ///< per-body float rows
    /// gzip (deflate) level 0..9 of the row datasets, with the shuffle filter; 0 = none.
    int compression = kDefaultOutputCompression;
    /// Also write each frame's body–wall contacts (point, impulse of the frame's last step)
    /// to /walls/contacts; off by default (a row per wall contact per frame).
    bool wall_contacts = false;
    /// Also write every contact of each frame's last step, between bodies and with walls
    /// (ids, point, normal, gap, impulses) to /contacts; off by default (a row per contact
    /// per frame, about 150 bytes).
    bool contacts = false;
    /// Simulated time between periodic checkpoints [s] (io/checkpoint.hpp), on a step
    /// cadence like frames; 0 = none (an interrupted run still writes one as it stops).
    double checkpoint_interval = 0.0;
    /// The values each field accepts (the scene schema's rows use them).
    struct Accepted {
        static constexpr ValueRange interval = above(0.0);
        static constexpr ValueRange compression{ValueRange::Bound::Closed, 0.0, ValueRange::Bound::Closed, 9.0};
        static constexpr ValueRange checkpoint_interval{ValueRange::Bound::Closed, 0.0, ValueRange::Bound::None, 0.0,
                                                        " (0: no periodic checkpoints)"};
    };
    /// Checkpoint file, resolved against the scene's directory like `path`; empty = the
    /// trajectory's path with ".h5" replaced by ".checkpoint.h5" (default_checkpoint_path in
    /// io/checkpoint.hpp).
    std::string checkpoint;
};

}  // namespace talus

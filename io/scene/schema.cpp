// The scene's schema: every key of every table as one row (kind, type, unit, range,
// default, meaning). The unknown-key check and the --set overrides walk it, Reader::number
// and Reader::integer check its ranges, and `talus keys` prints it as docs/scene-format.md.
// A new key is one row here, plus its reader when it needs logic of its own.
#include <climits>

#include "core/body_store.hpp"
#include "core/joints.hpp"
#include "core/solver_table.hpp"
#include "core/wall_motion.hpp"
#include "core/walls.hpp"
#include "engine/flow/flow.hpp"
#include "engine/flow/size_distribution.hpp"
#include "io/scene/reader.hpp"

namespace talus::scene_read {

namespace {

using B = Range::Bound;
constexpr Range kAny{};
constexpr Range kPositive{B::Open, 0.0};
constexpr Range kNonNegative{B::Closed, 0.0};
constexpr Range kUnitClosed{B::Closed, 0.0, B::Closed, 1.0};  // [0, 1]
constexpr Range kSeed{B::Closed, 0.0};

Field value(std::string_view name, Type type, std::string_view unit, Range range,
            std::string_view fallback, std::string_view doc) {
    return Field{name, Kind::Value, nullptr, type, unit, range, fallback, doc, nullptr};
}
Field word(std::string_view name, std::vector<std::string_view> (*choices)(),
           std::string_view fallback, std::string_view doc) {
    return Field{name, Kind::Value, nullptr, Type::String, {}, {}, fallback, doc, choices};
}
Field table(std::string_view name, const Fields* sub, std::string_view fallback, std::string_view doc) {
    return Field{name, Kind::Table, sub, Type::Table, {}, {}, fallback, doc, nullptr};
}
Field tables(std::string_view name, const Fields* sub, std::string_view doc) {
    return Field{name, Kind::TableArray, sub, Type::TableArray, {}, {}, "none", doc, nullptr};
}

std::vector<std::string_view> solver_names() {
    std::vector<std::string_view> out;
    for (const SolverCapabilities& c : kSolverTable) out.push_back(c.name);
    return out;
}
std::vector<std::string_view> fill_shapes() { return {"sphere", "clump", "capsule", "ellipsoid"}; }
std::vector<std::string_view> push_outs() { return {"position", "velocity"}; }

constexpr std::string_view kMaterialRef = "a [[material]]'s name";

}  // namespace

const Fields kStopKeys{
    value("kinetic_energy_below", Type::Number, "J", kPositive, "required",
          "end once the total kinetic energy of the dynamic bodies (kinematic bodies, those with "
          "a `motion`, are left out) has stayed below this for `hold`"),
    value("hold", Type::Number, "s", kNonNegative, "0", "how long the energy must stay below"),
};

const Fields kSimulationKeys{
    value("dt", Type::Number, "s", SimulationSettings::Accepted::dt, "none: adaptive",
          "a fixed time step h. Without it the step is adaptive: chosen before each step so that "
          "bodies in contact move at most step_fraction × the smallest radius across each other "
          "(a pair of larger spheres somewhat farther: its gap errs less), a "
          "resting grain could sink at most 1 % of it, any body moves at most that radius, a spinning "
          "non-sphere's contact points drift off their tangent by at most 0.2 % of it, and the "
          "largest penetration stays near half a per cent of the diameter (docs/design.md §4, \"The "
          "adaptive step\"), landing exactly on frame and stage times. Leave it out unless you need "
          "a fixed step. A dt so long for the speeds that the collision margins (1.25 dt |v| per "
          "body) reach more than 64 neighbours per body stops the run (exit 3) with a message"),
    value("duration", Type::Number, "s", SimulationSettings::Accepted::duration, "1",
          "simulated time; with a fixed dt, a dt longer than the duration (or than a [[stage]]'s) "
          "is an error. Not allowed together with [[stage]]"),
    value("gravity", Type::Vec3, "m/s²", kAny, "[0, 0, -9.81]",
          "gravitational acceleration; a magnitude below 1 or above 50 m/s² is warned about (a unit "
          "slip)"),
    value("max_speed", Type::Number, "m/s", SimulationSettings::Accepted::max_speed, "1000",
          "a body faster than this stops the run (exit 3)"),
    value("renumber_interval", Type::Integer, "", SimulationSettings::Accepted::renumber_interval, "50",
          "steps between renumbering bodies in spatial (Morton cell) order, for memory locality; "
          "0 = never. Rows of a frame in the output follow this order: use the id column"),
    table("stop", &kStopKeys, "none",
          "optional early end (table below); duration stays the longest the run may last. Not "
          "allowed together with [[stage]]"),
    value("max_dt", Type::Number, "s", SimulationSettings::Accepted::max_dt, "√(0.01 r_min/g)",
          "adaptive step only: the longest step. The default is the rest bound of the smallest "
          "grain (dynamic bodies and emitters; standard gravity if g = 0): a resting grain whose "
          "support the solve left unresolved sinks at most 1 % of r_min in a step"),
    value("min_dt", Type::Number, "s", SimulationSettings::Accepted::min_dt, "1e-9",
          "adaptive step only: the shortest step, ≤ max_dt; the choice and the retries of a failed "
          "step stop here"),
    value("step_fraction", Type::Number, "", SimulationSettings::Accepted::step_fraction, "0.2",
          "adaptive step only: c, the largest move per step of two bodies in contact, across each "
          "other, as a share of the smallest radius r_min. Two spheres of radii r_a and r_b may move "
          "√((r_a + r_b) / (2 r_min)) times as far: their linear gap errs by (move)² / (2 (r_a + "
          "r_b)), as much as the smallest pair's. With dt set, max_dt, min_dt and step_fraction "
          "are errors"),
};

const Fields kStageKeys{
    value("name", Type::String, "", kAny, "\"stage.N\"", "for messages and the progress line"),
    value("duration", Type::Number, "s", kPositive, "required", "the longest the stage lasts"),
    table("stop", &kStopKeys, "none", "optional early end, as in [simulation]"),
    value("remove_walls", Type::Array, "", kAny, "[]",
          "walls (by name) removed when the stage starts: a gate opens"),
    value("start_motion", Type::Array, "", kAny, "[]",
          "walls (by name) whose `motion` begins when the stage starts (a drum that turns once "
          "filled), held at rest until then; each wall at most once, and without its own "
          "motion.start"),
};

const Fields kSolverKeys{
    word("type", solver_names, "\"bgs\"",
         "the solver (docs/scenes.md, \"Which solver supports what\"). \"pgs\" (projected "
         "Gauss–Seidel, parallel by contact colouring), \"pj\" (projected Jacobi), \"apgd\" "
         "(accelerated projected gradient) and \"bgs\" (PGS's sweep with each contact's step in a "
         "metric fitted to its own 3×3 block) solve the CCP, whose relaxation makes a sliding "
         "contact separate at μ × the sliding speed for a step (docs/design.md §4); \"maxdiss\" "
         "(Preclik–Rüde maximum dissipation, no lift-off; its residual is the largest impulse "
         "change per sweep); \"nsgs\" (exact Coulomb friction, each contact's 3×3 problem solved "
         "exactly; implies friction = \"coulomb\"); \"lemke\" (Stewart–Trinkle LCP with a polyhedral "
         "cone, dense and direct, for small systems: more than 3000 LCP unknowns stops the run; "
         "iterations are pivots; ignores max_iterations, tolerance, relaxation and warm start). "
         "SolverSettings{} in C++ keeps \"pgs\""),
    value("max_iterations", Type::Integer, "", SolverSettings::Accepted::max_iterations, "100",
          "iteration cap per step"),
    value("tolerance", Type::Number, "m/s", SolverSettings::Accepted::tolerance, "1e-4",
          "stop when the residual (docs/design.md §6) is at most this; joint rows count |b + Gᵀν| "
          "(m/s, or rad/s for angular rows), rolling and spinning torques ‖γ − Π(γ − η d)‖ ℓ/η with d "
          "the relative angular velocity [rad/s] and ℓ the pair's reduced radius r_a r_b/(r_a + r_b) "
          "(a wall's: the grain's radius), so in m/s"),
    value("relaxation", Type::Number, "", SolverSettings::Accepted::relaxation, "by solver",
          "ω; PGS and BGS 1.0 (≤ 1.5 is safe for spheres and for rolling and joint rows), PJ 0.5 "
          "(step ω η_i / contacts per body; < 0.75); APGD and maxdiss ignore it"),
    value("envelope", Type::Number, "m", SolverSettings::Accepted::envelope, "2/3 r_min",
          "minimum collision envelope δ; grows per step so that no pair can close more than δ in "
          "one step. Default: two thirds of the smallest radius of the dynamic bodies and "
          "emitters (1 mm for 1.5 mm grains)"),
    value("recovery_speed", Type::Number, "m/s", SolverSettings::Accepted::recovery_speed, "0.1",
          "v_rec: cap on the speed of penetration correction"),
    value("stabilization", Type::Number, "", SolverSettings::Accepted::stabilization, "0.2",
          "γ_s: share of a penetration, and of a joint's error, corrected per step (0: never "
          "corrected, so drift grows; for experiments)"),
    value("warm_start", Type::Boolean, "", kAny, "true", "start each solve from the last step's impulses"),
    value("cluster_sweeps", Type::Boolean, "", kAny, "graded masses",
          "\"bgs\" only: from its tenth sweep, when at most 256 contacts are above the tolerance, "
          "sweep them and two rings of contacts around them alone until they are within half of "
          "it (docs/design.md §6, \"Cluster sweeps\"). Unset: on in a solve where two moving "
          "bodies in contact differ in mass by more than 4x (heavy grains on light ones relax "
          "slowly: a bed of 2 and 4 mm grains 101 -> 78 s), off on grains of one mass (where "
          "they cost 15-70 %); true for tight tolerances on settled packs (18x less work to "
          "1e-4 m/s on a settled 100k pack; benchmarks/README.md)"),
    value("friction_directions", Type::Integer, "", SolverSettings::Accepted::friction_directions, "8",
          "\"lemke\" only: k, even (each direction has its opposite), the edges of the polyhedral "
          "cone d_j = cos(2πj/k) u + sin(2πj/k) w; the polygon's friction bound is between cos(π/k) "
          "and 1 times μ γ_n (k = 8: 0.924)"),
    value("position_iterations", Type::Integer, "", SolverSettings::Accepted::position_iterations, "0",
          "position-level variant (Stewart–Trinkle §3.6): after the solve, up to this many "
          "re-solves with contacts linearised at the end-of-step estimate q + h ν⁺ (stops when ν⁺ "
          "moves by ≤ tolerance); 0 = velocity-level. Not with push_out = \"position\""),
    value("bounce_speed", Type::Number, "m/s", SolverSettings::Accepted::bounce_speed, "0.05",
          "restitution acts only on contacts approaching faster than this and than 2 ‖g‖ h "
          "(what gravity adds in two steps), so resting contacts do not jitter"),
    word("friction", names_of<FrictionLaw>, "\"coulomb\" with bgs and nsgs, \"ccp\" with the others",
         "the friction law: \"ccp\" (the convex relaxation, with its lift-off, so a flowing bed depends "
         "on the step) or \"coulomb\" "
         "(exact Coulomb in De Saxcé's form: c_n + μ‖c_t‖ in place of c_n, so a sliding contact "
         "stays on its plane and decelerates at μ g). With \"coulomb\", \"nsgs\" and \"bgs\" solve it "
         "directly (bgs at the cost of its CCP sweep) and \"pgs\", \"pj\", \"apgd\" by a fixed point "
         "over CCP solves (max_iterations then caps all of them together); not convex"),
    value("relative_tolerance", Type::Number, "", SolverSettings::Accepted::relative_tolerance,
          "0.01 (0 when tolerance is given)",
          "ε: stop also when the residual ≤ ε × the largest speed at which a contact closes at the "
          "step's start, so a step with impacts at 2 m/s stops at 2e-2 m/s and a bed at rest at "
          "the tolerance (docs/design.md §6, \"The stopping rule\"); an explicit tolerance then "
          "means what it says"),
    value("weight_tolerance", Type::Number, "", SolverSettings::Accepted::weight_tolerance,
          "0.1 (0 when tolerance is given)",
          "ε_w (\"pgs\" and \"bgs\"): after 20 sweeps, stop also when the residual ≤ ε_w × min(g h, "
          "p*/h), p* = 1 % of the smallest radius: a bed at rest that has not reached the tolerance "
          "resolves the speed gravity adds over the step to ε_w, and what is left sinks a grain by at "
          "most ε_w p* per step (docs/design.md §6, \"The stopping rule\"); an explicit tolerance then "
          "means what it says"),
    word("push_out", push_outs, "\"position\"",
         "where an overlap's correction goes: \"position\" (a separate normal-only solve moves the "
         "positions and leaves no velocity behind, only when an overlap is deeper than 0.25 % of "
         "the smallest radius; at most 25 sweeps while every overlap is within 1 % of it, 4 when "
         "at most 16 are past 0.25 %) or "
         "\"velocity\" (the correction rides in the velocity solve as b = max(stabilization × "
         "Φ/h, −recovery_speed) and stays in the velocities); docs/design.md §4, \"Push-out\""),
};

const Fields kOutputKeys{
    value("path", Type::String, "", kAny, "\"out.h5\"",
          "the trajectory (and its .xmf sidecar), relative to the scene file; `-o` overrides it"),
    value("interval", Type::Number, "s", OutputSettings::Accepted::interval, "0.01",
          "simulated time between frames; when given, not shorter than a fixed dt (= dt writes "
          "every step; left at its default with a longer dt: a frame every step). With the adaptive "
          "step, steps land exactly on every frame time"),
    value("wall_contacts", Type::Boolean, "", kAny, "false",
          "also write every body–wall contact of each frame's last step (wall, body id, point, "
          "impulse) to /walls/contacts"),
    value("contacts", Type::Boolean, "", kAny, "false",
          "also write every contact of each frame's last step, between two bodies and with walls "
          "(ids or wall, point, normal, gap, normal and tangential impulse) to /contacts; the "
          ".xmf sidecar shows them as lines from centre to centre (force chains)"),
    word("precision", names_of<OutputPrecision>, "\"float64\"",
         "storage of the per-body reals (position, orientation, velocity, angular_velocity, "
         "radius; rounded to nearest); ids, times, the frame index and diagnostics stay float64 or "
         "integers"),
    value("compression", Type::Integer, "", OutputSettings::Accepted::compression, "1",
          "gzip level of the row datasets (/bodies, /walls/contacts, /contacts), 0 = none, with HDF5's "
          "shuffle filter before it"),
    value("checkpoint", Type::String, "", kAny, "the trajectory's path with .checkpoint.h5",
          "checkpoint file, relative to the scene file like `path`; not the trajectory itself"),
    value("checkpoint_interval", Type::Number, "s", OutputSettings::Accepted::checkpoint_interval,
          "0",
          "simulated time between periodic checkpoints, and one at the run's end (what a [start] "
          "takes); 0 = none (a signal still writes one). Each replaces the last atomically and "
          "first waits for the trajectory writer: about 190 bytes per body plus the warm-start "
          "entries of the last contacts"),
};

const Fields kMaterialKeys{
    value("name", Type::String, "", kAny, "required", "unique; walls, grains and pairs refer to it"),
    value("density", Type::Number, "kg/m³", Material::Accepted::density, "2500",
          "outside 100 to 25,000 kg/m³ is warned about (a unit slip)"),
    value("friction", Type::Number, "", Material::Accepted::friction, "0.5", "Coulomb μ; a pair uses the smaller of its two"),
    value("restitution", Type::Number, "", Material::Accepted::restitution, "0",
          "Newton's e on the normal velocity; a pair uses the smaller of its two. A contact "
          "closing during a step at more than solver.bounce_speed (and 2 ‖g‖ h) leaves at e times "
          "its approach speed"),
    value("rolling_friction", Type::Number, "m", Material::Accepted::rolling_friction, "0",
          "μ_r: rolling resistance (Tasora–Anitescu 2013), a torque about the contact's tangent "
          "axes of at most μ_r × the normal force (a sphere rolling on a plane decelerates at 5/7 "
          "μ_r g / r). A length: a dimensionless coefficient η (LIGGGHTS's) is μ_r = η r; above "
          "the thinnest grain's radius is warned about (a unit slip). A pair uses the smaller of "
          "its two; 0 = off. > 0 needs a solver that supports it"),
    value("spinning_friction", Type::Number, "m", Material::Accepted::spinning_friction, "0",
          "μ_s: the same about the normal (|torque| ≤ μ_s × normal force); pair rule and solvers as "
          "rolling_friction"),
};

const Fields kFrictionPairKeys{
    value("materials", Type::Array, "", kAny, "required", "the two materials' names, [\"a\", \"b\"]"),
    value("friction", Type::Number, "", Material::Accepted::friction, "required", "μ of the pair"),
    value("restitution", Type::Number, "", Material::Accepted::restitution, "the smaller of the two materials'", "e of the pair"),
    value("rolling_friction", Type::Number, "m", Material::Accepted::rolling_friction, "the smaller of the two", "μ_r of the pair"),
    value("spinning_friction", Type::Number, "m", Material::Accepted::spinning_friction, "the smaller of the two", "μ_s of the pair"),
};

const Fields kMotionKeys{
    word("type", names_of<MotionKind>, "required",
         "\"translation\" (velocity), \"rotation\" (centre, axis, omega), \"table\" (times, "
         "displacements) or \"sine\" (direction, amplitude, frequency, phase); docs/scenes.md, "
         "\"Moving walls\""),
    value("start", Type::Number, "s", Range{B::Closed, 0.0, B::None, 0.0, " [s]"}, "0",
          "the wall rests at its τ = 0 pose until then (τ = t − start); or leave it out and name "
          "the wall in a [[stage]]'s start_motion"),
    value("velocity", Type::Vec3, "m/s", kAny, "required", "translation: the constant velocity"),
    value("centre", Type::Vec3, "m", kAny, "required", "rotation: a point on the axis"),
    value("axis", Type::Vec3, "", kAny, "required", "rotation: the axis (normalised, not zero)"),
    value("omega", Type::Number, "rad/s", kAny, "required",
          "rotation: angular speed, any sign, right-handed about the axis"),
    value("times", Type::Array, "s", kAny, "required",
          "table: times counted from `start`, non-empty, the first ≥ 0, strictly increasing; the "
          "translation is piecewise linear through (0, [0, 0, 0]) and each entry, held after the "
          "last"),
    value("displacements", Type::Array, "m", kAny, "required",
          "table: one [x, y, z] per time, [0, 0, 0] if the first time is 0 (the wall may not jump)"),
    value("direction", Type::Vec3, "", kAny, "required", "sine: the direction (normalised)"),
    value("amplitude", Type::Number, "m", Range{B::Closed, 0.0, B::None, 0.0, " [m]"}, "required",
          "sine: d = amplitude · sin(2π frequency τ + phase) · direction; Γ = amplitude (2π "
          "frequency)² / g"),
    value("frequency", Type::Number, "Hz", Range{B::Open, 0.0, B::None, 0.0, " [Hz]"}, "required",
          "sine: the frequency"),
    value("phase", Type::Number, "rad", kAny, "0", "sine: the phase"),
};

const Fields kWallKeys{
    word("type", names_of<WallType>, "required",
         "\"plane\" (point, normal), \"box\" (min, max: a closed container, bodies inside), "
         "\"cylinder\" (point, axis, radius, inside, length), \"mesh\" (file, scale, translate), "
         "\"cone\" (start, end, start_radius, end_radius: a hopper) or \"orifice\" (point, normal, "
         "hole_radius or hole_size and hole_direction: a plate with a hole); cones and orifices are "
         "thin, with bodies on both sides (docs/scenes.md, \"Hoppers and orifices\")"),
    value("name", Type::String, "", kAny, "none",
          "unique; a [[stage]]'s remove_walls and start_motion use it"),
    value("material", Type::String, "", kAny, "required", kMaterialRef),
    value("velocity", Type::Vec3, "m/s", kAny, "static",
          "any wall: a constant velocity, short for motion = { type = \"translation\", velocity = "
          "[...] }. Not together with `motion`"),
    value("point", Type::Vec3, "m", kAny, "required",
          "plane: a point on it at t = 0; cylinder: a point on the axis, the middle of a finite "
          "cylinder; orifice: the centre of the hole"),
    value("normal", Type::Vec3, "", kAny, "required",
          "plane: pointing at the bodies (normalised, not zero); orifice: the plate's normal (either sense)"),
    value("min", Type::Vec3, "m", kAny, "required", "box: the lower corner"),
    value("max", Type::Vec3, "m", kAny, "required", "box: the upper corner, > min on every axis"),
    value("file", Type::String, "", kAny, "required",
          "mesh: an ASCII or binary STL file, relative to the scene file (spheres, clumps and "
          "capsules collide with meshes; ellipsoids do not)"),
    value("scale", Type::Number, "", kPositive, "1", "mesh: vertices are multiplied by it"),
    value("translate", Type::Vec3, "m", kAny, "[0, 0, 0]", "mesh: then moved by it"),
    value("axis", Type::Vec3, "", kAny, "required", "cylinder: the axis direction (normalised, not zero)"),
    value("radius", Type::Number, "m", Range{B::Open, 0.0, B::None, 0.0, " [m]"}, "required", "cylinder: its radius"),
    value("inside", Type::Boolean, "", kAny, "required",
          "cylinder: true = bodies inside (a drum), false = outside (a pillar, a shaft)"),
    value("length", Type::Number, "m", Range{B::Open, 0.0, B::None, 0.0, " [m]"}, "unbounded",
          "cylinder: it spans ±length/2 along the axis from `point`; a sphere whose centre is "
          "beyond an end does not see it, nor does a capsule's end sphere or an ellipsoid's "
          "contact point there (close the ends with planes)"),
    value("start", Type::Vec3, "m", kAny, "required", "cone: the centre of one end (the outlet of a hopper)"),
    value("end", Type::Vec3, "m", kAny, "required", "cone: the centre of the other end, not at start"),
    value("start_radius", Type::Number, "m", Range{B::Closed, 0.0, B::None, 0.0, " [m]"}, "required",
          "cone: its radius at start (0: a point)"),
    value("end_radius", Type::Number, "m", Range{B::Closed, 0.0, B::None, 0.0, " [m]"}, "required",
          "cone: its radius at end; not both 0"),
    value("hole_radius", Type::Number, "m", Range{B::Open, 0.0, B::None, 0.0, " [m]"}, "hole_radius or hole_size",
          "orifice: a round hole of this radius, centred at `point`"),
    value("hole_size", Type::Array, "m", kAny, "hole_radius or hole_size",
          "orifice: instead, a rectangular hole [width, length] centred at `point`, each > 0"),
    value("hole_direction", Type::Vec3, "", kAny, "required with hole_size",
          "orifice: the direction of the hole's width (projected on the plate; not along the normal)"),
    table("motion", &kMotionKeys, "none", "a rigid motion of the wall (table below)"),
};

const Fields kLatticeKeys{
    value("min", Type::Vec3, "m", kAny, "required", "centres at min + i·spacing per axis …"),
    value("max", Type::Vec3, "m", kAny, "required", "… up to max"),
    value("spacing", Type::NumberOrVec3, "m", kAny, "required",
          "a number or [sx, sy, sz], ≥ the largest diameter"),
    value("seed", Type::Integer, "", kSeed, "0", "seeds the radii when `radius` is a distribution"),
};

const Fields kRandomKeys{
    value("min", Type::Vec3, "m", kAny, "required", "centres uniform in [min, max], non-overlapping …"),
    value("max", Type::Vec3, "m", kAny, "required", "… an error if they do not fit (the box is full)"),
    value("count", Type::Integer, "", Range{B::Closed, 1.0, B::None, 0.0, " (and ≤ the body limit)"}, "count or volume_fraction",
          "how many bodies (the only way for clumps)"),
    value("volume_fraction", Type::Number, "", Range{B::Open, 0.0, B::Open, 1.0}, "count or volume_fraction",
          "instead of count: add spheres until Σ 4/3 π r³ reaches this × the volume of the box "
          "widened by the largest radius, the region the spheres occupy (the last may pass it by "
          "less than its own volume); an error if the box is full first (docs/scenes.md, \"How "
          "dense a fill can be\")"),
    value("seed", Type::Integer, "", kSeed, "required", "positions and radii"),
};

const Fields kRadiusKeys{
    word("distribution", names_of<SizeKind>, "required",
         "\"uniform\" (min, max), \"normal\" (mean, std, min, max: truncated, redrawn until "
         "inside), \"lognormal\" (median or mean, sigma, min, max) or \"discrete\" (values, "
         "weights)"),
    value("min", Type::Number, "m", kPositive, "required", "the smallest radius"),
    value("max", Type::Number, "m", kPositive, "required", "the largest radius"),
    value("mean", Type::Number, "m", kPositive, "required",
          "normal: the mean; lognormal, instead of median: e^(μ + σ²/2) of the untruncated law"),
    value("std", Type::Number, "m", kPositive, "required", "normal: the standard deviation"),
    value("median", Type::Number, "m", kPositive, "required", "lognormal: ln r ~ N(ln median, sigma²)"),
    value("sigma", Type::Number, "", kPositive, "required", "lognormal: the standard deviation of ln r"),
    value("values", Type::Array, "m", kAny, "required", "discrete: the radii, each > 0"),
    value("weights", Type::Array, "", kAny, "all equal",
          "discrete: r = values[k] with probability weights[k] / Σ weights, each > 0"),
};

const Fields kParticlesKeys{
    word("shape", fill_shapes, "required",
         "\"sphere\", \"clump\", \"capsule\" or \"ellipsoid\" (a clump fill takes `spheres` and an "
         "ellipsoid fill `semi_axes` instead of `radius`, a capsule fill `radius` and `length`; all "
         "but spheres `count` in a random fill, which turns each body at random; a lattice keeps "
         "the body axes along the world's)"),
    Field{"radius", Kind::Table, &kRadiusKeys, Type::NumberOrTable, "m", kPositive, "required",
          "spheres: the radius, or a distribution table (below); capsules: their radius", nullptr},
    value("length", Type::Number, "m", kNonNegative, "required",
          "capsules: the distance between their end spheres' centres (the fill spaces their "
          "bounding spheres, of radius + length/2)"),
    value("spheres", Type::Array, "m", kAny, "required",
          "clumps: [[x, y, z, r], …] as in [[body]]"),
    value("semi_axes", Type::Vec3, "m", kAny, "required",
          "ellipsoids: along the body x, y, z axes, each > 0 (the fill spaces their bounding spheres)"),
    value("material", Type::String, "", kAny, "required", kMaterialRef),
    value("velocity", Type::Vec3, "m/s", kAny, "[0, 0, 0]", "initial velocity"),
    table("lattice", &kLatticeKeys, "lattice or random", "a lattice fill (table below)"),
    table("random", &kRandomKeys, "lattice or random", "a random fill (table below)"),
    value("motion", Type::Array, "", kAny, "none",
          "not accepted: a kinematic body is a [[body]] of its own"),
    value("fixed", Type::Boolean, "", kAny, "false",
          "hold every grain of the fill where it is placed (infinite mass, never moves: a rough "
          "floor or wall of glued grains); not with `velocity` or [periodic]"),
};

const Fields kBodyKeys{
    word("shape", names_of<Shape>, "required",
         "\"sphere\", \"capsule\" (a cylinder along the body x-axis capped by two half spheres), "
         "\"ellipsoid\" or \"clump\" (a rigid union of overlapping spheres)"),
    value("radius", Type::Number, "m", kPositive, "required", "sphere, capsule (its end spheres)"),
    value("length", Type::Number, "m", kNonNegative, "required",
          "capsule: the distance between its end spheres' centres"),
    value("semi_axes", Type::Vec3, "m", kAny, "required", "ellipsoid: along the body x, y, z axes, each > 0"),
    value("spheres", Type::Array, "m", kAny, "required",
          "clump: [[x, y, z, r], …], 1 to 256 spheres, centres in the clump's own frame, radii > 0"),
    value("material", Type::String, "", kAny, "required", kMaterialRef),
    value("position", Type::Vec3, "m", kAny, "required",
          "the centre of mass; for a clump, where the frame of `spheres` goes"),
    value("velocity", Type::Vec3, "m/s", kAny, "[0, 0, 0]", "initial velocity"),
    value("angular_velocity", Type::Vec3, "rad/s", kAny, "[0, 0, 0]", "ω in the world frame"),
    value("orientation", Type::Quaternion, "", kAny, "[1, 0, 0, 0]",
          "unit quaternion [w, x, y, z], body → world (Hamilton, as in the output), norm 1 within "
          "1e-6; a rotation by θ about unit axis u is [cos θ/2, sin θ/2 · u]"),
    value("mass", Type::Number, "kg", kPositive, "from the density",
          "an override; alone, it scales the inertia from the density with it"),
    value("inertia", Type::Vec3, "kg m²", kAny, "from the density",
          "an override: principal moments (Jx, Jy, Jz) about the body axes, each > 0 and ≤ the sum "
          "of the others; alone, the mass stays that from the density"),
    table("motion", &kMotionKeys, "none (dynamic)",
          "a kinematic body moved by this prescribed motion, the same table as a wall's; not "
          "together with velocity, angular_velocity, mass or inertia"),
};

const Fields kJointKeys{
    word("type", names_of<JointType>, "required",
         "\"spherical\" (the anchor stays one point of both bodies), \"distance\" (the two ends "
         "keep their distance), \"revolute\" (spherical + a common axis), \"prismatic\" (no "
         "relative rotation, sliding along the axis) or \"fixed\" (no relative motion)"),
    value("body_a", Type::BodyRef, "", kSeed, "required", "a body's stable id"),
    value("body_b", Type::BodyRef, "", kSeed, "\"world\"", "another body's id, or \"world\""),
    value("anchor", Type::Vec3, "m", kAny, "required (distance: body_b's centre)",
          "a world point at t = 0, fixed on both bodies from then on; for \"distance\", the end on "
          "body_b (required with the world)"),
    value("anchor_a", Type::Vec3, "m", kAny, "body_a's centre", "\"distance\" only: the end on body_a at t = 0"),
    value("axis", Type::Vec3, "", kAny, "required",
          "\"revolute\", \"prismatic\": a world direction at t = 0 (normalised), fixed in both bodies"),
    value("length", Type::Number, "m", kPositive, "the ends' distance at t = 0",
          "\"distance\" only: the distance to keep"),
    value("motor_speed", Type::Number, "rad/s", kAny, "none (a free hinge)",
          "\"revolute\" only: drive body_a's angular velocity relative to body_b about the axis at "
          "this speed (unbounded torque)"),
};

const Fields kPeriodicKeys{
    value("x", Type::Interval, "m", kAny, "not periodic",
          "[lo, hi), lo < hi: a body leaving through hi re-enters at lo with its velocity, and "
          "pairs interact through their nearest images. Each period ≥ 3 × (largest diameter + "
          "solver.envelope), every body starts inside; fills, emitters and the start-up "
          "overlap check see the grains through the faces, and no wall should cut a periodic "
          "axis"),
    value("y", Type::Interval, "m", kAny, "not periodic", "as x"),
    value("z", Type::Interval, "m", kAny, "not periodic", "as x"),
};

const Fields kEmitterKeys{
    Field{"radius", Kind::Table, &kRadiusKeys, Type::NumberOrTable, "m", kPositive, "required",
          "the new spheres' radius, or a distribution table as in [[particles]]", nullptr},
    value("material", Type::String, "", kAny, "required", kMaterialRef),
    value("rate", Type::Number, "1/s", kPositive, "rate or mass_rate", "bodies per second"),
    value("mass_rate", Type::Number, "kg/s", kPositive, "rate or mass_rate", "instead of rate: mass per second"),
    value("min", Type::Vec3, "m", kAny, "required", "the box where centres appear"),
    value("max", Type::Vec3, "m", kAny, "required", "its upper corner, not below min on any axis"),
    value("velocity", Type::Vec3, "m/s", kAny, "[0, 0, 0]", "a new sphere's velocity"),
    value("start", Type::Number, "s", kNonNegative, "0", "emission starts"),
    value("stop", Type::Number, "s", kAny, "never", "emission stops, > start"),
    value("seed", Type::Integer, "", kSeed, "required", "positions and radii"),
    value("motion", Type::Array, "", kAny, "none", "not accepted: emitters do not move"),
};

const Fields kOutletKeys{
    word("type", names_of<OutletType>, "required",
         "\"box\" (min, max) or \"plane\" (point, normal): every body whose centre enters the "
         "region is removed"),
    value("min", Type::Vec3, "m", kAny, "required", "box: the lower corner"),
    value("max", Type::Vec3, "m", kAny, "required", "box: the upper corner, not below min"),
    value("point", Type::Vec3, "m", kAny, "required", "plane: a point on it"),
    value("normal", Type::Vec3, "", kAny, "required",
          "plane: non-zero (normalised); removes the centres behind it, (x − point)·normal < 0"),
};

const Fields kStartKeys{
    value("from", Type::String, "", kAny, "required",
          "an earlier run's trajectory (.h5) or checkpoint, relative to the scene file: the run "
          "starts from its bodies at t = 0 (ids, positions, orientations, velocities; materials "
          "by name), with this scene's materials, walls, solver and stages. From a trajectory: "
          "one frame's spheres (the file keeps no other shape's size). From a checkpoint: every "
          "body with its shape, clump and fixed mark, and the warm start; masses follow this "
          "scene's densities. The scene then has no [[particles]] or [[body]] of its own"),
    value("frame", Type::Integer, "", kAny, "-1",
          "a trajectory's complete frame: 0 the first, -1 (the default) the last; not with a "
          "checkpoint"),
};

const Fields kRootKeys{
    table("simulation", &kSimulationKeys, "", "the step, the run's length and its end"),
    table("periodic", &kPeriodicKeys, "", "periodic boundaries (chute and shear flows); none by default"),
    table("solver", &kSolverKeys, "", "the contact solver"),
    table("output", &kOutputKeys, "", "the trajectory and checkpoints"),
    table("start", &kStartKeys, "",
          "start from a frame or the checkpoint of an earlier run (a settled bed) instead of "
          "generating bodies; none by default"),
    tables("material", &kMaterialKeys, "at least one; referenced by name"),
    tables("friction_pair", &kFrictionPairKeys, "an explicit μ (and e) for a pair of materials"),
    tables("wall", &kWallKeys, "a plane, a box, a cylinder or a triangle mesh, optionally moving"),
    tables("particles", &kParticlesKeys, "a set of spheres, clumps, capsules or ellipsoids, filled by exactly one of lattice and random"),
    tables("body", &kBodyKeys, "a single body: sphere, capsule, ellipsoid or clump"),
    tables("joint", &kJointKeys,
           "a bilateral constraint between two bodies, or a body and the world, kept with "
           "γ-stabilisation (docs/design.md §4)"),
    tables("stage", &kStageKeys,
           "stages run in file order; without any, the run is one stage of [simulation] duration "
           "and stop. A frame is written at the end of every stage"),
    tables("emitter", &kEmitterKeys, "a source: new spheres appear in a box at a rate"),
    tables("outlet", &kOutletKeys, "a sink: removes every body whose centre enters the region"),
};

const Field* find_field(const Fields& fields, std::string_view name) {
    for (const Field& f : fields)
        if (f.name == name) return &f;
    return nullptr;
}

}  // namespace talus::scene_read

// The run's tables: [simulation] (the step, its bounds and the stop), [[stage]],
// [periodic], [solver] and [output].
#include "io/scene/readers.hpp"

#include <cmath>

#include "core/solver_table.hpp"
#include "engine/world/pipeline.hpp"

namespace talus::scene_read {

SimulationSettings read_simulation(Reader& r, const Ctx& root) {
    SimulationSettings s;
    // Without `dt` the step is adaptive (World::choose_step); with it, fixed.
    s.adaptive = true;
    const auto c = r.table(root, "simulation", Need::Optional);
    if (!c) return s;
    if (auto v = r.number(*c, "dt", Need::Optional)) {
        s.dt = *v;
        s.adaptive = false;
        for (const char* key : {"max_dt", "min_dt", "step_fraction"})
            if (r.find(*c, key))
                r.problem_at(*c, key,
                             "applies to the adaptive step, and this scene sets a fixed step "
                             "`dt`: remove dt to step adaptively, or remove this key");
    }
    if (auto v = r.number(*c, "max_dt", Need::Optional)) s.max_dt = *v;
    if (auto v = r.number(*c, "min_dt", Need::Optional)) s.min_dt = *v;
    if (auto v = r.number(*c, "step_fraction", Need::Optional))
        s.step_fraction = *v;
    // (without max_dt, default_max_dt gives one no shorter than min_dt)
    if (s.adaptive && r.find(*c, "max_dt") && s.min_dt > s.max_dt)
        r.problem_at(*c, r.find(*c, "min_dt") ? "min_dt" : "max_dt",
                     fmt::format("min_dt = {:g} s is longer than max_dt = {:g} s", s.min_dt,
                                 s.max_dt));
    if (auto v = r.number(*c, "duration", Need::Optional)) s.duration = *v;
    if (auto v = r.number(*c, "max_speed", Need::Optional)) s.max_speed = *v;
    if (auto v = r.integer(*c, "renumber_interval", Need::Optional))
        s.renumber_interval = int(*v);
    if (auto v = r.vec3(*c, "gravity", Need::Optional)) {
        s.gravity = *v;
        // Legal, but 981 (cm/s²) or 9810 (mm/s²) is a unit slip; the Moon (1.62) and Mars
        // (3.71) are not warned about, nor is zero gravity.
        const double g = v->norm();
        if (g > 0.0 && (g < 1.0 || g > 50.0))
            r.warning_at(*c, "gravity",
                         fmt::format("its magnitude {:.4g} m/s² is {:.3g} times Earth's 9.81 "
                                     "m/s²: is it in m/s²?", g, g / 9.81));
    }
    return s;
}

/// The step against the run's length and the frame cadence: a step longer than a stage
/// would run it for 0 steps (and overshoot), a frame interval shorter than the step cannot
/// be honoured.
void check_step(Reader& r, const Ctx& root, const SimulationSettings& sim,
                const std::vector<Stage>& stages, const OutputSettings& out) {
    if (sim.adaptive) return;  // adaptive steps land on frame and stage times exactly
    const auto sim_table = r.table(root, "simulation", Need::Optional);
    const Ctx sim_ctx = sim_table ? *sim_table : Ctx{nullptr, "simulation", root.place};
    for (const Stage& st : stages)
        if (sim.dt > st.duration) {
            r.problem_at(sim_ctx, "dt",
                         fmt::format("the step {:g} s is longer than {} ({:g} s), which would "
                                     "then run 0 steps: lower dt or lengthen the duration",
                                     sim.dt,
                                     stages.size() > 1 ? fmt::format("stage '{}'", st.name)
                                                       : std::string("the run's duration"),
                                     st.duration));
            break;
        }
    // (an interval left at its default with a longer step simply gives a frame every step)
    const auto out_table = r.table(root, "output", Need::Optional);
    if (out_table && r.find(*out_table, "interval") && out.interval < sim.dt * (1.0 - 1e-9)) {
        const Ctx& out_ctx = *out_table;
        r.problem_at(out_ctx, "interval",
                     fmt::format("{:g} s is shorter than the step dt = {:g} s: frames can come "
                                 "at most once a step (interval = dt writes every step)",
                                 out.interval, sim.dt));
    }
}

/// `stop = { kinetic_energy_below = E, hold = t }` of [simulation] or a [[stage]].
static void read_stop(Reader& r, const Ctx& c, Stage& stage) {
    const auto t = r.table(c, "stop", Need::Optional);
    if (!t) return;
    if (auto e = r.number(*t, "kinetic_energy_below", Need::Required))
        stage.kinetic_energy_below = *e;
    if (auto h = r.number(*t, "hold", Need::Optional))
        stage.hold = *h;
}

/// An array of wall names under `key` (e.g. a stage's remove_walls) as indices into `walls`;
/// each unknown name is reported.
static std::vector<uint32_t> read_wall_names(Reader& r, const Ctx& c, std::string_view key,
                                      const std::vector<Wall>& walls) {
    std::vector<uint32_t> found;
    const toml::node* n = r.find(c, key);
    if (!n) return found;
    const toml::array* a = n->as_array();
    if (!a) {
        r.problem_at(c, key, fmt::format("expected an array of wall names, got {}", type_name(*n)));
        return found;
    }
    std::vector<std::string_view> names;
    for (const Wall& w : walls)
        if (!w.name.empty()) names.push_back(w.name);
    for (std::size_t i = 0; i < a->size(); ++i) {
        const auto* name = (*a)[i].as_string();
        if (!name) {
            r.problem_at(c, key, fmt::format("element {}: expected a wall name, got {}", i,
                                             type_name((*a)[i])));
            continue;
        }
        std::size_t k = 0;
        while (k < walls.size() && walls[k].name != name->get()) ++k;
        if (k == walls.size()) {
            r.problem_at(c, key,
                         fmt::format("element {}: no wall is named '{}'{}", i, name->get(),
                                     names.empty() ? std::string(" (give walls a name = \"...\")")
                                                   : suggest(name->get(), names, "named walls")));
            continue;
        }
        found.push_back(uint32_t(k));
    }
    return found;
}

/// The run's stages: the [[stage]] entries, or one stage of [simulation] duration and stop.
std::vector<Stage> read_stages(Reader& r, const Ctx& root, std::vector<Wall>& walls) {
    std::vector<Stage> stages;
    std::vector<int> started_by(walls.size(), -1);  // stage index that starts each wall's motion
    const auto sim = r.table(root, "simulation", Need::Optional);
    const std::vector<Ctx> entries = r.entries(root, "stage");
    if (entries.empty()) {
        Stage s;
        s.name = "run";
        if (sim) {
            if (auto d = r.number(*sim, "duration", Need::Optional)) s.duration = *d;
            read_stop(r, *sim, s);
        }
        stages.push_back(std::move(s));
        return stages;
    }
    if (sim) {
        for (std::string_view k : {"duration", "stop"})
            if (r.find(*sim, k))
                r.problem_at(*sim, k,
                             fmt::format("not allowed with [[stage]]: each stage has its own {}", k));
    }
    for (const Ctx& c : entries) {
        Stage s;
        s.name = r.string(c, "name", Need::Optional).value_or(c.path);
        if (auto d = r.number(c, "duration", Need::Required))
            s.duration = *d;
        read_stop(r, c, s);
        s.remove_walls = read_wall_names(r, c, "remove_walls", walls);
        s.start_motion = read_wall_names(r, c, "start_motion", walls);
        for (uint32_t k : s.start_motion) {
            Wall& w = walls[k];
            if (!w.motion.moving())
                r.problem_at(c, "start_motion",
                             fmt::format("wall '{}' has no motion to start (give it motion = {{ type = ... }})",
                                         w.name));
            else if (started_by[k] >= 0)  // by an earlier stage, or twice in this one
                r.problem_at(c, "start_motion",
                             fmt::format("wall '{}' is already started by stage '{}'", w.name,
                                         std::size_t(started_by[k]) < stages.size()
                                             ? stages[std::size_t(started_by[k])].name
                                             : s.name));
            else if (w.motion.start != 0.0)
                r.problem_at(c, "start_motion",
                             fmt::format("wall '{}' gives motion.start = {} s; a wall started by a "
                                         "stage starts when the stage begins (drop its start)",
                                         w.name, w.motion.start));
            else {
                started_by[k] = int(stages.size());
                // held at its reference pose until the stage begins (begin_stage sets start)
                w.motion.start = std::numeric_limits<double>::infinity();
            }
        }
        stages.push_back(std::move(s));
    }
    return stages;
}

/// [periodic] x|y|z = [lo, hi]: the periodic range of each periodic axis [m].
PeriodicBox read_periodic(Reader& r, const Ctx& root) {
    PeriodicBox p;
    const auto c = r.table(root, "periodic", Need::Optional);
    if (!c) return p;
    for (int k = 0; k < 3; ++k) {
        const std::string_view key = std::string_view("xyz").substr(std::size_t(k), 1);
        const toml::node* n = r.find(*c, key);
        if (!n) continue;
        const toml::array* a = n->as_array();
        if (!a || a->size() != 2) {
            r.problem_at(*c, key, a ? fmt::format("expected [lo, hi], got {} elements", a->size())
                                    : fmt::format("expected [lo, hi], got {}", type_name(*n)));
            continue;
        }
        auto lo = r.to_number((*a)[0], *c, key, "element 0: ");
        auto hi = r.to_number((*a)[1], *c, key, "element 1: ");
        if (!lo || !hi) continue;
        if (!(*hi > *lo)) {
            r.problem_at(*c, key, fmt::format("must have lo < hi (got [{}, {}])", *lo, *hi));
            continue;
        }
        p.on[std::size_t(k)] = true;
        p.lo[k] = *lo;
        p.hi[k] = *hi;
    }
    return p;
}

void default_envelope(Reader& r, const Ctx& root, World& world) {
    const auto c = r.table(root, "solver", Need::Optional);
    if (c && r.find(*c, "envelope")) return;  // the scene's own, in metres
    const double r_min = world.smallest_radius_to_come();
    if (std::isfinite(r_min) && r_min > 0.0) world.solver.envelope = kSceneEnvelopeShare * r_min;
}

void default_max_dt(Reader& r, const Ctx& root, World& world) {
    SimulationSettings& s = world.simulation;
    const auto c = r.table(root, "simulation", Need::Optional);
    if (!s.adaptive || (c && r.find(*c, "max_dt"))) return;  // a fixed step, or the scene's own
    const double r_min = world.smallest_radius_to_come();
    if (!(std::isfinite(r_min) && r_min > 0.0)) return;
    // the rest bound of World::choose_step for the smallest grain, under the scene's gravity
    // or, without gravity, under the standard one
    const double g = s.gravity.norm() > 0.0 ? s.gravity.norm() : kStandardGravity;
    s.max_dt = std::max(World::rest_step(r_min, g), s.min_dt);
}

/// Every body inside the periodic range, and each periodic length long enough for the
/// broad phase (3 × (largest diameter + envelope)).
void check_periodic(Reader& r, const Ctx& root, const World& world) {
    const PeriodicBox& p = world.simulation.periodic;
    if (!p.any()) return;
    const auto c = r.table(root, "periodic", Need::Optional);
    double rmax = 0.0;
    for (double rad : world.bodies.radius) rmax = std::max(rmax, rad);
    const double cell = 2.0 * rmax + world.solver.envelope;
    for (int k = 0; k < 3; ++k) {
        if (!p.on[std::size_t(k)]) continue;
        const std::string_view key = std::string_view("xyz").substr(std::size_t(k), 1);
        if (p.length(k) < 3.0 * cell) {
            r.problem_at(*c, key,
                         fmt::format("the period {} m must be at least 3 × (largest diameter + "
                                     "solver.envelope) = {} m",
                                     p.length(k), 3.0 * cell));
            continue;
        }
        for (std::size_t i = 0; i < world.bodies.size(); ++i) {
            const double x = world.bodies.position[i][k];
            if (x < p.lo[k] || x >= p.hi[k]) {
                r.problem_at(*c, key,
                             fmt::format("body {} has {} = {} m, outside the periodic range [{}, {}) "
                                         "(place bodies inside it)",
                                         world.bodies.id[i], key, x, p.lo[k], p.hi[k]));
                break;
            }
        }
    }
}

SolverSettings read_solver(Reader& r, const Ctx& root) {
    SolverSettings s;
    const auto c = r.table(root, "solver", Need::Optional);
    // A scene that says nothing of when to stop stops relative to its speeds as well, and
    // one that names no solver gets the scenes' default.
    s.relative_tolerance = kDefaultRelativeTolerance;
    s.weight_tolerance = kDefaultWeightTolerance;
    s.type = kSceneDefaultSolver;
    s.friction = scene_default_friction(s.type);
    s.split_push_out = kSceneSplitPushOut;
    if (!c) return s;
    if (auto t = r.string(*c, "type", Need::Optional)) {
        if (const std::optional<SolverType> type = solver_from_name(*t)) {
            s.type = *type;
        } else {
            std::vector<std::string_view> names;
            for (const SolverCapabilities& k : kSolverTable) names.push_back(k.name);
            r.problem_at(*c, "type", fmt::format("unknown solver type '{}'{}", *t, suggest(*t, names, "known")));
        }
    }
    bool friction_given = false;
    if (auto f = r.string(*c, "friction", Need::Optional)) {
        friction_given = true;
        if (auto law = value_of<FrictionLaw>(*f))
            s.friction = *law;
        else
            r.problem_at(*c, "friction", fmt::format("unknown friction law '{}'{}", *f,
                                                     suggest(*f, names_of<FrictionLaw>(), "known")));
    }
    // bgs and nsgs solve exact Coulomb unless told otherwise, the others the CCP
    if (!friction_given) s.friction = scene_default_friction(s.type);
    if (!supports_law(s.type, s.friction)) {
        const bool ccp = s.friction == FrictionLaw::CCP;
        const std::string others = solvers_where([&](const SolverCapabilities& k) { return ccp ? k.ccp && k.coulomb : k.coulomb; });
        r.problem_at(*c, "friction",
                     ccp ? fmt::format("the \"{}\" solver solves the exact Coulomb law only: set friction = "
                                       "\"coulomb\" or choose {}", solver_name(s.type), others)
                         : fmt::format("friction = \"coulomb\" works with the {} solvers, not \"{}\"{}",
                                       others, solver_name(s.type),
                                       capabilities(s.type).own_model ? " (it has its own friction model)" : ""));
    }
    if (auto v = r.integer(*c, "max_iterations", Need::Optional))
        s.max_iterations = int(*v);
    if (auto v = r.number(*c, "tolerance", Need::Optional)) {
        s.tolerance = *v;
        s.relative_tolerance = 0.0;  // an explicit tolerance means what it says
        s.weight_tolerance = 0.0;
    }
    if (auto v = r.number(*c, "relative_tolerance", Need::Optional))
        s.relative_tolerance = *v;
    if (auto v = r.number(*c, "weight_tolerance", Need::Optional))
        s.weight_tolerance = *v;
    if (auto v = r.number(*c, "relaxation", Need::Optional))
        s.relaxation = *v;
    if (auto v = r.number(*c, "envelope", Need::Optional))
        s.envelope = *v;
    if (auto v = r.number(*c, "recovery_speed", Need::Optional))
        s.recovery_speed = *v;
    if (auto v = r.number(*c, "stabilization", Need::Optional))
        s.stabilization = *v;
    if (auto v = r.boolean(*c, "warm_start", Need::Optional)) s.warm_start = *v;
    if (auto v = r.boolean(*c, "cluster_sweeps", Need::Optional)) {
        if (*v && s.type != SolverType::BGS)
            r.problem_at(*c, "cluster_sweeps",
                         fmt::format("cluster sweeps are the \"bgs\" solver's, not \"{}\"'s: set type = "
                                     "\"bgs\" or drop the key", solver_name(s.type)));
        else
            s.cluster_sweeps = *v;
    }
    const auto push_out = r.string(*c, "push_out", Need::Optional);
    if (push_out) {
        if (*push_out == "velocity" || *push_out == "position")
            s.split_push_out = *push_out == "position";
        else
            r.problem_at(*c, "push_out", fmt::format("unknown push-out '{}'{}", *push_out,
                                                     suggest(*push_out, {"velocity", "position"}, "known")));
    }
    if (auto v = r.integer(*c, "friction_directions", Need::Optional)) {
        if (*v % 2 != 0)  // the cone must be balanced: −d_j is a direction too (seed 000, (13))
            r.problem_at(*c, "friction_directions", "must be even (balanced cone)");
        else
            s.friction_directions = int(*v);
    }
    if (auto v = r.integer(*c, "position_iterations", Need::Optional))
        s.position_iterations = int(*v);
    // The position-level variant removes overlaps by its own re-linearised solves with the
    // velocity-level term (engine/world/position_level.cpp): no separate push-out with it.
    if (s.position_iterations > 0) {
        if (push_out && s.split_push_out)
            r.problem_at(*c, "push_out", "push_out = \"position\" does not combine with position_iterations > 0 "
                                         "(the position-level variant corrects overlaps itself); use \"velocity\"");
        s.split_push_out = false;
    }
    if (auto v = r.number(*c, "bounce_speed", Need::Optional))
        s.bounce_speed = *v;
    return s;
}

OutputSettings read_output(Reader& r, const Ctx& root, const std::filesystem::path& scene_file) {
    OutputSettings s;
    const auto c = r.table(root, "output", Need::Optional);
    if (c) {
        if (auto p = r.string(*c, "path", Need::Optional)) {
            if (p->empty())
                r.problem_at(*c, "path", "must not be empty");
            else
                s.path = *p;
        }
        if (auto v = r.number(*c, "interval", Need::Optional))
            s.interval = *v;
        if (auto b = r.boolean(*c, "wall_contacts", Need::Optional)) s.wall_contacts = *b;
        if (auto b = r.boolean(*c, "contacts", Need::Optional)) s.contacts = *b;
        if (auto p = r.string(*c, "precision", Need::Optional)) {
            if (auto precision = value_of<OutputPrecision>(*p))
                s.precision = *precision;
            else
                r.problem_at(*c, "precision",
                             fmt::format("unknown precision '{}'{}", *p,
                                         suggest(*p, names_of<OutputPrecision>(), "known")));
        }
        if (auto v = r.integer(*c, "compression", Need::Optional)) s.compression = int(*v);
        if (auto v = r.number(*c, "checkpoint_interval", Need::Optional))
            s.checkpoint_interval = *v;
        if (auto p = r.string(*c, "checkpoint", Need::Optional)) {
            if (p->empty())
                r.problem_at(*c, "checkpoint", "must not be empty");
            else
                s.checkpoint = *p;
        }
    }
    const auto resolve = [&](std::string& p) {
        const std::filesystem::path rel(p);
        if (rel.is_relative()) p = (scene_file.parent_path() / rel).lexically_normal().string();
    };
    resolve(s.path);
    if (!s.checkpoint.empty()) {
        const std::string given = s.checkpoint;
        resolve(s.checkpoint);
        // writing one over the other would destroy the trajectory at the first checkpoint
        if (s.checkpoint == s.path)
            r.problem_at(*c, "checkpoint",
                         fmt::format("'{}' names the trajectory file (output.path): a "
                                     "checkpoint needs a file of its own", given));
    }
    return s;
}

}  // namespace talus::scene_read

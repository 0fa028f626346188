// The scene schema's rows (io/scene/schema.cpp): each is documented, its default lies in its
// range and agrees with what a scene without the key gets, and a value outside the range is
// refused with the row's rule, for every ranged key of the run's tables and of an entry of
// every array of tables that has one.
#include <gtest/gtest.h>

#include <charconv>
#include <functional>
#include <string>

#include "io/scene.hpp"
#include "tests/support/scene_errors.hpp"
#include "io/scene/reader.hpp"

namespace talus {
namespace {

using scene_read::Field;
using scene_read::Fields;
using scene_read::Kind;
using scene_read::Range;
using scene_read::Type;

/// Calls `f(path, row)` for every row below `fields`, with dotted paths.
void each_row(const Fields& fields, const std::string& path,
              const std::function<void(const std::string&, const Field&)>& f) {
    for (const Field& row : fields) {
        const std::string p = path.empty() ? std::string(row.name) : path + "." + std::string(row.name);
        f(p, row);
        if (row.sub) each_row(*row.sub, p, f);
    }
}

std::optional<double> number_in(std::string_view text) {
    double v = 0.0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return v;
}

TEST(SceneSchema, EveryRowIsDocumentedAndItsDefaultIsInRange) {
    int rows = 0;
    each_row(scene_read::kRootKeys, "", [&](const std::string& path, const Field& row) {
        ++rows;
        EXPECT_FALSE(row.doc.empty()) << path;
        if (row.kind == Kind::Value) { EXPECT_FALSE(row.fallback.empty()) << path << " has no default"; }
        if (row.kind != Kind::Value) { EXPECT_NE(row.sub, nullptr) << path; }
        if (auto v = number_in(row.fallback); v && row.range.any()) {
            EXPECT_TRUE(row.range.holds(*v)) << path << ": default " << *v << " outside " << row.range.rule();
        }
        const bool numeric = row.type == Type::Number || row.type == Type::Integer ||
                             row.type == Type::NumberOrTable || row.type == Type::NumberOrVec3 ||
                             row.type == Type::BodyRef;
        if (row.range.any()) { EXPECT_TRUE(numeric) << path << ": a range on a " << int(row.type); }
    });
    EXPECT_GT(rows, 150);
}

TEST(SceneSchema, RangeRulesReadAsMessagesDo) {
    using B = Range::Bound;
    EXPECT_EQ((Range{B::Open, 0.0}).rule(), "> 0");
    EXPECT_EQ((Range{B::Closed, 0.0}).rule(), "≥ 0");
    EXPECT_EQ((Range{B::Open, 0.0, B::Closed, 1.0}).rule(), "in (0, 1]");
    EXPECT_EQ((Range{B::Closed, 4.0, B::Closed, 64.0}).rule(), "in [4, 64]");
    EXPECT_EQ((Range{B::Closed, 0.0, B::None, 0.0, " [m]"}).rule(), "≥ 0 [m]");
    EXPECT_TRUE((Range{B::Open, 0.0, B::Open, 2.0}).holds(1.999));
    EXPECT_FALSE((Range{B::Open, 0.0, B::Open, 2.0}).holds(2.0));
    EXPECT_FALSE((Range{B::Closed, 0.0}).holds(-1e-300));
}

/// A scene with one entry of each array of tables whose keys can be overridden one at a time.
const std::string kBase = R"(
[simulation]
duration = 0.5
[solver]
[output]
[[material]]
name = "glass"
[[material]]
name = "steel"
[[friction_pair]]
materials = ["glass", "steel"]
friction = 0.3
[[wall]]
type = "cylinder"
point = [0, 0, 0.5]
axis = [0, 0, 1]
radius = 1.0
inside = true
length = 1.0
material = "steel"
motion = { type = "sine", direction = [0, 0, 1], amplitude = 0.001, frequency = 10, start = 0.1 }
[[particles]]
shape = "sphere"
radius = { distribution = "uniform", min = 0.01, max = 0.02 }
material = "glass"
random = { min = [-0.3, -0.3, 0.1], max = [0.3, 0.3, 0.4], volume_fraction = 0.05, seed = 1 }
[[body]]
shape = "capsule"
radius = 0.02
length = 0.05
mass = 0.1
material = "glass"
position = [0, 0, 0.9]
[[emitter]]
radius = 0.01
material = "glass"
rate = 10
min = [-0.2, -0.2, 0.8]
max = [0.2, 0.2, 0.85]
start = 0.1
seed = 3
)";

std::string error_of(const std::vector<std::string>& overrides) {
    return testing::scene_error(kBase, "mem/schema.toml", overrides);
}

TEST(SceneSchema, BaseSceneIsValid) { EXPECT_EQ(error_of({}), ""); }

/// For every ranged number or integer of the tables kBase holds, a value just outside the
/// range is refused with "KEY: must be RULE (got VALUE)" taken from the row.
TEST(SceneSchema, EveryRangedKeyIsCheckedByItsRow) {
    // where each table of the schema sits in kBase
    const std::vector<std::pair<std::string, std::string>> tables = {
        {"simulation", "simulation"},   {"solver", "solver"},
        {"output", "output"},           {"material", "material.0"},
        {"friction_pair", "friction_pair.0"}, {"wall", "wall.0"},
        {"wall.motion", "wall.0.motion"}, {"particles.radius", "particles.0.radius"},
        {"particles.random", "particles.0.random"}, {"body", "body.0"},
        {"emitter", "emitter.0"}};
    int checked = 0;
    each_row(scene_read::kRootKeys, "", [&](const std::string& path, const Field& row) {
        if (!row.range.any() || row.range.lo_bound == Range::Bound::None) return;
        if (row.type != Type::Number && row.type != Type::Integer && row.type != Type::NumberOrTable) return;
        const auto dot = path.rfind('.');
        const std::string table = path.substr(0, dot), key = path.substr(dot + 1);
        std::string at;
        for (const auto& [t, a] : tables)
            if (t == table) at = a;
        if (at.empty()) return;
        if (table == "particles.radius" && key != "min" && key != "max") return;  // a uniform law's
        if (table == "particles.random" && key == "count") return;  // volume_fraction is given
        if (table == "simulation" && key == "dt") return;  // checked, then refuses max_dt etc.
        if (key == "stop" || key == "mass_rate") return;  // mass_rate: one of rate and mass_rate
        // a mesh's, a cone's, an orifice's (kBase's wall is a cylinder; test_walls.cpp checks them)
        if (table == "wall" && (key == "scale" || key == "start_radius" || key == "end_radius" || key == "hole_radius"))
            return;
        const double bad = row.range.lo_bound == Range::Bound::Open ? row.range.lo : row.range.lo - 1.0;
        const std::string value = fmt::format("{}", bad);
        const std::string msg = error_of({fmt::format("{}.{}={}", at, key, value)});
        EXPECT_NE(msg.find(fmt::format("{}.{}: must be {} (got {})", at, key, row.range.rule(), value)),
                  std::string::npos)
            << path << " = " << value << " gave: " << msg;
        ++checked;
    });
    EXPECT_GT(checked, 40);
}

/// A scene without the keys gets the settings structs' defaults (and the scenes' own: bgs,
/// the relative tolerance, the position push-out), and the reference's defaults say the same.
TEST(SceneSchema, DefaultsAgreeWithTheSettings) {
    const Scene s = parse_scene(R"(
[[material]]
name = "glass"
[[body]]
shape = "sphere"
radius = 0.01
material = "glass"
position = [0, 0, 0]
)",
                                "defaults.toml");
    const auto row = [](std::initializer_list<std::string_view> path) {
        const Fields* fields = &scene_read::kRootKeys;
        const Field* f = nullptr;
        for (std::string_view name : path) {
            f = scene_read::find_field(*fields, name);
            EXPECT_NE(f, nullptr) << name;
            if (!f) return 0.0;
            fields = f->sub;
        }
        const auto v = number_in(f->fallback);
        EXPECT_TRUE(v.has_value()) << f->name << ": " << f->fallback;
        return v.value_or(0.0);
    };
    const Material mat;
    EXPECT_EQ(s.world.materials.materials[0].density, mat.density);
    EXPECT_EQ(s.world.materials.materials[0].friction, mat.friction);
    const SimulationSettings sim;
    const SolverSettings sol;
    const OutputSettings out;
    EXPECT_EQ(s.world.simulation.dt, sim.dt);
    EXPECT_EQ(s.world.simulation.duration, sim.duration);
    EXPECT_EQ(s.world.simulation.gravity, sim.gravity);
    EXPECT_EQ(s.world.solver.max_iterations, sol.max_iterations);
    EXPECT_EQ(s.world.solver.tolerance, sol.tolerance);
    // a scene that says nothing of when to stop stops relative to its speeds too, and one
    // that names no solver gets bgs
    EXPECT_EQ(s.world.solver.relative_tolerance, kDefaultRelativeTolerance);
    EXPECT_EQ(s.world.solver.type, kSceneDefaultSolver);
    EXPECT_EQ(kSceneDefaultSolver, SolverType::BGS);
    EXPECT_TRUE(s.world.solver.split_push_out);
    EXPECT_EQ(s.world.solver.relaxation, sol.relaxation);
    // the envelope's floor is a share of the smallest radius (SolverSettings{}: 1 mm)
    EXPECT_EQ(s.world.solver.envelope, kSceneEnvelopeShare * 0.01);
    EXPECT_EQ(s.world.solver.recovery_speed, sol.recovery_speed);
    EXPECT_EQ(s.world.solver.stabilization, sol.stabilization);
    EXPECT_EQ(s.world.solver.warm_start, sol.warm_start);
    EXPECT_EQ(s.output.path, out.path);  // scene in the current directory
    EXPECT_EQ(s.output.interval, out.interval);
    EXPECT_EQ(s.output.precision, OutputPrecision::Float64);
    EXPECT_EQ(s.output.compression, 1);
    EXPECT_EQ(s.world.bodies.velocity[0], Vec3::Zero());
    EXPECT_EQ(s.world.bodies.angular_velocity[0], Vec3::Zero());

    const World& w = s.world;
    EXPECT_EQ(row({"simulation", "duration"}), s.stages[0].duration);
    EXPECT_EQ(row({"simulation", "max_speed"}), w.simulation.max_speed);
    EXPECT_EQ(row({"simulation", "renumber_interval"}), w.simulation.renumber_interval);
    // the longest step is the rest bound of the smallest grain (SimulationSettings{}: 1 ms)
    EXPECT_EQ(w.simulation.max_dt, std::sqrt(World::kPenetrationTarget * 0.01 / 9.81));
    EXPECT_EQ(row({"simulation", "min_dt"}), w.simulation.min_dt);
    EXPECT_EQ(row({"simulation", "step_fraction"}), w.simulation.step_fraction);
    EXPECT_EQ(row({"solver", "max_iterations"}), w.solver.max_iterations);
    EXPECT_EQ(row({"solver", "tolerance"}), w.solver.tolerance);
    EXPECT_EQ(row({"solver", "recovery_speed"}), w.solver.recovery_speed);
    EXPECT_EQ(row({"solver", "stabilization"}), w.solver.stabilization);
    EXPECT_EQ(row({"solver", "friction_directions"}), w.solver.friction_directions);
    EXPECT_EQ(row({"solver", "position_iterations"}), w.solver.position_iterations);
    EXPECT_EQ(row({"solver", "bounce_speed"}), w.solver.bounce_speed);
    EXPECT_EQ(row({"output", "interval"}), s.output.interval);
    EXPECT_EQ(row({"output", "compression"}), s.output.compression);
    EXPECT_EQ(row({"output", "checkpoint_interval"}), s.output.checkpoint_interval);
    EXPECT_EQ(row({"material", "density"}), w.materials.materials[0].density);
    EXPECT_EQ(row({"material", "friction"}), w.materials.materials[0].friction);
    EXPECT_EQ(row({"material", "restitution"}), w.materials.materials[0].restitution);
    EXPECT_EQ(row({"material", "rolling_friction"}), w.materials.materials[0].rolling_friction);
    EXPECT_EQ(row({"material", "spinning_friction"}), w.materials.materials[0].spinning_friction);
    // the words
    const auto word = [](std::string_view table, std::string_view key) {
        return std::string(scene_read::find_field(*scene_read::find_field(scene_read::kRootKeys, table)->sub, key)->fallback);
    };
    EXPECT_EQ(word("solver", "type"), fmt::format("\"{}\"", solver_name(w.solver.type)));
    EXPECT_EQ(word("output", "precision"), fmt::format("\"{}\"", name_of(s.output.precision)));
    EXPECT_EQ(word("solver", "push_out"), w.solver.split_push_out ? "\"position\"" : "\"velocity\"");
    EXPECT_TRUE(w.simulation.adaptive);  // "dt": none, adaptive
}

}  // namespace
}  // namespace talus

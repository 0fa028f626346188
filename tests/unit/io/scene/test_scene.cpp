// Scene files: a valid scene gives exactly the settings, materials, walls and bodies it
// describes; overrides change them; every bad scene in tests/data/bad_scenes/ is refused
// with a message that names its file and line (or the override).
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <optional>
#include <set>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "io/checkpoint.hpp"
#include "io/scene.hpp"
#include "tests/support/scene_errors.hpp"

namespace talus {
namespace {

namespace fs = std::filesystem;

const fs::path kSource = TALUS_SOURCE_DIR;

/// Materials shared by the inline scenes below.
const std::string kMaterials = R"(
[[material]]
name = "glass"
density = 2500
friction = 0.5

[[material]]
name = "steel"
density = 7800
friction = 0.3

[[material]]
name = "rubber"
density = 1100
friction = 0.9
)";

/// The message of the SceneError that parsing `text` throws ("" if none is thrown).
std::string error_of(const std::string& text, const std::vector<std::string>& overrides = {}) {
    return testing::scene_error(text, "mem/scene.toml", overrides);
}

TEST(Scene, ValidSceneGivesEverySetting) {
    const std::string text = R"(
[simulation]
dt = 2e-4
duration = 3
gravity = [0, -1, -9.8]

[solver]
type = "pgs"
max_iterations = 250
tolerance = 1e-6
relaxation = 1.3
envelope = 0.002
recovery_speed = 0.05
stabilization = 0.5
warm_start = false

[output]
path = "results/run.h5"
interval = 0.05
)" + kMaterials + R"(
[[friction_pair]]
materials = ["glass", "steel"]
friction = 0.2

[[wall]]
type = "plane"
material = "steel"
point = [0, 0, -1]
normal = [0, 0, 4]
velocity = [0, 0, 0.1]

[[wall]]
type = "box"
material = "rubber"
min = [-1, -1, -1]
max = [1, 1, 2]

[[body]]
shape = "sphere"
radius = 0.1
material = "steel"
position = [0.5, 0.25, 1]
velocity = [1, 2, 3]
angular_velocity = [0, 0, 10]
)";
    const Scene s = parse_scene(text, "dir/sub/scene.toml", {});
    const World& w = s.world;
    EXPECT_EQ(s.file, fs::path("dir/sub/scene.toml"));
    EXPECT_EQ(s.text, text);
    EXPECT_DOUBLE_EQ(w.simulation.dt, 2e-4);
    EXPECT_DOUBLE_EQ(w.simulation.duration, 3.0);
    EXPECT_EQ(w.simulation.gravity, Vec3(0, -1, -9.8));
    EXPECT_EQ(w.solver.type, SolverType::PGS);
    EXPECT_EQ(w.solver.max_iterations, 250);
    EXPECT_DOUBLE_EQ(w.solver.tolerance, 1e-6);
    EXPECT_EQ(w.solver.relative_tolerance, 0.0);  // an explicit tolerance means what it says
    EXPECT_DOUBLE_EQ(w.solver.relaxation, 1.3);
    EXPECT_DOUBLE_EQ(w.solver.envelope, 0.002);
    EXPECT_DOUBLE_EQ(w.solver.recovery_speed, 0.05);
    EXPECT_DOUBLE_EQ(w.solver.stabilization, 0.5);
    EXPECT_FALSE(w.solver.warm_start);
    EXPECT_EQ(fs::path(s.output.path), fs::path("dir/sub/results/run.h5"));
    EXPECT_DOUBLE_EQ(s.output.interval, 0.05);

    ASSERT_EQ(w.materials.size(), 3u);
    EXPECT_EQ(w.materials.materials[1].name, "steel");
    EXPECT_DOUBLE_EQ(w.materials.materials[1].density, 7800.0);
    EXPECT_DOUBLE_EQ(w.materials.materials[2].friction, 0.9);

    ASSERT_EQ(w.walls.size(), 2u);
    EXPECT_EQ(w.walls[0].type, WallType::Plane);
    EXPECT_EQ(w.walls[0].material, 1u);
    EXPECT_EQ(w.walls[0].point, Vec3(0, 0, -1));
    EXPECT_EQ(w.walls[0].normal, Vec3(0, 0, 1));  // normalised
    EXPECT_EQ(w.walls[0].motion.kind, MotionKind::Translation);
    EXPECT_EQ(w.walls[0].motion.velocity, Vec3(0, 0, 0.1));
    EXPECT_EQ(w.walls[1].type, WallType::Box);
    EXPECT_EQ(w.walls[1].material, 2u);
    EXPECT_EQ(w.walls[1].min, Vec3(-1, -1, -1));
    EXPECT_EQ(w.walls[1].max, Vec3(1, 1, 2));
    EXPECT_FALSE(w.walls[1].kinematic());

    ASSERT_EQ(w.bodies.size(), 1u);
    EXPECT_EQ(w.bodies.id[0], 0u);
    EXPECT_EQ(w.bodies.position[0], Vec3(0.5, 0.25, 1));
    EXPECT_EQ(w.bodies.velocity[0], Vec3(1, 2, 3));
    EXPECT_EQ(w.bodies.angular_velocity[0], Vec3(0, 0, 10));
    EXPECT_DOUBLE_EQ(w.bodies.radius[0], 0.1);
    EXPECT_EQ(w.bodies.material[0], 1u);
    EXPECT_NEAR(w.bodies.mass(0), 7800.0 * 4.0 / 3.0 * std::numbers::pi * 1e-3, 1e-12);
}

TEST(Scene, FrictionOfAPairIsTheTableEntryElseTheSmaller) {
    const Scene s = parse_scene(kMaterials + R"(
[[friction_pair]]
materials = ["glass", "steel"]
friction = 0.7
[[friction_pair]]
materials = ["rubber", "rubber"]
friction = 1.2
[[body]]
shape = "sphere"
radius = 0.01
material = "glass"
position = [0, 0, 0]
)",
                                "s.toml");
    const MaterialTable& m = s.world.materials;
    EXPECT_DOUBLE_EQ(m.friction(0, 1), 0.7);  // given, larger than both
    EXPECT_DOUBLE_EQ(m.friction(1, 0), 0.7);
    EXPECT_DOUBLE_EQ(m.friction(2, 2), 1.2);
    EXPECT_DOUBLE_EQ(m.friction(0, 2), 0.5);  // not given: min(0.5, 0.9)
    EXPECT_DOUBLE_EQ(m.friction(1, 2), 0.3);
    EXPECT_DOUBLE_EQ(m.friction(0, 0), 0.5);
}

TEST(Scene, RollingAndSpinningResistanceOfAPairIsTheTableEntryElseTheSmaller) {
    const Scene s = parse_scene(R"(
[[material]]
name = "a"
rolling_friction = 0.002
spinning_friction = 0.001
[[material]]
name = "b"
rolling_friction = 0.004
[[material]]
name = "c"
[[friction_pair]]
materials = ["b", "c"]
friction = 0.4
rolling_friction = 0.003
[[body]]
shape = "sphere"
radius = 0.01
material = "a"
position = [0, 0, 0]
)",
                                "s.toml");
    const MaterialTable& m = s.world.materials;
    EXPECT_DOUBLE_EQ(m.materials[0].rolling_friction, 0.002);
    EXPECT_DOUBLE_EQ(m.materials[0].spinning_friction, 0.001);
    EXPECT_DOUBLE_EQ(m.materials[2].rolling_friction, 0.0);  // default: off
    EXPECT_DOUBLE_EQ(m.rolling(0, 1), 0.002);   // min(0.002, 0.004)
    EXPECT_DOUBLE_EQ(m.spinning(0, 1), 0.0);    // min(0.001, 0)
    EXPECT_DOUBLE_EQ(m.spinning(0, 0), 0.001);
    EXPECT_DOUBLE_EQ(m.rolling(1, 2), 0.003);   // given, larger than min(0.004, 0)
    EXPECT_DOUBLE_EQ(m.rolling(2, 1), 0.003);
    EXPECT_DOUBLE_EQ(m.spinning(1, 2), 0.0);    // not given in the pair: min(0, 0)
    EXPECT_TRUE(m.any_rolling());
}

TEST(Scene, RelativeAndWeightTolerancesDefaultOnlyWhenNoToleranceIsGiven) {
    // docs/design.md §6, "The stopping rule" and "The weight term": ε = 0.01 and ε_w = 0.1
    // unless the scene sets tolerance; an explicit value of either wins either way.
    const std::string body = kMaterials + R"(
[[body]]
shape = "sphere"
radius = 0.01
material = "glass"
position = [0, 0, 0]
)";
    auto read = [&](const std::string& solver) {
        return parse_scene(body + solver, "s.toml", {}).world.solver;
    };
    const SolverSettings none = read("[solver]\ntype = \"bgs\"\n");
    EXPECT_EQ(none.relative_tolerance, kDefaultRelativeTolerance);
    EXPECT_EQ(none.weight_tolerance, kDefaultWeightTolerance);
    EXPECT_EQ(read("").weight_tolerance, kDefaultWeightTolerance);
    const SolverSettings given = read("[solver]\ntolerance = 1e-5\n");
    EXPECT_EQ(given.relative_tolerance, 0.0);
    EXPECT_EQ(given.weight_tolerance, 0.0);
    const SolverSettings both = read("[solver]\ntolerance = 1e-5\nrelative_tolerance = 0.05\nweight_tolerance = 0.2\n");
    EXPECT_EQ(both.tolerance, 1e-5);
    EXPECT_EQ(both.relative_tolerance, 0.05);
    EXPECT_EQ(both.weight_tolerance, 0.2);
    const SolverSettings off = read("[solver]\nrelative_tolerance = 0\nweight_tolerance = 0\n");
    EXPECT_EQ(off.relative_tolerance, 0.0);
    EXPECT_EQ(off.weight_tolerance, 0.0);
    for (const char* key : {"relative_tolerance = 1.5", "weight_tolerance = 1"}) {
        const std::string bad = error_of(body + "[solver]\n" + key + "\n");
        EXPECT_NE(bad.find("mem/scene.toml:"), std::string::npos) << bad;
        EXPECT_NE(bad.find(std::string(key).substr(0, std::string(key).find(' '))), std::string::npos) << bad;
    }
}

/// A [[body]] entry of one glass sphere, as scene text.
std::string glass_sphere(double radius, const std::string& position) {
    return fmt::format("\n[[body]]\nshape = \"sphere\"\nradius = {}\nmaterial = \"glass\"\nposition = {}\n",
                       radius, position);
}

/// An emitter of grains of 1.5 to 2 mm radius.
const std::string kFineEmitter = R"(
[[emitter]]
material = "glass"
radius = { distribution = "uniform", min = 0.0015, max = 0.002 }
rate = 10.0
min = [-0.1, -0.1, 0.5]
max = [0.1, 0.1, 0.6]
seed = 1
)";

TEST(Scene, DefaultEnvelopeIsTwoThirdsOfTheSmallestRadius) {
    // docs/design.md §3, "Speculative contacts": without [solver] envelope, δ_min is
    // kSceneEnvelopeShare of the smallest radius a dynamic body has or an emitter can draw,
    // so that it scales with the grains as every other length the engine chooses does
    const std::string bodies = kMaterials + glass_sphere(0.01, "[0, 0, 0]") + glass_sphere(0.006, "[0.1, 0, 0]");
    const auto envelope = [](const std::string& text) {
        return parse_scene(text, "s.toml", {}).world.solver.envelope;
    };
    EXPECT_DOUBLE_EQ(envelope(bodies), 0.004);
    EXPECT_EQ(envelope(bodies + "[solver]\nenvelope = 0.002\n"), 0.002);  // the scene's own
    EXPECT_EQ(parse_scene(bodies, "s.toml", {"solver.envelope=0.003"}).world.solver.envelope, 0.003);
    EXPECT_DOUBLE_EQ(envelope(bodies + kFineEmitter), 0.001);
    // the shared beds' 1.5 mm grains keep the 1 mm their measurements were made with
    EXPECT_EQ(envelope(kMaterials + glass_sphere(0.0015, "[0, 0, 0]")), 1e-3);
}

TEST(Scene, DefaultMaxDtIsTheRestBoundOfTheSmallestGrain) {
    // docs/design.md §4, "The adaptive step": without [simulation] max_dt, the longest step
    // is √(p* r_min / ‖g‖), the step at which a resting grain left unsupported by the solve
    // sinks p* = 1 % of r_min, for the smallest radius a dynamic body has or an emitter can
    // draw; it grows with the grains instead of holding every bed at 1 ms
    const std::string bodies = kMaterials + glass_sphere(0.005, "[0, 0, 0]") + glass_sphere(0.008, "[0.1, 0, 0]");
    const auto max_dt = [](const std::string& text, const std::vector<std::string>& sets = {}) {
        return parse_scene(text, "s.toml", sets).world.simulation.max_dt;
    };
    const double p = World::kPenetrationTarget;
    EXPECT_DOUBLE_EQ(max_dt(bodies), std::sqrt(p * 0.005 / 9.81));
    EXPECT_NEAR(max_dt(bodies), 2.26e-3, 0.01e-3);
    EXPECT_NEAR(max_dt(kMaterials + glass_sphere(0.0015, "[0, 0, 0]")), 1.24e-3, 0.01e-3);
    EXPECT_EQ(max_dt(bodies + "[simulation]\nmax_dt = 0.002\n"), 0.002);  // the scene's own
    EXPECT_EQ(max_dt(bodies, {"simulation.max_dt=0.003"}), 0.003);
    // a finer grain to come from an emitter sets it; gravity sets it, and without gravity
    // the standard one does
    EXPECT_DOUBLE_EQ(max_dt(bodies + kFineEmitter), std::sqrt(p * 0.0015 / 9.81));
    EXPECT_DOUBLE_EQ(max_dt(bodies + "[simulation]\ngravity = [0, 0, -1.62]\n"), std::sqrt(p * 0.005 / 1.62));
    EXPECT_DOUBLE_EQ(max_dt(bodies + "[simulation]\ngravity = [0, 0, 0]\n"),
                     std::sqrt(p * 0.005 / kStandardGravity));
    // never shorter than the scene's min_dt; a fixed step keeps its dt
    EXPECT_EQ(max_dt(bodies + "[simulation]\nmin_dt = 0.004\n"), 0.004);
    const Scene fixed = parse_scene(bodies + "[simulation]\ndt = 0.002\n", "s.toml", {});
    EXPECT_FALSE(fixed.world.simulation.adaptive);
    EXPECT_EQ(fixed.world.simulation.dt, 0.002);
}

TEST(Scene, DefaultFrictionLawIsExactCoulombWithBgsAndNsgs) {
    // core/settings.hpp, scene_default_friction: a scene that names no law gets exact Coulomb
    // from the solvers that solve it by their own sweep (bgs, the scenes' default, and nsgs)
    // and the CCP from the others; a law the scene names is kept
    const std::string bodies = kMaterials + glass_sphere(0.005, "[0, 0, 0]");
    const auto law = [&](const std::string& solver_table) {
        return parse_scene(bodies + solver_table, "s.toml", {}).world.solver.friction;
    };
    EXPECT_EQ(law(""), FrictionLaw::Coulomb);
    EXPECT_EQ(law("[solver]\nmax_iterations = 50\n"), FrictionLaw::Coulomb);
    EXPECT_EQ(law("[solver]\ntype = \"bgs\"\n"), FrictionLaw::Coulomb);
    EXPECT_EQ(law("[solver]\ntype = \"nsgs\"\n"), FrictionLaw::Coulomb);
    for (const char* type : {"pgs", "pj", "apgd", "maxdiss", "lemke"})
        EXPECT_EQ(law(fmt::format("[solver]\ntype = \"{}\"\n", type)), FrictionLaw::CCP) << type;
    EXPECT_EQ(law("[solver]\nfriction = \"ccp\"\n"), FrictionLaw::CCP);
    EXPECT_EQ(law("[solver]\ntype = \"pgs\"\nfriction = \"coulomb\"\n"), FrictionLaw::Coulomb);
}

TEST(Scene, FirstStepFindsTheSameCandidatePairsAtAnyScaleOfTheBed) {
    // A random bed and the same bed ten times smaller: with the defaults, every length the
    // engine chooses at the first step (the step from √(p*/g), the fall ½ g h², the
    // envelope's floor) is a share of the radius, so the narrow phase finds the same pairs.
    // With the envelope fixed at 1 mm (the old default) the small bed's grains each find
    // every neighbour within three diameters: several times the pairs, or, on a denser bed
    // than this one, so many that the step is refused.
    const auto candidates = [](double scale, const std::vector<std::string>& sets) -> std::optional<double> {
        const std::string text = kMaterials + fmt::format(R"(
[[wall]]
type = "box"
material = "glass"
min = [0, 0, 0]
max = [{0}, {0}, {1}]

[[particles]]
shape = "sphere"
material = "glass"
radius = {2}
random = {{ min = [{3}, {3}, {3}], max = [{4}, {4}, {5}], count = 600, seed = 3 }}
)", 0.025 * scale, 0.05 * scale, 0.0015 * scale, 0.0016 * scale, 0.0234 * scale, 0.0484 * scale);
        Scene s = parse_scene(text, "s.toml", sets);
        const StepStatus st = s.world.step();
        if (!st.ok) {
            EXPECT_NE(st.message.find("candidate pairs"), std::string::npos) << st.message;
            return std::nullopt;
        }
        const StepDiagnostics& d = s.world.diagnostics();
        return double(d.contacts) + double(d.set_aside);
    };
    const std::optional<double> coarse = candidates(1.0, {});
    const std::optional<double> fine = candidates(0.1, {});
    ASSERT_TRUE(coarse && fine);
    EXPECT_GT(*coarse, 600.0);  // a dense bed: more candidates than grains
    EXPECT_NEAR(*fine / *coarse, 1.0, 0.02) << *coarse << " at 1.5 mm, " << *fine << " at 0.15 mm";
    const std::optional<double> fixed = candidates(0.1, {"solver.envelope=1e-3"});
    if (fixed) {
        EXPECT_GT(*fixed, 3.0 * *coarse) << "a 1 mm envelope at 0.15 mm";
    }
}

TEST(Scene, OutputPrecisionAndCompressionAreRead) {
    const Scene s = parse_scene(kMaterials + R"(
[output]
precision = "float32"
compression = 9
[[body]]
shape = "sphere"
radius = 0.01
material = "glass"
position = [0, 0, 0]
)",
                                "s.toml");
    EXPECT_EQ(s.output.precision, OutputPrecision::Float32);
    EXPECT_EQ(s.output.compression, 9);
    const Scene plain = parse_scene(kMaterials + R"(
[output]
precision = "float64"
compression = 0
[[body]]
shape = "sphere"
radius = 0.01
material = "glass"
position = [0, 0, 0]
)",
                                    "s.toml", {"output.precision=float32"});
    EXPECT_EQ(plain.output.precision, OutputPrecision::Float32);  // --set wins
    EXPECT_EQ(plain.output.compression, 0);
}

TEST(Scene, CheckpointKeysAreReadAndResolvedLikeThePath) {
    const std::string body = R"(
[[body]]
shape = "sphere"
radius = 0.01
material = "glass"
position = [0, 0, 0]
)";
    // absent: no periodic checkpoints, the file beside the trajectory
    const Scene plain = parse_scene(kMaterials + body, "dir/s.toml");
    EXPECT_EQ(plain.output.checkpoint_interval, 0.0);
    EXPECT_EQ(plain.output.checkpoint, "");
    const Scene s = parse_scene(kMaterials + R"(
[output]
path = "runs/a.h5"
checkpoint = "saves/a.ck.h5"
checkpoint_interval = 0.25
)" + body,
                                "dir/s.toml");
    EXPECT_EQ(s.output.checkpoint_interval, 0.25);
    EXPECT_EQ(fs::path(s.output.checkpoint), fs::path("dir/saves/a.ck.h5"));
    EXPECT_EQ(default_checkpoint_path("dir/runs/a.h5"), fs::path("dir/runs/a.checkpoint.h5"));
    EXPECT_EQ(default_checkpoint_path("a.hdf5"), fs::path("a.hdf5.checkpoint.h5"));
    // 0 is allowed (none); a negative interval, an empty path or the trajectory's are not
    EXPECT_EQ(parse_scene(kMaterials + body, "s.toml", {"output.checkpoint_interval=0"})
                  .output.checkpoint_interval,
              0.0);
    for (const char* bad : {"output.checkpoint_interval=-1", "output.checkpoint=\"\"",
                            "output.checkpoint=\"out.h5\""}) {
        try {
            parse_scene(kMaterials + body, "s.toml", {bad});
            ADD_FAILURE() << bad << " was accepted";
        } catch (const SceneError& e) {
            EXPECT_NE(std::string(e.what()).find("output.checkpoint"), std::string::npos) << e.what();
        }
    }
}

TEST(Scene, LatticeCountAndOrderAreAsComputedByHand) {
    // x: 0, 0.1, 0.2, 0.3 — 0.1·3 = 0.30000000000000004 > 0.3 is kept by the 1e-9·s slack;
    // y: 0, 0.25 (0.5 is beyond 0.49); z: one layer. 4 × 2 × 1 = 8.
    const Scene s = parse_scene(kMaterials + R"(
[[particles]]
shape = "sphere"
radius = 0.05
material = "rubber"
velocity = [0, 0, -1]
lattice = { min = [0, 0, 1], max = [0.3, 0.49, 1], spacing = [0.1, 0.25, 1] }
)",
                                "s.toml");
    const BodyStore& b = s.world.bodies;
    ASSERT_EQ(b.size(), 8u);
    for (std::size_t i = 0; i < b.size(); ++i) {
        EXPECT_EQ(b.id[i], i);
        EXPECT_EQ(b.material[i], 2u);
        EXPECT_EQ(b.velocity[i], Vec3(0, 0, -1));
    }
    EXPECT_EQ(b.position[1], Vec3(0.1, 0, 1));  // x fastest
    EXPECT_EQ(b.position[4], Vec3(0, 0.25, 1));
    EXPECT_NEAR(b.position[7].x(), 0.3, 1e-15);

    // The shipped 200-sphere box: 5 × 5 × 8.
    const Scene box = load_scene(kSource / "tests/scenes/small_box.toml");
    EXPECT_EQ(box.world.bodies.size(), 200u);
    const Scene drop = load_scene(kSource / "tests/scenes/drop.toml");
    EXPECT_EQ(drop.world.bodies.size(), 1u);
}

const std::string kRandomScene = kMaterials + R"(
[[wall]]
type = "box"
material = "steel"
min = [0, 0, 0]
max = [0.1, 0.1, 0.1]

[[body]]
shape = "sphere"
radius = 0.02
material = "steel"
position = [0.05, 0.05, 0.05]

[[particles]]
shape = "sphere"
radius = 0.005
material = "glass"
random = { min = [0, 0, 0], max = [0.1, 0.1, 0.1], count = 150, seed = 42 }

[[particles]]
shape = "sphere"
radius = 0.003
material = "rubber"
random = { min = [0, 0, 0], max = [0.1, 0.1, 0.05], count = 60, seed = 1 }
)";

TEST(Scene, RandomFillDoesNotOverlapAnythingAndStaysInTheBox) {
    const Scene s = parse_scene(kRandomScene, "s.toml");
    const BodyStore& b = s.world.bodies;
    ASSERT_EQ(b.size(), 1u + 150u + 60u);
    EXPECT_EQ(b.position[0], Vec3(0.05, 0.05, 0.05));  // the [[body]] comes first in the file
    for (std::size_t i = 0; i < b.size(); ++i) {
        EXPECT_TRUE((b.position[i].array() - b.radius[i] >= 0.0).all()) << i;
        EXPECT_TRUE((b.position[i].array() + b.radius[i] <= 0.1).all()) << i;
        for (std::size_t j = 0; j < i; ++j)
            ASSERT_GE((b.position[i] - b.position[j]).norm(), b.radius[i] + b.radius[j])
                << "bodies " << j << " and " << i;
    }
    for (std::size_t i = 151; i < b.size(); ++i) EXPECT_LE(b.position[i].z(), 0.05);
}

TEST(Scene, RandomFillIsDeterministicForASeed) {
    const Scene a = parse_scene(kRandomScene, "s.toml");
    const Scene b = parse_scene(kRandomScene, "s.toml");
    EXPECT_EQ(a.world.bodies.position, b.world.bodies.position);
    const Scene c = parse_scene(kRandomScene, "s.toml", {"particles.0.random.seed=43"});
    ASSERT_EQ(c.world.bodies.size(), a.world.bodies.size());
    EXPECT_NE(c.world.bodies.position[1], a.world.bodies.position[1]);

}

TEST(Scene, IdsFollowFileOrderAcrossParticlesAndBodies) {
    const Scene s = parse_scene(kMaterials + R"(
[[body]]
shape = "sphere"
radius = 0.01
material = "glass"
position = [5, 5, 5]

[[particles]]
shape = "sphere"
radius = 0.01
material = "glass"
lattice = { min = [0, 0, 0], max = [0.02, 0, 0], spacing = 0.02 }

[[body]]
shape = "sphere"
radius = 0.01
material = "steel"
position = [-5, 0, 0]
)",
                                "s.toml");
    const BodyStore& b = s.world.bodies;
    ASSERT_EQ(b.size(), 4u);
    EXPECT_EQ(b.position[0], Vec3(5, 5, 5));
    EXPECT_EQ(b.position[1], Vec3(0, 0, 0));
    EXPECT_EQ(b.position[2], Vec3(0.02, 0, 0));
    EXPECT_EQ(b.position[3], Vec3(-5, 0, 0));
    for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(b.id[i], i);
}

TEST(Scene, TouchingSpheresAreNotAnOverlap) {
    // Exactly touching on a lattice, on a plane and inside a box: allowed.
    EXPECT_EQ(error_of(kMaterials + R"(
[[wall]]
type = "plane"
material = "steel"
point = [0, 0, 0]
normal = [0, 0, 1]
[[wall]]
type = "box"
material = "steel"
min = [-0.1, -0.1, 0]
max = [0.1, 0.1, 0.1]
[[particles]]
shape = "sphere"
radius = 0.01
material = "glass"
lattice = { min = [-0.09, -0.09, 0.01], max = [0.09, 0.09, 0.09], spacing = 0.02 }
)"),
              "");
}

TEST(Scene, OverridesChangeValuesBeforeValidation) {
    const fs::path file = kSource / "tests/scenes/small_box.toml";
    const std::vector<std::string> ov = {"simulation.dt=1e-5",
                                         "solver.tolerance = 1e-7",
                                         "solver.warm_start=false",
                                         "simulation.gravity=[0,0,-1]",
                                         "material.1.friction=0.1",
                                         "output.path=other.h5",
                                         "particles.0.lattice.spacing=[0.02, 0.02, 0.03]",
                                         "solver.relaxation=1"};
    const Scene s = load_scene(file, ov);
    EXPECT_EQ(s.overrides, ov);
    EXPECT_DOUBLE_EQ(s.world.simulation.dt, 1e-5);
    EXPECT_DOUBLE_EQ(s.world.solver.tolerance, 1e-7);
    EXPECT_EQ(s.world.solver.relative_tolerance, 0.0);
    EXPECT_FALSE(s.world.solver.warm_start);
    EXPECT_DOUBLE_EQ(s.world.solver.relaxation, 1.0);  // integer accepted for a float
    EXPECT_EQ(s.world.simulation.gravity, Vec3(0, 0, -1));
    EXPECT_DOUBLE_EQ(s.world.materials.materials[1].friction, 0.1);
    EXPECT_EQ(fs::path(s.output.path), (file.parent_path() / "other.h5").lexically_normal());
    EXPECT_EQ(s.world.bodies.size(), 5u * 5u * 7u);  // z: 0.01 + 0.03 k ≤ 0.19 → 7 layers

    // An override can add a section the file does not have.
    const Scene d = load_scene(kSource / "tests/scenes/drop.toml", {"solver.envelope=0.01"});
    EXPECT_DOUBLE_EQ(d.world.solver.envelope, 0.01);
}

TEST(Scene, BadOverridesNameTheOverride) {
    const fs::path file = kSource / "tests/scenes/small_box.toml";
    const auto message = [&](const std::string& ov) {
        try {
            load_scene(file, {ov});
        } catch (const SceneError& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    EXPECT_EQ(
        message("solver.tolerence=1"),
        "--set solver.tolerence=1: solver.tolerence: unknown key (did you mean 'tolerance'?)");
    EXPECT_NE(
        message("simulation.dt=-1").find("--set simulation.dt=-1: simulation.dt: must be > 0"),
        std::string::npos);
    EXPECT_NE(message("material.7.friction=1").find("no such entry"), std::string::npos);
    EXPECT_NE(message("material.friction=1").find("give an entry index"), std::string::npos);
    EXPECT_NE(message("simulation.gravity.z=1").find("not a table"), std::string::npos);
    EXPECT_NE(message("simulation.dt").find("expected key=value"), std::string::npos);
    EXPECT_NE(message("simulation.dt=fast").find("expected a number, got a string"),
              std::string::npos);
}

TEST(Scene, SeveralProblemsAreReportedTogetherInLineOrder) {
    const std::string msg = error_of(R"([simulation]
dt = -1
duraton = 2
[[material]]
name = "glass"
density = 2500
friction = -0.5
[[body]]
shape = "sphere"
radius = 0
material = "glass"
position = [0, 0]
)");
    std::istringstream lines(msg);
    std::vector<std::string> got;
    for (std::string l; std::getline(lines, l);) got.push_back(l);
    ASSERT_EQ(got.size(), 5u) << msg;
    EXPECT_EQ(got[0], "mem/scene.toml:2: simulation.dt: must be > 0 (got -1)");
    EXPECT_EQ(got[1],
              "mem/scene.toml:3: simulation.duraton: unknown key (did you mean 'duration'?)");
    EXPECT_EQ(got[2], "mem/scene.toml:7: material.0.friction: must be ≥ 0 (got -0.5)");
    EXPECT_EQ(got[3], "mem/scene.toml:10: body.0.radius: must be > 0 (got 0)");
    EXPECT_EQ(got[4],
              "mem/scene.toml:12: body.0.position: expected an array of 3 numbers, got 2 elements");
}

TEST(Scene, UnknownKeysAreFoundAtEveryLevel) {
    EXPECT_NE(error_of("[simulaton]\ndt = 1\n")
                  .find("mem/scene.toml:1: simulaton: unknown key (did you mean 'simulation'?)"),
              std::string::npos);
    const std::string nested = error_of(kMaterials + R"(
[[particles]]
shape = "sphere"
radius = 0.01
material = "glass"
lattice = { min = [0, 0, 0], max = [0.1, 0.1, 0.1], spacng = 0.02 }
)");
    EXPECT_NE(nested.find("particles.0.lattice.spacng: unknown key (did you mean 'spacing'?)"),
              std::string::npos)
        << nested;
    EXPECT_NE(error_of("colour = 3\n").find("colour: unknown key (valid keys here: simulation,"),
              std::string::npos);
}

TEST(Scene, MissingFileIsASceneError) {
    EXPECT_THROW(load_scene(kSource / "tests/data/no_such_scene.toml"), SceneError);
}

/// The "# key: value" header lines of a bad scene.
std::string header(const fs::path& file, const std::string& key) {
    std::ifstream in(file);
    const std::string prefix = "# " + key + ":";
    for (std::string line; std::getline(in, line) && line.rfind("#", 0) == 0;)
        if (line.rfind(prefix, 0) == 0) {
            const auto b = line.find_first_not_of(' ', prefix.size());
            return b == std::string::npos ? std::string() : line.substr(b);
        }
    return {};
}

TEST(Scene, JointTablesReachTheWorld) {
    const Scene s = parse_scene(kMaterials + R"(
[solver]
max_iterations = 300
tolerance = 1e-9

[[body]]
shape = "sphere"
radius = 0.02
material = "steel"
position = [0.3, 0, 1]

[[body]]
shape = "sphere"
radius = 0.02
material = "steel"
position = [0, 0, 0.7]

[[joint]]
type = "revolute"
body_a = 0
anchor = [0, 0, 1]
axis = [0, 0, 2]
motor_speed = 1.5

[[joint]]
type = "distance"
body_a = 1
body_b = 0
anchor = [0.3, 0, 1]

[[joint]]
type = "fixed"
body_a = 1
body_b = "world"
anchor = [0, 0, 0.7]
)",
                                "mem/scene.toml");
    const World& w = s.world;
    ASSERT_EQ(w.joints.size(), 3u);
    const Joint& rev = w.joints[0];
    EXPECT_EQ(rev.type, JointType::Revolute);
    EXPECT_EQ(rev.body_a, 0u);
    EXPECT_EQ(rev.body_b, kWorldBody);
    EXPECT_TRUE(rev.anchor_a.isApprox(Vec3(-0.3, 0, 0), 1e-15));  // body frame of body 0
    EXPECT_TRUE(rev.anchor_b.isApprox(Vec3(0, 0, 1), 1e-15));     // the world point
    EXPECT_TRUE(rev.axis_a.isApprox(Vec3::UnitZ(), 1e-15));       // normalised
    EXPECT_TRUE(rev.motor);
    EXPECT_EQ(rev.motor_speed, 1.5);
    const Joint& dist = w.joints[1];
    EXPECT_EQ(dist.type, JointType::Distance);
    EXPECT_EQ(dist.body_a, 1u);
    EXPECT_EQ(dist.body_b, 0u);
    EXPECT_NEAR(dist.length, std::sqrt(0.3 * 0.3 + 0.3 * 0.3), 1e-15);
    EXPECT_EQ(w.joints[2].type, JointType::Fixed);
    EXPECT_EQ(w.joints[2].body_b, kWorldBody);

    // Run it: body 1 is fixed on the axis below, so the distance joint is compatible with
    // the hinge, and the motor turns body 0 at 1.5 rad/s about the vertical axis. The
    // tolerances below are for a fixed step of 1 ms (the joints' drift grows with h; the
    // scene's own adaptive step would take up to 10 ms here).
    World run = w;
    run.simulation.adaptive = false;
    run.simulation.dt = 1e-3;
    for (int k = 0; k < 200; ++k) ASSERT_TRUE(run.step().ok);
    for (std::size_t i = 0; i < run.bodies.size(); ++i) {
        const Vec3 omega = run.bodies.orientation[i] * run.bodies.angular_velocity[i];
        if (run.bodies.id[i] == 0) {
            EXPECT_NEAR(omega.z(), 1.5, 1e-6);
            EXPECT_NEAR(std::hypot(run.bodies.position[i].x(), run.bodies.position[i].y()), 0.3, 1e-4);
        } else {
            EXPECT_LT(omega.norm(), 1e-6);
            EXPECT_LT((run.bodies.position[i] - Vec3(0, 0, 0.7)).norm(), 1e-6);
        }
    }
    EXPECT_LT(run.diagnostics().joint_infeasibility, 1e-4);
}

TEST(Scene, BadJointValuesNameTheirKeys) {
    const std::string bodies = kMaterials + R"(
[[body]]
shape = "sphere"
radius = 0.02
material = "steel"
position = [0.3, 0, 1]
)";
    // each [[joint]] table's keys and what its message must contain
    const std::pair<std::string, std::string> cases[] = {
        {"type = \"hinge\"\nbody_a = 0\nanchor = [0, 0, 1]\n",
         "joint.0.type: unknown joint type 'hinge'"},
        {"type = \"spherical\"\nbody_a = \"world\"\nanchor = [0, 0, 1]\n",
         "joint.0.body_a: must be a body"},
        {"type = \"spherical\"\nbody_a = 0\nbody_b = 0\nanchor = [0, 0, 1]\n",
         "joint.0.body_b: must differ from body_a"},
        {"type = \"spherical\"\nbody_a = 0\nanchor = [0, 0, 1]\naxis = [0, 0, 1]\n",
         "joint.0.axis: not used by a spherical joint"},
        {"type = \"prismatic\"\nbody_a = 0\nanchor = [0, 0, 1]\naxis = [0, 0, 0]\n",
         "joint.0.axis: must not be zero"},
        {"type = \"distance\"\nbody_a = 0\nanchor = [0.3, 0, 1]\n",
         "joint.0.length: the two ends coincide"},
        {"type = \"distance\"\nbody_a = 0\nanchor = [0, 0, 1]\nlength = -1\n",
         "joint.0.length: must be > 0"},
        {"type = \"spherical\"\nbody_a = 0\nanchor = [0, 0, 1]\nmotr_speed = 1\n",
         "joint.0.motr_speed: unknown key (did you mean 'motor_speed'?)"},
    };
    for (const auto& [joint, expected] : cases) {
        const std::string msg = error_of(bodies + "\n[[joint]]\n" + joint);
        EXPECT_NE(msg.find(expected), std::string::npos) << joint << "\ngave: " << msg;
    }
}

TEST(Scene, EveryBadSceneIsRefusedWithItsFileAndLine) {
    std::set<std::string> seen;
    for (const auto& entry : fs::directory_iterator(kSource / "tests/data/bad_scenes")) {
        const fs::path file = entry.path();
        if (file.extension() != ".toml") continue;
        seen.insert(file.stem().string());
        SCOPED_TRACE(file.string());
        const std::string line = header(file, "expect-line");
        const std::string text = header(file, "expect-text");
        const std::string set = header(file, "set");
        ASSERT_FALSE(line.empty() && text.empty()) << "no # expect-line: or # expect-text: header";
        std::vector<std::string> overrides;
        if (!set.empty()) overrides.push_back(set);
        try {
            load_scene(file, overrides);
            ADD_FAILURE() << "accepted";
        } catch (const SceneError& e) {
            const std::string msg = e.what();
            if (!line.empty()) {
                EXPECT_NE(msg.find(file.string() + ":" + line + ":"), std::string::npos) << msg;
            }
            if (!text.empty()) {
                EXPECT_NE(msg.find(text), std::string::npos) << msg;
            }
        }
    }
    for (const char* kind : {"syntax_error", "unknown_key", "wrong_type", "negative_radius",
                             "dt_zero", "negative_friction", "zero_density", "unknown_material",
                             "overlapping_bodies", "body_outside_box", "body_overlaps_plane",
                             "random_count_impossible", "bad_override", "missing_key", "no_bodies"})
        EXPECT_TRUE(seen.count(kind)) << "missing bad scene " << kind;
}

}  // namespace
}  // namespace talus

namespace talus {
namespace {

// SceneLimits::max_bodies (the fuzzer's 20,000): a lattice or a random fill beyond it is
// refused before anything is generated, with the entry's line; at the limit it is accepted.
TEST(Scene, BodyLimitRefusesLargerFillsBeforeGeneratingThem) {
    const std::string lattice = kMaterials + R"(
[[particles]]
shape = "sphere"
material = "glass"
radius = 0.001
lattice = { min = [0.0, 0.0, 0.0], max = [0.0585, 0.0585, 0.0585], spacing = 0.0025 }
)";  // 24 points per axis: 13,824 bodies
    SceneLimits small;
    small.max_bodies = 13824;
    EXPECT_EQ(parse_scene(lattice, "mem/limit.toml", {}, small).world.bodies.size(), 13824u);
    small.max_bodies = 13823;
    try {
        parse_scene(lattice, "mem/limit.toml", {}, small);
        FAIL() << "a lattice beyond the limit was accepted";
    } catch (const SceneError& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("mem/limit.toml:21:"), std::string::npos) << m;
        EXPECT_NE(m.find("limit 13823"), std::string::npos) << m;
    }
    const std::string random = kMaterials + R"(
[[particles]]
shape = "sphere"
material = "glass"
radius = 0.001
random = { min = [0.0, 0.0, 0.0], max = [1.0, 1.0, 1.0], count = 20001, seed = 1 }
)";
    small.max_bodies = 20000;
    try {
        parse_scene(random, "mem/limit.toml", {}, small);
        FAIL() << "a random fill beyond the limit was accepted";
    } catch (const SceneError& e) {
        EXPECT_NE(std::string(e.what()).find("mem/limit.toml:21:"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace talus

namespace talus {
namespace {

// Legal values that are likely unit slips are warned about (file, line, key), not refused;
// ordinary values give no warning.
TEST(Scene, LikelyUnitSlipsAreWarnedAboutWithTheirLine) {
    const std::string text = R"(
[simulation]
gravity = [0, 0, -981]

[[material]]
name = "glass"
density = 2.5

[[particles]]
shape = "sphere"
material = "glass"
radius = 5
lattice = { min = [0, 0, 0], max = [0, 0, 0], spacing = 20 }
)";
    const Scene s = parse_scene(text, "mem/slips.toml");
    ASSERT_EQ(s.warnings.size(), 3u);
    EXPECT_NE(s.warnings[0].find("mem/slips.toml:3: simulation.gravity: its magnitude 981 m/s²"),
              std::string::npos) << s.warnings[0];
    EXPECT_NE(s.warnings[1].find("mem/slips.toml:7: material.0.density: 2.5 kg/m³"),
              std::string::npos) << s.warnings[1];
    EXPECT_NE(s.warnings[2].find("mem/slips.toml:12: particles.0.radius: 5 m is a grain 10 m across"),
              std::string::npos) << s.warnings[2];
    const Scene ok = parse_scene(kMaterials + R"(
[simulation]
gravity = [0, 0, -1.62]
[[particles]]
shape = "sphere"
material = "glass"
radius = 0.005
lattice = { min = [0, 0, 0], max = [0, 0, 0], spacing = 0.02 }
)", "mem/moon.toml");
    EXPECT_TRUE(ok.warnings.empty()) << ok.warnings.front();
}

// Under [periodic] the start-up check sees overlaps through the faces (a lattice whose last
// column sits 1.5 mm from the first one's image, 3 mm grains), and a random fill across the
// whole period keeps its grains apart through them: 1,500 grains of 2–4 mm over a
// 4 × 4 cm period start with no pair closer than contact under the minimum image.
TEST(Scene, PeriodicFacesAreSeenByTheStartCheckAndTheFills) {
    const std::string periodic = kMaterials + R"(
[periodic]
x = [0.0, 0.04]
y = [0.0, 0.04]

[[particles]]
shape = "sphere"
material = "glass"
)";
    const std::string e = error_of(periodic + R"(radius = 0.0015
lattice = { min = [0.0, 0.0015, 0.01], max = [0.039, 0.0015, 0.01], spacing = 0.0035 }
)");
    EXPECT_NE(e.find("mem/scene.toml:21: particles.0: bodies 0 and 11 overlap by 0.0015 m through a "
                     "periodic face"),
              std::string::npos) << e;

    const Scene s = parse_scene(periodic + R"(radius = { distribution = "uniform", min = 0.001, max = 0.002 }
random = { min = [0.0, 0.0, 0.003], max = [0.04, 0.04, 0.06], count = 1500, seed = 1 }
)", "mem/scene.toml");
    const BodyStore& b = s.world.bodies;
    ASSERT_EQ(b.size(), 1500u);
    const PeriodicBox& p = s.world.simulation.periodic;
    std::size_t through = 0;
    for (std::size_t j = 0; j < b.size(); ++j)
        for (std::size_t i = 0; i < j; ++i) {
            const Vec3 shift = p.image_shift(b.position[i], b.position[j]);
            const double gap = (b.position[i] - b.position[j] - shift).norm() - b.radius[i] - b.radius[j];
            EXPECT_GE(gap, -1e-12) << i << " " << j;
            if (!shift.isZero(0.0) && gap < 0.002) ++through;
        }
    EXPECT_GT(through, 10u);  // grains do sit near each other through the faces
}

// A rolling or spinning resistance longer than the thinnest grain it acts on is a
// dimensionless coefficient written as a length (LIGGGHTS's coefficientRollingFriction):
// warned about at its key, for a material and for a pair; lengths within a radius are not.
TEST(Scene, ResistanceLongerThanTheGrainIsWarnedAbout) {
    const std::string text = R"(
[[material]]
name = "glass"
density = 2500
friction = 0.5
rolling_friction = 0.1

[[material]]
name = "steel"
density = 7800
friction = 0.3

[[friction_pair]]
materials = ["steel", "glass"]
friction = 0.4
spinning_friction = 0.002

[[particles]]
shape = "sphere"
material = "glass"
radius = 0.0015
lattice = { min = [0, 0, 0], max = [0, 0, 0], spacing = 0.02 }

[[particles]]
shape = "sphere"
material = "steel"
radius = 0.004
lattice = { min = [0.1, 0, 0], max = [0.1, 0, 0], spacing = 0.02 }
)";
    const Scene s = parse_scene(text, "mem/rolling.toml");
    ASSERT_EQ(s.warnings.size(), 2u);
    EXPECT_NE(s.warnings[0].find("mem/rolling.toml:6: material.0.rolling_friction: 0.1 m is 66.7 times "
                                 "the radius of the thinnest grain of material 'glass' (0.0015 m)"),
              std::string::npos) << s.warnings[0];
    EXPECT_NE(s.warnings[0].find("here 0.00015 m for η = 0.1"), std::string::npos) << s.warnings[0];
    // the pair acts on the 1.5 mm glass grains too
    EXPECT_NE(s.warnings[1].find("mem/rolling.toml:16: friction_pair.0.spinning_friction: 0.002 m is "
                                 "1.33 times the radius of the thinnest grain of the pair 'steel'–'glass'"),
              std::string::npos) << s.warnings[1];

    std::string sane = text;
    sane.replace(sane.find("rolling_friction = 0.1"), 22, "rolling_friction = 0.00015");
    sane.replace(sane.find("spinning_friction = 0.002"), 25, "spinning_friction = 0.001");
    const Scene ok = parse_scene(sane, "mem/rolling.toml");
    EXPECT_TRUE(ok.warnings.empty()) << ok.warnings.front();
}

// --set paths take an entry's name where they take its index (material.glass.friction).
TEST(Scene, OverridesNameEntriesByTheirName) {
    const std::string text = kMaterials + R"(
[[body]]
shape = "sphere"
material = "steel"
radius = 0.01
position = [0, 0, 0]
)";
    const Scene s = parse_scene(text, "mem/names.toml", {"material.steel.friction=0.25"});
    EXPECT_EQ(s.world.materials.materials[1].friction, 0.25);
    EXPECT_EQ(s.world.materials.materials[0].friction, 0.5);
    const std::string m = error_of(text, {"material.stell.friction=0.25"});
    EXPECT_NE(m.find("--set material.stell.friction=0.25: material: no [[material]] entry is "
                     "named 'stell' (did you mean 'steel'?)"),
              std::string::npos) << m;
    // walls likewise (issue 24, part 4.6: a silo's gate by its name, not its position)
    const std::string walls = text + R"(
[[wall]]
type = "plane"
name = "floor"
material = "steel"
point = [0, 0, -0.05]
normal = [0, 0, 1]

[[wall]]
type = "plane"
name = "gate"
material = "steel"
point = [0, 0, -0.02]
normal = [0, 0, 1]
)";
    const Scene g = parse_scene(walls, "mem/names.toml", {"wall.gate.point=[0, 0, -0.03]"});
    EXPECT_EQ(g.world.walls[1].point, Vec3(0, 0, -0.03));
    EXPECT_EQ(g.world.walls[0].point, Vec3(0, 0, -0.05));
    const std::string w = error_of(walls, {"wall.gat.point=[0, 0, 0]"});
    EXPECT_NE(w.find("no [[wall]] entry is named 'gat' (did you mean 'gate'?)"), std::string::npos) << w;
}

// A scene that cannot fit in the memory the process may use is refused before its grains
// are generated, with the estimate; within the limit it loads.
TEST(Scene, MemoryBeyondTheMachineIsRefusedBeforeGenerating) {
    const std::string text = kMaterials + R"(
[[particles]]
shape = "sphere"
material = "glass"
radius = 0.001
lattice = { min = [0, 0, 0], max = [0.2985, 0.2985, 0.2985], spacing = 0.003 }
)";  // 100³ = 10⁶ bodies: at least 0.904 GB
    SceneLimits limits;
    limits.memory_bytes = 0.5e9;
    const auto start = std::chrono::steady_clock::now();
    try {
        parse_scene(text, "mem/big.toml", {}, limits);
        FAIL() << "accepted";
    } catch (const SceneError& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("mem/big.toml:17: particles.0: this entry generates 1,000,000 bodies, which "
                         "need at least 0.904 GB"),
                  std::string::npos) << m;
        EXPECT_NE(m.find("more than the 0.5 GB"), std::string::npos) << m;
    }
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 0.5);
    EXPECT_NEAR(run_memory(1e6).least, 0.904e9, 1e6);
    // the resident peak measured on 10⁶ beads (benchmarks/README.md, "The whole million"):
    // 343 bytes a body, 290 a contact under bgs and pgs, 400 under APGD, three a body
    EXPECT_NEAR(run_memory(1e6).typical, 1.257e9, 1e6);
    EXPECT_NEAR(run_memory(1e6, SolverType::PGS).typical, 1.257e9, 1e6);
    EXPECT_NEAR(run_memory(1e6, SolverType::APGD).typical, 1.587e9, 1e6);
    EXPECT_NEAR(run_memory(1e6, SolverType::Lemke).typical, 1.947e9, 1e6);
    EXPECT_NEAR(run_memory(1e6, SolverType::APGD).least, 0.904e9, 1e6);  // the refusal's: any solver
    // an emitter that would add 10⁶ grains over the run counts too
    const std::string emitting = kMaterials + R"(
[simulation]
duration = 10
[[emitter]]
radius = 0.001
material = "glass"
rate = 100000
seed = 1
min = [0, 0, 0]
max = [1, 1, 1]
)";
    try {
        parse_scene(emitting, "mem/emit.toml", {}, limits);
        FAIL() << "accepted";
    } catch (const SceneError& e) {
        EXPECT_NE(std::string(e.what()).find("mem/emit.toml:19: emitter.0: with what its "
                                             "emitters add, the run reaches 1,000,000 bodies"),
                  std::string::npos) << e.what();
    }
    limits.memory_bytes = 2e9;
    EXPECT_EQ(parse_scene(emitting, "mem/emit.toml", {}, limits).world.emitters.size(), 1u);
    EXPECT_GT(available_memory_bytes(), 1e8);
}

// A long random fill reports its progress through SceneLimits::progress.
TEST(Scene, LongFillsReportTheirProgress) {
    const std::string text = kMaterials + R"(
[[particles]]
shape = "sphere"
material = "glass"
radius = 0.001
random = { min = [0, 0, 0], max = [0.1, 0.1, 0.1], count = 70000, seed = 3 }
)";
    SceneLimits limits;
    std::vector<std::string> lines;
    limits.progress = [&](const std::string& l) { lines.push_back(l); };
    const Scene s = parse_scene(text, "mem/fill.toml", {}, limits);
    EXPECT_EQ(s.world.bodies.size(), 70000u);
    ASSERT_GE(lines.size(), 1u);
    EXPECT_NE(lines.front().find("particles.0 (mem/fill.toml:21): "), std::string::npos) << lines.front();
    EXPECT_NE(lines.front().find(" of 70,000 placed"), std::string::npos) << lines.front();
}

}  // namespace
}  // namespace talus

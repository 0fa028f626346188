// Checkpoints (io/checkpoint.hpp): N steps, a checkpoint written and read back into a
// fresh World, and the remaining steps give exactly the bits of the uninterrupted run —
// every per-body array, the clock, the emitters' and outlets' tallies and the warm-start
// cache — for every solver, on 1 and 2 threads, mid-stage and in a later stage. The scene
// has what carries state from step to step: an emitter (random generators, a pending
// radius), an outlet (bodies removed, ids never reused), a kinematic body, a wall whose
// motion a stage starts, rolling resistance (torque warm start) and two stages (a monitor).
#include <gtest/gtest.h>
#include <oneapi/tbb/global_control.h>

#include <csignal>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/world/stages.hpp"
#include "io/checkpoint.hpp"
#include "io/runner.hpp"
#include "io/scene.hpp"
#include "io/trajectory_writer.hpp"

namespace talus {
namespace {

const char* kScene = R"(
[simulation]
dt = 1e-3
gravity = [0.0, 0.0, -9.81]

[solver]
type = "pgs"
max_iterations = 30
tolerance = 1e-6

[output]
path = "checkpoint_test.h5"
interval = 0.01

[[material]]
name = "glass"
density = 2500.0
friction = 0.5
rolling_friction = 1e-4

[[wall]]
type = "cylinder"
name = "pot"
point = [0.0, 0.0, 0.0]
axis = [0.0, 0.0, 1.0]
radius = 0.02
inside = true
material = "glass"
motion = { type = "rotation", centre = [0.0, 0.0, 0.0], axis = [0.0, 0.0, 1.0], omega = 3.0 }

[[wall]]
type = "plane"
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
material = "glass"

[[outlet]]
type = "box"
min = [-0.005, -0.005, -0.01]
max = [0.005, 0.005, 0.004]

[[emitter]]
material = "glass"
radius = { distribution = "normal", mean = 0.0015, std = 0.00015, min = 0.00125, max = 0.00175 }
rate = 1500.0
min = [-0.008, -0.008, 0.03]
max = [0.008, 0.008, 0.034]
velocity = [0.0, 0.0, -0.5]
seed = 7

[[body]]
shape = "sphere"
radius = 0.003
material = "glass"
position = [0.012, 0.0, 0.003]
motion = { type = "rotation", centre = [0.0, 0.0, 0.0], axis = [0.0, 0.0, 1.0], omega = 5.0 }

[[particles]]
shape = "sphere"
material = "glass"
radius = 0.0015
random = { min = [-0.017, -0.017, 0.002], max = [0.017, 0.017, 0.025], count = 120, seed = 3 }

[[stage]]
name = "fill"
duration = 0.05

[[stage]]
name = "stir"
duration = 0.05
start_motion = ["pot"]
)";

/// Runs `scene` from `at` (a stage begun afresh when its monitor is not restored) until
/// the world has taken `until` steps or the scene ends, by the run driver `talus run` uses
/// (without output or checkpoints); returns where it stopped.
RunPosition run(Scene& scene, RunPosition at, bool resumed, uint64_t until) {
    RunSetup setup;
    setup.start = at;
    setup.resuming = resumed;
    Runner runner(scene, nullptr, setup);
    RunEvents events;
    events.stop_requested = [&] { return scene.world.step_count >= until ? SIGTERM : 0; };
    const RunOutcome out = runner.run(events);
    if (out.end == RunOutcome::End::SimulationFailed || out.end == RunOutcome::End::OutOfMemory)
        throw std::runtime_error(out.status.message);
    return out.end == RunOutcome::End::Stopped ? out.at : RunPosition{scene.stages.size(), {}};
}

std::vector<std::string> body_bytes(const BodyStore& b) {
    std::vector<std::string> out;
    b.for_each_array([&](const char*, const auto& v) {
        out.emplace_back(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(v[0]));
    });
    return out;
}

/// The warm-start cache field by field (its entries have padding, so not as raw bytes).
std::vector<std::string> warm_fields(const World& w) {
    const World::CarriedState c = w.carried_state();
    std::vector<std::string> out;
    auto bytes = [&](const auto& x) {
        out.emplace_back(reinterpret_cast<const char*>(&x), sizeof x);
    };
    for (const WarmStartCache::Entry& e : c.warm.entries()) {
        bytes(e.key_a); bytes(e.key_b); bytes(e.feature); bytes(e.normal); bytes(e.friction);
        bytes(e.h);
    }
    for (const WarmStartCache::TorqueEntry& e : c.warm.torque_entries()) {
        bytes(e.key_a); bytes(e.key_b); bytes(e.feature); bytes(e.torque); bytes(e.h);
    }
    bytes(c.warm.lipschitz());
    return out;
}

/// The uninterrupted run against one stopped after `stop` steps, checkpointed, read back
/// and continued, with `solver` on `threads` threads.
void expect_same_run(const std::string& solver, int threads, uint64_t stop) {
    SCOPED_TRACE(solver + " on " + std::to_string(threads) + " thread(s), stopped at step " +
                 std::to_string(stop));
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, std::size_t(threads));
    // (APGD, the maximum-dissipation solver and exact Coulomb have no rolling resistance)
    std::vector<std::string> sets{"solver.type=\"" + solver + "\""};
    if (solver == "apgd" || solver == "maxdiss" || solver == "nsgs")
        sets.push_back("material.0.rolling_friction=0.0");
    const std::filesystem::path dir = std::filesystem::temp_directory_path();

    Scene whole = parse_scene(kScene, dir / "checkpoint_test.toml", sets);
    run(whole, {}, false, UINT64_MAX);
    ASSERT_EQ(whole.world.step_count, 100u);

    Scene first = parse_scene(kScene, dir / "checkpoint_test.toml", sets);
    const RunPosition at = run(first, {}, false, stop);
    ASSERT_EQ(first.world.step_count, stop);
    const std::filesystem::path ck = dir / ("talus_checkpoint_" + solver + ".h5");
    write_checkpoint(ck, first, at);
    EXPECT_FALSE(std::filesystem::exists(ck.string() + ".tmp"));

    Resumed resumed = read_checkpoint(ck);
    std::filesystem::remove(ck);
    EXPECT_EQ(resumed.run.stage, at.stage);
    EXPECT_EQ(resumed.scene.overrides, sets);
    // read back before any step: the state is the stopped run's, bit for bit
    EXPECT_TRUE(body_bytes(resumed.scene.world.bodies) == body_bytes(first.world.bodies));
    EXPECT_TRUE(warm_fields(resumed.scene.world) == warm_fields(first.world));
    run(resumed.scene, resumed.run, true, UINT64_MAX);

    const World& a = whole.world;
    const World& b = resumed.scene.world;
    EXPECT_EQ(b.step_count, a.step_count);
    EXPECT_EQ(std::memcmp(&a.time, &b.time, sizeof a.time), 0);
    EXPECT_EQ(b.next_id, a.next_id);
    EXPECT_EQ(b.emitters[0].emitted.count, a.emitters[0].emitted.count);
    EXPECT_EQ(b.outlets[0].removed.count, a.outlets[0].removed.count);
    EXPECT_TRUE(body_bytes(b.bodies) == body_bytes(a.bodies));
    EXPECT_TRUE(warm_fields(b) == warm_fields(a));
}

TEST(Checkpoint, ScenePoursAndRemovesGrains) {
    // The test scene does what the comparison needs: grains arrive and leave.
    Scene s = parse_scene(kScene, std::filesystem::temp_directory_path() / "c.toml");
    run(s, {}, false, UINT64_MAX);
    EXPECT_GT(s.world.emitters[0].emitted.count, 60u);
    EXPECT_GT(s.world.outlets[0].removed.count, 0u);
    EXPECT_GT(s.world.bodies.size(), 150u);
}

TEST(Checkpoint, RestartGivesTheUninterruptedRunBitForBit) {
    for (const char* solver : {"pgs", "pj", "apgd", "maxdiss", "nsgs", "bgs"})
        for (int threads : {1, 2}) expect_same_run(solver, threads, 37);
    // in the second stage, after the pot has started turning
    expect_same_run("apgd", 2, 71);
    expect_same_run("pgs", 1, 71);
}

TEST(Checkpoint, RefusesFilesThatAreNotCheckpoints) {
    const std::filesystem::path dir = std::filesystem::temp_directory_path();
    const std::filesystem::path missing = dir / "talus_no_such_checkpoint.h5";
    std::filesystem::remove(missing);
    try {
        read_checkpoint(missing);
        FAIL() << "no error for a missing file";
    } catch (const IoError& e) {
        EXPECT_NE(std::string(e.what()).find(missing.string()), std::string::npos) << e.what();
    }
    const std::filesystem::path text = dir / "talus_not_a_checkpoint.h5";
    {
        std::FILE* f = std::fopen(text.c_str(), "w");
        ASSERT_NE(f, nullptr);
        std::fputs("not hdf5\n", f);
        std::fclose(f);
    }
    EXPECT_THROW(read_checkpoint(text), IoError);
    std::filesystem::remove(text);
}

/// A bed of every shape a checkpoint carries and a trajectory does not: a capsule, an
/// ellipsoid, a clump, free spheres and fixed grains, in a box.
const char* kShapes = R"(
[simulation]
dt = 1e-3
duration = 0.04
gravity = [0.0, 0.0, -9.81]

[solver]
type = "pgs"
max_iterations = 50
tolerance = 1e-6

[[material]]
name = "glass"
density = 2500.0
friction = 0.5

[[wall]]
type = "box"
min = [0.0, 0.0, 0.0]
max = [0.04, 0.04, 0.1]
material = "glass"

[[particles]]
shape = "sphere"
radius = 0.002
material = "glass"
fixed = true
lattice = { min = [0.01, 0.01, 0.002], max = [0.03, 0.03, 0.002], spacing = 0.01 }

[[particles]]
shape = "sphere"
radius = 0.002
material = "glass"
random = { min = [0.003, 0.003, 0.006], max = [0.037, 0.037, 0.03], count = 40, seed = 5 }

[[body]]
shape = "capsule"
radius = 0.002
length = 0.008
material = "glass"
position = [0.02, 0.02, 0.04]

[[body]]
shape = "ellipsoid"
semi_axes = [0.004, 0.002, 0.002]
material = "glass"
position = [0.012, 0.028, 0.045]

[[body]]
shape = "clump"
spheres = [[0.0, 0.0, 0.0, 0.002], [0.003, 0.0, 0.0, 0.002]]
material = "glass"
position = [0.026, 0.012, 0.05]
)";

/// A scene that starts from checkpoint `ck` with the given material and walls.
std::string branch_scene(const std::filesystem::path& ck, const std::string& material,
                         const std::string& walls, const std::string& start_extra = "") {
    return R"(
[simulation]
dt = 1e-3
duration = 0.02
gravity = [0.0, 0.0, -9.81]

[solver]
type = "pgs"
max_iterations = 50
tolerance = 1e-6

[start]
from = ")" + ck.string() + "\"\n" + start_extra + "\n[[material]]\n" + material + "\n" + walls;
}

const char* kBox = R"([[wall]]
type = "box"
min = [0.0, 0.0, 0.0]
max = [0.04, 0.04, 0.1]
material = "glass"
)";

// [start] from a checkpoint (issue 24, part 2): every body with its shape, clump template,
// fixed mark and id, bit for bit, and the warm start; masses follow the branch's density;
// wall entries of the warm start only when the walls are the same. Refused by key: a
// `frame` (a checkpoint holds one state), a material the branch lacks, a body on a
// prescribed motion (its clock would restart), and a checkpoint that starts from itself.
TEST(Checkpoint, AStartFromACheckpointTakesEveryShapeAndTheWarmStart) {
    const std::filesystem::path dir = std::filesystem::temp_directory_path();
    Scene source = parse_scene(kShapes, dir / "talus_shapes.toml");
    run(source, {}, false, UINT64_MAX);
    ASSERT_EQ(source.world.step_count, 40u);
    const std::filesystem::path ck = dir / "talus_branch_source.checkpoint.h5";
    write_checkpoint(ck, source, {});
    const World& from = source.world;
    std::size_t wall_entries = 0;
    const World::CarriedState saved = from.carried_state();  // a copy: keep it while reading it
    for (const auto& e : saved.warm.entries()) wall_entries += (e.key_a & kWallKeyBit) != 0;
    ASSERT_GT(wall_entries, 0u);
    ASSERT_LT(wall_entries, saved.warm.size());

    {
        SCOPED_TRACE("same material and walls");
        Scene b = parse_scene(branch_scene(ck, "name = \"glass\"\ndensity = 2500.0\nfriction = 0.2", kBox),
                              dir / "talus_branch.toml");
        EXPECT_EQ(b.start_from, ck);
        EXPECT_EQ(b.world.time, 0.0);
        EXPECT_EQ(b.world.next_id, from.next_id);
        // every per-body array but the index into the motions table, which the branch
        // numbers afresh in body order (renumbering has shuffled the source's)
        std::vector<std::string> want = body_bytes(from.bodies), got = body_bytes(b.world.bodies);
        want.pop_back();
        got.pop_back();
        EXPECT_TRUE(got == want);
        for (std::size_t i = 0; i < b.world.bodies.size(); ++i) {
            ASSERT_EQ(b.world.bodies.kinematic(i), from.bodies.kinematic(i)) << "body " << from.bodies.id[i];
            if (!from.bodies.kinematic(i)) continue;
            const BodyMotion& m = b.world.bodies.motions[std::size_t(b.world.bodies.motion[i])];
            EXPECT_EQ(m.x0, from.bodies.motions[std::size_t(from.bodies.motion[i])].x0);
        }
        EXPECT_EQ(b.world.bodies.clumps.size(), from.bodies.clumps.size());
        EXPECT_TRUE(warm_fields(b.world) == warm_fields(from));
        std::vector<Vec3> fixed;
        for (std::size_t i = 0; i < b.world.bodies.size(); ++i)
            if (b.world.bodies.kinematic(i)) fixed.push_back(b.world.bodies.position[i]);
        ASSERT_EQ(fixed.size(), 9u);
        run(b, {}, false, UINT64_MAX);
        EXPECT_EQ(b.world.step_count, 20u);
        std::vector<Vec3> after;
        for (std::size_t i = 0; i < b.world.bodies.size(); ++i)
            if (b.world.bodies.kinematic(i)) after.push_back(b.world.bodies.position[i]);
        EXPECT_EQ(after, fixed) << "fixed grains must stay fixed in the branch";
    }
    {
        SCOPED_TRACE("twice the density, a plane for the box");
        Scene b = parse_scene(branch_scene(ck, "name = \"glass\"\ndensity = 5000.0\nfriction = 0.5",
                                           "[[wall]]\ntype = \"plane\"\npoint = [0.0, 0.0, 0.0]\n"
                                           "normal = [0.0, 0.0, 1.0]\nmaterial = \"glass\"\n"),
                              dir / "talus_branch.toml");
        const BodyStore& s = b.world.bodies;
        ASSERT_EQ(s.size(), from.bodies.size());
        for (std::size_t i = 0; i < s.size(); ++i) {
            EXPECT_EQ(s.position[i], from.bodies.position[i]);
            EXPECT_EQ(s.inv_mass[i], 0.5 * from.bodies.inv_mass[i]) << "body " << s.id[i];
            EXPECT_EQ(s.inv_inertia[i], 0.5 * from.bodies.inv_inertia[i]) << "body " << s.id[i];
        }
        const World::CarriedState carried = b.world.carried_state();
        const auto& entries = carried.warm.entries();
        EXPECT_EQ(entries.size(), saved.warm.size() - wall_entries);
        for (const auto& e : entries) EXPECT_EQ(e.key_a & kWallKeyBit, 0u);
    }
    const auto refused = [&](const std::string& text, const std::string& key, const std::string& why) {
        SCOPED_TRACE(key + ": " + why);
        try {
            parse_scene(text, dir / "talus_branch.toml");
            ADD_FAILURE() << "not refused";
        } catch (const SceneError& e) {
            const std::string m = e.what();
            EXPECT_NE(m.find("talus_branch.toml:"), std::string::npos) << m;
            EXPECT_NE(m.find(key), std::string::npos) << m;
            EXPECT_NE(m.find(why), std::string::npos) << m;
        }
    };
    refused(branch_scene(ck, "name = \"glass\"\ndensity = 2500.0", kBox, "frame = -1"), "start.frame",
            "holds one state");
    refused(branch_scene(ck, "name = \"sand\"\ndensity = 2500.0",
                         "[[wall]]\ntype = \"plane\"\npoint = [0.0, 0.0, 0.0]\nnormal = [0.0, 0.0, 1.0]\n"
                         "material = \"sand\"\n"),
            "start.from", "does not define");
    // kScene's stirrer turns on a prescribed motion
    Scene stirred = parse_scene(kScene, dir / "checkpoint_test.toml");
    const RunPosition at = run(stirred, {}, false, 10);
    const std::filesystem::path moving = dir / "talus_branch_moving.checkpoint.h5";
    write_checkpoint(moving, stirred, at);
    refused(branch_scene(moving, "name = \"glass\"\ndensity = 2500.0", kBox), "start.from",
            "prescribed motion");
    // A scene whose checkpoint it starts from is its own (written over its source, which
    // talus run refuses but a program may do): reading it would recurse without end.
    Scene self = parse_scene(branch_scene(ck, "name = \"glass\"\ndensity = 2500.0", kBox),
                             dir / "talus_branch.toml");
    write_checkpoint(ck, self, {});
    refused(branch_scene(ck, "name = \"glass\"\ndensity = 2500.0", kBox), "start.from",
            "more than 8 deep");
    std::filesystem::remove(ck);
    std::filesystem::remove(moving);
}

TEST(Checkpoint, UnwritableDirectoryNamesThePathAndLeavesNothing) {
    Scene s = parse_scene(kScene, std::filesystem::temp_directory_path() / "c.toml");
    const std::filesystem::path bad = "/nonexistent_talus_dir/ck.h5";
    try {
        write_checkpoint(bad, s, {});
        FAIL() << "no error for an unwritable path";
    } catch (const IoError& e) {
        EXPECT_NE(std::string(e.what()).find(bad.string()), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace talus

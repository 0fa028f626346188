// Scene keys of kinematic bodies: `motion = { … }` on a [[body]] makes it kinematic (the
// same table as on a [[wall]]); what is not supported is refused with file, line and key.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "io/scene.hpp"

namespace talus {
namespace {

const std::string kMaterial = R"([[material]]
name = "steel"
density = 7800
friction = 0.3

)";

std::string error_of_text(const std::string& text) {
    try {
        parse_scene(text, "mem/scene.toml", {});
    } catch (const SceneError& e) {
        return e.what();
    }
    return {};
}

const std::string kBlade = R"([[body]]
shape = "clump"
spheres = [[-0.04, 0, 0, 0.01], [0, 0, 0, 0.01], [0.04, 0, 0, 0.01]]
material = "steel"
position = [0, 0, 0.02]
)";  // lines 6–10 after kMaterial

TEST(SceneKinematic, BodyMotionIsReadAndMakesTheBodyKinematic) {
    const Scene s = parse_scene(kMaterial + kBlade + R"(motion = { type = "rotation", centre = [0, 0, 0], axis = [0, 0, 2], omega = 5.0, start = 0.1 }

[[body]]
shape = "sphere"
radius = 0.01
material = "steel"
position = [0, 0.1, 0.02]

[[body]]
shape = "capsule"
radius = 0.01
length = 0.05
material = "steel"
position = [0, 0, 0.025]
motion = { type = "translation", velocity = [0.1, 0, 0] }
)",
                                "mem/scene.toml", {});
    const BodyStore& b = s.world.bodies;
    ASSERT_EQ(b.size(), 3u);
    EXPECT_TRUE(b.kinematic(0));
    EXPECT_FALSE(b.kinematic(1));
    EXPECT_TRUE(b.kinematic(2));  // overlaps the blade: two kinematic bodies may
    EXPECT_EQ(b.inv_mass[0], 0.0);
    EXPECT_EQ(b.inv_inertia[0], Vec3::Zero());
    EXPECT_GT(b.inv_mass[1], 0.0);
    const BodyMotion& m = b.motions[std::size_t(b.motion[0])];
    EXPECT_EQ(m.motion.kind, MotionKind::Rotation);
    EXPECT_EQ(m.motion.axis, Vec3(0, 0, 1));
    EXPECT_EQ(m.motion.omega, 5.0);
    EXPECT_EQ(m.motion.start, 0.1);
    EXPECT_EQ(m.x0, b.position[0]);
    EXPECT_EQ(b.motions[std::size_t(b.motion[2])].motion.velocity, Vec3(0.1, 0, 0));

    // Before `start` the blade rests; after it, it turns at 5 rad/s about z.
    World w = s.world;
    w.simulation.dt = 1e-3;  // a fixed step: the poses are checked at t = 300 dt
    w.simulation.adaptive = false;
    for (int k = 0; k < 300; ++k) ASSERT_TRUE(w.step().ok);
    const auto index = [&](uint64_t id) {  // bodies may have been renumbered
        return std::size_t(std::find(w.bodies.id.begin(), w.bodies.id.end(), id) - w.bodies.id.begin());
    };
    EXPECT_NEAR(w.bodies.orientation[index(0)].angularDistance(
                    Quat(Eigen::AngleAxisd(5.0 * 0.2, Vec3::UnitZ())) * m.q0),
                0.0, 1e-12);
    EXPECT_NEAR(w.bodies.position[index(2)].x(), 0.1 * 0.3, 1e-12);
}

// The file gives the reference pose; a motion displaced at t = 0 (a sine with phase π/2)
// starts the body at x0 + A ê, and the overlap check sees it there.
TEST(SceneKinematic, BodyStartsAtItsPoseAtTimeZero) {
    const std::string sine =
        "motion = { type = \"sine\", direction = [0, 0, 1], amplitude = 0.05, frequency = 2.0, "
        "phase = 1.5707963267948966 }\n";
    const Scene s = parse_scene(kMaterial + kBlade + sine, "mem/scene.toml", {});
    EXPECT_NEAR(s.world.bodies.position[0].z(), 0.02 + 0.05, 1e-15);
    EXPECT_EQ(s.world.bodies.motions[0].x0.z(), 0.02);
    const std::string e = error_of_text(kMaterial + kBlade + sine + R"(
[[body]]
shape = "sphere"
radius = 0.01
material = "steel"
position = [0, 0, 0.085]
)");
    EXPECT_NE(e.find("bodies 0 and 1 overlap"), std::string::npos) << e;
}

TEST(SceneKinematic, UnsupportedCombinationsAreRefused) {
    const std::string motion = "motion = { type = \"translation\", velocity = [0.1, 0, 0] }\n";
    // with [periodic] boundaries
    EXPECT_NE(error_of_text("[periodic]\nx = [-1, 1]\n\n" + kMaterial + kBlade + motion)
                  .find("mem/scene.toml:14: body.0.motion: kinematic bodies (with a prescribed "
                        "motion) are not supported with [periodic] boundaries"),
              std::string::npos)
        << error_of_text("[periodic]\nx = [-1, 1]\n\n" + kMaterial + kBlade + motion);
    // keys the motion replaces
    for (const char* key : {"velocity = [1, 0, 0]", "angular_velocity = [0, 0, 1]", "mass = 2.0",
                            "inertia = [1, 1, 1]"}) {
        const std::string e = error_of_text(kMaterial + kBlade + motion + key + "\n");
        const std::string name = std::string(key).substr(0, std::string(key).find(' '));
        EXPECT_NE(e.find("mem/scene.toml:12: body.0." + name + ": not used by a body with a motion"),
                  std::string::npos)
            << e;
    }
    // a bad motion table is reported as on a wall
    EXPECT_NE(error_of_text(kMaterial + kBlade + "motion = { type = \"spin\" }\n")
                  .find("mem/scene.toml:11: body.0.motion.type: unknown motion type 'spin'"),
              std::string::npos);
    // on fills and emitters
    EXPECT_NE(error_of_text(kMaterial + R"([[particles]]
shape = "sphere"
radius = 0.01
material = "steel"
lattice = { min = [0, 0, 0], max = [0.1, 0.1, 0.1], spacing = 0.03 }
)" + motion).find("mem/scene.toml:11: particles.0.motion: a prescribed motion is for a single [[body]]"),
              std::string::npos);
    EXPECT_NE(error_of_text(kMaterial + kBlade + R"(
[[emitter]]
radius = 0.01
material = "steel"
rate = 10
min = [0, 0, 1]
max = [0.1, 0.1, 1.1]
)" + motion).find("mem/scene.toml:18: emitter.0.motion: emitted bodies are dynamic"),
              std::string::npos);
    // a joint between a kinematic body and the world
    const std::string e = error_of_text(kMaterial + kBlade + motion + R"(
[[joint]]
type = "spherical"
body_a = 0
body_b = "world"
anchor = [0, 0, 0.02]
)");
    EXPECT_NE(e.find("body_a: a joint needs at least one dynamic body"), std::string::npos) << e;
}

TEST(SceneKinematic, KinematicBodiesMayOverlapWallsButNotGrains) {
    const std::string blade = kMaterial + R"([[wall]]
type = "plane"
material = "steel"
point = [0, 0, 0.025]
normal = [0, 0, 1]

)" + kBlade + "motion = { type = \"translation\", velocity = [0.1, 0, 0] }\n";
    const std::string ok = error_of_text(blade + R"(
[[body]]
shape = "sphere"
radius = 0.01
material = "steel"
position = [0, 0.2, 0.04]
)");
    EXPECT_EQ(ok, "");
    const std::string e = error_of_text(blade + R"(
[[body]]
shape = "sphere"
radius = 0.01
material = "steel"
position = [0.04, 0.005, 0.036]
)");
    EXPECT_NE(e.find("bodies 0 and 1 overlap"), std::string::npos) << e;
}

}  // namespace
}  // namespace talus

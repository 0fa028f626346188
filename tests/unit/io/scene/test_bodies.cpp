// io/scene/bodies.cpp: [[particles]] and [[body]] entries, clumps and kinematic bodies,
// read as written; a bad value is refused naming its file, line and key.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "io/scene.hpp"
#include "tests/support/scene_errors.hpp"

namespace talus {
namespace {

// Clumps in scene files: `shape = "clump"` with `spheres = [[x, y, z, r], …]` in [[body]]
// (position/orientation place the spheres' frame) and in [[particles]] fills (centres of
// mass on the fill's points; lattice: unrotated, random: random rotations from the seed).
namespace clumps {

const std::string kGlass = R"(
[[material]]
name = "glass"
density = 2500
friction = 0.5
)";

constexpr double kPi = 3.14159265358979323846;

// Two spheres r = 1 cm at x = 0 and 1.2 cm: mass ρ (2 V_s − lens), the spheres exactly where
// the file puts them (position + orientation · written centre), whatever the body frame.
TEST(SceneClump, BodyPlacesTheWrittenSpheresAndWeighsTheUnion) {
    const Scene s = parse_scene(kGlass + R"(
[[body]]
shape = "clump"
spheres = [[0.0, 0.0, 0.0, 0.01], [0.012, 0.0, 0.0, 0.01]]
material = "glass"
position = [0.1, 0.2, 0.3]
orientation = [0.7071067811865476, 0.0, 0.0, 0.7071067811865476]
)",
                                "s.toml");
    const BodyStore& b = s.world.bodies;
    ASSERT_EQ(b.size(), 1u);
    ASSERT_EQ(b.shape[0], Shape::Clump);
    const double r = 0.01, h = r - 0.006;
    const double v = 2 * 4.0 / 3.0 * kPi * r * r * r - 2 * kPi * h * h * (3 * r - h) / 3;
    EXPECT_NEAR(b.mass(0), 2500 * v, 1e-9 * 2500 * v);
    // 90° about z: written x becomes world y.
    EXPECT_NEAR((b.position[0] - Vec3(0.1, 0.206, 0.3)).norm(), 0.0, 1e-12);
    const ClumpTable& t = b.clumps;
    const uint32_t id = b.clump_of(0);
    ASSERT_EQ(t.end(id) - t.begin(id), 2u);
    const Vec3 want[2] = {Vec3(0.1, 0.2, 0.3), Vec3(0.1, 0.212, 0.3)};
    for (uint32_t k = 0; k < 2; ++k)
        EXPECT_NEAR((b.position[0] + b.orientation[0] * t.centre[t.begin(id) + k] - want[k]).norm(), 0.0, 1e-12);
    EXPECT_NEAR(b.radius[0], 0.016, 1e-12);  // bounding radius about the centre of mass
}

TEST(SceneClump, FillsShareOneTemplateAndSpaceByTheBoundingRadius) {
    const Scene s = parse_scene(kGlass + R"(
[[particles]]
shape = "clump"
spheres = [[0.0, 0.0, 0.0, 0.01], [0.0, 0.0, 0.015, 0.01]]
material = "glass"
lattice = { min = [0, 0, 0], max = [0.1, 0.1, 0.0], spacing = 0.036 }

[[particles]]
shape = "clump"
spheres = [[0.0, 0.0, 0.0, 0.01], [0.0, 0.0, 0.015, 0.01]]
material = "glass"
random = { min = [0, 0, 0.2], max = [0.2, 0.2, 0.4], count = 20, seed = 3 }
)",
                                "s.toml");
    const BodyStore& b = s.world.bodies;
    ASSERT_EQ(b.size(), 9u + 20u);
    ASSERT_EQ(b.clumps.size(), 2u);  // one template per entry
    for (std::size_t i = 0; i < 9; ++i) {
        EXPECT_EQ(b.clump_of(i), 0u);
        // lattice: unrotated, the clump's long axis (body x, smallest moment) along world z
        EXPECT_NEAR(std::abs((b.orientation[i] * Vec3::UnitX()).z()), 1.0, 1e-12);
    }
    bool rotated = false;
    for (std::size_t i = 9; i < b.size(); ++i) {
        EXPECT_EQ(b.clump_of(i), 1u);
        EXPECT_NEAR(b.orientation[i].norm(), 1.0, 1e-12);
        rotated = rotated || std::abs((b.orientation[i] * Vec3::UnitX()).z()) < 0.9;
    }
    EXPECT_TRUE(rotated);
    // The same file gives the same orientations (seeded).
    const Scene again = parse_scene(kGlass + R"(
[[particles]]
shape = "clump"
spheres = [[0.0, 0.0, 0.0, 0.01], [0.0, 0.0, 0.015, 0.01]]
material = "glass"
random = { min = [0, 0, 0.2], max = [0.2, 0.2, 0.4], count = 20, seed = 3 }
)",
                                    "s.toml");
    for (std::size_t i = 0; i < 20; ++i)
        EXPECT_EQ(again.world.bodies.orientation[i].coeffs(), b.orientation[9 + i].coeffs());
}

TEST(SceneClump, RadiusIsNotAClumpKey) {
    std::string e;
    try {
        parse_scene(kGlass + R"(
[[body]]
shape = "clump"
radius = 0.01
spheres = [[0.0, 0.0, 0.0, 0.01]]
material = "glass"
position = [0, 0, 0]
)",
                    "s.toml");
    } catch (const SceneError& err) {
        e = err.what();
    }
    EXPECT_NE(e.find("s.toml:9: body.0.radius: not used by a clump"), std::string::npos) << e;
}

}  // namespace clumps

// Scene keys of kinematic bodies: `motion = { … }` on a [[body]] makes it kinematic (the
// same table as on a [[wall]]); what is not supported is refused with file, line and key.
namespace kinematic {

const std::string kMaterial = R"([[material]]
name = "steel"
density = 7800
friction = 0.3

)";

std::string error_of_text(const std::string& text) { return testing::scene_error(text); }

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

// `fixed = true` on a fill (a rough floor of glued grains): every grain a kinematic body at
// rest. A 4 × 4 square of touching fixed spheres (r = 1 mm) holds still under gravity, and a
// grain dropped over the middle hollow comes to rest on its four neighbours, its centre √2 r
// above theirs (the four centres √2 r away horizontally, 2r away in all), with the defaults.
TEST(SceneKinematic, FixedFillHoldsItsGrainsAndAGrainRestsInTheirHollow) {
    const double r = 1e-3, z0 = 0.005;
    const Scene s = parse_scene(kMaterial + R"([simulation]
duration = 0.3
gravity = [0, 0, -9.81]

[[particles]]
shape = "sphere"
radius = 0.001
material = "steel"
fixed = true
lattice = { min = [0.001, 0.001, 0.005], max = [0.007, 0.007, 0.005], spacing = 0.002 }

[[body]]
shape = "sphere"
radius = 0.001
material = "steel"
position = [0.004, 0.004, 0.009]
)",
                                "mem/scene.toml", {});
    World w = s.world;
    ASSERT_EQ(w.bodies.size(), 17u);
    for (std::size_t i = 0; i < 16; ++i) {
        ASSERT_TRUE(w.bodies.kinematic(i)) << i;
        EXPECT_EQ(w.bodies.inv_mass[i], 0.0);
    }
    ASSERT_FALSE(w.bodies.kinematic(16));
    const std::vector<Vec3> start(w.bodies.position.begin(), w.bodies.position.begin() + 16);
    while (w.time < w.simulation.duration) ASSERT_TRUE(w.step(w.simulation.duration).ok);
    const auto index = [&](uint64_t id) {  // bodies may have been renumbered
        return std::size_t(std::find(w.bodies.id.begin(), w.bodies.id.end(), id) - w.bodies.id.begin());
    };
    for (uint64_t id = 0; id < 16; ++id) {
        EXPECT_EQ(w.bodies.position[index(id)], start[id]) << "fixed grain " << id << " moved";
        EXPECT_EQ(w.bodies.velocity[index(id)], Vec3::Zero());
    }
    const std::size_t g = index(16);
    EXPECT_NEAR(w.bodies.position[g].z(), z0 + std::sqrt(2.0) * r, 0.01 * r);
    EXPECT_NEAR(w.bodies.position[g].x(), 0.004, 0.01 * r);
    EXPECT_NEAR(w.bodies.position[g].y(), 0.004, 0.01 * r);
    EXPECT_LT(w.bodies.velocity[g].norm(), 1e-3) << "the grain must have come to rest";
}

TEST(SceneKinematic, FixedFillRefusesVelocityAndPeriodicBoundaries) {
    const std::string fill = kMaterial + R"([[particles]]
shape = "sphere"
radius = 0.01
material = "steel"
fixed = true
lattice = { min = [0, 0, 0], max = [0.1, 0.1, 0.1], spacing = 0.03 }
)";
    std::string e = error_of_text(fill + "velocity = [0, 0, -1]\n");
    EXPECT_NE(e.find("mem/scene.toml:12: particles.0.velocity: not used by fixed grains"), std::string::npos) << e;
    e = error_of_text("[periodic]\nx = [-1, 1]\n\n" + fill);
    EXPECT_NE(e.find("mem/scene.toml:13: particles.0.fixed: fixed grains (kinematic bodies) are not "
                     "supported with [periodic] boundaries"),
              std::string::npos)
        << e;
    std::string numeric = fill;
    numeric.replace(numeric.find("fixed = true"), 12, "fixed = 1");
    e = error_of_text(numeric);
    EXPECT_NE(e.find("mem/scene.toml:10: particles.0.fixed: expected true or false"), std::string::npos) << e;
}

}  // namespace kinematic

}  // namespace
}  // namespace talus

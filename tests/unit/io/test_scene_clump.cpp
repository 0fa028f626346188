// Clumps in scene files: `shape = "clump"` with `spheres = [[x, y, z, r], …]` in [[body]]
// (position/orientation place the spheres' frame) and in [[particles]] fills (centres of
// mass on the fill's points; lattice: unrotated, random: random rotations from the seed).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "io/scene.hpp"

namespace talus {
namespace {

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

}  // namespace
}  // namespace talus

// io/scene/walls.cpp: [[wall]] entries of every kind and the motion tables, read as
// written; a bad value is refused naming its file, line and key.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "collision/mesh.hpp"
#include "io/scene.hpp"
#include "tests/support/scene_errors.hpp"
#include "tests/support/mesh_builder.hpp"

namespace talus {
namespace {

// Scene keys of cylinder walls and wall motion: a valid scene gives exactly the geometry
// and motion it describes; each bad value is refused with its file, line and key path.
// Also the motion model itself (core/wall_motion.hpp) against values by hand.
namespace cylinders {

const std::string kHead = R"([[material]]
name = "steel"
density = 7800
friction = 0.3

[[body]]
shape = "sphere"
radius = 0.05
material = "steel"
position = [0, 0, 0.5]

[[wall]]
material = "steel"
)";  // the wall's keys follow from line 14

std::string error_of_text(const std::string& text) { return testing::scene_error(text); }
std::string error_of(const std::string& wall) { return error_of_text(kHead + wall); }

TEST(SceneWalls, CylinderAndMotionsAreReadAsWritten) {
    const Scene s = parse_scene(kHead + R"(type = "cylinder"
point = [0, 0, 0.5]
axis = [2, 0, 0]
radius = 0.5
inside = true
length = 0.8
motion = { type = "rotation", centre = [0, 0, 0.5], axis = [1, 0, 0], omega = -2.0, start = 0.5 }

[[wall]]
type = "plane"
material = "steel"
point = [0, 0, -1]
normal = [0, 0, 1]
motion = { type = "sine", direction = [0, 0, 3], amplitude = 0.001, frequency = 20, phase = 0.5 }

[[wall]]
type = "plane"
material = "steel"
point = [-1, 0, 0]
normal = [1, 0, 0]
motion = { type = "table", times = [0.1, 0.3], displacements = [[0.1, 0, 0], [0.1, 0, 0.2]] }
)",
                                "s.toml", {});
    const auto& w = s.world.walls;
    ASSERT_EQ(w.size(), 3u);
    EXPECT_EQ(w[0].type, WallType::Cylinder);
    EXPECT_EQ(w[0].point, Vec3(0, 0, 0.5));
    EXPECT_EQ(w[0].axis, Vec3(1, 0, 0));  // normalised
    EXPECT_EQ(w[0].radius, 0.5);
    EXPECT_TRUE(w[0].inside);
    EXPECT_EQ(w[0].length, 0.8);
    EXPECT_EQ(w[0].motion.kind, MotionKind::Rotation);
    EXPECT_EQ(w[0].motion.omega, -2.0);
    EXPECT_EQ(w[0].motion.start, 0.5);
    EXPECT_EQ(w[1].motion.kind, MotionKind::Sine);
    EXPECT_EQ(w[1].motion.direction, Vec3(0, 0, 1));
    EXPECT_EQ(w[1].motion.amplitude, 0.001);
    EXPECT_EQ(w[1].motion.frequency, 20.0);
    EXPECT_EQ(w[1].motion.phase, 0.5);
    EXPECT_EQ(w[2].motion.kind, MotionKind::Table);
    ASSERT_EQ(w[2].motion.times.size(), 2u);
    EXPECT_EQ(w[2].motion.displacements[1], Vec3(0.1, 0, 0.2));
}

TEST(SceneWalls, BadCylindersAndMotionsNameTheirLineAndKey) {
    const std::string cyl = "type = \"cylinder\"\npoint = [0, 0, 0.5]\naxis = [0, 0, 1]\n";
    const std::string plane = "type = \"plane\"\npoint = [0, 0, 0]\nnormal = [0, 0, 1]\n";
    const auto motion = [&](const std::string& m) { return plane + "motion = " + m + "\n"; };
    // each wall table (after kHead) and what its message must contain
    const std::pair<std::string, std::string> cases[] = {
        {cyl + "radius = 1\n",
         "mem/scene.toml:12: wall.0.inside: missing required key"},
        {cyl + "radius = -1\ninside = true\n",
         "mem/scene.toml:17: wall.0.radius: must be > 0"},
        {cyl + "radius = 1\ninside = true\nnormal = [0, 0, 1]\n",
         "mem/scene.toml:19: wall.0.normal: not used by a cylinder wall"},
        {"type = \"cylinder\"\npoint = [0, 0, 0]\naxis = [0, 0, 0]\nradius = 1\ninside = true\n",
         "mem/scene.toml:16: wall.0.axis: must not be zero"},
        // the sphere (r = 0.05 at (0, 0, 0.5)) on the axis of a 0.02 m pillar, then beside one
        {cyl + "radius = 0.02\ninside = false\n",
         "the centre of body 0 is inside cylinder wall.0"},
        {"type = \"cylinder\"\npoint = [0.06, 0, 0]\naxis = [0, 0, 1]\nradius = 0.02\ninside = false\n",
         "body 0 overlaps cylinder wall.0 (line 12) by 0.01 m"},
        {"type = \"cylinder\"\npoint = [0.1, 0, 0]\naxis = [0, 0, 1]\nradius = 0.05\ninside = true\n",
         "the centre of body 0 is outside cylinder wall.0"},
        // motions
        {motion("{ type = \"spin\" }"),
         "wall.0.motion.type: unknown motion type 'spin'"},
        {motion("{ type = \"rotation\", centre = [0, 0, 0], axis = [0, 0, 1] }"),
         "mem/scene.toml:17: wall.0.motion.omega: missing required key"},
        {motion("{ type = \"sine\", direction = [0, 0, 1], amplitude = 0.1, frequency = 0 }"),
         "wall.0.motion.frequency: must be > 0 [Hz]"},
        {motion("{ type = \"sine\", direction = [0, 0, 1], amplitude = 0.1, frequency = 5, omega = 1 }"),
         "wall.0.motion.omega: not used by a sine motion"},
        {motion("{ type = \"table\", times = [0.2, 0.1], displacements = [[0, 0, 1], [0, 0, 2]] }"),
         "wall.0.motion.times: element 1: must exceed the one before"},
        {motion("{ type = \"table\", times = [0.1, 0.2], displacements = [[0, 0, 1]] }"),
         "wall.0.motion.displacements: has 1 entries but times has 2"},
        {motion("{ type = \"table\", times = [0], displacements = [[0, 0, 1]] }"),
         "wall.0.motion.displacements: element 0: must be [0, 0, 0] when times starts at 0"},
        {motion("{ type = \"translation\", velocity = [1, 0, 0], start = -1 }"),
         "wall.0.motion.start: must be ≥ 0 [s]"},
        {plane + "velocity = [1, 0, 0]\nmotion = { type = \"translation\", velocity = [1, 0, 0] }\n",
         "mem/scene.toml:17: wall.0.velocity: give either velocity or motion, not both"},
    };
    for (const auto& [wall, expected] : cases) {
        const std::string msg = error_of(wall);
        EXPECT_NE(msg.find(expected), std::string::npos) << wall << "\ngave: " << msg;
    }
}

// A capsule in a drum is measured as the step measures it: refused by its depth when it
// overlaps the wall, accepted when clear of it though within its bounding radius.
TEST(SceneWalls, ACapsuleInACylinderIsCheckedByItsShape) {
    std::string text = kHead + "type = \"cylinder\"\npoint = [0, 0, 0.5]\naxis = [1, 0, 0]\nradius = 0.1\ninside = true\n";
    text.replace(text.find("shape = \"sphere\""), 16, "shape = \"capsule\"\nlength = 0.1");
    // core 0.08 m from the axis, radius 0.05 m: 0.03 m into the wall
    std::string deep = text;
    deep.replace(deep.find("position = [0, 0, 0.5]"), 22, "position = [0, 0, 0.42]");
    const std::string e = error_of_text(deep);
    EXPECT_NE(e.find("body 0 overlaps cylinder wall.0 (line 13) by 0.03 m"), std::string::npos) << e;
    // core 0.04 m from the axis: 0.01 m clear, its bounding sphere (0.1 m) well past the wall
    text.replace(text.find("position = [0, 0, 0.5]"), 22, "position = [0, 0, 0.46]");
    EXPECT_NO_THROW(parse_scene(text, "mem/scene.toml"));
}

// A capsule in a hopper is measured as the step measures it: refused by its depth when an
// end overlaps the shell, accepted when clear though within its bounding radius. An
// ellipsoid (no cone routine) is refused within its bounding radius.
TEST(SceneWalls, ACapsuleInAConeIsCheckedByItsShapeAndAnEllipsoidRefused) {
    const std::string cone = kHead + "type = \"cone\"\nstart = [0, 0, 0.3]\nend = [0, 0, 0.7]\nstart_radius = 0.1\nend_radius = 0.1\n";
    std::string text = cone;
    text.replace(text.find("shape = \"sphere\""), 16, "shape = \"capsule\"\nlength = 0.08");
    // along x, its +x end 0.06 m from the axis, radius 0.05 m: 0.01 m into the shell
    std::string deep = text;
    deep.replace(deep.find("position = [0, 0, 0.5]"), 22, "position = [0.02, 0, 0.5]");
    std::string e = error_of_text(deep);
    EXPECT_NE(e.find("body 0 overlaps cone wall.0 (line 13) by 0.01 m"), std::string::npos) << e;
    // on the axis: both ends 0.01 m clear, its bounding sphere (0.09 m) past the shell
    EXPECT_NO_THROW(parse_scene(text, "mem/scene.toml"));
    std::string ellipsoid = cone;
    ellipsoid.replace(ellipsoid.find("shape = \"sphere\"\nradius = 0.05"), 30,
                      "shape = \"ellipsoid\"\nsemi_axes = [0.05, 0.03, 0.03]");
    ellipsoid.replace(ellipsoid.find("position = [0, 0, 0.5]"), 22, "position = [0.06, 0, 0.5]");
    e = error_of_text(ellipsoid);
    EXPECT_NE(e.find("body 0 is within its bounding radius of cone wall.0 (line 12): cone walls "
                     "collide with spheres, clumps and capsules only"),
              std::string::npos)
        << e;
}

// Cone and orifice walls (core/thin_walls.hpp): read as written; bad values refused by key;
// a body overlapping one at the start is refused, on either side.
TEST(SceneWalls, ConesAndOrificesAreReadAsWritten) {
    const Scene s = parse_scene(kHead + R"(type = "cone"
start = [0, 0, 0.1]
end = [0, 0, 0.3]
start_radius = 0.02
end_radius = 0.2

[[wall]]
type = "orifice"
material = "steel"
point = [0, 0, 0]
normal = [0, 0, 2]
hole_radius = 0.03

[[wall]]
type = "orifice"
name = "slot"
material = "steel"
point = [0, 0, -0.1]
normal = [0, 0, 1]
hole_size = [0.02, 0.1]
hole_direction = [1, 0, 0.5]
velocity = [0, 0, -0.1]
)",
                                "s.toml", {});
    const auto& w = s.world.walls;
    ASSERT_EQ(w.size(), 3u);
    EXPECT_EQ(w[0].type, WallType::Cone);
    EXPECT_EQ(w[0].point, Vec3(0, 0, 0.1));
    EXPECT_EQ(w[0].axis, Vec3(0, 0, 1));
    EXPECT_NEAR(w[0].length, 0.2, 1e-15);
    EXPECT_EQ(w[0].radius, 0.02);
    EXPECT_EQ(w[0].end_radius, 0.2);
    EXPECT_EQ(w[1].type, WallType::Orifice);
    EXPECT_EQ(w[1].normal, Vec3(0, 0, 1));
    EXPECT_EQ(w[1].hole_radius, 0.03);
    EXPECT_EQ(w[2].hole_radius, 0.0);
    EXPECT_EQ(w[2].hole_size[0], 0.02);
    EXPECT_EQ(w[2].hole_size[1], 0.1);
    EXPECT_EQ(w[2].hole_direction, Vec3(1, 0, 0));  // projected on the plate
    EXPECT_EQ(w[2].motion.kind, MotionKind::Translation);
}

TEST(SceneWalls, BadConesAndOrificesNameTheirLineAndKey) {
    const std::string cone = "type = \"cone\"\nstart = [0, 0, 0]\n";
    const std::string plate = "type = \"orifice\"\npoint = [0, 0, 0]\nnormal = [0, 0, 1]\n";
    const std::pair<std::string, std::string> cases[] = {
        {cone + "end = [0, 0, 0]\nstart_radius = 0.1\nend_radius = 0.2\n",
         "mem/scene.toml:16: wall.0.end: must differ from start"},
        {cone + "end = [0, 0, 0.1]\nstart_radius = 0\nend_radius = 0\n",
         "mem/scene.toml:18: wall.0.end_radius: start_radius and end_radius are both 0"},
        {cone + "end = [0, 0, 0.1]\nstart_radius = -0.1\nend_radius = 0.2\n",
         "mem/scene.toml:17: wall.0.start_radius: must be ≥ 0"},
        {cone + "end = [0, 0, 0.1]\nstart_radius = 0.1\n",
         "wall.0.end_radius: missing required key"},
        {cone + "end = [0, 0, 0.1]\nstart_radius = 0.1\nend_radius = 0.2\nradius = 1\n",
         "mem/scene.toml:19: wall.0.radius: not used by a cone wall"},
        {plate, "wall.0.hole_radius: missing: an orifice needs hole_radius (a round hole) or hole_size"},
        {plate + "hole_radius = 0.01\nhole_size = [0.01, 0.02]\n",
         "mem/scene.toml:18: wall.0.hole_size: give either hole_radius (a round hole) or hole_size"},
        {plate + "hole_radius = 0\n", "mem/scene.toml:17: wall.0.hole_radius: must be > 0"},
        {plate + "hole_size = [0.01]\nhole_direction = [1, 0, 0]\n",
         "mem/scene.toml:17: wall.0.hole_size: expected [width, length] [m]: two numbers > 0"},
        {plate + "hole_size = [0.01, -1]\nhole_direction = [1, 0, 0]\n",
         "mem/scene.toml:17: wall.0.hole_size: element 1: must be > 0 [m] (got -1)"},
        {plate + "hole_size = [0.01, 0.02]\n", "wall.0.hole_direction: missing required key"},
        {plate + "hole_size = [0.01, 0.02]\nhole_direction = [0, 0, -3]\n",
         "mem/scene.toml:18: wall.0.hole_direction: must not be parallel to normal"},
        {plate + "hole_radius = 0.01\nhole_direction = [1, 0, 0]\n",
         "mem/scene.toml:18: wall.0.hole_direction: used only with hole_size"},
        // the body (r = 0.05 at (0, 0, 0.5)) 0.02 m under a plate, then on a cone's rim
        {"type = \"orifice\"\npoint = [0.2, 0, 0.52]\nnormal = [0, 0, 1]\nhole_radius = 0.01\n",
         "body 0 overlaps orifice wall.0 (line 12) by 0.03 m"},
        {"type = \"cone\"\nstart = [0, 0, 0.5]\nend = [0, 0, 1]\nstart_radius = 0.01\nend_radius = 0.3\n",
         "body 0 overlaps cone wall.0 (line 12) by 0.04 m"},
    };
    for (const auto& [wall, expected] : cases) {
        const std::string msg = error_of(wall);
        EXPECT_NE(msg.find(expected), std::string::npos) << wall << "\ngave: " << msg;
    }
}

TEST(WallMotion, PosesAndStepVelocitiesAreAsComputedByHand) {
    WallMotion table;
    table.kind = MotionKind::Table;
    table.start = 1.0;
    table.times = {0.5, 1.5};
    table.displacements = {Vec3(1, 0, 0), Vec3(1, 2, 0)};
    EXPECT_EQ(table.displacement(0.3), Vec3::Zero());             // before the start
    EXPECT_EQ(table.displacement(1.25), Vec3(0.5, 0, 0));          // first segment, from (0, 0)
    EXPECT_EQ(table.displacement(2.0), Vec3(1, 1, 0));            // second segment
    EXPECT_EQ(table.displacement(9.0), Vec3(1, 2, 0));            // held after the last entry
    // Mean velocity over a step straddling the start: half the step moving at 2 m/s.
    const WallState s = wall_state(table, 0.9, 0.9, 0.2);
    EXPECT_NEAR((s.velocity - Vec3(1, 0, 0)).norm(), 0.0, 1e-12);

    WallMotion sine;
    sine.kind = MotionKind::Sine;
    sine.amplitude = 0.1;
    sine.frequency = 2.0;
    sine.phase = 0.5;
    sine.start = 0.25;
    EXPECT_NEAR(sine.displacement(0.0).z(), 0.1 * std::sin(0.5), 1e-15);  // at rest before
    EXPECT_NEAR(sine.displacement(0.5).z(), 0.1 * std::sin(2 * 3.14159265358979323846 * 2 * 0.25 + 0.5), 1e-15);

    WallMotion rot;
    rot.kind = MotionKind::Rotation;
    rot.centre = Vec3(1, 0, 0);
    rot.axis = Vec3::UnitZ();
    rot.omega = 3.14159265358979323846;  // half a turn per second
    const WallState r = wall_state(rot, 0.5, 0.5, 0.01);
    EXPECT_NEAR((r.to_world(Vec3(2, 0, 0)) - Vec3(1, 1, 0)).norm(), 0.0, 1e-15);  // a quarter turn
    EXPECT_NEAR((r.to_reference(Vec3(1, 1, 0)) - Vec3(2, 0, 0)).norm(), 0.0, 1e-15);
    EXPECT_NEAR((r.velocity_at(Vec3(1, 1, 0)) - Vec3(-rot.omega, 0, 0)).norm(), 0.0, 1e-15);
}

}  // namespace cylinders

// [[wall]] type = "mesh": the STL file is found relative to the scene, scaled and moved;
// bad files, moving meshes and spheres overlapping the mesh at t = 0 are refused with the
// scene file, line and key named.
namespace meshes {

namespace fs = std::filesystem;
using namespace talus::testing;

const fs::path kDir = fs::path(TALUS_BINARY_DIR) / "test_scene_mesh";

std::string scene(const std::string& wall, double sphere_z = 0.2) {
    return fmt::format(R"([simulation]
dt = 1e-3
duration = 0.01

[[material]]
name = "glass"
density = 2500
friction = 0.5

[[wall]]
type = "mesh"
material = "glass"
{}

[[body]]
shape = "sphere"
radius = 0.05
material = "glass"
position = [0.1, 0.1, {}]
)",
                       wall, sphere_z);
}

std::string error_of(const std::string& text) { return testing::scene_error(text, (kDir / "scene.toml").string()); }

class SceneMesh : public ::testing::Test {
protected:
    void SetUp() override {
        fs::create_directories(kDir / "meshes");
        std::ofstream(kDir / "meshes" / "floor.stl", std::ios::binary)
            << binary_stl(flat_grid(4, 0.25, -0.5, -0.5));
        const std::string text = ascii_stl(flat_grid(1, 1.0, 0.0, 0.0));
        std::ofstream(kDir / "meshes" / "cut.stl", std::ios::binary) << text.substr(0, text.size() - 40);
    }
};

TEST_F(SceneMesh, MeshIsReadRelativeToTheSceneScaledAndMoved) {
    const Scene s = parse_scene(scene("file = \"meshes/floor.stl\"\nscale = 2\ntranslate = [0, 0, 0.1]"),
                                (kDir / "scene.toml").string());
    ASSERT_EQ(s.world.walls.size(), 1u);
    const Wall& w = s.world.walls[0];
    EXPECT_EQ(w.type, WallType::Mesh);
    ASSERT_TRUE(w.mesh);
    EXPECT_EQ(w.mesh->size(), 32u);
    EXPECT_EQ(w.mesh->lower(), Vec3(-1.0, -1.0, 0.1));
    EXPECT_EQ(w.mesh->upper(), Vec3(1.0, 1.0, 0.1));
}

TEST_F(SceneMesh, BadMeshWallsAreRefusedWithFileLineAndKey) {
    const std::string scene_name = (kDir / "scene.toml").string();
    std::string e = error_of(scene("file = \"meshes/none.stl\""));
    EXPECT_NE(e.find(scene_name + ":13: wall.0.file: "), std::string::npos) << e;
    EXPECT_NE(e.find("none.stl: cannot open"), std::string::npos) << e;

    e = error_of(scene("file = \"meshes/cut.stl\""));
    EXPECT_NE(e.find("wall.0.file: "), std::string::npos) << e;
    EXPECT_NE(e.find("cut.stl:"), std::string::npos) << e;

    e = error_of(scene("file = \"meshes/floor.stl\"\nscale = -1"));
    EXPECT_NE(e.find("wall.0.scale: must be > 0"), std::string::npos) << e;

    e = error_of(scene("file = \"meshes/floor.stl\"\nnormal = [0, 0, 1]"));
    EXPECT_NE(e.find("wall.0.normal: not used by a mesh wall"), std::string::npos) << e;

    // a capsule is measured as the step measures it: 0.02 m into the floor, refused by its
    // depth; 0.01 m clear of it, accepted
    std::string capsule = scene("file = \"meshes/floor.stl\"", 0.03);
    capsule.replace(capsule.find("shape = \"sphere\""), 16, "shape = \"capsule\"\nlength = 0.1");
    e = error_of(capsule);
    EXPECT_NE(e.find("body 0 overlaps mesh wall.0 (line 10) (triangle"), std::string::npos) << e;
    EXPECT_NE(e.find(") by 0.02 m"), std::string::npos) << e;
    capsule = scene("file = \"meshes/floor.stl\"", 0.06);
    capsule.replace(capsule.find("shape = \"sphere\""), 16, "shape = \"capsule\"\nlength = 0.1");
    EXPECT_NO_THROW(parse_scene(capsule, scene_name));
    std::string ellipsoid = scene("file = \"meshes/floor.stl\"", 0.04);
    const std::string sphere = "shape = \"sphere\"\nradius = 0.05";
    ellipsoid.replace(ellipsoid.find(sphere), sphere.size(), "shape = \"ellipsoid\"\nsemi_axes = [0.05, 0.05, 0.05]");
    e = error_of(ellipsoid);
    EXPECT_NE(e.find("mesh walls collide with spheres, clumps and capsules only"), std::string::npos) << e;

    e = error_of(scene("file = \"meshes/floor.stl\"", 0.03));
    EXPECT_NE(e.find("body 0 overlaps mesh wall.0 (line 10)"), std::string::npos) << e;
    EXPECT_NE(e.find("by 0.02 m"), std::string::npos) << e;
}

}  // namespace meshes

}  // namespace
}  // namespace talus

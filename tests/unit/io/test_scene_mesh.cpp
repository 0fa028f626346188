// [[wall]] type = "mesh": the STL file is found relative to the scene, scaled and moved;
// bad files, moving meshes and spheres overlapping the mesh at t = 0 are refused with the
// scene file, line and key named.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "collision/mesh.hpp"
#include "io/scene.hpp"
#include "tests/support/mesh_builder.hpp"

namespace talus {
namespace {

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

std::string error_of(const std::string& text) {
    try {
        parse_scene(text, (kDir / "scene.toml").string());
    } catch (const SceneError& e) {
        return e.what();
    }
    return {};
}

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

    std::string capsule = scene("file = \"meshes/floor.stl\"", 0.06);
    capsule.replace(capsule.find("shape = \"sphere\""), 16, "shape = \"capsule\"\nlength = 0.1");
    e = error_of(capsule);
    EXPECT_NE(e.find("mesh walls collide with spheres and clumps only"), std::string::npos) << e;

    e = error_of(scene("file = \"meshes/floor.stl\"", 0.03));
    EXPECT_NE(e.find("body 0 overlaps mesh wall.0 (line 10)"), std::string::npos) << e;
    EXPECT_NE(e.find("by 0.02 m"), std::string::npos) << e;
}

}  // namespace
}  // namespace talus

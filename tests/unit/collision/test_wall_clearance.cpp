// Every placement path against every wall kind (collision/wall_clearance.hpp): the
// clearance test itself against brute-force distances, an emitter inside a drum and over a
// moving mesh, and a random fill cut by a mesh. Before one routine served them all, the
// emitter ignored cylinders (grains appeared outside a drum) and the fill ignored meshes.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "collision/wall_clearance.hpp"
#include "engine/flow/flow.hpp"
#include "engine/flow/particle_fill.hpp"
#include "tests/support/mesh_builder.hpp"
#include "tests/support/world_builder.hpp"

namespace talus {
namespace {

using namespace talus::testing;

TEST(WallClearance, AgreesWithTheDistanceToEachWallKind) {
    World w = make_world(1e-3, Vec3::Zero());
    const uint32_t m = add_material(w, 2500.0, 0.5);
    add_plane(w, Vec3(0, 0, -0.5), Vec3(0, 0, 1), m);                          // floor z = −0.5
    add_cylinder(w, Vec3::Zero(), Vec3::UnitY(), 0.4, true, m, {}, 2.0);        // drum, |y| ≤ 1
    add_cylinder(w, Vec3(0.2, 0, 0), Vec3::UnitZ(), 0.05, false, m);          // pillar at x = 0.2
    add_mesh(w, flat_grid(4, 0.1, -0.2, -0.2, 0.3), m);                        // plate z = 0.3
    Wall removed;  // a removed plane through the origin must not count
    removed.type = WallType::Plane;
    removed.normal = Vec3::UnitX();
    removed.active = false;
    w.walls.push_back(removed);
    const WallClearance clear(w.walls, 0.0);

    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> u(-0.6, 0.6), ur(0.001, 0.1);
    int blocked = 0;
    for (int k = 0; k < 20000; ++k) {
        const Vec3 x(u(rng), u(rng), u(rng));
        const double r = ur(rng);
        bool expect = x.z() + 0.5 >= r;                                         // floor
        expect = expect && 0.4 - std::hypot(x.x(), x.z()) >= r;                 // drum (|y| < 1)
        expect = expect && std::hypot(x.x() - 0.2, x.y()) - 0.05 >= r;          // pillar
        const double px = std::clamp(x.x(), -0.2, 0.2), py = std::clamp(x.y(), -0.2, 0.2);
        expect = expect && (x - Vec3(px, py, 0.3)).norm() > r;                  // plate
        ASSERT_EQ(clear.clear(x, r), expect) << "x = " << x.transpose() << ", r = " << r;
        blocked += !expect;
    }
    EXPECT_GT(blocked, 2000);
    EXPECT_LT(blocked, 18000);
}

TEST(WallClearance, EmitterInsideADrumKeepsEveryGrainInside) {
    // A box emitter larger than the drum's cross-section (radius 0.1 m): its corners lie
    // outside the drum, where no grain may appear.
    World w = make_world(1e-3, Vec3::Zero());
    const uint32_t m = add_material(w, 2500.0, 0.5);
    const double R = 0.1;
    add_cylinder(w, Vec3::Zero(), Vec3::UnitY(), R, true, m, {}, 0.1);
    Emitter e;
    e.min = Vec3(-0.1, -0.04, -0.1);
    e.max = Vec3(0.1, 0.04, 0.1);
    e.rate = 1000.0;
    e.size = SizeDistribution::fixed(0.003);
    e.seed = 3;
    uint64_t next_id = 0;
    emit(e, w.bodies, w.walls, w.materials, 1.0, next_id);
    ASSERT_GT(w.bodies.size(), 500u);
    double worst = 0.0;
    for (std::size_t i = 0; i < w.bodies.size(); ++i) {
        const Vec3& x = w.bodies.position[i];
        worst = std::max(worst, std::hypot(x.x(), x.z()) + w.bodies.radius[i]);
    }
    std::printf("[ clearance ] %zu grains emitted in a drum of radius %.3g m: farthest surface %.4g m "
                "from the axis\n", w.bodies.size(), R, worst);
    EXPECT_LE(worst, R);
}

TEST(WallClearance, EmitterAvoidsAMovingMeshWhereItIsNow) {
    // A plate that rose from z = 0 at 0.1 m/s: at t = 1 s it is at z = 0.1, inside the
    // emitter's box. Grains keep clear of it there, not of its starting place.
    World w = make_world(1e-3, Vec3::Zero());
    const uint32_t m = add_material(w, 2500.0, 0.5);
    add_mesh(w, flat_grid(10, 0.02, -0.1, -0.1, 0.0), m);
    w.walls.back().motion.kind = MotionKind::Translation;
    w.walls.back().motion.velocity = Vec3(0, 0, 0.1);
    Emitter e;
    e.min = Vec3(-0.08, -0.08, 0.05);
    e.max = Vec3(0.08, 0.08, 0.15);
    e.rate = 600.0;
    e.size = SizeDistribution::fixed(0.004);
    e.seed = 5;
    uint64_t next_id = 0;
    emit(e, w.bodies, w.walls, w.materials, 1.0, next_id);
    ASSERT_GT(w.bodies.size(), 300u);
    for (std::size_t i = 0; i < w.bodies.size(); ++i)
        EXPECT_GE(std::abs(w.bodies.position[i].z() - 0.1), w.bodies.radius[i]) << "body " << i;
}

TEST(WallClearance, RandomFillKeepsClearOfMeshesAndCylinders) {
    // A fill box cut by a mesh plate at z = 0.05 and a pillar along z.
    World w = make_world(1e-3, Vec3::Zero());
    const uint32_t m = add_material(w, 2500.0, 0.5);
    add_mesh(w, flat_grid(10, 0.02, -0.1, -0.1, 0.05), m);
    add_cylinder(w, Vec3::Zero(), Vec3::UnitZ(), 0.03, false, m);
    RandomFillSpec spec;
    spec.min = Vec3(-0.1, -0.1, 0.0);
    spec.max = Vec3(0.1, 0.1, 0.1);
    spec.radius = 0.004;
    spec.count = 2000;
    spec.seed = 11;
    std::vector<Vec3> out;
    ASSERT_EQ(random_fill(spec, {}, {}, w.walls, out), 2000u);
    for (const Vec3& x : out) {
        EXPECT_GE(std::abs(x.z() - 0.05), 0.004) << x.transpose();
        EXPECT_GE(std::hypot(x.x(), x.y()), 0.034) << x.transpose();
    }
}

}  // namespace
}  // namespace talus

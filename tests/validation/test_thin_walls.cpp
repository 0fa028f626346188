// Spheres against cone and orifice walls (core/thin_walls.hpp), with closed-form rest states.
//
//  * A sphere of radius r dropped off the axis into a funnel of half-angle α (a cone with its
//    apex down) rolls down and comes to rest on the axis touching the cone all round: the
//    distance from the axis point at height h above the apex to the generator is h sin α, so
//    h = r / sin α. Asserted for α = 45° and 30°: the centre within 1e-3 r of (0, 0, h), at
//    rest (speed < 1e-4 m/s).
//  * A sphere of radius r on a plate with a round hole of radius R < r seats in the hole with
//    its centre √(r² − R²) above the plate; in a slot of width w < 2r (longer than 2r) it
//    rests on the two long edges, √(r² − w²/4) above. Asserted within 1e-3 r.
//  * A sphere smaller than the hole falls through it and lands on the floor below (the
//    plate has two sides and no one-sided push).
//  * A plate moving upwards lifts the sphere seated in its hole at the plate's speed.
//  * A capsule near a cone stops the run with a message (thin walls collide with spheres
//    and clumps only), and a clump's spheres each meet the wall.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "tests/support/thin_wall_builder.hpp"
#include "tests/support/world_builder.hpp"

namespace talus {
namespace {

using namespace talus::testing;

constexpr double kG = 9.81;

void add_cone(World& w, const Vec3& start, const Vec3& end, double r0, double r1, uint32_t material) {
    w.walls.push_back(cone_wall(start, end, r0, r1, material));
}

void add_orifice(World& w, const Vec3& centre, double hole_radius, uint32_t material,
                 const Vec3& velocity = Vec3::Zero()) {
    w.walls.push_back(round_orifice_wall(centre, Vec3::UnitZ(), hole_radius, material));
    if (velocity.squaredNorm() > 0.0) {
        w.walls.back().motion.kind = MotionKind::Translation;
        w.walls.back().motion.velocity = velocity;
    }
}

void add_slot(World& w, const Vec3& centre, double width, double length, uint32_t material) {
    w.walls.push_back(slot_wall(centre, Vec3::UnitZ(), Vec3::UnitX(), width, length, material));
}

/// Runs until the sphere has been slower than 1e-4 m/s for 0.1 s, or for at most `seconds`.
void settle(World& w, double seconds) {
    const double h = w.simulation.dt;
    int still = 0;
    for (int k = 0; k < int(seconds / h) && still < int(0.1 / h); ++k) {
        const StepStatus s = w.step();
        ASSERT_TRUE(s.ok) << s.message;
        still = w.bodies.velocity[0].norm() < 1e-4 ? still + 1 : 0;
    }
}

TEST(ThinWalls, ASphereDroppedIntoAFunnelRestsOnTheAxisAtRadiusOverSinAlpha) {
    for (const double alpha_deg : {45.0, 30.0}) {
        const double alpha = alpha_deg * kPi / 180.0, r = 0.01, H = 0.1;
        World w = make_world(1e-3, Vec3(0, 0, -kG), 1e-10, 200);
        const uint32_t m = add_material(w, 2500.0, 0.4);
        add_cone(w, Vec3::Zero(), Vec3(0, 0, H), 0.0, H * std::tan(alpha), m);
        const double h = r / std::sin(alpha);
        add_sphere(w, Vec3(0.4 * r, 0.2 * r, h + 3 * r), r, m);
        settle(w, 3.0);
        const Vec3 x = w.bodies.position[0];
        std::printf("[ funnel %.0f° ] rests at (%.3g, %.3g, %.6f) m, r / sin α = %.6f m, speed %.2g m/s\n",
                    alpha_deg, x.x(), x.y(), x.z(), h, w.bodies.velocity[0].norm());
        EXPECT_LT((x - Vec3(0, 0, h)).norm(), 1e-3 * r);
        EXPECT_LT(w.bodies.velocity[0].norm(), 1e-4);
    }
}

TEST(ThinWalls, ASphereSeatsInARoundHoleAndOnTheEdgesOfASlot) {
    const double r = 0.01;
    {
        World w = make_world(1e-3, Vec3(0, 0, -kG), 1e-10, 200);
        const uint32_t m = add_material(w, 2500.0, 0.4);
        const double R = 0.6 * r;
        add_orifice(w, Vec3(0, 0, 0.05), R, m);
        add_sphere(w, Vec3(0.3 * r, -0.2 * r, 0.05 + 2 * r), r, m);
        settle(w, 3.0);
        const Vec3 x = w.bodies.position[0];
        const double expected = 0.05 + std::sqrt(r * r - R * R);
        std::printf("[ round hole ] rests at (%.3g, %.3g, %.6f) m, expected z %.6f m\n", x.x(), x.y(), x.z(),
                    expected);
        EXPECT_LT((x - Vec3(0, 0, expected)).norm(), 1e-3 * r);
        EXPECT_LT(w.bodies.velocity[0].norm(), 1e-4);
    }
    {
        World w = make_world(1e-3, Vec3(0, 0, -kG), 1e-10, 200);
        const uint32_t m = add_material(w, 2500.0, 0.4);
        const double width = 1.2 * r;
        add_slot(w, Vec3(0, 0, 0.05), width, 6 * r, m);
        add_sphere(w, Vec3(0.3 * r, 0.5 * r, 0.05 + 2 * r), r, m);
        settle(w, 3.0);
        const Vec3 x = w.bodies.position[0];
        const double expected = 0.05 + std::sqrt(r * r - 0.25 * width * width);
        std::printf("[ slot ] rests at (%.3g, %.3g, %.6f) m, expected z %.6f m\n", x.x(), x.y(), x.z(), expected);
        // on the slot's axis (x = 0) at the seated height; anywhere along its length
        EXPECT_LT(std::abs(x.x()), 1e-3 * r);
        EXPECT_NEAR(x.z(), expected, 1e-3 * r);
        EXPECT_LT(std::abs(x.y()), 3 * r - 0.5 * width);
        EXPECT_LT(w.bodies.velocity[0].norm(), 1e-4);
    }
}

TEST(ThinWalls, ASmallSphereFallsThroughTheHoleAndAPlateCarriesASeatedOne) {
    const double r = 0.01;
    {
        World w = make_world(1e-3, Vec3(0, 0, -kG), 1e-10, 200);
        const uint32_t m = add_material(w, 2500.0, 0.4);
        add_orifice(w, Vec3(0, 0, 0.05), 1.5 * r, m);
        add_plane(w, Vec3::Zero(), Vec3::UnitZ(), m);
        add_sphere(w, Vec3(0.2 * r, 0, 0.05 + 2 * r), r, m);
        settle(w, 3.0);
        const Vec3 x = w.bodies.position[0];
        std::printf("[ through the hole ] rests at z = %.6f m\n", x.z());
        EXPECT_NEAR(x.z(), r, 1e-6);  // on the floor, under the plate
    }
    {
        const double v = 0.05;
        World w = make_world(1e-3, Vec3(0, 0, -kG), 1e-10, 200);
        const uint32_t m = add_material(w, 2500.0, 0.4);
        add_orifice(w, Vec3(0, 0, 0.05), 0.6 * r, m, Vec3(0, 0, v));
        add_sphere(w, Vec3(0, 0, 0.05 + 0.8 * r), r, m);
        for (int k = 0; k < 300; ++k) ASSERT_TRUE(w.step().ok);
        const double plate = 0.05 + 0.3 * v;
        std::printf("[ lifted ] z = %.6f m (plate + 0.8 r = %.6f m), v_z = %.6f m/s\n", w.bodies.position[0].z(),
                    plate + 0.8 * r, w.bodies.velocity[0].z());
        EXPECT_NEAR(w.bodies.position[0].z(), plate + 0.8 * r, 1e-4 * r);
        EXPECT_NEAR(w.bodies.velocity[0].z(), v, 1e-6);
    }
}

TEST(ThinWalls, ClumpsMeetThinWallsAndCapsulesAreRefused) {
    {
        // a two-sphere clump dropped lying flat onto a plate with a small hole away from it:
        // both spheres rest on the plate, one contact each
        World w = make_world(1e-3, Vec3(0, 0, -kG), 1e-10, 200);
        const uint32_t m = add_material(w, 2500.0, 0.4);
        add_orifice(w, Vec3(0.2, 0, 0.0), 0.01, m);
        const std::vector<Vec3> centres = {Vec3(-0.01, 0, 0), Vec3(0.01, 0, 0)};
        const std::vector<double> radii = {0.008, 0.008};
        const uint32_t t = w.bodies.clumps.add(centres, radii);
        // the principal frame may put the two spheres on any body axis: turn it onto x
        const ClumpTable& table = w.bodies.clumps;
        const Vec3 along = table.centre[table.begin(t) + 1] - table.centre[table.begin(t)];
        const Quat q = Quat::FromTwoVectors(along, Vec3::UnitX());
        w.bodies.add_clump(0, Vec3(0, 0, 0.02), t, 2500.0, m, Vec3::Zero(), Vec3::Zero(), q);
        for (int k = 0; k < 400; ++k) ASSERT_TRUE(w.step().ok);
        ASSERT_EQ(w.contacts().size(), 2u);
        EXPECT_NEAR(w.bodies.position[0].z(), 0.008, 1e-6);
    }
    {
        World w = make_world(1e-3, Vec3(0, 0, -kG));
        const uint32_t m = add_material(w, 2500.0, 0.5);
        add_cone(w, Vec3::Zero(), Vec3(0, 0, 0.2), 0.0, 0.2, m);
        w.bodies.add_capsule(0, Vec3(0, 0, 0.09), 0.02, 0.05, 2500.0, m);  // 0.064 m from the cone
        const StepStatus s = w.step();
        EXPECT_FALSE(s.ok);
        EXPECT_NE(s.message.find("cone or orifice walls collide with spheres and clumps only"), std::string::npos)
            << s.message;
    }
}

}  // namespace
}  // namespace talus

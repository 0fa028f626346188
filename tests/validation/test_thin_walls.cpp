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
//  * An ellipsoid near a cone stops the run with a message (thin walls collide with
//    spheres, clumps and capsules), and a clump's spheres each meet the wall.
//  * Capsules: the narrow phase's least gap to a cone, a round hole and a slot equals brute
//    force along the core; a rod lying across a thin cylindrical shell rests on its middle
//    at R + r; rods poured into a hopper stay on their side of its shell and flow out of
//    its outlet, with the defaults.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <sstream>

#include "collision/narrow_phase.hpp"
#include "io/scene.hpp"
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

TEST(ThinWalls, ClumpsMeetThinWallsAndEllipsoidsAreRefused) {
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
        w.bodies.add_ellipsoid(0, Vec3(0, 0, 0.09), Vec3(0.07, 0.03, 0.02), 2500.0, m);  // 0.064 m from the cone
        const StepStatus s = w.step();
        EXPECT_FALSE(s.ok);
        EXPECT_NE(s.message.find("cone or orifice walls collide with spheres, clumps and capsules only"),
                  std::string::npos)
            << s.message;
    }
}

Quat random_rotation(std::mt19937_64& rng) {
    std::normal_distribution<double> g;
    return Quat(g(rng), g(rng), g(rng), g(rng)).normalized();
}

/// The least distance from capsule i's core to the wall by brute force: `samples` + 1
/// points along the segment.
double brute_core_distance(const BodyStore& b, std::size_t i, const ThinWallAt& wall, int samples) {
    const double h = b.shape_param[i].y();
    const Vec3 a = b.orientation[i] * Vec3::UnitX();
    double least = std::numeric_limits<double>::infinity();
    for (int k = 0; k <= samples; ++k)
        least = std::min(least, wall.distance(b.position[i] + (-1.0 + 2.0 * k / samples) * h * a));
    return least;
}

// Capsules at random poses near a cone (a frustum on a random axis), a round hole and a
// slot: the narrow phase's least gap equals the least distance from 200,001 points of the
// core to the wall (ThinWallAt::distance, itself checked against the sampled surface in
// tests/unit/core/test_thin_walls.cpp), less r, within 1e-7 m (the sampling's spacing is
// at most 2.5e-7 m, and where the core crosses the wall the distance has a corner). Every
// contact point lies in the capsule (on its surface at a minimum inside the core clear of
// the wall), and its point across the gap on the wall. A share of
// the poses has its least gap inside the core (across a rim, an edge, the outside of the
// cone), where the end spheres alone would miss it.
TEST(ThinWalls, CapsuleGapsMatchBruteForceAlongTheCore) {
    constexpr double kInf = std::numeric_limits<double>::infinity();
    std::mt19937_64 rng(5);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    std::normal_distribution<double> g;
    int inner = 0, trials = 0;
    for (int trial = 0; trial < 90; ++trial) {
        Wall wall;
        const int kind = trial % 3;
        const Vec3 origin(0.01 * g(rng), 0.01 * g(rng), 0.01 * g(rng));
        const Vec3 axis = Vec3(g(rng), g(rng), g(rng)).normalized();
        Vec3 e, f;
        orthonormal_basis(axis, e, f);
        const double turn = 2.0 * kPi * unit(rng);
        const Vec3 radial = std::cos(turn) * e + std::sin(turn) * f;
        Vec3 near;  // a point of the wall, or near its rim
        if (kind == 0) {
            const double r0 = 0.02 * unit(rng), r1 = 0.02 + 0.03 * unit(rng), length = 0.04;
            wall = cone_wall(origin, origin + length * axis, r0, r1);
            const double s = -0.2 + 1.4 * unit(rng);
            near = origin + s * length * axis + (r0 + s * (r1 - r0)) * radial;
        } else if (kind == 1) {
            const double hole = 0.01 + 0.01 * unit(rng);
            wall = round_orifice_wall(origin, axis, hole);
            near = origin + (hole + 0.01 * g(rng)) * radial;
        } else {
            const double width = 0.01 + 0.01 * unit(rng), length = 0.03 + 0.02 * unit(rng);
            wall = slot_wall(origin, axis, e, width, length);
            near = origin + 0.5 * width * (unit(rng) < 0.5 ? e : Vec3(-e)) + 0.5 * length * (2.0 * unit(rng) - 1.0) * f;
        }
        const ThinWallAt at(wall, WallState{});
        const double r = 0.002 + 0.004 * unit(rng), half = 0.025 * unit(rng);
        BodyStore b;
        b.add_capsule(0, near + 0.012 * Vec3(g(rng), g(rng), g(rng)), r, half, 1000.0, 0, Vec3::Zero(),
                      Vec3::Zero(), random_rotation(rng));
        const double brute = brute_core_distance(b, 0, at, 200000) - r;
        std::vector<ShapeContact> c;
        const int m = collide_thin_wall(b, 0, at, kInf, c);
        ASSERT_GE(m, 1) << "trial " << trial;
        ASSERT_LE(m, 6 + 4 + 63) << "trial " << trial;  // ends' tripods, minima, samples
        std::size_t least = 0;
        for (std::size_t k = 0; k < c.size(); ++k) {
            if (c[k].gap < c[least].gap) least = k;
            const Vec3 a = b.orientation[0] * Vec3::UnitX();
            const double u = std::clamp((c[k].point - b.position[0]).dot(a), -half, half);
            const double from_core = (c[k].point - b.position[0] - u * a).norm();
            // a minimum where the core is clear of the wall: the normal ⟂ the core, so the point
            // is on the capsule's surface; any other: on its sphere, so within the capsule
            const uint32_t sub = c[k].feature >> kSubFeatureShift;
            if (sub >= 2 && sub < 6 && c[k].gap > -r + 1e-6)
                EXPECT_NEAR(from_core, r, 1e-9) << "trial " << trial;
            else
                EXPECT_LE(from_core, r + 1e-9) << "trial " << trial;
            EXPECT_LT(at.distance(c[k].point - c[k].gap * c[k].normal), 1e-9) << "trial " << trial;
            EXPECT_NEAR(c[k].normal.norm(), 1.0, 1e-12);
        }
        EXPECT_NEAR(c[least].gap, brute, 1e-7) << "trial " << trial << " kind " << kind;
        inner += (c[least].feature >> kSubFeatureShift) >= 2;
        ++trials;
    }
    std::printf("[ capsule gaps ] %d poses, %d with the least gap inside the core\n", trials, inner);
    EXPECT_GE(inner, 9);
}

// A rod (r = 5 mm, 6 cm long) dropped lying across a horizontal thin cylindrical shell (a
// cone of equal radii R = 2 cm) comes to rest on the shell's top line by its middle: its
// axis R + r above the shell's, held by the minimum inside the core (sub-feature 2, gap
// 0) and the samples beside it within reach, its end spheres out of reach. Stable, since
// r < R.
TEST(ThinWalls, ARodRestsAcrossAThinShellOnItsMiddle) {
    const double r = 0.005, half = 0.03, R = 0.02;
    World w = make_world(1e-3, Vec3(0, 0, -kG), 1e-10, 200);
    const uint32_t m = add_material(w, 2500.0, 0.5);
    add_cone(w, Vec3(0, -0.05, 0.05), Vec3(0, 0.05, 0.05), R, R, m);
    w.bodies.add_capsule(0, Vec3(0, 0.01, 0.05 + R + r + 0.002), r, half, 2500.0, m);
    settle(w, 2.0);
    const Vec3 x = w.bodies.position[0];
    std::printf("[ rod on a shell ] rests at (%.3g, %.3g, %.6f) m, expected z %.6f m\n", x.x(), x.y(), x.z(),
                0.05 + R + r);
    EXPECT_NEAR(x.z(), 0.05 + R + r, 1e-3 * r);
    EXPECT_LT(std::abs(x.x()), 1e-3 * r);
    EXPECT_LT(w.bodies.velocity[0].norm(), 1e-4);
    const ContactList& c = w.contacts();
    int minima = 0;
    for (std::size_t k = 0; k < c.size(); ++k) {
        const uint32_t sub = c.feature[k] >> kSubFeatureShift;
        EXPECT_GE(sub, 2u);  // not an end
        if (sub != 2) continue;
        ++minima;
        EXPECT_NEAR(c.gap[k], 0.0, 1e-3 * r);
        EXPECT_NEAR(c.normal[k].z(), 1.0, 1e-6);
    }
    EXPECT_EQ(minima, 1);
}

// 80 rods (3 mm across, 9 mm long) poured with the defaults into a hopper (a cone from an
// outlet of radius 8 mm at z = 2 cm to 4 cm at z = 8 cm) over a floor, 0.6 s. At every step
// no rod's core comes nearer the shell than r less 1 % of the diameter (by brute force, 65
// points along each core), so none crosses it; every rod ends inside the hopper or under
// its outlet, none beside it; rods have flowed out; and the solver's largest overlap stays
// under 1 % of the diameter.
TEST(ThinWalls, RodsPouredIntoAHopperStayInItAndFlowOut) {
    const double r = 0.0015;
    const std::string text = R"([simulation]
duration = 0.6
[[material]]
name = "m"
density = 2500
friction = 0.4
restitution = 0.3
[[wall]]
type = "box"
min = [-0.06, -0.06, 0.0]
max = [0.06, 0.06, 0.2]
material = "m"
[[wall]]
type = "cone"
start = [0, 0, 0.02]
end = [0, 0, 0.08]
start_radius = 0.008
end_radius = 0.04
material = "m"
[[particles]]
shape = "capsule"
radius = 0.0015
length = 0.006
material = "m"
random = { min = [-0.028, -0.028, 0.06], max = [0.028, 0.028, 0.16], count = 80, seed = 7 }
)";
    Scene s = parse_scene(text, "mem/hopper.toml");
    World& w = s.world;
    ASSERT_EQ(w.bodies.size(), 80u);
    const ThinWallAt cone(w.walls[1], WallState{});
    double deepest = 0.0, overlap = 0.0;
    while (w.time < 0.6 - 1e-12) {
        const StepStatus st = w.step(0.6);
        ASSERT_TRUE(st.ok) << st.message;
        overlap = std::max(overlap, w.diagnostics().contact_infeasibility);
        for (std::size_t i = 0; i < w.bodies.size(); ++i)
            deepest = std::max(deepest, r - brute_core_distance(w.bodies, i, cone, 64));
    }
    int out = 0;
    for (std::size_t i = 0; i < w.bodies.size(); ++i) {
        EXPECT_FALSE(cone.outside(w.bodies.position[i])) << "rod " << i << " beside the hopper";
        out += w.bodies.position[i].z() < 0.02;
    }
    std::printf("[ hopper ] %d of 80 rods out, deepest into the shell %.3g m, largest overlap %.3g m\n", out, deepest,
                overlap);
    EXPECT_LT(deepest, 0.01 * 2 * r);
    EXPECT_LT(overlap, 0.01 * 2 * r);
    EXPECT_GE(out, 10);
}

}  // namespace
}  // namespace talus

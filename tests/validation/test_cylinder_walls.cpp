// Spheres against cylinder walls (collision/narrow_phase.cpp), fixed and rotating.
//
//  * Inside a fixed horizontal cylinder of radius R, a sphere (radius r, J = 2/5 m r²)
//    rolling without slipping: its centre moves on the circle of radius R − r, with angle θ
//    from the bottom. Rolling gives the spin ω = (R − r) θ̇ / r, so the energy is
//    ½ m (R − r)² θ̇² (1 + 2/5) + m g (R − r)(1 − cos θ), and small oscillations have
//        T = 2π √(7 (R − r) / (5 g)).
//    Released at rest at θ₀ = 0.05 rad (the finite-amplitude correction θ₀²/16 = 1.6e-4 is
//    below the tolerance); the period from the zero crossings over three periods is
//    asserted within 1 %.
//  * The same sphere in the same cylinder rotating about its own axis at Ω (a drum),
//    starting at rest at the bottom: friction drags it up while it slips, then it rolls.
//    Rolling relative to a surface moving at constant speed has the same equation of
//    motion (the constraint differs by a constant spin), so it then oscillates about the
//    bottom with the same period; and at the contact the sphere's surface moves with the
//    drum's (no slip, to 1e-6 m/s).
//  * Outside a fixed horizontal cylinder: a sphere at rest on top with friction stays
//    there, its contact carries m g h per step and the gap stays 0 (1e-12 m). A
//    frictionless sphere released at rest at θ₀ from the top slides on the circle of
//    radius ρ = R + r with v² = 2 g ρ (cos θ₀ − cos θ); the contact force
//    m g cos θ − m v²/ρ vanishes at cos θ = (2/3) cos θ₀, where it leaves the cylinder.
//    Asserted within 0.01 rad.
//  * A finite cylinder is not seen beyond its ends, and a capsule lying in a drum comes to
//    rest on both its ends at R − r from the axis (capsules and ellipsoids against
//    cylinders at random poses: tests/validation/test_shapes.cpp).
//  * A rotating drum of 1,400 beads closed by a static plane and a vibrated mesh gives the
//    same bits on 1 and 2 threads (docs/design.md §8).
#include <gtest/gtest.h>
#include <oneapi/tbb/global_control.h>

#include <cmath>
#include <cstdio>
#include <cstring>

#include "tests/support/mesh_builder.hpp"
#include "tests/support/world_builder.hpp"

namespace talus {
namespace {

using namespace talus::testing;

constexpr double kG = 9.81;

/// Times at which the coordinate crosses zero upwards (linear interpolation in a step).
struct Crossings {
    std::vector<double> up;
    double prev = 0.0, prev_t = 0.0;
    bool first = true;
    void add(double t, double value) {
        if (!first && prev < 0.0 && value >= 0.0) up.push_back(prev_t + (t - prev_t) * (-prev) / (value - prev));
        first = false;
        prev = value;
        prev_t = t;
    }
    double period() const { return (up.back() - up.front()) / double(up.size() - 1); }
};

TEST(CylinderWalls, BallRollingInsideAFixedCylinderOscillatesWithTheRollingPeriod) {
    const double R = 0.5, r = 0.05, h = 1e-3, theta0 = 0.05;
    const double T = 2 * kPi * std::sqrt(7 * (R - r) / (5 * kG));  // 1.592 s
    World w = make_world(h, Vec3(0, 0, -kG), 1e-12, 300);
    const uint32_t m = add_material(w, 2500.0, 0.5);
    add_cylinder(w, Vec3(0, 0, R), Vec3::UnitX(), R, true, m);
    add_sphere(w, Vec3(0, (R - r) * std::sin(theta0), R - (R - r) * std::cos(theta0)), r, m);
    Crossings c;
    double worst_gap = 0.0;
    for (int k = 1; k <= int(3.6 * T / h); ++k) {
        ASSERT_TRUE(w.step().ok);
        c.add(k * h, w.bodies.position[0].y());
        const Vec3 rel = w.bodies.position[0] - Vec3(0, 0, R);
        worst_gap = std::max(worst_gap, std::abs(R - r - std::hypot(rel.y(), rel.z())));
    }
    ASSERT_GE(c.up.size(), 3u);
    std::printf("[ cylinder inside ] period %.6f s (2π√(7(R−r)/5g) = %.6f s), largest |gap| %.3g m\n",
                c.period(), T, worst_gap);
    EXPECT_NEAR(c.period() / T, 1.0, 0.01);
    EXPECT_LE(worst_gap, 1e-5);  // curvature drift h² v²/(R − r) per step, corrected by γ_s
}

TEST(CylinderWalls, RotatingDrumDragsASphereUpThenItRollsAndOscillates) {
    const double R = 0.5, r = 0.05, h = 1e-3, Omega = 0.5;
    const double T = 2 * kPi * std::sqrt(7 * (R - r) / (5 * kG));
    World w = make_world(h, Vec3(0, 0, -kG), 1e-12, 300);
    const uint32_t m = add_material(w, 2500.0, 0.3);
    const Vec3 centre(0, 0, R);
    add_cylinder(w, centre, Vec3::UnitX(), R, true, m, rotation_motion(centre, Vec3::UnitX(), Omega));
    add_sphere(w, Vec3(0, 0, r), r, m);
    Crossings c;
    double y_max = 0.0, worst_slip = 0.0;
    for (int k = 1; k <= int(3.6 * T / h); ++k) {
        ASSERT_TRUE(w.step().ok);
        const Vec3& x = w.bodies.position[0];
        y_max = std::max(y_max, x.y());
        c.add(k * h, x.y());
        if (k * h > 0.2) {  // slipping lasts ≈ 2 Ω R / (7 μ g) = 0.05 s
            // Slip at the step's contact (point, lever and wall velocity as solved; the world
            // ω of a sphere is unchanged by its own rotation), against the drum's surface
            // velocity Ω x̂ × (p − c) computed here.
            ASSERT_EQ(w.contacts().size(), 1u);
            const Vec3& p = w.contacts().point[0];
            const Vec3 sphere_v = w.bodies.velocity[0] +
                                  (w.bodies.orientation[0] * w.bodies.angular_velocity[0]).cross(w.batch().lever_b[0]);
            const Vec3 drum_v = Omega * Vec3::UnitX().cross(p - centre);
            const Vec3 n = w.contacts().normal[0];
            const Vec3 slip = (sphere_v - drum_v) - (sphere_v - drum_v).dot(n) * n;
            worst_slip = std::max(worst_slip, slip.norm());
        }
    }
    ASSERT_GE(c.up.size(), 3u);
    std::printf("[ drum ] dragged up to y = %.4f m, period %.6f s (%.6f s), slip ≤ %.3g m/s\n", y_max,
                c.period(), T, worst_slip);
    EXPECT_GT(y_max, 0.01);  // the bottom of the drum moves at Ω x̂ × (−R ẑ) = +Ω R ŷ
    EXPECT_NEAR(c.period() / T, 1.0, 0.01);
    EXPECT_LE(worst_slip, 1e-6);
}

TEST(CylinderWalls, SphereRestsOnTopOfAFixedCylinder) {
    const double R = 0.3, r = 0.05, h = 1e-3;
    World w = make_world(h, Vec3(0, 0, -kG), 1e-12, 200);
    const uint32_t m = add_material(w, 2500.0, 0.5);
    add_cylinder(w, Vec3::Zero(), Vec3::UnitY(), R, false, m);
    add_sphere(w, Vec3(0, 0, R + r), r, m);
    const double mgh = w.bodies.mass(0) * kG * h;
    for (int k = 0; k < 500; ++k) {
        ASSERT_TRUE(w.step().ok);
        ASSERT_EQ(w.contacts().size(), 1u);
        ASSERT_NEAR(w.contacts().gap[0], 0.0, 1e-12);
        ASSERT_NEAR(w.batch().gamma[0][0] / mgh, 1.0, 1e-9) << "step " << k;
    }
    EXPECT_NEAR((w.bodies.position[0] - Vec3(0, 0, R + r)).norm(), 0.0, 1e-12);
}

TEST(CylinderWalls, FrictionlessSphereLeavesTheTopOfACylinderAtTwoThirds) {
    const double R = 0.3, r = 0.05, h = 1e-4, theta0 = 0.05, rho = R + r;
    World w = make_world(h, Vec3(0, 0, -kG), 1e-13, 200);
    const uint32_t m = add_material(w, 2500.0, 0.0);
    add_cylinder(w, Vec3::Zero(), Vec3::UnitY(), R, false, m);
    add_sphere(w, Vec3(rho * std::sin(theta0), 0, rho * std::cos(theta0)), r, m);
    double theta_off = -1.0;
    for (int k = 0; k < 30000 && theta_off < 0.0; ++k) {
        const Vec3 x = w.bodies.position[0];
        ASSERT_TRUE(w.step().ok);
        const bool pushed = w.batch().gamma.size() > 0 && w.batch().gamma[0][0] > 0.0;
        if (!pushed) theta_off = std::atan2(x.x(), x.z());
    }
    const double expected = std::acos(2.0 / 3.0 * std::cos(theta0));
    std::printf("[ cylinder outside ] leaves at θ = %.5f rad (acos(2/3 cos θ₀) = %.5f rad)\n", theta_off,
                expected);
    ASSERT_GT(theta_off, 0.0);
    EXPECT_NEAR(theta_off, expected, 0.01);
}

TEST(CylinderWalls, FiniteCylinderEndsAndACapsuleInADrum) {
    // A sphere beyond the end of a finite pillar falls past it.
    {
        World w = make_world(1e-3, Vec3(0, 0, -kG));
        const uint32_t m = add_material(w, 2500.0, 0.5);
        // Vertical pillar of radius 0.1 spanning z ∈ [0, 1]: a sphere above it sees nothing,
        // one beside it is pushed out.
        add_cylinder(w, Vec3(0, 0, 0.5), Vec3::UnitZ(), 0.1, false, m, {}, 1.0);
        add_sphere(w, Vec3(0.0, 0, 1.2), 0.05, m);
        ASSERT_TRUE(w.step().ok);
        EXPECT_EQ(w.contacts().size(), 0u);
        add_sphere(w, Vec3(0.149, 0, 0.5), 0.05, m);  // overlaps the pillar's side by 1 mm
        ASSERT_TRUE(w.step().ok);
        ASSERT_EQ(w.contacts().size(), 1u);
        EXPECT_NEAR(w.contacts().gap[0], -1e-3, 1e-9);
        EXPECT_NEAR((w.contacts().normal[0] - Vec3::UnitX()).norm(), 0.0, 1e-12);
    }
    // A capsule lying along the bottom of a drum rests on both its ends at R − r from the
    // axis (1e-6 relative).
    {
        World w = make_world(1e-3, Vec3(0, 0, -kG), 1e-10, 1000);
        const uint32_t m = add_material(w, 2500.0, 0.5);
        add_cylinder(w, Vec3(0, 0, 0.5), Vec3::UnitX(), 0.5, true, m);
        w.bodies.add_capsule(0, Vec3(0, 0, 0.06), 0.05, 0.1, 2500.0, m);
        for (int k = 0; k < 300; ++k) ASSERT_TRUE(w.step().ok);
        ASSERT_EQ(w.contacts().size(), 2u);
        EXPECT_NEAR(w.bodies.position[0].z(), 0.05, 1e-6 * 0.45);
        EXPECT_LT(w.bodies.velocity[0].norm(), 1e-6);
    }
}

std::vector<double> drum_state(int threads) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, std::size_t(threads));
    World w = make_world(1e-3, Vec3(0, 0, -kG), 1e-6, 40);
    const uint32_t m = add_material(w, 2500.0, 0.5);
    const Vec3 centre(0, 0, 0.06);
    add_cylinder(w, centre, Vec3::UnitX(), 0.06, true, m, rotation_motion(centre, Vec3::UnitX(), 3.0), 0.1);
    add_plane(w, Vec3(-0.05, 0, 0), Vec3::UnitX(), m);
    TriangleSoup cap = flat_grid(6, 0.03, -0.09, -0.09);  // the plane x = 0.05, as a mesh
    for (Vec3& v : cap.vertices) v = Vec3(0.05, v.x(), v.y() + 0.06);
    add_mesh(w, cap, m);
    w.walls.back().motion = sine_motion(Vec3::UnitX(), 5e-4, 30.0);
    fill_lattice(w, Vec3(-0.05, -0.026, 0.008), Vec3(0.0495, 0.026, 0.112), 0.003, m);
    run_steps(w, 45);  // the lowest beads reach the drum after ≈ 40 steps
    std::size_t on_drum = 0;
    for (std::size_t i = 0; i < w.contacts().size(); ++i)
        on_drum += w.contacts().key_a[i] == kWallKeyBit && w.contacts().gap[i] <= 0.0;
    EXPECT_GT(on_drum, 5u) << "the beads should be on the drum by now";
    std::vector<double> s = state_vector(w);
    s.push_back(w.diagnostics().envelope);
    return s;
}

TEST(CylinderWalls, RotatingDrumIsBitIdenticalOnOneAndTwoThreads) {
    const std::vector<double> one = drum_state(1), two = drum_state(2);
    ASSERT_GT(one.size(), 9u * 1100u) << "need more bodies than one parallel chunk";
    ASSERT_EQ(one.size(), two.size());
    EXPECT_EQ(std::memcmp(one.data(), two.data(), one.size() * sizeof(double)), 0);
}

}  // namespace
}  // namespace talus

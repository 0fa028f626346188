// Walls with prescribed motion (core/wall_motion.hpp) against analytic results.
//
//  * Turntable. A plane rotating about its normal ẑ at Ω, a uniform sphere (m, r,
//    J = 2/5 m r²) rolling on it without slipping. Friction F (horizontal) at the contact
//    point −r ẑ: m v̇ = F, J ω̇ = (−r ẑ) × F. No slip: v + ω × (−r ẑ) = Ω ẑ × x; its time
//    derivative, with ((ẑ × F) × ẑ = F for horizontal F), gives
//        v̇ + (m r²/J) v̇ = Ω ẑ × v   ⇒   v̇ = Ω / (1 + m r²/J) ẑ × v = (2/7) Ω ẑ × v.
//    So v turns at the constant rate (2/7) Ω: the centre runs on a circle at angular speed
//    (2/7) Ω. Started rolling on the circle of radius ρ about the axis, v = (2/7) Ω ẑ × x,
//    it stays on that circle. Asserted: orbit angular speed within 0.1 % of (2/7) Ω, radius
//    constant to 1e-4 relative, over one orbit (the time stepping's own error is O(h Ω)).
//  * Vibrated plate, x_p = A sin(2π f t) ẑ, Γ = A (2π f)² / g. With Γ < 1 a resting sphere
//    never leaves: the wall's step velocity is its mean over the step, so the sphere ends
//    every step on the plate; asserted |z − x_p − r| ≤ 1e-9 m at every step. With Γ > 1 the
//    contact force m (g + ẍ_p) vanishes where ẍ_p = −g first, A (2πf)² sin φ = g, i.e.
//    sin φ = 1/Γ; asserted: the first step without normal impulse starts within 2 steps of
//    t = asin(1/Γ) / (2π f).
//  * Tabulated piston that starts late: before `start` nothing moves (bit for bit); after,
//    the pushed sphere (frictionless floor) moves at the piston's speed, ends where the
//    piston stops and glides on at that speed.
//  * A moving mesh floor behaves as the analytic plane with the same motion: translating
//    (sine) and rotating (turntable), trajectories agree to 1e-9.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "tests/support/mesh_builder.hpp"
#include "tests/support/world_builder.hpp"

namespace talus {
namespace {

using namespace talus::testing;

constexpr double kG = 9.81;

/// Sphere rolling on a turntable (plane z = 0 rotating at Ω about ẑ through the origin),
/// started rolling on the circle of radius rho. `mesh`: a flat mesh floor instead of a plane.
World turntable(double omega_table, double rho, double r, double h, bool mesh) {
    World w = make_world(h, Vec3(0, 0, -kG), 1e-12, 200);
    const uint32_t m = add_material(w, 2500.0, 0.5);
    const WallMotion spin = rotation_motion(Vec3::Zero(), Vec3::UnitZ(), omega_table);
    if (mesh) {
        add_mesh(w, flat_grid(8, 0.25, -1.0, -1.0), m);
    } else {
        add_plane(w, Vec3::Zero(), Vec3::UnitZ(), m);
    }
    w.walls.back().motion = spin;
    const Vec3 x0(rho, 0.0, r);
    const Vec3 table_v = omega_table * Vec3::UnitZ().cross(Vec3(rho, 0, 0));
    const Vec3 v0 = 2.0 / 7.0 * table_v;
    // No slip: v + ω × (−r ẑ) = Ω ẑ × x  ⇒  ω = ((Ω ẑ × x − v) × ẑ) / r (horizontal part).
    const Vec3 omega0 = (table_v - v0).cross(Vec3::UnitZ()) / r;
    add_sphere(w, x0, r, m, v0, omega0);
    return w;
}

struct Orbit {
    double rate = 0.0, r_min = 0.0, r_max = 0.0;
};

/// One orbit of the turntable sphere: mean angular speed and the range of its radius.
Orbit one_orbit(double Omega, double rho, double r, double h) {
    const double expected = 2.0 / 7.0 * Omega;
    World w = turntable(Omega, rho, r, h, false);
    const int steps = int(std::lround(2.0 * kPi / expected / h));
    double angle = 0.0, prev = 0.0, r_min = rho, r_max = rho;
    for (int k = 0; k < steps; ++k) {
        const StepStatus s = w.step();
        if (!s.ok) throw std::runtime_error(s.message);
        const Vec3& x = w.bodies.position[0];
        const double a = std::atan2(x.y(), x.x());
        double d = a - prev;
        if (d < -kPi) d += 2 * kPi;
        if (d > kPi) d -= 2 * kPi;
        angle += d;
        prev = a;
        const double rr = std::hypot(x.x(), x.y());
        r_min = std::min(r_min, rr);
        r_max = std::max(r_max, rr);
        EXPECT_NEAR(x.z(), r, 1e-9) << "step " << k;
    }
    return {angle / (steps * h), r_min, r_max};
}

TEST(MovingWalls, BallOnATurntableOrbitsAtTwoSeventhsOfItsSpin) {
    // The step imposes rolling at the start-of-step position, so v turns by an explicit
    // Euler step each step: |v| grows by √(1 + (α h)²), α = 2/7 Ω, and over one orbit
    // (2π/(α h) steps) the radius by π α h (1.8e-3 at h = 1e-3). A first-order drift:
    // asserted ≤ 1.1 π α h, and halving h halves it (ratio within 2 ± 0.1).
    const double Omega = 2.0, rho = 0.3, r = 0.05, h = 1e-3;
    const double expected = 2.0 / 7.0 * Omega;
    const Orbit a = one_orbit(Omega, rho, r, h), b = one_orbit(Omega, rho, r, h / 2);
    for (const Orbit& o : {a, b})
        std::printf("[ turntable ] orbit rate %.9f rad/s (2/7 Ω = %.9f), radius in [%.9f, %.9f] m\n",
                    o.rate, expected, o.r_min, o.r_max);
    EXPECT_NEAR(a.rate / expected, 1.0, 1e-4);
    EXPECT_NEAR(b.rate / expected, 1.0, 1e-4);
    EXPECT_GE(a.r_min / rho, 1.0 - 1e-9);
    EXPECT_LE(a.r_max / rho - 1.0, 1.1 * kPi * expected * h);
    EXPECT_NEAR((a.r_max - rho) / (b.r_max - rho), 2.0, 0.1);
}

TEST(MovingWalls, SphereFollowsAPlateVibratedBelowOneG) {
    const double f = 10.0, Gamma = 0.5, r = 0.02, h = 1e-4;
    const double A = Gamma * kG / std::pow(2 * kPi * f, 2);
    World w = make_world(h, Vec3(0, 0, -kG), 1e-13, 200);
    const uint32_t m = add_material(w, 2500.0, 0.5);
    add_plane(w, Vec3::Zero(), Vec3::UnitZ(), m);
    w.walls.back().motion = sine_motion(Vec3::UnitZ(), A, f);
    add_sphere(w, Vec3(0, 0, r), r, m);
    double worst = 0.0;
    for (int k = 1; k <= int(std::lround(3.0 / f / h)); ++k) {  // three periods
        ASSERT_TRUE(w.step().ok);
        const double plate = A * std::sin(2 * kPi * f * k * h);
        worst = std::max(worst, std::abs(w.bodies.position[0].z() - plate - r));
        ASSERT_GT(w.batch().gamma.size(), 0u) << "step " << k;
        ASSERT_GT(w.batch().gamma[0][0], 0.0) << "step " << k << ": the sphere left the plate";
    }
    std::printf("[ plate Γ = 0.5 ] largest |z − x_p − r| = %.3g m (A = %.4g m)\n", worst, A);
    EXPECT_LE(worst, 1e-9);
}

TEST(MovingWalls, SphereLeavesAPlateVibratedAboveOneGWhereItsDecelerationReachesG) {
    const double f = 10.0, Gamma = 2.0, r = 0.02, h = 1e-4;
    const double A = Gamma * kG / std::pow(2 * kPi * f, 2);
    const double t_lift = std::asin(1.0 / Gamma) / (2 * kPi * f);  // φ = π/6: 8.33 ms
    World w = make_world(h, Vec3(0, 0, -kG), 1e-13, 200);
    const uint32_t m = add_material(w, 2500.0, 0.5);
    add_plane(w, Vec3::Zero(), Vec3::UnitZ(), m);
    w.walls.back().motion = sine_motion(Vec3::UnitZ(), A, f);
    add_sphere(w, Vec3(0, 0, r), r, m);
    double t_found = -1.0;
    for (int k = 0; k < int(std::lround(0.5 / f / h)) && t_found < 0.0; ++k) {
        const double t0 = w.time;
        ASSERT_TRUE(w.step().ok);
        const bool pushed = w.batch().gamma.size() > 0 && w.batch().gamma[0][0] > 0.0;
        if (!pushed) t_found = t0;  // the first step that needs no push from the plate
    }
    std::printf("[ plate Γ = 2 ] lift-off at t = %.6f s, predicted %.6f s (%.2f steps)\n", t_found,
                t_lift, (t_found - t_lift) / h);
    ASSERT_GT(t_found, 0.0);
    EXPECT_NEAR(t_found, t_lift, 2.0 * h);
    // And it flies: a few steps later the gap is open.
    run_steps(w, 50);
    EXPECT_GT(w.bodies.position[0].z() - r - A * std::sin(2 * kPi * f * w.time), 1e-6);
}

TEST(MovingWalls, TabulatedPistonStartsLateThenPushesASphereAtItsSpeed) {
    // Piston: the plane x = 0 (normal +x) moves by 0.25 m in 0.5 s (0.5 m/s) from t = 0.2 s,
    // then stops. The sphere rests against it on a frictionless floor.
    const double r = 0.05, h = 1e-3, start = 0.2, speed = 0.5;
    World w = make_world(h, Vec3(0, 0, -kG), 1e-12, 200);
    const uint32_t m = add_material(w, 2500.0, 0.0);
    add_plane(w, Vec3::Zero(), Vec3::UnitZ(), m);
    add_plane(w, Vec3::Zero(), Vec3::UnitX(), m);
    w.walls.back().motion = table_motion({0.5}, {Vec3(0.25, 0, 0)}, start);
    const Vec3 x0(r, 0, r);
    add_sphere(w, x0, r, m);
    for (int k = 1; k <= 1000; ++k) {
        ASSERT_TRUE(w.step().ok);
        const double t = k * h;
        const Vec3& x = w.bodies.position[0];
        const Vec3& v = w.bodies.velocity[0];
        if (t <= start + 1e-12) {  // (the floor's impulse balances gravity to round-off in z)
            ASSERT_EQ(x.x(), x0.x()) << "t = " << t << ": nothing moves before the start";
            ASSERT_EQ(v.x(), 0.0) << "t = " << t;
        } else if (t <= start + 0.5 + 1e-12) {
            ASSERT_NEAR(v.x(), speed, 1e-9) << "t = " << t;
            ASSERT_NEAR(x.x(), r + speed * (t - start), 1e-9) << "t = " << t;
        } else {
            ASSERT_NEAR(v.x(), speed, 1e-9) << "t = " << t << ": glides on at the piston's speed";
        }
        ASSERT_NEAR(x.z(), r, 1e-9);
    }
    std::printf("[ piston ] x(1 s) = %.9f m (expected %.9f m)\n", w.bodies.position[0].x(),
                r + speed * (1.0 - start));
    EXPECT_NEAR(w.bodies.position[0].x(), r + speed * (1.0 - start), 1e-9);
}

TEST(MovingWalls, MovingMeshFloorMatchesTheMovingPlane) {
    // Turntable: the same rolling sphere on a rotating mesh and on the rotating plane.
    {
        World plane = turntable(2.0, 0.3, 0.05, 1e-3, false);
        World mesh = turntable(2.0, 0.3, 0.05, 1e-3, true);
        double worst = 0.0;
        for (int k = 0; k < 2000; ++k) {
            ASSERT_TRUE(plane.step().ok);
            const StepStatus s = mesh.step();
            ASSERT_TRUE(s.ok) << s.message;
            ASSERT_EQ(mesh.contacts().size(), plane.contacts().size()) << "step " << k;
            worst = std::max({worst, (mesh.bodies.position[0] - plane.bodies.position[0]).norm(),
                              (mesh.bodies.velocity[0] - plane.bodies.velocity[0]).norm()});
        }
        std::printf("[ mesh turntable ] largest difference from the plane %.3g\n", worst);
        EXPECT_LE(worst, 1e-9);
    }
    // Vibrated (Γ = 2, the sphere hops): a translating mesh and plane.
    {
        auto run = [](bool use_mesh) {
            World w = make_world(1e-4, Vec3(0, 0, -kG), 1e-13, 200);
            const uint32_t m = add_material(w, 2500.0, 0.5);
            if (use_mesh)
                add_mesh(w, flat_grid(4, 0.1, -0.2, -0.2), m);
            else
                add_plane(w, Vec3::Zero(), Vec3::UnitZ(), m);
            w.walls.back().motion = sine_motion(Vec3(0.1, 0, 1), 2 * kG / std::pow(2 * kPi * 10, 2), 10);
            add_sphere(w, Vec3(0.01, 0.02, 0.02), 0.02, m);
            std::vector<Vec3> xs;
            for (int k = 0; k < 2000; ++k) {
                const StepStatus s = w.step();
                if (!s.ok) throw std::runtime_error(s.message);
                xs.push_back(w.bodies.position[0]);
            }
            return xs;
        };
        const auto a = run(false), b = run(true);
        double worst = 0.0;
        for (std::size_t k = 0; k < a.size(); ++k) worst = std::max(worst, (a[k] - b[k]).norm());
        std::printf("[ mesh plate ] largest difference from the plane %.3g m\n", worst);
        EXPECT_LE(worst, 1e-9);
    }
}

}  // namespace
}  // namespace talus

// BodyStore's kinematic column (core/body_store.hpp) through every operation that
// adds, reorders, copies or removes bodies, and place_kinematic (core/kinematic.hpp)
// against the motion by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "core/kinematic.hpp"

namespace talus {
namespace {

WallMotion spin(double omega) {
    WallMotion m;
    m.kind = MotionKind::Rotation;
    m.centre = Vec3(1, 0, 0);
    m.axis = Vec3::UnitZ();
    m.omega = omega;
    return m;
}

/// Four spheres, ids 10…13; 11 and 13 kinematic with spins 1 and 3 rad/s.
BodyStore four() {
    BodyStore b;
    for (int k = 0; k < 4; ++k) b.add_sphere(10 + k, Vec3(k, 0, 0), 0.1, 1000.0, 0);
    b.set_motion(1, spin(1.0));
    b.set_motion(3, spin(3.0));
    return b;
}

double omega_of(const BodyStore& b, std::size_t i) {
    return b.kinematic(i) ? b.motions[std::size_t(b.motion[i])].motion.omega : 0.0;
}

TEST(KinematicStore, MotionTravelsWithItsBody) {
    BodyStore b = four();
    EXPECT_EQ(b.inv_mass[1], 0.0);
    EXPECT_EQ(b.inv_inertia[3], Vec3::Zero());
    EXPECT_GT(b.inv_mass[0], 0.0);
    b.permute({3, 0, 1, 2});  // new order: ids 13, 10, 11, 12
    EXPECT_EQ(b.id[0], 13u);
    EXPECT_EQ(omega_of(b, 0), 3.0);
    EXPECT_FALSE(b.kinematic(1));
    EXPECT_EQ(omega_of(b, 2), 1.0);
    EXPECT_EQ(b.motions[std::size_t(b.motion[0])].x0, Vec3(3, 0, 0));
    b.erase_marked({1, 0, 0, 1});  // remove ids 13 and 12
    ASSERT_EQ(b.size(), 2u);
    EXPECT_EQ(b.motion.size(), 2u);
    EXPECT_EQ(b.id[1], 11u);
    EXPECT_EQ(omega_of(b, 1), 1.0);
    EXPECT_FALSE(b.kinematic(0));
    BodyStore c;
    c.add_sphere(99, Vec3::Zero(), 0.1, 1000.0, 0);
    c.append_from(b, 1);
    ASSERT_EQ(c.motion.size(), 2u);
    EXPECT_EQ(omega_of(c, 1), 1.0);
    EXPECT_EQ(c.motions.size(), 1u);
    EXPECT_EQ(c.motions[0].x0, Vec3(1, 0, 0));
    c.clear();
    EXPECT_TRUE(c.motion.empty() && c.motions.empty());
}

// Body 3 starts at (3, 0, 0), 2 m from the axis through (1, 0, 0): at t = 0.5 s it has
// turned by 1.5 rad, and over [t, t + h] its centre moves at ω × (x − c), ω̄ = q⁻¹ ω.
TEST(KinematicStore, PlaceKinematicGivesThePoseAndStepVelocity) {
    BodyStore b = four();
    b.velocity[0] = Vec3(5, 0, 0);
    place_kinematic(b, 0.5, 0.5, 1e-3, true);
    const Vec3 x(1 + 2 * std::cos(1.5), 2 * std::sin(1.5), 0);
    EXPECT_LT((b.position[3] - x).norm(), 1e-15);
    EXPECT_NEAR(b.orientation[3].angularDistance(Quat(Eigen::AngleAxisd(1.5, Vec3::UnitZ()))), 0.0, 1e-15);
    EXPECT_LT((b.velocity[3] - Vec3(0, 0, 3).cross(x - Vec3(1, 0, 0))).norm(), 1e-14);
    EXPECT_LT((b.orientation[3] * b.angular_velocity[3] - Vec3(0, 0, 3)).norm(), 1e-15);
    EXPECT_EQ(b.velocity[0], Vec3(5, 0, 0));  // dynamic bodies untouched
    EXPECT_EQ(b.position[0], Vec3(0, 0, 0));
}

// A sine motion (a vibrating intruder), d = A sin(2π f (t − start)) ê, started at 0.1 s: at
// rest before, then at x0 + d(t) with the secant velocity (d(t + h) − d(t)) / h.
TEST(KinematicStore, SineMotionFromItsStart) {
    BodyStore b;
    b.add_capsule(5, Vec3(0, 0, 1), 0.1, 0.2, 1000.0, 0);
    WallMotion m;
    m.kind = MotionKind::Sine;
    m.direction = Vec3::UnitZ();
    m.amplitude = 0.01;
    m.frequency = 10.0;
    m.start = 0.1;
    b.set_motion(0, m);
    const double h = 1e-3, pi = 3.14159265358979323846;
    place_kinematic(b, 0.05, 0.05, h, true);
    EXPECT_EQ(b.position[0], Vec3(0, 0, 1));
    EXPECT_EQ(b.velocity[0], Vec3::Zero());
    const double t = 0.1125;
    place_kinematic(b, t, t, h, true);
    const auto d = [&](double s) { return 0.01 * std::sin(2 * pi * 10 * (s - 0.1)); };
    EXPECT_NEAR(b.position[0].z(), 1 + d(t), 1e-15);
    EXPECT_NEAR(b.velocity[0].z(), (d(t + h) - d(t)) / h, 1e-12);
    EXPECT_EQ(b.angular_velocity[0], Vec3::Zero());
    EXPECT_NEAR(b.orientation[0].angularDistance(Quat::Identity()), 0.0, 1e-15);
}

}  // namespace
}  // namespace talus

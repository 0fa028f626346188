// Bilateral rows (solvers/bilateral.cpp): each row's Jacobian must be the time derivative
// of its constraint, G_jᵀ ν = d g_j / dt, checked by moving the bodies along ν for a short
// time ε (central difference, error O(ε²)) from random poses, for every joint type, with
// bodies on both sides and with the world on either side. Also: η_j = 1/(G_jᵀ M⁻¹ G_j)
// and b_j = γ_s g_j / h.
#include <gtest/gtest.h>

#include <random>

#include "solvers/bilateral.hpp"

namespace talus {
namespace {

struct Rig {
    BodyStore bodies;
    std::vector<Joint> joints;
    std::vector<int32_t> ia, ib;
};

/// Bodies 0 and 1 (a sphere and an ellipsoid: anisotropic) at random poses and velocities,
/// and one joint of `type` between (a, b) (−1 = the world) at a random anchor and axis.
Rig make_setup(JointType type, long a, long b, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    auto vec = [&] { return Vec3(u(rng), u(rng), u(rng)); };
    Rig s;
    const Quat q0 = Quat(Eigen::AngleAxisd(2.0, vec().normalized()));
    const Quat q1 = Quat(Eigen::AngleAxisd(1.0, vec().normalized()));
    s.bodies.add_sphere(10, vec(), 0.1, 1000.0, 0, vec(), vec(), q0);
    s.bodies.add_ellipsoid(20, vec(), Vec3(0.3, 0.2, 0.1), 1000.0, 0, vec(), vec(), q1);
    s.joints.push_back(make_joint(type, s.bodies, a, b, vec(), vec().normalized(), vec()));
    EXPECT_EQ(map_joint_bodies(s.joints, s.bodies, s.ia, s.ib), "");
    return s;
}

/// The rows' values g_j with the bodies moved by ε along their velocities.
std::vector<double> values_after(const Rig& s, double eps) {
    BodyStore moved = s.bodies;
    for (std::size_t i = 0; i < moved.size(); ++i) {
        moved.position[i] += eps * moved.velocity[i];
        // exact rotation by ε ω̄ (body frame); negative ε rotates back
        const Vec3 w = moved.angular_velocity[i];
        moved.orientation[i] = moved.orientation[i] * Quat(Eigen::AngleAxisd(eps * w.norm(), w.normalized()));
    }
    BilateralBatch rows;
    build_bilateral_rows(s.joints, s.ia, s.ib, moved, 0.2, 1e-3, false, rows);
    return rows.value;
}

void check_jacobian(JointType type, long a, long b) {
    for (uint32_t seed = 1; seed <= 5; ++seed) {
        const Rig s = make_setup(type, a, b, seed);
        BilateralBatch rows;
        build_bilateral_rows(s.joints, s.ia, s.ib, s.bodies, 0.2, 1e-3, false, rows);
        ASSERT_EQ(int(rows.size()), s.joints[0].rows());
        const SolverBodies sb(s.bodies);
        const double eps = 1e-5;
        const std::vector<double> plus = values_after(s, eps), minus = values_after(s, -eps);
        for (std::size_t j = 0; j < rows.size(); ++j) {
            ASSERT_TRUE(rows.position[j]);
            const double dg = (plus[j] - minus[j]) / (2.0 * eps);
            const double g_nu = row_velocity(rows, sb, j) - rows.rhs[j];
            EXPECT_NEAR(g_nu, dg, 1e-7) << joint_name(type) << " row " << j << " seed " << seed;
            EXPECT_DOUBLE_EQ(rows.rhs[j], 0.2 / 1e-3 * rows.value[j]);
            // η = 1/(Gᵀ M⁻¹ G), with M⁻¹ from the solver bodies
            SolverBodies probe = sb;
            for (auto& body : probe.body) body.v = body.w = Vec3::Zero();
            apply_row(rows, probe, j, 1.0);
            const double w_jj = row_velocity(rows, probe, j) - rows.rhs[j];
            EXPECT_NEAR(rows.eta[j] * w_jj, 1.0, 1e-12);
        }
    }
}

// make_joint builds each joint at the bodies' current (random) poses, so g = 0 there; the
// bodies then move along random velocities. Point, distance, axis and slide rows are exact
// derivatives at any pose, orientation rows (2 vec(e)) exactly at the rest pose.
TEST(BilateralRows, PointAndDistanceRowsAreTheDerivativesOfTheirConstraints) {
    for (auto [a, b] : {std::pair<long, long>{0, 1}, {1, -1}, {-1, 0}}) {
        check_jacobian(JointType::Spherical, a, b);
        check_jacobian(JointType::Distance, a, b);
    }
}

TEST(BilateralRows, AxisOrientationAndSlideRowsAreDerivativesAtTheJointsRestPose) {
    for (auto [a, b] : {std::pair<long, long>{0, 1}, {1, -1}, {-1, 0}}) {
        check_jacobian(JointType::Revolute, a, b);
        check_jacobian(JointType::Prismatic, a, b);
        check_jacobian(JointType::Fixed, a, b);
    }
}

TEST(BilateralRows, MotorRowAsksForTheRelativeSpinAboutTheAxis) {
    Rig s = make_setup(JointType::Revolute, 0, 1, 3);
    s.joints[0].motor = true;
    s.joints[0].motor_speed = 2.5;
    BilateralBatch rows;
    build_bilateral_rows(s.joints, s.ia, s.ib, s.bodies, 0.2, 1e-3, false, rows);
    ASSERT_EQ(rows.size(), 6u);
    const std::size_t m = 5;
    EXPECT_FALSE(rows.position[m]);
    EXPECT_EQ(rows.rhs[m], -2.5);
    // b + Gᵀν = 0 ⇔ (ω_A − ω_B)·axis = 2.5
    const SolverBodies sb(s.bodies);
    const Vec3 axis = s.bodies.orientation[0] * s.joints[0].axis_a;
    const double spin = (sb.body[0].w - sb.body[1].w).dot(axis);
    EXPECT_NEAR(row_velocity(rows, sb, m), spin - 2.5, 1e-14);
}

TEST(BilateralRows, BodiesAreFoundAgainAfterRenumbering) {
    Rig s = make_setup(JointType::Spherical, 0, 1, 4);
    s.bodies.permute({1, 0});
    EXPECT_EQ(map_joint_bodies(s.joints, s.bodies, s.ia, s.ib), "");
    EXPECT_EQ(s.ia[0], 1);
    EXPECT_EQ(s.ib[0], 0);
    s.joints[0].body_b = 99;
    EXPECT_NE(map_joint_bodies(s.joints, s.bodies, s.ia, s.ib).find("body 99"), std::string::npos);
}

}  // namespace
}  // namespace talus

// Exact Coulomb friction (issue 8): the single-contact solve against its own definition on
// random contacts, and on bodies a sphere sliding on a plane: no lift-off and a
// deceleration of μ g under "coulomb" (every solver), the documented lift-off under "ccp".
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <random>

#include "solvers/coulomb_local.hpp"
#include "solvers/contact_ops.hpp"
#include "solvers/solver.hpp"
#include "tests/support/world_builder.hpp"

namespace talus {
namespace {

using namespace talus::testing;

/// <build>/validation/NAME.csv, the folder created.
std::filesystem::path validation_csv(const std::string& name) {
    const std::filesystem::path dir = std::filesystem::path(TALUS_BINARY_DIR) / "validation";
    std::filesystem::create_directories(dir);
    return dir / (name + ".csv");
}

// 20000 random contacts: W = AAᵀ + 0.05 I (symmetric) or that plus a skew part (FCLIB's
// W are not always symmetric; still positive definite), q uniform, μ ∈ {0, 0.1, 0.5, 1, 3}.
// The answer must zero the natural map to rounding (‖F‖ ≤ 1e-9 of the problem's scale),
// and every exact case must occur: open, sticking, sliding.
TEST(CoulombLocal, RandomContactsSolvedToRounding) {
    std::mt19937_64 rng(8);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    const double mus[] = {0.0, 0.1, 0.5, 1.0, 3.0};
    int counts[4] = {0, 0, 0, 0};
    for (int k = 0; k < 20000; ++k) {
        Mat3 A;
        for (int i = 0; i < 9; ++i) A(i / 3, i % 3) = u(rng);
        Mat3 W = A * A.transpose() + 0.05 * Mat3::Identity();
        if (k % 2 == 1) {
            const Vec3 s(u(rng), u(rng), u(rng));
            Mat3 skew;
            skew << 0, -s[2], s[1], s[2], 0, -s[0], -s[1], s[0], 0;
            W += 0.02 * skew;
        }
        const Vec3 q(u(rng), u(rng), u(rng));
        const double mu = mus[k % 5];
        const CoulombContact c = solve_coulomb_contact(W, q, mu, Vec3::Zero());
        ++counts[int(c.state)];
        const Vec3 v = W * c.r + q;
        const double scale = q.norm() + W.norm() * c.r.norm();
        EXPECT_LE(coulomb_natural_map(c.r, v, mu).norm(), 1e-9 * scale)
            << "k " << k << " state " << int(c.state) << " r " << c.r.transpose() << " u " << v.transpose();
        EXPECT_LE(std::hypot(c.r[1], c.r[2]), mu * c.r[0] * (1 + 1e-12) + 1e-15) << "outside K";
        if (c.state == CoulombContact::State::Sliding && mu > 0.0) { EXPECT_LE(std::abs(v[0]), 1e-9 * scale); }
    }
    EXPECT_GT(counts[int(CoulombContact::State::Open)], 1000);
    EXPECT_GT(counts[int(CoulombContact::State::Sticking)], 1000);
    EXPECT_GT(counts[int(CoulombContact::State::Sliding)], 1000);
    EXPECT_EQ(counts[int(CoulombContact::State::Approximate)], 0);
}

// A sphere (r = 5 cm) sliding at 2 m/s on a plane, μ = 0.3, under friction = "coulomb":
// v(t) = v0 − μ g t, ω r = 5/2 μ g t and zero normal velocity while it slides, then it
// rolls at 5/7 v0. Tolerances: 1e-9 m/s for nsgs (exact local solves) and bgs (whose
// Coulomb step is the sphere's exact local solve); 1e-6 m/s for the fixed point over pgs,
// pj and apgd at tolerance 1e-9 (a solve stops at the tolerance).
// Under "ccp" the same sphere lifts off at about μ v0 in its first step (docs/design.md §4).
void sliding_sphere(SolverType type, double tol_v) {
    const double r = 0.05, g = 9.81, h = 1e-3, mu = 0.3, v0 = 2.0;
    const bool exact = type == SolverType::NSGS || type == SolverType::BGS;
    World w = make_world(h, Vec3(0, 0, -g), exact ? 1e-12 : 1e-9, 5000);
    w.solver.type = type;
    w.solver.friction = FrictionLaw::Coulomb;
    const uint32_t m = add_material(w, 2500.0, mu);
    add_plane(w, Vec3::Zero(), Vec3::UnitZ(), m);
    add_sphere(w, Vec3(0, 0, r), r, m, Vec3(v0, 0, 0));
    // the trajectory for docs/validation (tools/validation/plot_coulomb.py)
    std::ofstream csv(validation_csv(std::string("coulomb_sliding_sphere_") + solver_name(type)));
    csv << "t,vx,vz,omega_r\n";
    auto record = [&] {
        csv << w.time << ',' << w.bodies.velocity[0].x() << ',' << w.bodies.velocity[0].z() << ','
            << w.bodies.angular_velocity[0].y() * r << '\n';
    };
    const double t_roll = 2.0 * v0 / (7.0 * mu * g);  // ≈ 0.194 s
    int k = 1;
    for (; k * h < t_roll - 2 * h; ++k) {
        ASSERT_TRUE(w.step().ok);
        record();
        ASSERT_TRUE(w.diagnostics().converged) << "step " << k;
        const double t = k * h;
        EXPECT_NEAR(w.bodies.velocity[0].x(), v0 - mu * g * t, tol_v) << "step " << k;
        EXPECT_LE(std::abs(w.bodies.velocity[0].z()), tol_v) << "step " << k << ": lift-off";
        EXPECT_NEAR(w.bodies.angular_velocity[0].y() * r, 2.5 * mu * g * t, tol_v) << "step " << k;
    }
    for (; k * h < 0.3; ++k) {
        ASSERT_TRUE(w.step().ok);
        record();
    }
    EXPECT_NEAR(w.bodies.velocity[0].x(), 5.0 / 7.0 * v0, tol_v);
    EXPECT_NEAR(w.bodies.angular_velocity[0].y() * r, 5.0 / 7.0 * v0, tol_v);
    EXPECT_NEAR(w.bodies.position[0].z(), r, 1e-6);
}

TEST(Coulomb, SlidingSphereNsgs) { sliding_sphere(SolverType::NSGS, 1e-9); }
TEST(Coulomb, SlidingSphereBgs) { sliding_sphere(SolverType::BGS, 1e-9); }
TEST(Coulomb, SlidingSphereFixedPointPgs) { sliding_sphere(SolverType::PGS, 1e-6); }
TEST(Coulomb, SlidingSphereFixedPointPj) { sliding_sphere(SolverType::PJ, 1e-6); }
TEST(Coulomb, SlidingSphereFixedPointApgd) { sliding_sphere(SolverType::APGD, 1e-6); }

TEST(Coulomb, SlidingSphereLiftsOffUnderTheCcp) {
    const double r = 0.05, g = 9.81, mu = 0.3, v0 = 2.0;
    for (SolverType type : {SolverType::PGS, SolverType::PJ, SolverType::APGD}) {
        World w = make_world(1e-3, Vec3(0, 0, -g), 1e-9, 5000);
        w.solver.type = type;
        const uint32_t m = add_material(w, 2500.0, mu);
        add_plane(w, Vec3::Zero(), Vec3::UnitZ(), m);
        add_sphere(w, Vec3(0, 0, r), r, m, Vec3(v0, 0, 0));
        ASSERT_TRUE(w.step().ok);
        EXPECT_GT(w.bodies.velocity[0].z(), 0.5 * mu * v0) << solver_name(type) << ": CCP lift-off expected";
        if (type != SolverType::PGS) continue;
        std::ofstream csv(validation_csv("coulomb_sliding_sphere_ccp_pgs"));  // for the plot
        csv << "t,vx,vz,omega_r\n";
        for (int k = 1; k * 1e-3 < 0.3; ++k) {
            if (k > 1) { ASSERT_TRUE(w.step().ok); }
            csv << w.time << ',' << w.bodies.velocity[0].x() << ',' << w.bodies.velocity[0].z() << ','
                << w.bodies.angular_velocity[0].y() * r << '\n';
        }
    }
}

// Many contacts: 20 steps of the settled pile under "coulomb" converge to the engine's
// default tolerance (1e-4 m/s) within 5000 iterations with nsgs, bgs's own Coulomb step and
// the fixed point over pgs and apgd (measured 2026-12-01, printed by the test: at most 1,856,
// 1,180, 2,679 and 383 a step; the figures of when it was written, 921 / 2,227 / 705 for
// nsgs / pgs / apgd, had gone stale by then). The Jacobi fixed point
// needs up to 20000 here and is left to the sliding-sphere test. (Thread-independence:
// Determinism.ExactCoulombBitIdenticalOnOneTwoAndThreeThreads.)
TEST(Coulomb, SettledPileConvergesWithEverySolver) {
    const World base = settled_pile();
    for (SolverType type : {SolverType::NSGS, SolverType::BGS, SolverType::PGS, SolverType::APGD}) {
        World w = base;
        w.solver.type = type;
        w.solver.friction = FrictionLaw::Coulomb;
        w.solver.tolerance = 1e-4;
        w.solver.max_iterations = 5000;
        int most = 0;
        for (int k = 0; k < 20; ++k) {
            ASSERT_TRUE(w.step().ok);
            EXPECT_TRUE(w.diagnostics().converged) << solver_name(type) << " step " << k;
            EXPECT_LE(w.diagnostics().residual, 1e-4) << solver_name(type) << " step " << k;
            most = std::max(most, int(w.diagnostics().iterations));
        }
        std::printf("[ settled pile, %s ] at most %d iterations a step\n", solver_name(type), most);
    }
}

}  // namespace
}  // namespace talus

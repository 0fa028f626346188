// The torque block of rolling/spinning resistance (solvers/rolling.hpp): its projection
// against a brute-force nearest point, and a PGS solve of one contact against the exact
// single-step answer.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>

#include "solvers/contact_ops.hpp"
#include "solvers/rolling.hpp"
#include "tests/support/world_builder.hpp"

namespace talus {
namespace {

using namespace talus::testing;

// Brute force: the set is the product [−μ_s γ_n, μ_s γ_n] × disc(μ_r γ_n) and the squared
// distance a sum over the two factors, so the nearest point is the nearest point of each:
// scan the interval finely, and the disc on a fine polar grid.
Vec3 brute_force(const Vec3& g, double gn, double mu_r, double mu_s) {
    if (gn <= 0.0) return Vec3::Zero();
    const double smax = mu_s * gn, rmax = mu_r * gn;
    double best_s = 0.0, best_ds = 1e300;
    for (int i = 0; i <= 4000; ++i) {
        const double s = -smax + 2.0 * smax * i / 4000;
        if ((g[0] - s) * (g[0] - s) < best_ds) { best_ds = (g[0] - s) * (g[0] - s); best_s = s; }
    }
    double bu = 0.0, bw = 0.0, best_dr = 1e300;
    for (int j = 0; j <= 200; ++j) {
        const double rho = rmax * j / 200;
        for (int k = 0; k < 720; ++k) {
            const double phi = 2.0 * M_PI * k / 720;
            const double u = rho * std::cos(phi), w = rho * std::sin(phi);
            const double d = (g[1] - u) * (g[1] - u) + (g[2] - w) * (g[2] - w);
            if (d < best_dr) { best_dr = d; bu = u; bw = w; }
        }
    }
    return Vec3(best_s, bu, bw);
}

TEST(RollingProjection, MatchesBruteForceAndLiesInTheSet) {
    std::mt19937_64 rng(11);
    std::uniform_real_distribution<double> u(-2.0, 2.0);
    for (const auto& [gn, mu_r, mu_s] : {std::tuple{1.0, 0.5, 0.2}, std::tuple{2.0, 0.0, 0.3},
                                         std::tuple{0.5, 1.0, 0.0}, std::tuple{-1.0, 0.5, 0.5}}) {
        for (int k = 0; k < 40; ++k) {
            const Vec3 g(u(rng), u(rng), u(rng));
            const Vec3 p = project_rolling(g, gn, mu_r, mu_s);
            const Vec3 q = brute_force(g, gn, mu_r, mu_s);
            // grid resolution: μ γ_n × (1/200 radially, π/720 around) ≤ 0.01 here
            EXPECT_LE((g - p).norm(), (g - q).norm() + 1e-12) << g.transpose();
            EXPECT_NEAR((p - q).norm(), 0.0, 0.012) << g.transpose();
            EXPECT_LE(std::abs(p[0]), std::max(0.0, mu_s * gn) + 1e-15);
            EXPECT_LE(std::hypot(p[1], p[2]), std::max(0.0, mu_r * gn) * (1 + 1e-15));
        }
    }
}

TEST(RollingProjection, ZeroCoefficientsOrNoNormalImpulseGiveZero) {
    EXPECT_EQ(project_rolling(Vec3(1, 2, 3), 1.0, 0.0, 0.0), Vec3::Zero());
    EXPECT_EQ(project_rolling(Vec3(1, 2, 3), 0.0, 1.0, 1.0), Vec3::Zero());
    EXPECT_EQ(project_rolling(Vec3(0.1, 0.1, 0.1), 1.0, 1.0, 1.0), Vec3(0.1, 0.1, 0.1));
}

TEST(RollingBlock, OneStepOfARollingSphereMeetsTheTorqueBoundExactly) {
    // A sphere resting on a plane and rolling: in one step of h the contact carries
    // γ_n = m g h, the rolling torque impulse μ_r γ_n (opposing ω), the friction what keeps
    // it rolling; the solve must reach its tolerance with the torque block in the residual.
    const double r = 0.05, g = 9.81, h = 1e-3, mu_r = 0.002, v0 = 0.5;
    World w = make_world(h, Vec3(0, 0, -g), 1e-12, 1000);
    Material mat{"m", 2500.0, 0.5};
    mat.rolling_friction = mu_r;
    const uint32_t m = w.materials.add(mat);
    add_plane(w, Vec3::Zero(), Vec3::UnitZ(), m);
    add_sphere(w, Vec3(0, 0, r), r, m, Vec3(v0, 0, 0), Vec3(0, v0 / r, 0));
    ASSERT_TRUE(w.step().ok);
    const AssembledBatch& b = w.batch();
    ASSERT_EQ(b.size(), 1u);
    ASSERT_EQ(b.rolling.size(), 1u);
    const double mass = w.bodies.mass(0);
    EXPECT_NEAR(b.gamma[0][0], mass * g * h, 1e-9 * mass * g * h);
    const Vec3 tau = contact_frame(b, 0).to_world(b.rolling.gamma[0]);
    // Torque about −y (opposing ω_y > 0) of size μ_r γ_n; no spin part.
    EXPECT_NEAR(tau.y(), -mu_r * b.gamma[0][0], 1e-9 * mu_r * b.gamma[0][0]);
    EXPECT_NEAR(tau.x(), 0.0, 1e-15);
    EXPECT_NEAR(tau.z(), 0.0, 1e-15);
    EXPECT_LE(w.diagnostics().residual, 1e-12);
    // v₁ = v₀ − (5/7) μ_r g h / r exactly (to the tolerance)
    EXPECT_NEAR(w.bodies.velocity[0].x(), v0 - 5.0 / 7.0 * mu_r * g * h / r, 1e-11);
}

TEST(RollingBlock, WarmStartCarriesTheTorqueImpulseAcrossSteps) {
    // A sphere decelerating under rolling resistance needs the same torque impulse every
    // step: warm-started, the solve starts at the answer and stops after one sweep; cold,
    // contact and torque rows must find each other again by Gauss–Seidel.
    const double r = 0.05, g = 9.81, h = 1e-3, v0 = 0.5;
    auto iterations_after = [&](bool warm) {
        World w = make_world(h, Vec3(0, 0, -g), 1e-10, 500);
        w.solver.warm_start = warm;
        Material mat{"m", 2500.0, 0.5};
        mat.rolling_friction = 0.002;
        mat.spinning_friction = 0.001;
        const uint32_t m = w.materials.add(mat);
        add_plane(w, Vec3::Zero(), Vec3::UnitZ(), m);
        add_sphere(w, Vec3(0, 0, r), r, m, Vec3(v0, 0, 0), Vec3(0, v0 / r, 3.0));
        for (int k = 0; k < 100; ++k)
            if (!w.step().ok) return -1;
        EXPECT_TRUE(w.diagnostics().converged);
        return int(w.diagnostics().iterations);
    };
    const int warm = iterations_after(true), cold = iterations_after(false);
    std::printf("[ rolling warm start ] iterations at step 100: warm %d, cold %d\n", warm, cold);
    EXPECT_LE(warm, 2);
    EXPECT_GE(cold, 5 * warm);
}

// The rolling rows' residual term is in m/s, like the contacts': the relative rotation left
// unresolved times the pair's reduced radius ℓ = r_a r_b / (r_a + r_b) (against a wall, the
// grain's radius). A grain resting on a plane, and one resting on another, turned by Δω
// about a horizontal axis (the upper one of the two), well inside the torque bound: the
// term is Δω ℓ. (In rad/s it
// was Δω, so a tolerance in m/s held a 1.5 mm grain's rolling rows 1,300 times tighter
// than its contact, and a heap with rolling resistance ran most steps to the cap.)
TEST(RollingBlock, ResidualTermIsTheSpinTimesTheReducedRadius) {
    const double g = 9.81, h = 1e-3, dw = 0.3;
    for (const auto& [r_low, r_top] : {std::pair{0.01, 0.0}, std::pair{0.01, 0.004}}) {
        World w = make_world(h, Vec3(0, 0, -g), 1e-12, 1000);
        Material mat{"m", 2500.0, 0.5};
        mat.rolling_friction = 0.5;  // a bound far above η Δω: the projection is the identity
        const uint32_t m = w.materials.add(mat);
        add_plane(w, Vec3::Zero(), Vec3::UnitZ(), m);
        add_sphere(w, Vec3(0, 0, r_low), r_low, m, Vec3::Zero());
        if (r_top > 0.0) add_sphere(w, Vec3(0, 0, 2 * r_low + r_top), r_top, m, Vec3::Zero());
        ASSERT_TRUE(w.step().ok);
        const AssembledBatch& b = w.batch();
        // the upper grain by its height: the step's renumbering may put it first
        const std::size_t top = r_top > 0.0 && w.bodies.position[1].z() > w.bodies.position[0].z() ? 1 : 0;
        ASSERT_EQ(b.rolling.size(), r_top > 0.0 ? 2u : 1u);
        SolverBodies sb(w.bodies);
        const double before = rolling_residual(b, sb);
        sb.body[top].w += Vec3(dw, 0, 0);
        const double ell = r_top > 0.0 ? r_low * r_top / (r_low + r_top) : r_low;
        EXPECT_LE(before, 1e-9);
        EXPECT_NEAR(rolling_residual(b, sb), dw * ell, 1e-9 * dw * ell) << "r_top " << r_top;
    }
}

}  // namespace
}  // namespace talus

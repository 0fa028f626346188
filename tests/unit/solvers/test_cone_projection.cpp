// Π_K against a brute-force minimiser of the distance to the friction cone (docs/design.md §5).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "solvers/cone_projection.hpp"

namespace talus {
namespace {

// Brute force: the cone is the union of rays t (1, μ cos φ, μ sin φ) ·s, s ≥ 0 plus the
// axis; the nearest point on a ray has s = max(0, ⟨g, r⟩ / ⟨r, r⟩). Scan φ finely, then
// refine. The distance is that of the inner product ⟨x, y⟩ = x_n y_n + q x_tᵀ y_t (q = 1:
// Euclidean; bgs's block metric otherwise).
Vec3 brute_force_projection(const Vec3& g, double mu, double q = 1.0) {
    auto dot = [q](const Vec3& x, const Vec3& y) { return x[0] * y[0] + q * (x[1] * y[1] + x[2] * y[2]); };
    Vec3 best = Vec3::Zero();
    double best_d = dot(g, g);
    auto try_ray = [&](const Vec3& r) {
        const double s = std::max(0.0, dot(g, r) / dot(r, r));
        const double d = dot(g - s * r, g - s * r);
        if (d < best_d) { best_d = d; best = s * r; }
    };
    // Interior points: if g is inside the cone it is its own projection.
    if (std::hypot(g[1], g[2]) <= mu * g[0]) return g;
    double lo = 0.0, hi = 2.0 * M_PI;
    double phi_best = 0.0;
    for (int level = 0; level < 6; ++level) {
        const int steps = 720;
        const double dphi = (hi - lo) / steps;
        double local_best = 1e300;
        for (int k = 0; k <= steps; ++k) {
            const double phi = lo + k * dphi;
            const Vec3 r(1.0, mu * std::cos(phi), mu * std::sin(phi));
            const double s = std::max(0.0, dot(g, r) / dot(r, r));
            const double d = dot(g - s * r, g - s * r);
            if (d < local_best) { local_best = d; phi_best = phi; }
        }
        lo = phi_best - 2 * dphi;
        hi = phi_best + 2 * dphi;
    }
    try_ray(Vec3(1.0, mu * std::cos(phi_best), mu * std::sin(phi_best)));
    return best;
}

TEST(ConeProjection, MatchesBruteForceOnRandomPoints) {
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> u(-2.0, 2.0);
    for (double mu : {0.0, 0.1, 0.5, 1.0, 3.0}) {
        for (int k = 0; k < 300; ++k) {
            const Vec3 g(u(rng), u(rng), u(rng));
            const Vec3 p = project_friction_cone(g, mu);
            const Vec3 q = brute_force_projection(g, mu);
            EXPECT_NEAR((p - q).norm(), 0.0, 1e-7) << "mu " << mu << " g " << g.transpose();
            // p lies in K (up to round-off)
            EXPECT_LE(std::hypot(p[1], p[2]), mu * p[0] + 1e-12);
        }
    }
}

TEST(ConeProjection, InABlockMetricMatchesBruteForce) {
    // bgs's projection (solvers/contact_operator.hpp): nearest in g_n² + q ‖g_t‖², q = p_t / p_n
    // (3.5 for a solid sphere's block; clumps and capsules give others, below and above 1)
    std::mt19937_64 rng(11);
    std::uniform_real_distribution<double> u(-2.0, 2.0);
    for (double q : {0.25, 1.0, 3.5, 12.0})
        for (double mu : {0.0, 0.3, 1.0}) {
            for (int k = 0; k < 200; ++k) {
                const Vec3 g(u(rng), u(rng), u(rng));
                const Vec3 p = project_friction_cone(g, mu, q);
                const Vec3 b = brute_force_projection(g, mu, q);
                EXPECT_NEAR((p - b).norm(), 0.0, 1e-7) << "q " << q << " mu " << mu << " g " << g.transpose();
                EXPECT_LE(std::hypot(p[1], p[2]), mu * p[0] + 1e-12);
            }
        }
}

TEST(ConeProjection, FrictionlessCases) {
    // μ = 0: g_n' = max(g_n, 0), no tangential part; (−1, 0, 0) goes to 0 (docs/design.md §5).
    EXPECT_EQ(project_friction_cone(Vec3(-1, 0, 0), 0.0), Vec3::Zero());
    EXPECT_EQ(project_friction_cone(Vec3(2, 0, 0), 0.0), Vec3(2, 0, 0));
    const Vec3 p = project_friction_cone(Vec3(2, 1, -3), 0.0);
    EXPECT_DOUBLE_EQ(p[0], 2.0);
    EXPECT_DOUBLE_EQ(p[1], 0.0);
    EXPECT_DOUBLE_EQ(p[2], 0.0);
}

TEST(ConeProjection, PolarInsideAndSurface) {
    EXPECT_EQ(project_friction_cone(Vec3(-1, 0.1, 0), 0.5), Vec3::Zero());   // polar cone
    EXPECT_EQ(project_friction_cone(Vec3(1, 0.3, 0.3), 0.5), Vec3(1, 0.3, 0.3));  // inside
    const Vec3 p = project_friction_cone(Vec3(1, 2, 0), 0.5);  // onto the surface
    EXPECT_NEAR(std::hypot(p[1], p[2]), 0.5 * p[0], 1e-15);
    EXPECT_NEAR(p[0], (1 + 0.5 * 2) / 1.25, 1e-15);
}

}  // namespace
}  // namespace talus

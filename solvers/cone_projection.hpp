#pragma once
/// Projection onto the friction cone K = {γ : ‖γ_t‖ ≤ μ γ_n} (docs/design.md §5), Euclidean
/// or in bgs's block metric.
#include <cmath>

#include "core/math.hpp"

namespace talus {

/// Π_K(g) for g = (g_n, g_u, g_w). Tests in this order: polar cone (→ 0), inside K
/// (unchanged), otherwise onto the cone's surface. The order matters for μ = 0.
/// With q ≠ 1 the nearest point of K in the norm g_n² + q ‖g_t‖² instead (bgs's block
/// metric, q = p_t / p_n: solvers/contact_operator.hpp): in the coordinates (g_n, √q g_t)
/// K is the cone of μ √q, whose projection, taken back, gives the same three cases with
/// μ q in the polar test and n = (g_n + μ q t) / (1 + μ² q) on the surface.
inline Vec3 project_friction_cone(const Vec3& g, double mu, double q = 1.0) {
    // Tests 1 and 2 compare squares (no square root on the common sticking and separating
    // paths): μ q t ≤ −g_n ⇔ g_n ≤ 0 ∧ (μ q)² t² ≤ g_n², and t ≤ μ g_n ⇔ g_n ≥ 0 ∧ t² ≤ μ² g_n².
    const double gn = g[0];
    const double t2 = g[1] * g[1] + g[2] * g[2];
    const double mu2 = mu * mu;
    const double mq = mu * q;
    if (gn <= 0.0 && mq * mq * t2 <= gn * gn) return Vec3::Zero();
    if (gn >= 0.0 && t2 <= mu2 * gn * gn) return g;
    // On the surface: n = m / (1 + μ² q) and the tangent scaled by μ n / t, both from one
    // reciprocal (a division costs as much as the rest of the projection); t > 0 here, as
    // t = 0 fell into one of the tests above.
    const double t = std::sqrt(t2);
    const double m = gn + mq * t;
    const double k = 1.0 / ((1.0 + mq * mu) * t);
    const double s = mu * m * k;
    return Vec3(m * t * k, s * g[1], s * g[2]);
}

}  // namespace talus

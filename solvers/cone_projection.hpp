#pragma once
/// Euclidean projection onto the friction cone K = {γ : ‖γ_t‖ ≤ μ γ_n} (docs/design.md §5).
#include <cmath>

#include "core/math.hpp"

namespace talus {

/// Π_K(g) for g = (g_n, g_u, g_w). Tests in this order: polar cone (→ 0), inside K
/// (unchanged), otherwise onto the cone's surface. The order matters for μ = 0.
inline Vec3 project_friction_cone(const Vec3& g, double mu) {
    // Tests 1 and 2 compare squares (no square root on the common sticking and separating
    // paths): μ t ≤ −g_n ⇔ g_n ≤ 0 ∧ μ² t² ≤ g_n², and t ≤ μ g_n ⇔ g_n ≥ 0 ∧ t² ≤ μ² g_n².
    const double gn = g[0];
    const double t2 = g[1] * g[1] + g[2] * g[2];
    const double mu2 = mu * mu;
    if (gn <= 0.0 && mu2 * t2 <= gn * gn) return Vec3::Zero();
    if (gn >= 0.0 && t2 <= mu2 * gn * gn) return g;
    const double t = std::sqrt(t2);
    const double n = (gn + mu * t) / (1.0 + mu2);
    const double s = mu * n / t;  // t > 0 here: t = 0 fell into one of the tests above
    return Vec3(n, s * g[1], s * g[2]);
}

}  // namespace talus

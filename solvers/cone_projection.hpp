#pragma once
/// Euclidean projection onto the friction cone K = {γ : ‖γ_t‖ ≤ μ γ_n} (DESIGN §5).
#include <cmath>

#include "engine/core/math.hpp"

namespace talus {

/// Π_K(g) for g = (g_n, g_u, g_w). Tests in this order: polar cone (→ 0), inside K
/// (unchanged), otherwise onto the cone's surface. The order matters for μ = 0.
inline Vec3 project_friction_cone(const Vec3& g, double mu) {
    const double gn = g[0];
    const double t = std::sqrt(g[1] * g[1] + g[2] * g[2]);
    if (mu * t <= -gn) return Vec3::Zero();
    if (t <= mu * gn) return g;
    const double n = (gn + mu * t) / (1.0 + mu * mu);
    const double s = mu * n / t;  // t > 0 here: t = 0 fell into one of the tests above
    return Vec3(n, s * g[1], s * g[2]);
}

}  // namespace talus
